// sm90 instantiations: fp8 inputs, e4m3 A x e5m2 B (see sm90_kernel.cuh), K-major A and B only,
// with fast accumulation (element_traits.cuh: Fp8Kind); the promoting kernels are in
// sm90_fp8_e4m3_e5m2_promoted.cu, so that the two compile side by side.
#include "kernels/sm90/launch.cuh"

namespace tilegemm::sm90 {
template Status launch_for_element<Fp8E4m3E5m2<false>>(const GemmArgs&, const KernelConfig&,
                                                       gpu::Workspace&);
}  // namespace tilegemm::sm90
