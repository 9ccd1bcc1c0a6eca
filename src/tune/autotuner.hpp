// The autotuner: Triton's @autotune(configs, key=['M', 'N', 'K']) with a cache that persists.
//
// gemm() asks choose() for a kernel and config. With a config given, that is it. Otherwise the
// policy (GemmOptions::autotune, else $TILEGEMM_AUTOTUNE, else off) decides:
//   off      the heuristic (tune/heuristic.hpp), memoised per tuning key
//   on-miss  the in-memory cache, then the GPU type's cache file, else tune now and store
//   always   tune now and store
// Tuning times every config of the config space (tune/config_space.hpp) on scratch output
// buffers, drops configs whose result differs from the first one's, and keeps the fastest.
// docs/autotuning.md has the long form.
#pragma once

#include <string>

#include "kernels/kernel_registry.hpp"
#include "tune/tuning_key.hpp"

namespace tilegemm::autotune {

struct Choice {
  const gpu::Kernel* kernel = nullptr;
  KernelConfig config;
  std::string source;  // "given", "heuristic", "cache" or "tuned"
  TuningKey key;
};

// The policy in force for a call: the option, else $TILEGEMM_AUTOTUNE, else off.
AutotunePolicy policy_of(const GemmOptions& options);

// Picks the kernel and config for a validated problem on the current device. With `may_tune`
// false a choice that would need tuning falls back to the heuristic's (source "heuristic (a
// call would tune)").
Status choose(const GemmProblem& problem, const GemmOptions& options, Choice* choice,
              bool may_tune = true);

}  // namespace tilegemm::autotune
