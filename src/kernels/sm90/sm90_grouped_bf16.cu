// sm90 grouped-kernel instantiations: bf16 inputs (see sm90_grouped_kernel.cuh).
#include "kernels/sm90/grouped_launch.cuh"

namespace tilegemm::sm90 {
template Status launch_grouped_for_element<Bf16>(const GemmArgs&, const KernelConfig&,
                                                 gpu::Workspace&);
}  // namespace tilegemm::sm90
