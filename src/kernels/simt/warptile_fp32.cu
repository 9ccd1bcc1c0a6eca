// Warptile instantiations for fp32 inputs (see warptile.cuh).
#include "kernels/simt/warptile.cuh"

namespace tilegemm::simt::warptile {
template Status launch_for_type<float>(const GemmArgs&, const KernelConfig&, bool, cudaStream_t);
}  // namespace tilegemm::simt::warptile
