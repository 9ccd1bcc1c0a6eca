// sm90 grouped-kernel instantiations: fp8 inputs, e5m2 x e4m3 (see sm90_grouped_kernel.cuh),
// K-major A and B only, with fast accumulation (element_traits.cuh: Fp8Kind).
#include "kernels/sm90/grouped_launch.cuh"

namespace tilegemm::sm90 {
template Status launch_grouped_for_element<Fp8E5m2E4m3<false>>(const GemmArgs&, const KernelConfig&,
                                                               gpu::Workspace&);
}  // namespace tilegemm::sm90
