// sm80 instantiations for tf32 inputs (see sm80.cuh).
#include "kernels/sm80/sm80.cuh"

namespace tilegemm::sm80 {
template Status launch_for_type<float>(const GemmArgs&, const KernelConfig&, Sm80Flags,
                                       cudaStream_t);
}  // namespace tilegemm::sm80
