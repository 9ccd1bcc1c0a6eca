// How the sm90 epilogue takes a tile's outputs to D, decided once per launch by the host
// (kernels/sm90/tensor_map.hpp: store_route) and passed to the kernel.
#pragma once

namespace tilegemm::sm90 {

enum class StoreRoute {
  tma,             // D = alpha * AB, 16-bit, fp32 or fp8 (tiles 128 or more wide), row-major,
                   // described by a tensor map: converted chunks through shared memory, TMA stores
  tma_general,     // the whole epilogue (beta*C, bias, activation) into such a D: computed in
                   // registers a round at a time, then the same chunks and TMA stores
  staged,          // D = alpha * AB into a row-major D that no tensor map describes (rows not
                   // 16-byte aligned; 32-bit coordinates, as TMA's): tma's chunks through shared
                   // memory, written to D by the warpgroup's threads a row at a time (write_out)
  staged_general,  // the whole epilogue into such a D: tma_general's chunks, written the same way
  tma_transposed,  // D = alpha * AB into a column-major fp32 or 16-bit D whose transpose a tensor
                   // map describes (the transposed product's D): slices written transposed into
                   // the store buffers, TMA stores of D^T's chunks
  scaled,          // D = alpha * AB, 16-bit, row-major with aligned pairs, neither described nor
                   // staged (grouped kernels): pairs stored from registers
  general          // anything else (a column-major D with more than alpha * AB, or one whose
                   // transpose no tensor map describes; an fp8 D in tiles under 128 wide):
                   // rolled, from registers
};

// The routes of D = alpha * AB through the store buffers, which the plain kernels take (sm90_gemm's
// PLAIN), with the last round's split.
constexpr bool plain_route(StoreRoute route) {
  return route == StoreRoute::tma || route == StoreRoute::staged ||
         route == StoreRoute::tma_transposed;
}

}  // namespace tilegemm::sm90
