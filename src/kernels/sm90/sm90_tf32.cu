// sm90 instantiations: tf32 inputs (fp32 in memory; see sm90_kernel.cuh), K-major A and B only.
#include "kernels/sm90/launch.cuh"

namespace tilegemm::sm90 {
template Status launch_for_element<Tf32>(const GemmArgs&, const KernelConfig&, gpu::Workspace&);
}  // namespace tilegemm::sm90
