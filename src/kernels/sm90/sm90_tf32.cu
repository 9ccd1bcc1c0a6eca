// sm90 instantiations: tf32 inputs (fp32 in memory; see sm90.cuh), K-major A and B only.
#include "kernels/sm90/sm90.cuh"

namespace tilegemm::sm90 {
template Status launch_for_type<float>(const GemmArgs&, const KernelConfig&, cudaStream_t);
}  // namespace tilegemm::sm90
