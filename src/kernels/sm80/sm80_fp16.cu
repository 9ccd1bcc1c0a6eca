// sm80 instantiations for fp16 inputs (see sm80.cuh).
#include "kernels/sm80/sm80.cuh"

namespace tilegemm::sm80 {
template Status launch_for_type<__half>(const GemmArgs&, const KernelConfig&, Sm80Flags,
                                        cudaStream_t);
}  // namespace tilegemm::sm80
