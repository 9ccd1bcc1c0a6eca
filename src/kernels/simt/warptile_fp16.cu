// Warptile instantiations for fp16 inputs (see warptile.cuh).
#include "kernels/simt/warptile.cuh"

namespace tilegemm::simt::warptile {
template Status launch_for_type<__half>(const GemmArgs&, const KernelConfig&, bool, cudaStream_t);
}  // namespace tilegemm::simt::warptile
