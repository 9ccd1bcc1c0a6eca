// Where a 16-byte chunk of an operand tile lives in shared memory: the XOR swizzle of the sm80
// tensor-core kernel. Host + device, unit-tested on the host (tests/host/test_swizzle.cpp).
//
// A tile is `rows` rows of `chunks_per_row` 16-byte chunks, rows along the operand's strided
// dimension, chunks along its contiguous one. Shared memory has 32 four-byte banks, so the bank
// group of a chunk is (byte address / 16) % 8. Two reads must not land in one group:
//
//   ldmatrix       8 consecutive rows (an aligned group of 8), the same logical chunk, one 16-byte
//                  row each: 8 rows -> 8 different groups.
//   tf32 fragments 4 consecutive rows x 2 neighbouring chunks {2j, 2j+1} (scalar 4-byte loads of an
//                  MN-contiguous tf32 tile): 8 different groups.
//   cp.async       consecutive threads write consecutive chunks of a row: the swizzle only permutes
//                  chunks inside a row (and inside its 128-byte line), so a row stays whole.
//
// The swizzle is physical_chunk = chunk XOR key(row), with a key that repeats every 8 rows.
// Rows of 8 chunks or more (128 bytes and up) use key = 2 * (row % 4) + (row / 4) % 2: over 8
// aligned rows it takes every value once (ldmatrix), and rows r..r+3 get keys two apart, so the
// pairs {2j, 2j+1} they read never meet (tf32). Shorter rows share a 128-byte line with their
// neighbours (rows_per_line of them), so the key only has to tell the lines apart:
// key = (row / rows_per_line) % chunks_per_row.
#pragma once

#include "schedule/tile_order.hpp"  // TILEGEMM_HOST_DEVICE

namespace tilegemm::sm80 {

TILEGEMM_HOST_DEVICE constexpr int swizzle_key(int row, int chunks_per_row) {
  if (chunks_per_row >= 8) return 2 * (row % 4) + (row / 4) % 2;
  const int rows_per_line = 8 / chunks_per_row;
  return (row / rows_per_line) % chunks_per_row;
}

// Keys repeat every kSwizzlePeriod rows: moving kSwizzlePeriod rows down moves every chunk by
// the same number of bytes.
inline constexpr int kSwizzlePeriod = 8;

// Byte offset of logical chunk `chunk` of row `row`.
TILEGEMM_HOST_DEVICE constexpr int swizzled_chunk_offset(int row, int chunk, int chunks_per_row) {
  return (row * chunks_per_row + (chunk ^ swizzle_key(row, chunks_per_row))) * 16;
}

}  // namespace tilegemm::sm80
