// The sm80 kernel's operand tiles in shared memory, and the loader that fills a stage of one from
// global memory: by cp.async where the operand's rows are 16-byte aligned, else through registers
// (the staged path).
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/sm80/smem_swizzle.hpp"
#include "ptx/cp_async.cuh"

namespace tilegemm::sm80 {

// One stage of one operand: kRows rows of kCols elements of E, rows along the operand's strided
// dimension, kCols along its contiguous one ([x][k] for K-contiguous, [k][x] otherwise). Rows are
// swizzled, or PADDED (tf32 tiles that ldmatrix cannot read; smem_swizzle.hpp).
template <class E, int kRows_, int kCols, bool PADDED>
struct SmemTile {
  static constexpr bool kPadded = PADDED;
  static constexpr int kRows = kRows_;
  static constexpr int kPerChunk = 16 / E::kBytes;  // elements in 16 bytes
  static constexpr int kChunksPerRow = kCols / kPerChunk;
  static constexpr int kRowBytes = PADDED ? padded_row_bytes(kChunksPerRow) : kCols * E::kBytes;
  static constexpr int kBytes = kRows_ * kRowBytes;
  static_assert(kCols % kPerChunk == 0 && (kChunksPerRow & (kChunksPerRow - 1)) == 0,
                "rows are a power-of-two number of 16-byte chunks (the swizzle needs it)");
  static_assert(!PADDED || kChunksPerRow >= 8, "padded rows are whole 128-byte lines");

  __device__ static uint32_t chunk(uint32_t base, int row, int chunk) {
    return base + (PADDED ? padded_chunk_offset(row, chunk, kChunksPerRow)
                          : swizzled_chunk_offset(row, chunk, kChunksPerRow));
  }
  __device__ static uint32_t element(uint32_t base, int row, int col) {
    return chunk(base, row, col / kPerChunk) + (col % kPerChunk) * E::kBytes;
  }
};

// The tile of an operand: X is its extent along M (A) or N (B), CONTIG_K whether K is its
// contiguous dimension (row-major A, column-major B). The tiles that ldmatrix cannot read
// (MN-contiguous values it cannot transpose: tf32) are padded on the cp.async path (ASYNC) and
// read with 16-byte loads; the staged path keeps the swizzle and scalar loads.
template <class E, int X, int BK, bool CONTIG_K, bool ASYNC>
using OperandTile =
    SmemTile<E, CONTIG_K ? X : BK, CONTIG_K ? BK : X, ASYNC && !E::kMnMajorOperands && !CONTIG_K>;

// Moves one BK-slice of an operand into a stage. Thread t owns chunks t, t + kThreads, ... of
// the tile in row-major chunk order: consecutive threads read consecutive 16 bytes of a row
// (coalesced) and, kThreads being a multiple of a row's chunks, a thread's chunks all sit in
// the same column of chunks, kRowStep rows apart. Its one global address steps by a slice per
// K step.
template <class E, int X, int BK, int kThreads, bool CONTIG_K, bool ASYNC>
struct OperandLoader {
  using T = typename E::Storage;
  using Tile = OperandTile<E, X, BK, CONTIG_K, ASYNC>;
  static constexpr int V = Tile::kPerChunk;
  static constexpr int kChunks = Tile::kRows * Tile::kChunksPerRow;
  static constexpr int kPerThread = kChunks / kThreads;
  static constexpr int kRowStep = kThreads / Tile::kChunksPerRow;
  static_assert(kChunks % kThreads == 0 && kThreads % Tile::kChunksPerRow == 0,
                "the tile must split evenly over the threads");

  const T* first = nullptr;        // the thread's first element in slice 0
  const T* origin = nullptr;       // element (0, 0) of slice 0: always inside the matrix
  int64_t ld = 0;                  // elements between rows of the tile in global memory
  int64_t chunk_step = 0;          // elements from one of the thread's chunks to the next
  int64_t slice_step = 0;          // elements from one slice to the next
  int row0 = 0, col0 = 0;          // the thread's first chunk in the tile
  int x_valid = 0;                 // rows (A) or columns (B) of the tile inside the matrix
  uint32_t staged[kPerThread][4];  // the staged path's chunks, between load and store

  // `tile_origin` is element (x0, 0) of the operand; stride_x/stride_k its strides.
  __device__ void start(const T* tile_origin, int64_t stride_x, int64_t stride_k, int valid) {
    row0 = threadIdx.x / Tile::kChunksPerRow;
    col0 = (threadIdx.x % Tile::kChunksPerRow) * V;
    ld = CONTIG_K ? stride_x : stride_k;
    chunk_step = kRowStep * ld;
    slice_step = BK * stride_k;
    origin = tile_origin;
    first = tile_origin + row0 * ld + col0;
    x_valid = valid;
  }

  // Where chunk p goes in a stage. When the thread's chunks are a whole number of swizzle
  // periods apart (or rows are padded) they all sit at one offset from the first: no per-chunk
  // swizzle math.
  __device__ uint32_t destination(uint32_t stage, int p) const {
    if constexpr (Tile::kPadded || kRowStep % kSwizzlePeriod == 0) {
      return Tile::chunk(stage, row0, col0 / V) + p * kRowStep * Tile::kRowBytes;
    } else {
      return Tile::chunk(stage, row0 + p * kRowStep, col0 / V);
    }
  }

  // Elements of chunk p inside the matrix (0..V), for a slice with k_valid values of K.
  __device__ int elements_inside(int p, int k_valid) const {
    const int rows_valid = CONTIG_K ? x_valid : k_valid;
    const int cols_valid = CONTIG_K ? k_valid : x_valid;
    if (row0 + p * kRowStep >= rows_valid) return 0;
    const int n = cols_valid - col0;
    return n >= V ? V : (n > 0 ? n : 0);
  }

  // Aligned operands: straight to shared memory, zero-filling outside the matrix. A slice wholly
  // inside the matrix (every slice of an interior tile but a partial last one) needs no masks.
  __device__ void copy_async(int64_t kt, int k_valid, uint32_t stage) const {
    const T* slice = first + kt * slice_step;
    if (x_valid == X && k_valid == BK) {
#pragma unroll
      for (int p = 0; p < kPerThread; ++p) {
        cp_async_16(destination(stage, p), slice + p * chunk_step, 16);
      }
      return;
    }
#pragma unroll
    for (int p = 0; p < kPerThread; ++p) {
      const int inside = elements_inside(p, k_valid);
      const T* src = inside > 0 ? slice + p * chunk_step : origin;
      cp_async_16(destination(stage, p), src, inside * E::kBytes);
    }
  }

  // Unaligned operands, first half: element loads into registers, zeros outside the matrix.
  __device__ void load_staged(int64_t kt, int k_valid) {
    const T* slice = first + kt * slice_step;
#pragma unroll
    for (int p = 0; p < kPerThread; ++p) {
      const int inside = elements_inside(p, k_valid);
      const T* src = slice + p * chunk_step;
      T values[V];
#pragma unroll
      for (int j = 0; j < V; ++j) values[j] = j < inside ? src[j] : T(0.0f);
      static_assert(sizeof(values) == sizeof(staged[p]));
      memcpy(staged[p], values, sizeof(values));
    }
  }

  // The staged path's reach past its one slice in registers: slice kt's L2 lines requested ahead
  // of its element loads. A row of the tile is 128 bytes, on two L2 lines where it does not start
  // on one: the thread of a row's first chunk asks for the row's first element, the thread of its
  // last chunk for the last one inside the matrix.
  __device__ void prefetch_staged(int64_t kt, int k_valid) const {
    const T* slice = first + kt * slice_step;
    constexpr int kLastChunk = (Tile::kChunksPerRow - 1) * V;
    if (col0 != 0 && col0 != kLastChunk) return;
#pragma unroll
    for (int p = 0; p < kPerThread; ++p) {
      const int inside = elements_inside(p, k_valid);
      if (inside > 0) prefetch_l2(slice + p * chunk_step + (col0 == 0 ? 0 : inside - 1));
    }
  }

  // Second half: registers -> the stage.
  __device__ void store_staged(uint32_t stage) const {
#pragma unroll
    for (int p = 0; p < kPerThread; ++p) {
      asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(destination(stage, p)),
                   "r"(staged[p][0]), "r"(staged[p][1]), "r"(staged[p][2]), "r"(staged[p][3]));
    }
  }
};

}  // namespace tilegemm::sm80
