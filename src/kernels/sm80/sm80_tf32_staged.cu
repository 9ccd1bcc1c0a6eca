// sm80 instantiations: tf32 inputs, the staged copy path (see sm80_kernel.cuh).
#include "kernels/sm80/launch.cuh"

namespace tilegemm::sm80 {
template Status launch_for_element<Tf32, false>(const GemmArgs&, const KernelConfig&, bool,
                                                cudaStream_t);
}  // namespace tilegemm::sm80
