// sm90 instantiations: fp16 inputs (see sm90.cuh).
#include "kernels/sm90/sm90.cuh"

namespace tilegemm::sm90 {
template Status launch_for_type<__half>(const GemmArgs&, const KernelConfig&, cudaStream_t);
}  // namespace tilegemm::sm90
