// The config choice when nothing is tuned: the nearest shape of a committed table of tuned
// results for the H100 (src/tune/h100_table.json, written by `tilegemm tune`), else simple rules.
#pragma once

#include <optional>
#include <string>

#include "kernels/kernel_registry.hpp"

namespace tilegemm::autotune {

struct HeuristicChoice {
  const gpu::Kernel* kernel = nullptr;
  KernelConfig config;
  std::string rule;  // "table" or "rules"
};

// `kernel_name`: "auto" or a kernel; `gpu_name`: the device's name (the table applies to its GPU).
HeuristicChoice heuristic(const GemmProblem& problem, const std::string& kernel_name,
                          const std::string& gpu_name, int sms);

// The rules alone: the config with the largest tile that still gives every SM a program, else
// the one with the most programs.
KernelConfig rules_config(const gpu::Kernel& kernel, const GemmProblem& problem, int sms);

}  // namespace tilegemm::autotune
