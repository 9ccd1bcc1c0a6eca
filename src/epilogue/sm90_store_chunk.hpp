// The sm90 epilogue's staging for TMA stores of a row-major D: each math warpgroup fills chunks of
// 64 rows x 128 bytes -- 64 columns of a 16-bit D, 32 of an fp32 D -- one 128-byte row each, with
// the 128-byte swizzle, so that the warps' writes spread over all banks, and hands each to TMA as
// one box. Host and device; the host tests check the layout against TMA's.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"

namespace tilegemm::sm90 {

constexpr int kStoreRowBytes = 128;
constexpr int kStoreElementBytes = 2;  // the default below: a 16-bit D
constexpr int kStoreRows = 64;
constexpr int kStoreChunkBytes = kStoreRows * kStoreRowBytes;  // 8 KB

TILEGEMM_HOST_DEVICE constexpr int store_columns(int element_bytes = kStoreElementBytes) {
  return kStoreRowBytes / element_bytes;
}
constexpr int kStoreColumns = store_columns();  // 64 x 64 of a 16-bit D

// Where element (row, col) of a store chunk lives: 16-byte chunk c of row r at c ^ (r % 8).
TILEGEMM_HOST_DEVICE constexpr uint32_t store_chunk_offset(int row, int col,
                                                           int element_bytes = kStoreElementBytes) {
  const int byte = col * element_bytes;
  return uint32_t(row * kStoreRowBytes + ((byte / 16) ^ (row % 8)) * 16 + byte % 16);
}

// A column-major D (the tma_transposed route): a 64 x 64 slice of a consumer's part of the tile
// goes out as 64 x 64 values of D^T, row-major, in 64 / store_columns() chunks side by side
// (one of a 16-bit D, two of fp32). Where value (row, col) of the slice lies in them, counted from
// the first chunk's start: row `col` of D^T's chunk row / store_columns(), column row % that.
TILEGEMM_HOST_DEVICE constexpr uint32_t transposed_slice_offset(int row, int col,
                                                                int element_bytes) {
  const int columns = store_columns(element_bytes);
  return uint32_t(row / columns * kStoreChunkBytes) +
         store_chunk_offset(col, row % columns, element_bytes);
}

// Store chunks in a math warpgroup's part of a tile, `rows` x `block_n`, for a D of
// `element_bytes` (an fp32 D has twice the chunks of a 16-bit one).
TILEGEMM_HOST_DEVICE constexpr int store_chunks(int rows, int block_n,
                                                int element_bytes = kStoreElementBytes) {
  return rows / kStoreRows * (block_n / store_columns(element_bytes));
}

}  // namespace tilegemm::sm90
