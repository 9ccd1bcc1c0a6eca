// sm90 grouped-kernel instantiations: fp8 inputs, e4m3 x e4m3 (see sm90_grouped_kernel.cuh),
// K-major A and B only, with fast accumulation (element_traits.cuh: Fp8Kind).
#include "kernels/sm90/grouped_launch.cuh"

namespace tilegemm::sm90 {
template Status launch_grouped_for_element<Fp8E4m3E4m3<false>>(const GemmArgs&, const KernelConfig&,
                                                               gpu::Workspace&);
}  // namespace tilegemm::sm90
