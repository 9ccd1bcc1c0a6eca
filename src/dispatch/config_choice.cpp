#include "dispatch/config_choice.hpp"

#include "dispatch/kernel_choice.hpp"
#include "tune/autotuner.hpp"

namespace tilegemm::dispatch {
namespace {

Status no_such_kernel(const std::string& request) {
  std::string list;
  for (const gpu::Kernel& k : gpu::kernels()) list += " " + k.info.name;
  return {StatusCode::invalid_argument,
          "kernel '" + request + "' does not exist; available: auto" + list};
}

}  // namespace

Status tune_problem(const GemmProblem& p, const GemmOptions& options, TuneResult* result,
                    const std::function<void(int, int)>& progress, autotune::CacheEntry* winner) {
  autotune::HeuristicPick pick;
  if (const gpu::Kernel* kernel = requested_kernel(p, options.kernel)) {
    const autotune::TuningKey key =
        autotune::make_tuning_key(p, options.kernel, autotune::current_device());
    pick = {kernel->info.name,
            autotune::remembered_heuristic(key, p, *kernel, options.kernel).config};
  }
  return autotune::tune_problem(p, options, pick, result, progress, winner);
}

Status choose(const GemmProblem& p, const GemmOptions& options, Choice* choice, bool may_tune) {
  const gpu::Kernel* requested = requested_kernel(p, options.kernel);
  if (requested == nullptr) return no_such_kernel(options.kernel);
  if (options.config) {
    choice->kernel = requested;
    choice->config = *options.config;
    choice->source = "given";
    return Status::success();
  }
  // Nothing to time in an empty product: the heuristic's choice does.
  const bool empty = p.m == 0 || p.n == 0 || p.k == 0;
  const AutotunePolicy policy = empty ? AutotunePolicy::off : autotune::policy_of(options);
  choice->key = autotune::make_tuning_key(p, options.kernel, autotune::current_device());
  std::optional<autotune::CacheEntry> entry;
  if (policy == AutotunePolicy::on_miss) entry = autotune::cached(choice->key);
  // A cached winner of a kernel this build lacks (a file from another build of the same version)
  // counts as a miss.
  if (entry && gpu::find_kernel(entry->kernel) == nullptr) entry.reset();
  const bool would_tune = !entry && policy != AutotunePolicy::off;
  if (entry) {
    choice->source = "cache";
  } else if (would_tune && may_tune) {
    TuneResult result;
    autotune::CacheEntry winner;
    if (Status s = tune_problem(p, options, &result, {}, &winner); !s.ok()) return s;
    entry = winner;
    choice->source = "tuned";
  }
  if (entry) {
    choice->kernel = gpu::find_kernel(entry->kernel);
    choice->config = entry->config;
    return Status::success();
  }
  choice->kernel = requested;
  choice->config =
      autotune::remembered_heuristic(choice->key, p, *requested, options.kernel).config;
  choice->source = would_tune ? kWouldTune : "heuristic";
  return Status::success();
}

}  // namespace tilegemm::dispatch
