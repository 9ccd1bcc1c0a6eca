// The sm80 kernel's epilogue, on mma.sync's accumulator layout: lane l of a warp holds rows g and
// g + 8 (g = l / 4) of each m16 tile and columns 2t, 2t + 1 (t = l % 4) of each n8 tile.
//
//   from registers   D = alpha * AB into a row-major D that takes aligned stores, on a tile wholly
//                    inside D: the lanes of a quad trade pairs until each holds 16 bytes of a row
//                    (interleaved B gives it four columns already), with no per-element tests;
//                    no shared memory, so the next work item's copies fly meanwhile
//   through shared   everything else: the accumulators into a BM x (BN + 8) fp32 tile in shared
//                    memory, then runs of 8 outputs consecutive in D, so that stores are
//                    coalesced 16-byte writes, masked at the edges
//
// Interleaved fragments (tf32, MN-contiguous tiles on the cp.async path;
// kernels/sm80/fragments.cuh) permute rows (A) and columns (B) inside each 32; the epilogue puts
// them back.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "epilogue/aligned_runs.hpp"
#include "epilogue/epilogue.hpp"
#include "epilogue/epilogue_stores.cuh"

namespace tilegemm::sm80 {

// The output tile a program writes: its batch entry, first row and column, and how much of it
// lies inside D.
struct OutputTile {
  int64_t batch = 0, row0 = 0, col0 = 0;
  int rows_valid = 0, cols_valid = 0;
};

// fp32 D: lanes t and t^1 trade their pairs of n8 tiles j and j+1 (of one row). An even lane then
// holds columns 2t .. 2t+3 of tile j, an odd one columns 2t-2 .. 2t+1 of tile j+1.
__device__ __forceinline__ float4 pairs_to_fours(float2 tile_j, float2 tile_j1, int t) {
  const bool odd = t % 2;
  const float2 send = odd ? tile_j : tile_j1;
  const float got0 = __shfl_xor_sync(0xffffffffu, send.x, 1);
  const float got1 = __shfl_xor_sync(0xffffffffu, send.y, 1);
  return odd ? make_float4(got0, got1, tile_j1.x, tile_j1.y)
             : make_float4(tile_j.x, tile_j.y, got0, got1);
}

// 16-bit D: words[q] is the lane's packed pair of n8 tile j+q. Afterwards lane t holds the four
// pairs of tile j+t, its eight columns in order: a 4 x 4 transpose over the quad, in two trades
// (with lane t^2 the 2 x 2 blocks off the diagonal, then with t^1 the words off the diagonal).
__device__ __forceinline__ void transpose_quad(uint32_t (&words)[4], int t) {
  const bool upper = t & 2, odd = t & 1;
  uint32_t got0 = __shfl_xor_sync(0xffffffffu, upper ? words[0] : words[2], 2);
  uint32_t got1 = __shfl_xor_sync(0xffffffffu, upper ? words[1] : words[3], 2);
  if (upper) {
    words[0] = got0, words[1] = got1;
  } else {
    words[2] = got0, words[3] = got1;
  }
  got0 = __shfl_xor_sync(0xffffffffu, odd ? words[0] : words[1], 1);
  got1 = __shfl_xor_sync(0xffffffffu, odd ? words[2] : words[3], 1);
  if (odd) {
    words[0] = got0, words[2] = got1;
  } else {
    words[1] = got0, words[3] = got1;
  }
}

// A warp's accumulators: (kMmaM x kMmaN) m16n8 tiles of its warp tile, from row warp_m0 and
// column warp_n0 of the block tile.
template <int kMmaM, int kMmaN, bool kInterleavedA, bool kInterleavedB>
struct WarpAccumulators {
  using Array = float[kMmaM][kMmaN][4];
  const Array& acc;
  int warp_m0, warp_n0, lane;

  // The tile row of accumulators acc[i][.][2h], acc[i][.][2h+1]: row g (h = 0) or g + 8 of m16
  // tile i, or where the interleaved A fragments took them from.
  __device__ __forceinline__ int tile_row(int i, int h) const {
    const int g = lane / 4;
    return kInterleavedA ? warp_m0 + (i / 2) * 32 + 4 * g + (i % 2) * 2 + h
                         : warp_m0 + i * 16 + g + 8 * h;
  }

  // D = alpha * AB straight from the registers, for a tile wholly inside D: 16-byte stores of a
  // row-major D whose rows are 16-byte aligned, or (`unaligned_fp32`, 16-bit inputs) each lane's
  // own pairs into an fp32 D whose rows are not.
  __device__ __forceinline__ void store_scaled(const EpilogueParams& e, const OutputTile& tile,
                                               bool unaligned_fp32) const {
    static_assert(kMmaN % 4 == 0, "the quad trades the pairs of n8 tiles four at a time");
    const int t = lane % 4;
#pragma unroll
    for (int i = 0; i < kMmaM; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int64_t row = e.d.offset(tile.batch, tile.row0 + tile_row(i, h), tile.col0);
        if (unaligned_fp32) {
          float* d = static_cast<float*>(e.d.data) + row + warp_n0;
#pragma unroll
          for (int j = 0; j < kMmaN; ++j) {
            d[j * 8 + 2 * t] = e.alpha * acc[i][j][2 * h];
            d[j * 8 + 2 * t + 1] = e.alpha * acc[i][j][2 * h + 1];
          }
        } else if constexpr (kInterleavedB) {
          // Columns 2t + c of n8 tiles j..j+3 are values 4(2t + c) + q of their 32: four
          // consecutive columns.
#pragma unroll
          for (int j = 0; j < kMmaN; j += 4)
#pragma unroll
            for (int c = 0; c < 2; ++c) {
              const float4 four = {acc[i][j][2 * h + c], acc[i][j + 1][2 * h + c],
                                   acc[i][j + 2][2 * h + c], acc[i][j + 3][2 * h + c]};
              store_scaled4(e.d, row + warp_n0 + j * 8 + 8 * t + 4 * c, e.alpha, four);
            }
        } else if (e.d.dtype == DType::fp32) {
#pragma unroll
          for (int j = 0; j < kMmaN; j += 2) {
            const float4 four = pairs_to_fours({acc[i][j][2 * h], acc[i][j][2 * h + 1]},
                                               {acc[i][j + 1][2 * h], acc[i][j + 1][2 * h + 1]}, t);
            store_scaled4(e.d, row + warp_n0 + (j + t % 2) * 8 + 2 * (t & 2), e.alpha, four);
          }
        } else {
          const bool fp16 = e.d.dtype == DType::fp16;
#pragma unroll
          for (int j = 0; j < kMmaN; j += 4) {
            uint32_t words[4];
#pragma unroll
            for (int q = 0; q < 4; ++q) {
              words[q] = pack_pair(fp16, e.alpha * acc[i][j + q][2 * h],
                                   e.alpha * acc[i][j + q][2 * h + 1]);
            }
            transpose_quad(words, t);
            *reinterpret_cast<uint4*>(static_cast<uint16_t*>(e.d.data) + row + warp_n0 +
                                      (j + t) * 8) = {words[0], words[1], words[2], words[3]};
          }
        }
      }
  }

  // The accumulators into the tile in shared memory (rows kPitch floats apart), in order.
  template <int kPitch>
  __device__ __forceinline__ void to_shared(float* tile_out) const {
    const int t = lane % 4;
#pragma unroll
    for (int i = 0; i < kMmaM; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float* row = &tile_out[tile_row(i, h) * kPitch + warp_n0];
        if constexpr (kInterleavedB) {
#pragma unroll
          for (int j = 0; j < kMmaN; j += 4)
#pragma unroll
            for (int c = 0; c < 2; ++c) {
              *reinterpret_cast<float4*>(&row[j * 8 + 8 * t + 4 * c]) = {
                  acc[i][j][2 * h + c], acc[i][j + 1][2 * h + c], acc[i][j + 2][2 * h + c],
                  acc[i][j + 3][2 * h + c]};
            }
        } else {
#pragma unroll
          for (int j = 0; j < kMmaN; ++j) {
            *reinterpret_cast<float2*>(&row[j * 8 + 2 * t]) = {acc[i][j][2 * h],
                                                               acc[i][j][2 * h + 1]};
          }
        }
      }
  }
};

// The BM x BN tile in shared memory (rows kPitch floats apart) into D, in runs of 8 along D's
// contiguous dimension; consecutive threads of the kThreads take consecutive runs. `d_aligned`:
// D's runs may be written with 16-byte stores.
template <int BM, int BN, int kPitch, int kThreads>
__device__ __forceinline__ void store_runs(const EpilogueParams& e, const OutputTile& tile,
                                           const float* tile_out, bool d_aligned) {
  const bool d_row_major = e.d.stride.col == 1;
  if (d_row_major && d_aligned && scales_only(e)) {
    // D = alpha * AB, edge tiles too: their whole runs leave as an interior tile's do, and only
    // the run that D's last column cuts goes element by element (1000 x 1000 x 1024 then runs 8 %
    // longer than 1024^3 on the same tiles, where the general path below took 65 %).
    constexpr int kRunsPerRow = BN / 8;
    // Rolled: unrolled four times, the loop's addresses raise the spills of the 64 x 64 warp-tile
    // kernels (ptxas allocates for the whole kernel).
#pragma unroll 1
    for (int r = threadIdx.x; r < BM * kRunsPerRow; r += kThreads) {
      const int m = r / kRunsPerRow, n = (r % kRunsPerRow) * 8;
      if (m >= tile.rows_valid || n >= tile.cols_valid) continue;
      const float* run = &tile_out[m * kPitch + n];
      if (n + 8 <= tile.cols_valid) {
        const float4* quads = reinterpret_cast<const float4*>(run);
        store_scaled_run8(e, tile.batch, tile.row0 + m, tile.col0 + n, quads[0], quads[1]);
      } else {
        const int64_t at = e.d.offset(tile.batch, tile.row0 + m, tile.col0 + n);
        for (int j = 0; j < tile.cols_valid - n; ++j) {
          store_from_float(e.d.data, e.d.dtype, at + j, e.alpha * run[j]);
        }
      }
    }
  } else if (d_row_major && !d_aligned && e.d.dtype != DType::fp32) {
    // A 16-bit D whose rows are not 16-byte aligned (an odd ldd, say): runs at the tile's columns
    // would all leave element by element. Each row's runs are shifted back to the 16-byte
    // boundary before it (aligned_runs.hpp), so that all but its first and last leave in one
    // 16-byte store. (An fp32 D's runs, two 16-byte stores each, gain nothing this way.)
    constexpr int kRunsPerRow = BN / 8 + 1;
    const bool fp16 = e.d.dtype == DType::fp16;
#pragma unroll 1
    for (int r = threadIdx.x; r < BM * kRunsPerRow; r += kThreads) {
      const int m = r / kRunsPerRow;
      if (m >= tile.rows_valid) continue;
      const int64_t row = tile.row0 + m, first = e.d.offset(tile.batch, row, tile.col0);
      const OutputRun run =
          shifted_run(r % kRunsPerRow,
                      run_shift(reinterpret_cast<uintptr_t>(e.d.data) + uintptr_t(first) * 2, 2),
                      tile.cols_valid);
      if (run.count == 0) continue;
      float v[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) {  // past the run's end, a stand-in inside it, not stored
        const int n = run.begin + (j < run.count ? j : 0);
        v[j] = epilogue_value(e, tile.batch, row, tile.col0 + n, tile_out[m * kPitch + n]);
      }
      // Stored here rather than by epilogue_store_run, which keeps the 8 values on the stack.
      const int64_t at = first + run.begin;
      if (run.aligned && run.count == 8) {
        *reinterpret_cast<uint4*>(static_cast<uint16_t*>(e.d.data) + at) =
            make_uint4(pack_pair(fp16, v[0], v[1]), pack_pair(fp16, v[2], v[3]),
                       pack_pair(fp16, v[4], v[5]), pack_pair(fp16, v[6], v[7]));
      } else {
#pragma unroll
        for (int j = 0; j < 8; ++j)
          if (j < run.count) store_from_float(e.d.data, e.d.dtype, at + j, v[j]);
      }
    }
  } else {
    const int run_extent = d_row_major ? BN : BM;  // along the run
    for (int r = threadIdx.x; r < BM * BN / 8; r += kThreads) {
      const int along = (r % (run_extent / 8)) * 8, across = r / (run_extent / 8);
      const int m = d_row_major ? across : along, n = d_row_major ? along : across;
      const int inside = d_row_major ? (m < tile.rows_valid ? tile.cols_valid - n : 0)
                                     : (n < tile.cols_valid ? tile.rows_valid - m : 0);
      if (inside <= 0) continue;
      float run[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        run[j] = d_row_major ? tile_out[m * kPitch + n + j] : tile_out[(m + j) * kPitch + n];
      }
      epilogue_store_run(e, tile.batch, tile.row0 + m, tile.col0 + n, inside < 8 ? inside : 8,
                         d_aligned, run);
    }
  }
}

}  // namespace tilegemm::sm80
