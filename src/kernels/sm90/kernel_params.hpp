// What the host hands one launch of the sm90 kernel, besides the problem (GemmArgs): the tensor
// maps, the epilogue's route, and the tail split's plan and workspace. Built by the launcher
// (launch.cuh).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include "epilogue/sm90_store_route.hpp"
#include "kernels/gemm_args.hpp"
#include "schedule/tail_split.hpp"

namespace tilegemm::sm90 {

// The tail split as a launch gets it (schedule/tail_split.hpp): the plan, and the workspace of its
// tails' slots. Slot u holds tail u's fp32 partial sums (tail r of the last round's item j is u =
// j * tails_per_item + r), BM x BN of them in the order the consumers' threads hold them (float4 v
// of wgmma tile i of thread t of consumer c at (i * BN / 8 + v) * consumers * 128 + 128c + t, so
// that each warp's accesses are 512 contiguous bytes), and a flag per consumer, flags[u *
// consumers + c], that the tail sets to `key` once its sums are there and the head clears once it
// has seen it. `key` is new for each launch, so a flag left in the workspace by an earlier launch,
// or any other word there, does not match it, and the workspace needs no clearing before a launch.
struct TailSplitWork {
  TailSplit plan;
  float4* partials = nullptr;
  unsigned long long* flags = nullptr;
  unsigned long long key = 0;
};

// The operands' tensor maps, passed as a __grid_constant__ parameter: TMA reads each by its
// parameter address.
struct Sm90TensorMaps {
  CUtensorMap a, b;  // the operands, boxes of the tile's rows x 128 bytes of K
  CUtensorMap d, c;  // D and C in 64 x 128-byte chunks (the TMA routes)
};

// The rest of a launch's choices, passed by value (their addresses are never taken, so the kernel
// reads each field straight from the parameter bank).
struct Sm90Launch {
  bool pairs;        // D is row-major with 2-element aligned rows (the registers' routes)
  StoreRoute route;  // how the epilogue reaches D
  bool c_tma;        // the tma_general route loads C through maps.c
  TailSplitWork split;
};

}  // namespace tilegemm::sm90
