// What the host hands one launch of the sm90 kernel, besides the problem (GemmArgs): the tensor
// maps, the epilogue's route, and the tail split's plan and workspace. Built by the launcher
// (launch.cuh).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include "epilogue/sm90_store_route.hpp"
#include "kernels/gemm_args.hpp"
#include "kernels/tail_split_work.hpp"

namespace tilegemm::sm90 {

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
