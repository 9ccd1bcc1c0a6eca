// sm90 grouped-kernel instantiations for gemm_grouped()'s problems (the ptr_array form): bf16
// inputs (see sm90_grouped_kernel.cuh).
#include "kernels/sm90/grouped_launch.cuh"

namespace tilegemm::sm90 {
template Status launch_ptr_array_for_element<Bf16>(std::span<const GemmArgs>, const KernelConfig&,
                                                   gpu::Workspace&);
}  // namespace tilegemm::sm90
