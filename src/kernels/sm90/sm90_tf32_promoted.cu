// sm90 instantiations: tf32 inputs with the sums promoted into fp32 registers (tf32x3's;
// element_traits.cuh: Tf32Promoted), K-major A and B only.
#include "kernels/sm90/launch.cuh"

namespace tilegemm::sm90 {
template Status launch_for_element<Tf32Promoted>(const GemmArgs&, const KernelConfig&,
                                                 gpu::Workspace&);
}  // namespace tilegemm::sm90
