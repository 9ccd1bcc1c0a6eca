#include "tune/config_space.hpp"

#include <algorithm>

namespace tilegemm::autotune {
namespace {

bool far_larger(const KernelConfig& c, const GemmProblem& p) {
  return c.block_m > 2 * std::max<int64_t>(p.m, 16) || c.block_n > 2 * std::max<int64_t>(p.n, 16);
}

}  // namespace

std::vector<Candidate> config_space(const std::vector<KernelChoices>& kernels, const GemmProblem& p,
                                    const DeviceLimits& limits, std::vector<std::string>* pruned) {
  const bool any_production =
      std::any_of(kernels.begin(), kernels.end(), [](const auto& k) { return k.production; });
  const bool any_tensor_cores =
      std::any_of(kernels.begin(), kernels.end(), [](const auto& k) { return k.tensor_cores; });
  std::vector<Candidate> out;
  const auto prune = [&](const KernelChoices& k, const KernelConfig& c, const std::string& rule) {
    if (pruned) pruned->push_back(k.name + " " + to_string(c) + ": " + rule);
  };
  for (const KernelChoices& k : kernels) {
    const bool any_fitting_tile = std::any_of(k.configs.begin(), k.configs.end(),
                                              [&](const auto& c) { return !far_larger(c, p); });
    for (const KernelConfig& c : k.configs) {
      if (any_production && !k.production) {
        prune(k, c, "a teaching generation (a production kernel takes the problem)");
      } else if (any_tensor_cores && !k.tensor_cores) {
        prune(k, c, "CUDA cores cannot pay where a tensor-core kernel runs");
      } else if (k.shared_bytes && k.shared_bytes(c, p.a.dtype) > limits.shared_bytes_per_block) {
        prune(k, c,
              "needs " + std::to_string(k.shared_bytes(c, p.a.dtype)) +
                  " bytes of shared memory; the device gives " +
                  std::to_string(limits.shared_bytes_per_block));
      } else if (any_fitting_tile && far_larger(c, p)) {
        prune(k, c, "tile far larger than the problem");
      } else {
        out.push_back({k.name, c});
      }
    }
  }
  return out;
}

}  // namespace tilegemm::autotune
