// sm90 grouped-kernel instantiations: fp8 inputs, e4m3 x e5m2 (see sm90_grouped_kernel.cuh),
// K-major A and B only, with the sums promoted into fp32 registers (element_traits.cuh: Fp8Kind).
#include "kernels/sm90/grouped_launch.cuh"

namespace tilegemm::sm90 {
template Status launch_grouped_for_element<Fp8E4m3E5m2<true>>(const GemmArgs&, const KernelConfig&,
                                                              gpu::Workspace&);
}  // namespace tilegemm::sm90
