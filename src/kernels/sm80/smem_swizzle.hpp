// Where a 16-byte chunk of an operand tile lives in shared memory: the XOR swizzle of the sm80
// tensor-core kernel, and the padded rows of its tf32 tiles that ldmatrix cannot read (read with
// 16-byte loads of four fragments). Host + device, unit-tested on the host
// (tests/host/test_swizzle.cpp).
//
// A tile is `rows` rows of `chunks_per_row` 16-byte chunks, rows along the operand's strided
// dimension, chunks along its contiguous one. Shared memory has 32 four-byte banks, so the bank
// group of a chunk is (byte address / 16) % 8. Two reads must not land in one group:
//
//   ldmatrix       8 consecutive rows (an aligned group of 8), the same logical chunk, one 16-byte
//                  row each: 8 rows -> 8 different groups.
//   tf32 fragments 4 consecutive rows x 2 neighbouring chunks {2j, 2j+1} (scalar 4-byte loads of an
//                  MN-contiguous tf32 tile): 8 different groups. The kernel's cp.async path lays
//                  these tiles out with padded rows instead (below).
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

#include "common/host_device.hpp"

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

// Padded rows, for the tf32 tiles whose fragments are not ldmatrix loads (MN-contiguous operands
// on the cp.async path). A fragment load is one 16-byte read per lane, lane l at row k + l % 4,
// values 4(l / 4) .. 4(l / 4) + 3 of a run of 32; shared memory serves it a quarter-warp at a time,
// 8 lanes that read 32 bytes from each of 4 rows. With kRowPadBytes after each row (rows of a
// multiple of 128 bytes), row k+1 sits 32 bytes further round the banks than row k, so the 4 reads
// fill the 32 banks. Unlike the swizzle, every element is at a fixed distance from the thread's
// first one: one address register and immediate offsets serve every fragment and mma step.
inline constexpr int kRowPadBytes = 32;

TILEGEMM_HOST_DEVICE constexpr int padded_row_bytes(int chunks_per_row) {
  return chunks_per_row * 16 + kRowPadBytes;
}

TILEGEMM_HOST_DEVICE constexpr int padded_chunk_offset(int row, int chunk, int chunks_per_row) {
  return row * padded_row_bytes(chunks_per_row) + chunk * 16;
}

// ---- ldmatrix reads, and the offsets a thread holds for them ------------------------------------

// The 16-byte chunk that a lane gives ldmatrix_x4 in one mma step: its row and logical chunk in
// the operand's tile. x0 is the first of the 16 rows of M (A) or columns of N (B) read, ks the mma
// step: two chunks of K (16 values of a 16-bit type, 8 of tf32). The four 8x8 matrices come in the
// order of the mma fragments. An MN-contiguous tile ([k][m] or [k][n], read transposed) is 16-bit.
struct ChunkAt {
  int row, chunk;
};
// A: (m 0-7, k lo), (m 8-15, k lo), (m 0-7, k hi), (m 8-15, k hi).
TILEGEMM_HOST_DEVICE constexpr ChunkAt a_fragment_chunk(bool contig_k, int m0, int ks, int lane) {
  return contig_k ? ChunkAt{m0 + lane % 16, ks * 2 + lane / 16}
                  : ChunkAt{ks * 16 + lane % 8 + (lane / 16) * 8, m0 / 8 + (lane / 8) % 2};
}
// B, two n8 fragments: (n 0-7, k lo), (n 0-7, k hi), (n 8-15, k lo), (n 8-15, k hi).
TILEGEMM_HOST_DEVICE constexpr ChunkAt b_fragment_chunk(bool contig_k, int n0, int ks, int lane) {
  return contig_k ? ChunkAt{n0 + lane % 8 + (lane / 16) * 8, ks * 2 + (lane / 8) % 2}
                  : ChunkAt{ks * 16 + lane % 8 + ((lane / 8) % 2) * 8, n0 / 8 + lane / 16};
}

// A warp reads fragment f (rows or columns x0 = first + 16 f) at mma step ks. Of the two indices,
// one moves the lane's row by 16, two swizzle periods: the same number of bytes whatever the
// row. The other moves its chunk, which the swizzle permutes row by row. So a thread can hold one
// offset per value of the second index, worked out once, and add the first as a constant:
//   K-contiguous tile   offset(ks, f) = held[ks] + f * 16 rows
//   MN-contiguous tile  offset(ks, f) = held[f] + ks * 16 rows
// This is held[v], for v = ks (K-contiguous) or f (MN-contiguous).
TILEGEMM_HOST_DEVICE constexpr int held_fragment_offset(bool operand_b, bool contig_k, int first,
                                                        int v, int lane, int chunks_per_row) {
  const int x0 = contig_k ? first : first + 16 * v;
  const int ks = contig_k ? v : 0;
  const ChunkAt at = operand_b ? b_fragment_chunk(contig_k, x0, ks, lane)
                               : a_fragment_chunk(contig_k, x0, ks, lane);
  return swizzled_chunk_offset(at.row, at.chunk, chunks_per_row);
}

}  // namespace tilegemm::sm80
