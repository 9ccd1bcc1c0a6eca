// Which kernel and config run a GPU problem, under the call's autotune policy:
//   a config given      that config, on the kernel asked for ("auto": auto_kernel)
//   off                 the heuristic (tune/heuristic.hpp), memoised per tuning key
//   on-miss             the cached winner (memory, then the GPU type's cache file), else tune now
//   always              tune now
// Tuning and the cache are the autotuner's (tune/autotuner.hpp); docs/autotuning.md has the long
// form.
#pragma once

#include <functional>
#include <string>

#include "kernels/kernel_registry.hpp"
#include "tune/tune_cache.hpp"
#include "tune/tuning_key.hpp"

namespace tilegemm::dispatch {

struct Choice {
  const gpu::Kernel* kernel = nullptr;
  KernelConfig config;
  std::string source;  // "given", "heuristic", "cache" or "tuned"
  autotune::TuningKey key;
};

// The source of a choice that fell back to the heuristic where the policy would have tuned.
inline constexpr const char* kWouldTune = "heuristic (a call would tune)";

// Picks the kernel and config for a validated problem on the current device. With `may_tune`
// false a choice that would need tuning falls back to the heuristic's (source kWouldTune).
Status choose(const GemmProblem& problem, const GemmOptions& options, Choice* choice,
              bool may_tune = true);

// Times every candidate for the problem the kernel will read (tune/autotuner.hpp), with the
// heuristic's pick marked among them, and stores the winner in the cache.
Status tune_problem(const GemmProblem& problem, const GemmOptions& options, TuneResult* result,
                    const std::function<void(int, int)>& progress, autotune::CacheEntry* winner);

}  // namespace tilegemm::dispatch
