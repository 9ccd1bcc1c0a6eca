// The GPU kernels of this build, and how gemm() reaches them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kernels/gemm_args.hpp"
#include "tilegemm/tilegemm.hpp"

namespace tilegemm::gpu {

// A launcher enqueues one GEMM on `stream` and reports launch errors; it assumes a validated
// problem and a config that `can_implement` accepted.
using Launcher = std::function<Status(const GemmArgs&, const KernelConfig&, void* stream)>;

struct Kernel {
  KernelInfo info;
  // Empty when the config and the problem fit; else why not (names the config or argument).
  std::function<std::string(const GemmProblem&, const KernelConfig&)> can_implement;
  Launcher launch;
};

// Each kernel file defines one of these.
Kernel naive_kernel();
Kernel smem_kernel();
Kernel tile2d_kernel();
Kernel warptile_kernel();
Kernel sm80_kernel();

const std::vector<Kernel>& kernels();

// Runs a validated problem on the GPU: picks the kernel ("auto" or by name) and config.
Status run(const GemmProblem& problem, const GemmOptions& options, GemmReport* report);

// Number of CUDA devices (0 when none or no driver).
int device_count();

}  // namespace tilegemm::gpu
