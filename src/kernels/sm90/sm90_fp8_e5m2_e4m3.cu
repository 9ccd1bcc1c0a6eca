// sm90 instantiations: fp8 inputs, e5m2 A x e4m3 B (see sm90_kernel.cuh), K-major A and B only,
// with fast accumulation (element_traits.cuh: Fp8Kind); the promoting kernels are in
// sm90_fp8_e5m2_e4m3_promoted.cu, so that the two compile side by side.
#include "kernels/sm90/launch.cuh"

namespace tilegemm::sm90 {
template Status launch_for_element<Fp8E5m2E4m3<false>>(const GemmArgs&, const KernelConfig&,
                                                       gpu::Workspace&);
}  // namespace tilegemm::sm90
