// gemm(): problem -> validation -> backend -> kernel and config -> run.
#include "cpu/cpu_backend.hpp"
#include "kernels/kernel_registry.hpp"
#include "tilegemm/tilegemm.hpp"

namespace tilegemm {

Status gemm(const GemmProblem& problem, const GemmOptions& options, GemmReport* report) {
  if (Status s = validate(problem); !s.ok()) return s;
  Backend backend = options.backend;
  if (backend == Backend::automatic)
    backend = gpu::device_count() > 0 ? Backend::gpu : Backend::cpu;
  if (backend == Backend::cpu) {
    if (options.kernel != "auto" && options.kernel != "cpu" && !options.kernel.empty()) {
      return {StatusCode::invalid_argument,
              "kernel '" + options.kernel + "' is a GPU kernel; the CPU backend takes 'auto'"};
    }
    const KernelConfig config = options.config ? *options.config : cpu::default_config();
    if (report) *report = {Backend::cpu, "cpu", config, options.config ? "given" : "default", ""};
    return cpu::run(problem, config);
  }
  if (gpu::device_count() == 0) {
    return {StatusCode::no_device,
            "no CUDA device is available; use the CPU backend (--backend cpu)"};
  }
  return gpu::run(problem, options, report);
}

}  // namespace tilegemm
