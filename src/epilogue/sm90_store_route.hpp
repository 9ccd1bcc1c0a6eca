// How the sm90 epilogue takes a tile's outputs to D, decided once per launch by the host
// (kernels/sm90/tensor_map.hpp: store_route) and passed to the kernel.
#pragma once

namespace tilegemm::sm90 {

enum class StoreRoute {
  tma,          // D = alpha * AB, 16-bit, fp32 or fp8 (tiles 128 or more wide), row-major,
                // described by a tensor map: converted chunks through shared memory, TMA stores
  tma_general,  // the whole epilogue (beta*C, bias, activation) into such a D: computed in
                // registers a round at a time, then the same chunks and TMA stores
  scaled,       // D = alpha * AB, 16-bit, row-major with aligned pairs but no tensor map (e.g.
                // 4-byte aligned rows): pairs stored from registers
  general       // anything else (column-major D, rows TMA cannot describe): rolled, from
                // registers
};

}  // namespace tilegemm::sm90
