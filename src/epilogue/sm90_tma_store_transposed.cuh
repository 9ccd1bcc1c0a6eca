// The sm90 epilogue's tma_transposed route: D = alpha * AB into a column-major D whose transpose
// (row-major) a tensor map describes -- the transposed product's D (kernels/sm90/tensor_map.hpp:
// runs_transposed), or any column-major D. A consumer's 64 rows of the tile are 64 columns of
// D^T, so each 64 x 64 slice of its part (64 columns of one wgmma tile) is written transposed into
// the store buffers (sm90_store_chunk.hpp: transposed_slice_offset) and goes to D^T by TMA as
// row-major chunks, the same boxes as the tma route's.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "epilogue/sm90_store_chunk.hpp"
#include "epilogue/sm90_tma_store.cuh"

namespace tilegemm::sm90 {

#ifdef TILEGEMM_SM90A_DEVICE_CODE

// Slices kFirst..kSlices-1 in rounds of kPerRound, each round once TMA has read the last:
// write(s, buffer) fills slice s's chunks from `buffer` on, origin(s, c) is where its chunk c goes.
template <int kFirst, int kSlices, int kPerRound, int kChunksPerSlice, class Write, class Origin>
__device__ __forceinline__ void store_slices(const CUtensorMap& map_dt, unsigned char* buffers,
                                             int batch, WarpgroupBarrier barrier, Write write,
                                             Origin origin) {
  if constexpr (kFirst < kSlices) {
    constexpr int kCount = kSlices - kFirst < kPerRound ? kSlices - kFirst : kPerRound;
    await_buffers(barrier);
#pragma unroll
    for (int i = 0; i < kCount; ++i) {
      write(kFirst + i, buffers + i * kChunksPerSlice * kStoreChunkBytes);
    }
    hand_to_tma<kCount * kChunksPerSlice>(map_dt, buffers, batch, barrier, [&](int c) {
      return origin(kFirst + c / kChunksPerSlice, c % kChunksPerSlice);
    });
    store_slices<kFirst + kCount, kSlices, kPerRound, kChunksPerSlice>(map_dt, buffers, batch,
                                                                       barrier, write, origin);
  }
}

// A consumer's part of the tile (kParts wgmma tiles of 64 rows from row0, N accumulators a thread,
// columns from col0), times alpha, to D^T by `map_dt`: slice (part, q) -- columns 64q.. of wgmma
// tile `part` -- to D^T's rows col0 + 64q.., columns row0 + 64 part... A thread's accumulators
// 4b + 2h + e hold row 16w + lane/4 + 8h, column 8b + 2(lane%4) + e of its wgmma tile (w: its
// warp); each goes to the buffers on its own (two values of a pair lie in two rows of D^T). Nothing
// is held into the next tile. kElementBytes: 4 (fp32 D) or 2 (Half: __half or __nv_bfloat16).
template <int kElementBytes, typename Half, int kBuffers, int kParts, int N>
__device__ __forceinline__ void store_transposed(const CUtensorMap& map_dt, unsigned char* buffers,
                                                 const float (&acc)[kParts][N], float alpha,
                                                 int row0, int col0, int batch,
                                                 WarpgroupBarrier barrier) {
  constexpr int kColumns = store_columns(kElementBytes);
  constexpr int kChunksPerSlice = 64 / kColumns;
  constexpr int kSlicesAlongN = N / 32, kSlices = kParts * kSlicesAlongN;
  static_assert(kBuffers >= kChunksPerSlice, "a slice's chunks in the buffers at once");
  const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
  const auto write = [&](int s, unsigned char* slice) {
    const float(&part)[N] = acc[s / kSlicesAlongN];
    const int q = s % kSlicesAlongN;
#pragma unroll
    for (int b = 0; b < 8; ++b)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int row = 16 * warp + lane / 4 + 8 * h, col = 8 * b + 2 * (lane % 4) + e;
          const float v = alpha * part[4 * (8 * q + b) + 2 * h + e];
          unsigned char* const at = slice + transposed_slice_offset(row, col, kElementBytes);
          if constexpr (kElementBytes == 4) {
            *reinterpret_cast<float*>(at) = v;
          } else if constexpr (std::is_same_v<Half, __half>) {
            *reinterpret_cast<__half*>(at) = __float2half_rn(v);
          } else {
            *reinterpret_cast<__nv_bfloat16*>(at) = __float2bfloat16_rn(v);
          }
        }
  };
  const auto origin = [&](int s, int c) {
    return ChunkOrigin{col0 + 64 * (s % kSlicesAlongN),
                       row0 + 64 * (s / kSlicesAlongN) + kColumns * c};
  };
  store_slices<0, kSlices, kBuffers / kChunksPerSlice, kChunksPerSlice>(map_dt, buffers, batch,
                                                                        barrier, write, origin);
}

#endif  // TILEGEMM_SM90A_DEVICE_CODE

}  // namespace tilegemm::sm90
