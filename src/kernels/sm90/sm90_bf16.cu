// sm90 instantiations: bf16 inputs (see sm90.cuh).
#include "kernels/sm90/sm90.cuh"

namespace tilegemm::sm90 {
template Status launch_for_type<__nv_bfloat16>(const GemmArgs&, const KernelConfig&, cudaStream_t);

int compiled_binary_version() {
  using First = std::tuple_element_t<0, Shapes>;
  cudaFuncAttributes attributes{};
  if (cudaFuncGetAttributes(&attributes, sm90_gemm<__nv_bfloat16, First, false, false, true>) !=
      cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return attributes.binaryVersion;
}
}  // namespace tilegemm::sm90
