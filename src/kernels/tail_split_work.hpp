// A split of K as a launch gets it (schedule/tail_split.hpp): the plan, and the workspace of its
// tails' slots. Used by the sm90 kernel's tail split and the decode kernel's split-K.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "kernels/workspace.hpp"
#include "schedule/tail_split.hpp"

namespace tilegemm {

// Slot u holds tail u's fp32 partial sums (tail r of the last round's item j is u = j *
// tails_per_item + r), BM x BN of them in the order the kernel's threads hold them (each kernel's
// hand-over says how), and a flag per group of threads that hands them over, flags[u * groups +
// g], that the tail sets to `key` once its sums are there and the head clears once it has seen
// it. `key` is new for each launch, so a flag left in the workspace by an earlier launch, or any
// other word there, does not match it, and the workspace needs no clearing before a launch.
struct TailSplitWork {
  TailSplit plan;
  float4* partials = nullptr;
  unsigned long long* flags = nullptr;
  unsigned long long key = 0;
};

namespace gpu {

// The workspace bytes of a split's slots: `tile_values` fp32 sums and `groups` flags per tail.
inline size_t tail_split_bytes(const TailSplit& plan, int tile_values, int groups) {
  if (!plan.on()) return 0;
  const auto slots = size_t(plan.tails());
  return slots * size_t(tile_values) * sizeof(float) +
         slots * size_t(groups) * sizeof(unsigned long long);
}

// Takes a split's memory (`bytes`, from tail_split_bytes) from the call's workspace and gives the
// launch a new key; without memory the launch goes without the split (work->plan becomes
// no_tail_split).
Status take_tail_split_memory(Workspace& workspace, size_t bytes, int tile_values,
                              TailSplitWork* work);

}  // namespace gpu
}  // namespace tilegemm
