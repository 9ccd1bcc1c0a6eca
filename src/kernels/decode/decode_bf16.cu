// decode instantiations: bf16 inputs (see decode_kernel.cuh).
#include "kernels/decode/launch.cuh"

namespace tilegemm::decode {
template Status launch_for_element<Bf16>(const GemmArgs&, const KernelConfig&, bool,
                                         gpu::Workspace*, size_t*);
}  // namespace tilegemm::decode
