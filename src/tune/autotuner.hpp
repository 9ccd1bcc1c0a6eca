// The autotuner: Triton's @autotune(configs, key=['M', 'N', 'K']) with a cache that persists.
//
// Tuning times every config of the config space (tune/config_space.hpp) on scratch output
// buffers, drops configs whose result differs from the first one's, keeps the fastest and stores
// it in the tuning cache: in memory for the process, and in the GPU type's cache file
// (tune/tune_cache.hpp). Whether a call tunes, reads the cache or takes the heuristic is the
// policy's choice (GemmOptions::autotune, else $TILEGEMM_AUTOTUNE, else off), made in
// src/dispatch/config_choice.cpp. docs/autotuning.md has the long form.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "kernels/kernel_registry.hpp"
#include "tune/heuristic.hpp"
#include "tune/tune_cache.hpp"
#include "tune/tuning_key.hpp"

namespace tilegemm::autotune {

// The current CUDA device (0 when it cannot be read), and what the tuner knows of a device: its
// name and SM count from tilegemm::devices(), read once.
int current_device();
DeviceInfo device_facts(int device);

// The cached winner for `key`: from memory, else from the device's cache file; nullopt if none.
std::optional<CacheEntry> cached(const TuningKey& key);

// The heuristic's config for `kernel` (heuristic.hpp), remembered per tuning key.
HeuristicChoice remembered_heuristic(const TuningKey& key, const GemmProblem& problem,
                                     const gpu::Kernel& kernel, const std::string& kernel_request);

// What the heuristic would run, so that the tuning report can mark it among the candidates.
struct HeuristicPick {
  std::string kernel;
  KernelConfig config;
};

// Times every candidate config for the problem that the kernel will read (copied already where
// gemm() copies), on scratch output, and stores the winner in the cache. options.kernel narrows
// the candidates to one kernel. `progress(done, total)` is called after each candidate.
Status tune_problem(const GemmProblem& problem, const GemmOptions& options,
                    const HeuristicPick& heuristic_pick, TuneResult* result,
                    const std::function<void(int, int)>& progress, CacheEntry* winner);

}  // namespace tilegemm::autotune
