// sm80 instantiations: fp16 inputs, the cp.async copy path (see sm80_kernel.cuh).
#include "kernels/sm80/launch.cuh"

namespace tilegemm::sm80 {
template Status launch_for_element<Fp16, true>(const GemmArgs&, const KernelConfig&, bool,
                                               cudaStream_t);
}  // namespace tilegemm::sm80
