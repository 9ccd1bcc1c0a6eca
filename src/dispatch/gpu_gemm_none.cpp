// The GPU half of gemm(), plan() and tune() in a build without CUDA (TILEGEMM_CUDA=OFF): there
// is never a device (kernels/kernel_registry_none.cpp), and gpu_available() says why, so the
// calls after it are never reached.
#include "dispatch/gpu_gemm.hpp"

namespace tilegemm::dispatch {
namespace {

Status no_gpu_backend() {
  return {StatusCode::no_device,
          "this build of tilegemm has no GPU backend (configured with TILEGEMM_CUDA=OFF); use "
          "the CPU backend (--backend cpu), or rebuild with -DTILEGEMM_CUDA=ON"};
}

}  // namespace

Status gpu_available() { return no_gpu_backend(); }

Status run_on_gpu(const GemmProblem&, const GemmOptions&, GemmReport*) { return no_gpu_backend(); }

Status plan_on_gpu(const GemmProblem&, const GemmOptions&, GemmReport*) { return no_gpu_backend(); }

Status workspace_on_gpu(const GemmProblem&, const GemmOptions&, size_t*) {
  return no_gpu_backend();
}

Status run_problems_on_gpu(std::span<const GemmProblem>, const GemmOptions&, GemmReport*) {
  return no_gpu_backend();
}

Status problems_workspace_on_gpu(std::span<const GemmProblem>, const GemmOptions&, size_t*) {
  return no_gpu_backend();
}

Status tune_on_gpu(const GemmProblem&, const GemmOptions&, TuneResult*,
                   const std::function<void(int, int)>&) {
  return no_gpu_backend();
}

}  // namespace tilegemm::dispatch
