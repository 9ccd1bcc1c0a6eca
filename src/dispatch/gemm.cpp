// The entry points: gemm(), plan(), workspace_size() and tune(). problem -> validation -> backend
// -> kernel and config -> run.
#include "cpu/cpu_backend.hpp"
#include "dispatch/gpu_gemm.hpp"
#include "problem/problem_list.hpp"
#include "tilegemm/tilegemm.hpp"

namespace tilegemm {
namespace {

// No exception leaves the library: whatever one of its calls throws (host memory it could not
// have, or anything else) comes back as a Status.
template <class F>
Status guarded(const char* call, F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return {StatusCode::out_of_memory, std::string(call) + ": out of host memory"};
  } catch (const std::exception& e) {
    return {StatusCode::internal_error, std::string(call) + ": " + e.what()};
  } catch (...) {
    return {StatusCode::internal_error, std::string(call) + ": unknown error"};
  }
}

// The backend choice, shared by every entry point. On the CPU backend fills `report`; `*on_gpu`
// says which backend it is.
Status choose_backend(const GemmOptions& options, GemmReport* report, bool* on_gpu) {
  if (int(options.backend) < 0 || int(options.backend) > int(Backend::cpu)) {
    return {StatusCode::invalid_argument, "options.backend is not a Backend (value " +
                                              std::to_string(int(options.backend)) + ")"};
  }
  if (options.autotune &&
      (int(*options.autotune) < 0 || int(*options.autotune) > int(AutotunePolicy::always))) {
    return {StatusCode::invalid_argument, "options.autotune is not an AutotunePolicy (value " +
                                              std::to_string(int(*options.autotune)) + ")"};
  }
  if (options.workspace == nullptr && options.workspace_bytes > 0) {
    return {StatusCode::invalid_argument,
            "options.workspace is null while options.workspace_bytes is " +
                std::to_string(options.workspace_bytes)};
  }
  Backend backend = options.backend;
  if (backend == Backend::automatic)
    backend = gpu::device_count() > 0 ? Backend::gpu : Backend::cpu;
  *on_gpu = backend == Backend::gpu;
  if (backend == Backend::cpu) {
    if (options.kernel != "auto" && options.kernel != "cpu" && !options.kernel.empty()) {
      const char* what = gpu::kernels().empty()
                             ? "is not in this build, which has no GPU kernels (TILEGEMM_CUDA=OFF)"
                         : gpu::find_kernel(options.kernel) ? "is a GPU kernel"
                                                            : "does not exist";
      return {StatusCode::invalid_argument, "kernel '" + options.kernel + "' " + what +
                                                "; the CPU backend takes 'auto' (or 'cpu')"};
    }
    const KernelConfig config = options.config ? *options.config : cpu::default_config();
    if (std::string why = cpu::config_check(config); !why.empty()) {
      return {StatusCode::invalid_argument, why};
    }
    // A bad thread count in the environment is refused here, so that plan() says so too.
    int threads = 0;
    if (Status s = cpu::threads_from_environment(&threads); !s.ok()) return s;
    if (report)
      *report = {Backend::cpu, "cpu", config, options.config ? "given" : "default", "", "", "", ""};
    return Status::success();
  }
  return dispatch::gpu_available();
}

// Validation and the backend choice, shared by gemm(), plan() and workspace_size().
Status choose_backend(const GemmProblem& problem, const GemmOptions& options, GemmReport* report,
                      bool* on_gpu) {
  if (Status s = validate(problem); !s.ok()) return s;
  return choose_backend(options, report, on_gpu);
}

Status gemm_unguarded(const GemmProblem& problem, const GemmOptions& options, GemmReport* report) {
  bool on_gpu = false;
  GemmReport cpu_report;
  if (Status s = choose_backend(problem, options, &cpu_report, &on_gpu); !s.ok()) return s;
  if (on_gpu) return dispatch::run_on_gpu(problem, options, report);
  if (report) *report = cpu_report;
  return cpu::run(problem, cpu_report.config);
}

Status plan_unguarded(const GemmProblem& problem, const GemmOptions& options, GemmReport* report) {
  bool on_gpu = false;
  if (Status s = choose_backend(problem, options, report, &on_gpu); !s.ok()) return s;
  return on_gpu ? dispatch::plan_on_gpu(problem, options, report) : Status::success();
}

Status workspace_size_unguarded(const GemmProblem& problem, const GemmOptions& options,
                                size_t* bytes) {
  *bytes = 0;
  bool on_gpu = false;
  GemmReport cpu_report;
  if (Status s = choose_backend(problem, options, &cpu_report, &on_gpu); !s.ok()) return s;
  return on_gpu ? dispatch::workspace_on_gpu(problem, options, bytes) : Status::success();
}

Status tune_unguarded(const GemmProblem& problem, const GemmOptions& options, TuneResult* result,
                      const std::function<void(int, int)>& progress) {
  if (Status s = validate(problem); !s.ok()) return s;
  if (Status s = dispatch::gpu_available(); !s.ok()) {
    return {s.code, "tuning needs a CUDA device: " + s.message};
  }
  if (problem.m == 0 || problem.n == 0) {
    return {StatusCode::invalid_argument, "m and n must be > 0 to tune (nothing to time)"};
  }
  return dispatch::tune_on_gpu(problem, options, result, progress);
}

Status gemm_grouped_unguarded(std::span<const GemmProblem> problems, const GemmOptions& options,
                              GemmReport* report) {
  if (Status s = validate_problems(problems); !s.ok()) return s;
  bool on_gpu = false;
  GemmReport cpu_report;
  if (Status s = choose_backend(options, &cpu_report, &on_gpu); !s.ok()) return s;
  if (problems.empty()) return Status::success();
  if (on_gpu) return dispatch::run_problems_on_gpu(problems, options, report);
  if (report) *report = cpu_report;
  for (const GemmProblem& p : problems) {
    if (Status s = cpu::run(p, cpu_report.config); !s.ok()) return s;
  }
  return Status::success();
}

Status grouped_workspace_size_unguarded(std::span<const GemmProblem> problems,
                                        const GemmOptions& options, size_t* bytes) {
  *bytes = 0;
  if (Status s = validate_problems(problems); !s.ok()) return s;
  bool on_gpu = false;
  GemmReport cpu_report;
  if (Status s = choose_backend(options, &cpu_report, &on_gpu); !s.ok()) return s;
  if (problems.empty() || !on_gpu) return Status::success();
  return dispatch::problems_workspace_on_gpu(problems, options, bytes);
}

}  // namespace

Status gemm_grouped(std::span<const GemmProblem> problems, const GemmOptions& options,
                    GemmReport* report) {
  return guarded("gemm_grouped", [&] { return gemm_grouped_unguarded(problems, options, report); });
}

Status grouped_workspace_size(std::span<const GemmProblem> problems, const GemmOptions& options,
                              size_t* bytes) {
  if (bytes == nullptr) return {StatusCode::invalid_argument, "bytes is null"};
  return guarded("grouped_workspace_size",
                 [&] { return grouped_workspace_size_unguarded(problems, options, bytes); });
}

Status gemm(const GemmProblem& problem, const GemmOptions& options, GemmReport* report) {
  return guarded("gemm", [&] { return gemm_unguarded(problem, options, report); });
}

Status plan(const GemmProblem& problem, const GemmOptions& options, GemmReport* report) {
  return guarded("plan", [&] { return plan_unguarded(problem, options, report); });
}

Status workspace_size(const GemmProblem& problem, const GemmOptions& options, size_t* bytes) {
  if (bytes == nullptr) return {StatusCode::invalid_argument, "bytes is null"};
  return guarded("workspace_size",
                 [&] { return workspace_size_unguarded(problem, options, bytes); });
}

Status tune(const GemmProblem& problem, const GemmOptions& options, TuneResult* result,
            const std::function<void(int, int)>& progress) {
  return guarded("tune", [&] { return tune_unguarded(problem, options, result, progress); });
}

}  // namespace tilegemm
