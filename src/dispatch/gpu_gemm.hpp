// The GPU half of gemm(): aligned copies, the kernel and config choice, the launch.
#pragma once

#include "kernels/kernel_registry.hpp"

namespace tilegemm::dispatch {

// Runs a validated problem on the GPU: makes the aligned copies it needs, picks the kernel ("auto"
// or by name) and config, and launches.
Status run_on_gpu(const GemmProblem& problem, const GemmOptions& options, GemmReport* report);

// What run_on_gpu() would choose, without running or tuning (tilegemm::plan).
Status plan_on_gpu(const GemmProblem& problem, const GemmOptions& options, GemmReport* report);

// Launches one kernel and config on a validated problem (no choice made): checks can_implement.
Status launch(const gpu::Kernel& kernel, const GemmProblem& problem, const KernelConfig& config);

}  // namespace tilegemm::dispatch
