// sm80 instantiations: bf16 inputs, the staged copy path (see sm80.cuh).
#include "kernels/sm80/sm80.cuh"

namespace tilegemm::sm80 {
template Status launch_for_type<__nv_bfloat16, false>(const GemmArgs&, const KernelConfig&, bool,
                                                      cudaStream_t);
}  // namespace tilegemm::sm80
