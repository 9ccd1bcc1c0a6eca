// Warptile instantiations for bf16 inputs (see warptile.cuh).
#include "kernels/simt/warptile.cuh"

namespace tilegemm::simt::warptile {
template Status launch_for_type<__nv_bfloat16>(const GemmArgs&, const KernelConfig&, bool,
                                               cudaStream_t);
}  // namespace tilegemm::simt::warptile
