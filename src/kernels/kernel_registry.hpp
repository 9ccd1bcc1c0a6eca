// The GPU kernels of this build: what each one takes, and how it launches. Which one runs, with
// which config, is chosen above this (src/dispatch/).
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "kernels/gemm_args.hpp"
#include "kernels/workspace.hpp"
#include "tilegemm/tilegemm.hpp"

namespace tilegemm::gpu {

// A launcher enqueues one GEMM on the workspace's stream, taking any device memory it needs from
// the workspace, and reports launch errors; it assumes a validated problem and a config that
// `can_implement` accepted.
using Launcher = std::function<Status(const GemmArgs&, const KernelConfig&, Workspace&)>;

struct Kernel {
  KernelInfo info;
  // Empty when the config and the problem fit; else why not (names the config or argument).
  std::function<std::string(const GemmProblem&, const KernelConfig&)> can_implement;
  Launcher launch;
  // can_implement without its check of the device this process sees (sm90: a Hopper GPU and this
  // build's code for it): which configs take a problem on the GPU the kernel is for, wherever the
  // question is asked (tilegemm explain --rules). Null: can_implement.
  std::function<std::string(const GemmProblem&, const KernelConfig&)> can_implement_anywhere;
  std::string can_implement_on_its_gpu(const GemmProblem& p, const KernelConfig& c) const {
    return can_implement_anywhere ? can_implement_anywhere(p, c) : can_implement(p, c);
  }
  // The most device memory a launch of `config` takes from its workspace (Launcher) for `args`.
  std::function<size_t(const GemmArgs&, const KernelConfig&)> workspace_bytes =
      [](const GemmArgs&, const KernelConfig&) { return size_t(0); };
  // gemm_grouped()'s problems in one launch (null where the kernel takes one problem a launch):
  // can_implement_problems is empty when `config` takes them all (validated problems), else says
  // why not, naming the problem; launch_problems enqueues them as `launch` does one problem, and
  // returns not_supported, enqueuing nothing, where its workspace has no room for it;
  // problems_workspace_bytes is what it takes from the workspace for that many problems.
  std::function<std::string(std::span<const GemmProblem>, const KernelConfig&)>
      can_implement_problems;
  std::function<Status(std::span<const GemmArgs>, const KernelConfig&, Workspace&)> launch_problems;
  std::function<size_t(size_t)> problems_workspace_bytes;
  // What the autotuner's pruning needs to know (src/tune/config_space.hpp).
  bool tensor_cores = false;  // CUDA-core kernels cannot pay where a tensor-core one runs
  bool production = true;     // false: a teaching generation, never worth timing
  // One program per SM walks the tiles: a wave is exactly the SM count, and the rules pick
  // GROUP_SIZE_M with the L2 model (schedule/wave_traffic.hpp).
  bool persistent = false;
  // The last round of a persistent grid, or its one round under the grid, is split between
  // programs where that gains (schedule/tail_split.hpp; sm90's configs of one program without
  // ping-pong, for D = alpha * AB): the rules count the split's steps.
  bool tail_splits = false;
  // Dynamic shared memory of a config for inputs of a dtype (0: static, always fits).
  std::function<int64_t(const KernelConfig&, DType)> shared_bytes = [](const KernelConfig&, DType) {
    return 0;
  };
  // Input types whose configs are compiled apart from the default's (sm90: tf32, BLOCK_SIZE_K
  // 32), with the first of theirs. The kernel choice asks can_implement about default_for(type).
  std::map<DType, KernelConfig> type_defaults{};
  const KernelConfig& default_for(DType dtype) const {
    const auto it = type_defaults.find(dtype);
    return it == type_defaults.end() ? info.default_config : it->second;
  }
};

// Each kernel file defines one of these.
Kernel naive_kernel();
Kernel smem_kernel();
Kernel tile2d_kernel();
Kernel warptile_kernel();
Kernel sm80_kernel();
Kernel sm90_kernel();
Kernel decode_kernel();

// Every kernel of this build, fastest last (the order `info` lists them in).
const std::vector<Kernel>& kernels();

const Kernel* find_kernel(const std::string& name);

// Number of CUDA devices (0 when none or no driver).
int device_count();

}  // namespace tilegemm::gpu
