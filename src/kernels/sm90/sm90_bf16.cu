// sm90 instantiations: bf16 inputs (see sm90_kernel.cuh).
#include "kernels/sm90/launch.cuh"

namespace tilegemm::sm90 {
template Status launch_for_element<Bf16>(const GemmArgs&, const KernelConfig&, gpu::Workspace&);

int compiled_binary_version() {
  cudaFuncAttributes attributes{};
  if (cudaFuncGetAttributes(&attributes,
                            sm90_gemm<Bf16, ShapeTag<kCompiledShapes[0]>, false, false, true>) !=
      cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return attributes.binaryVersion;
}
}  // namespace tilegemm::sm90
