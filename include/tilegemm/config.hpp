// A kernel configuration: the knobs of the seeds' Triton kernel, as a plain struct.
//
//   BLOCK_SIZE_M x BLOCK_SIZE_N x BLOCK_SIZE_K, GROUP_SIZE_M, num_stages, num_warps
//
// plus the per-kernel extras: the warp tile (the part of the block one warp, or on Hopper one
// math warpgroup, computes), the thread-block cluster of the Hopper kernel (programs that share an
// operand tile through TMA multicast) and its schedule. Written and read as
//
//   128x128x16/g8/s2/w8    128x128x16/g8/s2/w8/wt64x32    128x256x64/g8/s4/w12/wt64x256/c2
//   64x128x64/g8/s8/w8/wt64x128/c2x2 (a cluster of 2 x 2 programs)
//   128x128x64/g8/s5/w12/wt128x128/pingpong (the ping-pong schedule, below)
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tilegemm {

// How the Hopper kernel's two math warpgroups share a program's work:
//   cooperative  every tile is split between them, each owning half of its rows (a 64-row tile,
//                the height of one wgmma, has one math warpgroup);
//   ping_pong    they take whole tiles in turn, so that one's epilogue runs while the other's
//                wgmma keep the tensor cores busy. Written /pingpong.
enum class KernelSchedule { cooperative, ping_pong };

struct KernelConfig {
  int block_m = 64;
  int block_n = 64;
  int block_k = 16;
  int group_size_m = 8;
  int num_stages = 1;
  int num_warps = 4;
  int warp_m = 0;  // warp tile (0 = the kernel has none)
  int warp_n = 0;
  int cluster_m = 1;  // programs per cluster, along M (1 = no cluster); written /cN when > 1
  int cluster_n = 1;  // and along N (they share A's tile); written /cMxN when > 1
  KernelSchedule schedule = KernelSchedule::cooperative;

  friend bool operator==(const KernelConfig&, const KernelConfig&) = default;
};

std::string to_string(const KernelConfig& config);

// Parses the form written by to_string. On failure returns nullopt and, when `error` is given,
// a message naming the part that did not parse.
std::optional<KernelConfig> parse_kernel_config(std::string_view text,
                                                std::string* error = nullptr);

// Same tile shape, warps, warp tile, cluster and schedule: the values a kernel must be compiled
// for. GROUP_SIZE_M is a run-time value of every kernel, so two configs that differ only there
// share an instantiation.
bool same_instantiation(const KernelConfig& x, const KernelConfig& y);

}  // namespace tilegemm
