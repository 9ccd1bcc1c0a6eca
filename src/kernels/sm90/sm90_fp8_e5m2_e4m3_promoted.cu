// sm90 instantiations: fp8 inputs, e5m2 A x e4m3 B (see sm90_kernel.cuh), K-major A and B only,
// with the sums promoted into fp32 registers (element_traits.cuh: Fp8Kind).
#include "kernels/sm90/launch.cuh"

namespace tilegemm::sm90 {
template Status launch_for_element<Fp8E5m2E4m3<true>>(const GemmArgs&, const KernelConfig&,
                                                      gpu::Workspace&);
}  // namespace tilegemm::sm90
