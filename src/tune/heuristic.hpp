// The config choice when nothing is tuned: the nearest shape of a committed table of tuned
// results for the H100 (src/tune/h100_table.json, written by `tilegemm tune`), else simple rules.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernels/kernel_registry.hpp"
#include "schedule/tail_split.hpp"
#include "tune/tuning_key.hpp"

namespace tilegemm::autotune {

// A table of tuned results: the cache-file format of tune_cache.hpp, read into rows.
struct TunedRow {
  TuningKey key;
  std::string kernel;
  KernelConfig config;
};
struct TunedTable {
  std::string gpu;
  std::vector<TunedRow> rows;
};
TunedTable parse_tuned_table(const char* json);

// The row of the tuned shape nearest to the problem's -- distance: the sum of |ln| of the ratios
// of M, N and K -- among rows of the same input type (fp16 and bf16 stand in for each other; an
// exact type wins a tie) and the same kernel request; a named kernel also takes the rows tuned
// for "auto" that it won (a row of its own request wins a tie). Of equally near rows, the first
// in the table's order. nullptr when no row qualifies.
const TunedRow* nearest_tuned(const TunedTable& table, const GemmProblem& problem,
                              const std::string& kernel_request);

struct HeuristicChoice {
  KernelConfig config;
  std::string rule;  // "table", "table, turned" (turned_if_fewer_waves) or "rules"
};

// How rules_config weighed one config, and the whole of its weighing (tilegemm explain --rules).
struct RulesWeighing {
  KernelConfig config;
  int64_t programs = 0;  // its tiles, times the batch
  bool fills = false;    // programs for at least 7/8 of the SMs
  double load = 0.0;     // what its busiest SM takes (rows loaded, or its tiles' work)
  TailSplit split;       // the kernel's split of the last round, as the load counts it (none: off)
};
struct RulesTrace {
  bool tensor_bound = false;           // the load counts work, not rows
  std::vector<RulesWeighing> weighed;  // in the rules' order (largest tile first)
  std::string rule;                    // how the choice was made
  KernelConfig tile;                   // the choice before the cluster rule
};

// The rules, for a kernel's compiled configs: the largest tile that still gives at least 7/8 of
// the `sms` SMs a program (of equal areas, the one with fewer waves, then the one shaped like the
// problem, then the deeper slice, then the stages that suit K's length, then the first in the
// list), unless a larger tile before it loads less into its busiest SM; else the config whose
// busiest SM loads the least (`tail_splits`: the kernel splits the last round, or the one round
// under the grid, of configs of one program, for D = alpha * AB, and the load of a config of one
// consumer counts the split's steps: schedule/tail_split.hpp). Where the tensor cores bound a
// 16-bit problem over a long K, the busiest SM's load is its tiles' work instead, and the split of
// configs of two consumers counts too.
// Before all that, an epilogue beyond alpha*AB over K <= 2048 takes a ping-pong config (sm90)
// where every SM gets two of its tiles. Split-K configs, and ping-pong otherwise, are left to the
// autotuner. After it all, 16-bit operands whose lines are off 128-byte boundaries take the
// chosen tile's cluster of 2, or of 2 x 2 over six waves or more, where `configs` has it.
// `trace`, when given, receives how the rules weighed the configs (tilegemm explain --rules).
KernelConfig rules_config(const std::vector<KernelConfig>& configs, const GemmProblem& problem,
                          int sms, bool tail_splits = false, RulesTrace* trace = nullptr);

// The rules for `kernel` on `sms` SMs, among its configs that take the problem (all of them if
// none does: the launch then says why not), with `trace` as above. `anywhere`: the configs that
// take it on the GPU the kernel is for, whatever device this process sees
// (Kernel::can_implement_anywhere).
KernelConfig kernel_rules_config(const GemmProblem& problem, const gpu::Kernel& kernel, int sms,
                                 RulesTrace* trace = nullptr, bool anywhere = false);

// The same config with BLOCK_SIZE_M and BLOCK_SIZE_N swapped, if `configs` has it (same slice,
// stages, warps, cluster and split; GROUP_SIZE_M kept) and it needs fewer waves of `sms`
// programs; else `config`. A tuned shape's tile may leave a problem just past a multiple of it
// a partial wave that the turned tile does not: 4095 x 4097 is 544 tiles of 128x256 (5 waves on
// 132 SMs) and 528 of 256x128 (4).
KernelConfig turned_if_fewer_waves(const KernelConfig& config,
                                   const std::vector<KernelConfig>& configs,
                                   const GemmProblem& problem, int sms);

// The config for `kernel`, which the caller chose for the problem: the table's, else the rules'.
// `kernel_request`: what the call asked for, "auto" or the kernel's name (a named kernel also
// takes the table rows tuned for "auto" that it won); `gpu_name`: the device's name (the table
// applies to its GPU).
HeuristicChoice heuristic(const GemmProblem& problem, const gpu::Kernel& kernel,
                          const std::string& kernel_request, const std::string& gpu_name, int sms);

}  // namespace tilegemm::autotune
