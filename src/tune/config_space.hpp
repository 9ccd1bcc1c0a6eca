// The configs the autotuner times for a problem, and the rules that prune the rest before any
// timing (host code, unit-tested in tests/host/test_tuning.cpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tilegemm/tilegemm.hpp"

namespace tilegemm::autotune {

// A kernel that takes the problem, as pruning sees it.
struct KernelChoices {
  std::string name;
  std::vector<KernelConfig> configs;
  bool tensor_cores = false;
  bool production = true;
  std::function<int64_t(const KernelConfig&, DType)> shared_bytes;
};

struct DeviceLimits {
  int64_t shared_bytes_per_block = 227 * 1024;  // opt-in maximum of one program
};

struct Candidate {
  std::string kernel;
  KernelConfig config;
};

// The rules, in order:
//   1. teaching generations (naive, smem, tile2d) when a production kernel takes the problem
//   2. CUDA-core kernels when a tensor-core kernel takes the problem: they cannot pay
//   3. configs whose shared memory exceeds what the device gives one program
//   4. tiles far larger than the problem: BLOCK_SIZE_M > 2 * max(M, 16) (or N) while the same
//      kernel has a config whose tile fits better; such a tile mostly multiplies padding
// `pruned` (optional) receives "kernel config: rule" for each config left out.
std::vector<Candidate> config_space(const std::vector<KernelChoices>& kernels,
                                    const GemmProblem& problem, const DeviceLimits& limits,
                                    std::vector<std::string>* pruned = nullptr);

}  // namespace tilegemm::autotune
