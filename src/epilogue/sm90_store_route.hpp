// How the sm90 epilogue takes a tile's outputs to D, decided once per launch by the host
// (kernels/sm90/tensor_map.hpp: store_route) and passed to the kernel.
#pragma once

namespace tilegemm::sm90 {

enum class StoreRoute {
  tma,          // D = alpha * AB, 16-bit, fp32 or fp8 (tiles 128 or more wide), row-major,
                // described by a tensor map: converted chunks through shared memory, TMA stores
  tma_general,  // the whole epilogue (beta*C, bias, activation) into such a D: computed in
                // registers a round at a time, then the same chunks and TMA stores
  staged,       // any epilogue into a row-major D that no tensor map describes (rows not 16-byte
                // aligned): tma_general's chunks through shared memory, written to D by the
                // warpgroup's threads a row at a time (write_out)
  scaled,       // D = alpha * AB, 16-bit, row-major with aligned pairs but no tensor map (e.g.
                // 4-byte aligned rows): pairs stored from registers
  general       // anything else (a column-major D; an fp8 D in tiles under 128 wide): rolled,
                // from registers
};

}  // namespace tilegemm::sm90
