// The entry points: gemm(), plan() and tune(). problem -> validation -> backend -> kernel and
// config -> run.
#include "cpu/cpu_backend.hpp"
#include "dispatch/config_choice.hpp"
#include "dispatch/gpu_gemm.hpp"
#include "kernels/aligned_copies.hpp"
#include "tilegemm/tilegemm.hpp"

namespace tilegemm {
namespace {

// Validation and the backend choice, shared by gemm() and plan(). On the CPU backend fills
// `report`; `*on_gpu` says which backend it is.
Status choose_backend(const GemmProblem& problem, const GemmOptions& options, GemmReport* report,
                      bool* on_gpu) {
  if (Status s = validate(problem); !s.ok()) return s;
  Backend backend = options.backend;
  if (backend == Backend::automatic)
    backend = gpu::device_count() > 0 ? Backend::gpu : Backend::cpu;
  *on_gpu = backend == Backend::gpu;
  if (backend == Backend::cpu) {
    if (options.kernel != "auto" && options.kernel != "cpu" && !options.kernel.empty()) {
      return {StatusCode::invalid_argument,
              "kernel '" + options.kernel + "' is a GPU kernel; the CPU backend takes 'auto'"};
    }
    const KernelConfig config = options.config ? *options.config : cpu::default_config();
    if (report)
      *report = {Backend::cpu, "cpu", config, options.config ? "given" : "default", "", "", ""};
    return Status::success();
  }
  if (gpu::device_count() == 0) {
    return {StatusCode::no_device,
            "no CUDA device is available; use the CPU backend (--backend cpu)"};
  }
  return Status::success();
}

}  // namespace

Status gemm(const GemmProblem& problem, const GemmOptions& options, GemmReport* report) {
  bool on_gpu = false;
  GemmReport cpu_report;
  if (Status s = choose_backend(problem, options, &cpu_report, &on_gpu); !s.ok()) return s;
  if (on_gpu) return dispatch::run_on_gpu(problem, options, report);
  if (report) *report = cpu_report;
  return cpu::run(problem, cpu_report.config);
}

Status plan(const GemmProblem& problem, const GemmOptions& options, GemmReport* report) {
  bool on_gpu = false;
  if (Status s = choose_backend(problem, options, report, &on_gpu); !s.ok()) return s;
  return on_gpu ? dispatch::plan_on_gpu(problem, options, report) : Status::success();
}

Status tune(const GemmProblem& problem, const GemmOptions& options, TuneResult* result,
            const std::function<void(int, int)>& progress) {
  if (Status s = validate(problem); !s.ok()) return s;
  if (gpu::device_count() == 0) {
    return {StatusCode::no_device, "tuning needs a CUDA device; none is available"};
  }
  if (problem.m == 0 || problem.n == 0) {
    return {StatusCode::invalid_argument, "m and n must be > 0 to tune (nothing to time)"};
  }
  // Tuned on the problem gemm() would run: with the aligned copies it makes (same tuning key).
  gpu::AlignedCopies copies;
  if (Status s = copies.make(problem, gpu::copy_plan(problem, options)); !s.ok()) {
    return s;
  }
  autotune::CacheEntry winner;
  return dispatch::tune_problem(copies.problem(), options, result, progress, &winner);
}

}  // namespace tilegemm
