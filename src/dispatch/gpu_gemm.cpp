#include "dispatch/gpu_gemm.hpp"

#include <algorithm>
#include <climits>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "dispatch/call_signature.hpp"
#include "dispatch/config_choice.hpp"
#include "dispatch/kernel_choice.hpp"
#include "kernels/aligned_copies.hpp"
#include "problem/problem_list.hpp"
#include "schedule/tile_order.hpp"
#include "tune/autotuner.hpp"
#include "tune/tune_cache.hpp"
#include "tune/tuning_key.hpp"

namespace tilegemm::dispatch {
namespace {

void fill_report(const GemmProblem& p, const GemmOptions& options, const Choice& choice,
                 const std::string& aligned_copies, GemmReport* report) {
  if (report) {
    *report = {
        .backend = Backend::gpu,
        .kernel = choice.kernel->info.name,
        .config = choice.config,
        .config_source = choice.source,
        .tuning_key = choice.source == "given" ? std::string() : autotune::to_string(choice.key),
        .kernel_note = autotune::automatic(options.kernel) ? auto_kernel_note(p, *choice.kernel)
                                                           : std::string(),
        .aligned_copies = aligned_copies,
        .workspace_note = {}};
  }
}

// The copies a call makes before its kernel: none where "auto" runs the problem as it lies on the
// decode kernel (its staged path takes rows that are not 16-byte aligned in one launch), else the
// plan for the kernel the call names or auto's sm90 (kernels/aligned_copies.hpp).
AlignedCopyPlan copies_for(const GemmProblem& p, const GemmOptions& options) {
  if (autotune::automatic(options.kernel) && decode_as_it_lies(p)) return {};
  return gpu::copy_plan(p, options);
}

// The kernel's arguments for `p` under `config` (GROUP_SIZE_M capped at the grid's rows).
GemmArgs launch_args(const GemmProblem& p, const KernelConfig& config) {
  return make_gemm_args(p, capped_group_size_m(p.m, config.block_m, config.group_size_m));
}

// What a call would run for `p`, without running or tuning: the copies' plan, the problem the
// kernel would read (the copies at aligned stand-in addresses: nothing is read) and the choice.
Status planned_choice(const GemmProblem& p, const GemmOptions& options, AlignedCopyPlan* copies,
                      GemmProblem* q, Choice* choice) {
  *copies = copies_for(p, options);
  *q = with_aligned_copies(p, *copies, reinterpret_cast<void*>(kWorkspaceAlignment));
  return choose(*q, options, choice, /*may_tune=*/false);
}

// The choice for gemm_grouped()'s problems: their stand-in, the kernel and config chosen for it,
// untuned, and why they cannot all go in one launch of it (empty: they can).
struct ProblemsChoice {
  GemmProblem whole;
  Choice choice;
  std::string one_by_one;
};

Status choose_for_problems(std::span<const GemmProblem> problems, const GemmOptions& options,
                           ProblemsChoice* out) {
  GemmOptions untuned = options;
  untuned.autotune = AutotunePolicy::off;
  out->whole = stand_in(problems);
  if (Status s = choose(out->whole, untuned, &out->choice, false); !s.ok()) return s;
  const gpu::Kernel& kernel = *out->choice.kernel;
  out->one_by_one = kernel.launch_problems
                        ? kernel.can_implement_problems(problems, out->choice.config)
                        : "kernel " + kernel.info.name + " takes one problem a launch";
  return Status::success();
}

// The choices of calls that ran, by signature (call_signature.hpp), for the calls after them:
// the kernel and config, whose can_implement passed. Only choices that needed no aligned copies
// and whose config was the heuristic's or given are kept: a tuned or cached config may change
// when the tuner runs, and a call with copies is large enough not to feel the choice.
struct RememberedChoices {
  std::mutex mutex;
  std::unordered_map<CallSignature, Choice, CallSignatureHash> choices;
};

RememberedChoices& remembered() {
  static RememberedChoices table;
  return table;
}

std::optional<Choice> remembered_choice(const CallSignature& signature) {
  RememberedChoices& r = remembered();
  std::lock_guard lock(r.mutex);
  if (auto it = r.choices.find(signature); it != r.choices.end()) return it->second;
  return std::nullopt;
}

void remember_choice(const CallSignature& signature, const Choice& choice) {
  if (choice.source != "heuristic" && choice.source != "given") return;
  RememberedChoices& r = remembered();
  std::lock_guard lock(r.mutex);
  if (r.choices.size() >= 4096) r.choices.clear();  // a bound for programs of many shapes
  r.choices.emplace(signature, choice);
}

}  // namespace

Status gpu_available() {
  if (gpu::device_count() > 0) return Status::success();
  return {StatusCode::no_device,
          "no CUDA device is available; use the CPU backend (--backend cpu)"};
}

Status launch(const gpu::Kernel& kernel, const GemmProblem& p, const KernelConfig& config,
              gpu::Workspace& workspace, bool checked) {
  if (!checked) {
    if (std::string why = kernel.can_implement(p, config); !why.empty()) {
      return {StatusCode::invalid_argument, why};
    }
    if (num_tiles(p.m, p.n, config.block_m, config.block_n) > INT_MAX) {
      return {StatusCode::not_supported, "the problem has more output tiles than one launch holds"};
    }
  }
  // An fp8 D's amax: the kernel's programs raise it from zero (and an empty D leaves it there).
  if (p.d.amax != nullptr) {
    if (Status s = gpu::zero_on_stream(p.d.amax, sizeof(float), p.stream); !s.ok()) return s;
  }
  if (p.m == 0 || p.n == 0) return Status::success();
  return kernel.launch(launch_args(p, config), config, workspace);
}

Status run_on_gpu(const GemmProblem& p, const GemmOptions& options, GemmReport* report) {
  // While the stream is capturing a CUDA graph, nothing may allocate, synchronise or time: the
  // workspace is the caller's or none (the workspace asks the stream before it allocates), and
  // the config is not tuned. The stream is asked only where the answer matters: the query is a
  // driver call, and most calls neither allocate nor tune.
  gpu::Workspace workspace(p.stream, options.workspace, options.workspace_bytes);
  const AutotunePolicy policy = autotune::policy_of(options);
  const CallSignature signature = call_signature(p, options, policy, autotune::current_device());
  const std::optional<Choice> known = remembered_choice(signature);
  // The copies come first: the kernel, the config and the tuning key are those of the problem
  // the kernel will read. A remembered choice was one that needed none.
  const AlignedCopyPlan plan = known ? AlignedCopyPlan{} : copies_for(p, options);
  gpu::AlignedCopies copies;
  if (Status s = copies.make(p, plan, workspace); !s.ok()) return s;
  const GemmProblem& q = copies.problem();
  Choice choice;
  const bool capturing =
      !known && policy != AutotunePolicy::off && gpu::stream_is_capturing(p.stream);
  if (known) {
    choice = *known;
  } else if (Status s = choose(q, options, &choice, /*may_tune=*/!capturing); !s.ok()) {
    return s;
  }
  if (capturing && choice.source == kWouldTune) {
    choice.source = "heuristic (not tuned: the stream is capturing a CUDA graph)";
  }
  fill_report(q, options, choice, copies.description(), report);
  Status status = launch(*choice.kernel, q, choice.config, workspace, known.has_value());
  if (report) report->workspace_note = workspace.shortfall();
  if (status.ok() && !known && !plan.any()) remember_choice(signature, choice);
  if (!status.ok() && autotune::automatic(options.kernel)) {
    // No kernel took the problem: say why the faster ones did not either.
    const std::string note = auto_kernel_note(q, *choice.kernel);
    if (!note.empty()) status.message += "; " + note;
  }
  if (!status.ok() && !workspace.shortfall().empty()) {
    status.message += "; " + workspace.shortfall();
  }
  return status;
}

Status run_problems_on_gpu(std::span<const GemmProblem> problems, const GemmOptions& options,
                           GemmReport* report) {
  ProblemsChoice c;
  if (Status s = choose_for_problems(problems, options, &c); !s.ok()) return s;
  const GemmProblem& whole = c.whole;
  if (c.one_by_one.empty()) {
    gpu::Workspace workspace(whole.stream, options.workspace, options.workspace_bytes);
    // GROUP_SIZE_M as the config says, capped at the most tile rows a problem has.
    int64_t rows = 1;
    for (const GemmProblem& p : problems) rows = std::max(rows, p.m);
    const int group_size_m =
        capped_group_size_m(rows, c.choice.config.block_m, c.choice.config.group_size_m);
    std::vector<GemmArgs> args;
    args.reserve(problems.size());
    for (const GemmProblem& p : problems) args.push_back(make_gemm_args(p, group_size_m));
    fill_report(whole, options, c.choice, "", report);
    const Status s = c.choice.kernel->launch_problems(args, c.choice.config, workspace);
    if (report) report->workspace_note = workspace.shortfall();
    if (s.code != StatusCode::not_supported) return s;
    c.one_by_one = s.message;
  }
  // One call after another, each problem's kernel and config its own; every problem checked
  // first, so that on an error no D is written.
  for (size_t g = 0; g < problems.size(); ++g) {
    if (Status s = plan_on_gpu(problems[g], options, nullptr); !s.ok()) {
      return {s.code, "problems[" + std::to_string(g) + "]: " + s.message};
    }
  }
  for (size_t g = 0; g < problems.size(); ++g) {
    GemmReport r;
    if (Status s = run_on_gpu(problems[g], options, &r); !s.ok()) {
      return {s.code, "problems[" + std::to_string(g) + "]: " + s.message};
    }
    if (report && g == 0) {
      *report = r;
      report->kernel_note = "one call per problem (" + c.one_by_one + ")" +
                            (r.kernel_note.empty() ? "" : "; " + r.kernel_note);
    }
  }
  return Status::success();
}

Status problems_workspace_on_gpu(std::span<const GemmProblem> problems, const GemmOptions& options,
                                 size_t* bytes) {
  ProblemsChoice c;
  if (Status s = choose_for_problems(problems, options, &c); !s.ok()) return s;
  if (c.one_by_one.empty()) {
    const size_t table = c.choice.kernel->problems_workspace_bytes(problems.size());
    *bytes = size_t(round_up(int64_t(table), kWorkspaceAlignment) + kWorkspaceAlignment);
    return Status::success();
  }
  // One call after another: each reuses the memory of the one before.
  *bytes = 0;
  for (const GemmProblem& p : problems) {
    size_t one = 0;
    if (Status s = workspace_on_gpu(p, options, &one); !s.ok()) return s;
    *bytes = std::max(*bytes, one);
  }
  return Status::success();
}

Status plan_on_gpu(const GemmProblem& p, const GemmOptions& options, GemmReport* report) {
  AlignedCopyPlan copies;
  GemmProblem q;
  Choice choice;
  if (Status s = planned_choice(p, options, &copies, &q, &choice); !s.ok()) return s;
  if (std::string why = choice.kernel->can_implement(q, choice.config); !why.empty()) {
    return {StatusCode::invalid_argument, why};
  }
  fill_report(q, options, choice, describe(copies), report);
  return Status::success();
}

Status workspace_on_gpu(const GemmProblem& p, const GemmOptions& options, size_t* bytes) {
  AlignedCopyPlan copies;
  GemmProblem q;
  Choice choice;
  if (Status s = planned_choice(p, options, &copies, &q, &choice); !s.ok()) return s;
  const auto kernel_bytes = [&](const gpu::Kernel& kernel, const KernelConfig& config) {
    return kernel.can_implement(q, config).empty()
               ? kernel.workspace_bytes(launch_args(q, config), config)
               : size_t(0);
  };
  size_t launch_bytes = kernel_bytes(*choice.kernel, choice.config);
  if (choice.source == kWouldTune) {
    // The call would tune: any candidate may win.
    for (const gpu::Kernel& kernel : gpu::kernels()) {
      if (!autotune::automatic(options.kernel) && kernel.info.name != options.kernel) continue;
      for (const KernelConfig& config : kernel.info.configs) {
        launch_bytes = std::max(launch_bytes, kernel_bytes(kernel, config));
      }
    }
  }
  // Each part rounded to kWorkspaceAlignment, and room to move from the caller's pointer, which
  // may start anywhere, to its first aligned byte.
  const int64_t parts = round_up(copies.workspace_bytes, kWorkspaceAlignment) +
                        round_up(int64_t(launch_bytes), kWorkspaceAlignment);
  *bytes = parts > 0 ? size_t(parts + kWorkspaceAlignment) : 0;
  return Status::success();
}

Status tune_on_gpu(const GemmProblem& p, const GemmOptions& options, TuneResult* result,
                   const std::function<void(int, int)>& progress) {
  gpu::Workspace workspace(p.stream, options.workspace, options.workspace_bytes);
  gpu::AlignedCopies copies;
  if (Status s = copies.make(p, copies_for(p, options), workspace); !s.ok()) return s;
  autotune::CacheEntry winner;
  return tune_problem(copies.problem(), options, result, progress, &winner);
}

}  // namespace tilegemm::dispatch
