// sm90 instantiations: fp16 inputs (see sm90_kernel.cuh).
#include "kernels/sm90/launch.cuh"

namespace tilegemm::sm90 {
template Status launch_for_element<Fp16>(const GemmArgs&, const KernelConfig&, gpu::Workspace&);
}  // namespace tilegemm::sm90
