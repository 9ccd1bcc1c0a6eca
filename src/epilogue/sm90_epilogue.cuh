// The sm90 kernel's epilogue, as one consumer (math warpgroup) runs it: what it does during a
// tile's K loop, after the loop, and after its last tile. The routes themselves (StoreRoute) are in
// sm90_tma_store.cuh and sm90_registers.cuh.
//
//   overlap     at one K step of each tile, while that step's wgmma run: the last tile's held
//               chunks of D go to TMA, and the first chunks of this tile's C come in by TMA
//   store       the tile's accumulators into D, by the launch's route
//   finish      the last tile's held chunks out, and every TMA store's read of the buffers done
//               before the program (and its shared memory) ends
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "epilogue/epilogue.hpp"
#include "epilogue/sm90_registers.cuh"
#include "epilogue/sm90_store_chunk.hpp"
#include "epilogue/sm90_store_route.hpp"
#include "epilogue/sm90_tma_store.cuh"
#include "epilogue/sm90_tma_store_transposed.cuh"
#include "ptx/sm90.cuh"
#include "schedule/tile_order.hpp"

namespace tilegemm::sm90 {

#ifdef TILEGEMM_SM90A_DEVICE_CODE

// kRows x kBlockN: the consumer's part of a tile (kRows / 64 wgmma tiles). kBuffers: its store
// buffers. kPlain: the kernel's route is `tma`, `staged` or `tma_transposed` (D = alpha * AB
// through the store buffers); else it is one of the others, chosen per launch. kHoldsChunks: the
// first two carry chunks into the next tile (store_tma). kFp32CInBuffers: an fp32 C may come into
// the buffers too (where it does not, that code is left out: in 256x128 its requests and reads made
// ptxas spill in the K loop, and each thread loads its own C instead). kFp8Out: D may be fp8 (the
// kernels for fp8 inputs), with its scale and amax (Fp8Output), by any route.
template <int kRows, int kBlockN, int kBuffers, bool kPlain, bool kHoldsChunks,
          bool kFp32CInBuffers_, bool kFp8Out = false>
struct Sm90Epilogue {
  static constexpr int kParts = kRows / 64;
  static constexpr bool kFp32CInBuffers = kFp32CInBuffers_;

  // What a consumer keeps from one tile to the next. The kernel's parameters (the epilogue's, D's
  // tensor map) are passed to each call rather than kept here: a reference kept across the K loop
  // would hold their address in registers.
  unsigned char* buffers;    // the consumer's store buffers
  WarpgroupBarrier barrier;  // the consumer's 128 threads
  bool c_in_buffers;         // C comes by TMA into the buffers (the tma_general route)
  SourceC c;
  HeldChunks held;  // chunks of the last tile's D not yet stored (store_tma)

  __device__ __forceinline__ Sm90Epilogue(unsigned char* buffers_, WarpgroupBarrier barrier_,
                                          bool c_in_buffers_, SourceC c_)
      : buffers(buffers_), barrier(barrier_), c_in_buffers(c_in_buffers_), c(c_) {}

  // The K step of a tile at which overlap() runs: late enough that the stores issued at the end
  // of the last tile have read their buffers (two K steps, ~1.4 us at 128x256), early enough for
  // any K.
  __device__ __forceinline__ static int overlap_step(int k_steps) {
    return k_steps > 2 ? 2 : k_steps - 1;
  }

  // While a K step's wgmma run: the last tile's held chunks go to D (the tma and staged routes), or
  // (`reads_c`: this consumer writes the tile, with C by TMA) the first of its C chunks come in,
  // as many as there are buffers. row0, col0: the consumer's part of the tile.
  __device__ __forceinline__ void overlap(const EpilogueParams& e, const ChunkTarget& target,
                                          bool reads_c, int row0, int col0, int batch) {
    if constexpr (kPlain) {
      if constexpr (kHoldsChunks) held.store(target, buffers, barrier);
    } else if (reads_c) {
      const auto request_first = [&](auto element_bytes) {
        constexpr int kBytes = decltype(element_bytes)::value, kColumns = store_columns(kBytes);
        constexpr int kChunks = store_chunks(kRows, kBlockN, kBytes);
        constexpr int kFirst = kBuffers < kChunks ? kBuffers : kChunks;
        c.template request<kFirst>(buffers, batch, [&](int i) {
          return chunk_origin<kBlockN / kColumns, kColumns>(row0, col0, i);
        });
      };
      if (kFp32CInBuffers && e.d.dtype == DType::fp32) {
        request_first(std::integral_constant<int, 4>{});
      } else {
        request_first(std::integral_constant<int, 2>{});
      }
    }
  }

  // The consumer's part of `tile` (its rows from my_row) into D: by `route`, tma or staged in a
  // plain kernel. m, n: D's extent (rows from m on are not written); pairs: D takes a
  // thread's two columns in one store (the registers' routes); row_origin: the row of D where
  // tile row 0 starts (a grouped kernel's group's first row).
  template <int N>
  __device__ __forceinline__ void store(const EpilogueParams& e, const ChunkTarget& target,
                                        StoreRoute route, float (&acc)[kParts][N],
                                        const BatchedTile& tile, int block_m, int my_row, int64_t m,
                                        int64_t n, bool pairs, int64_t row_origin = 0) {
    const int tile_row = int(row_origin + tile.tile.pid_m * block_m) + my_row;
    const int tile_col = int(tile.tile.pid_n * kBlockN);
    // An fp8 D's scale and this tile's amax, which each warp raises D's to once the tile is stored.
    const bool fp8_d = kFp8Out && is_fp8(e.d.dtype);
    Fp8Output fp8;
    if (fp8_d && e.d_scale != nullptr) fp8.scale = *e.d_scale;
    const auto raise_amax = [&] {
      if (fp8_d && e.d_amax != nullptr) fp8.raise_amax(e.d_amax);
    };
    if (route == StoreRoute::tma_transposed) {
      const auto store = [&](auto element_bytes, auto half) {
        store_transposed<decltype(element_bytes)::value, decltype(half), kBuffers>(
            target.map, buffers, acc, e.alpha, tile_row, tile_col, int(tile.batch), barrier);
      };
      if (e.d.dtype == DType::fp32) {
        store(std::integral_constant<int, 4>{}, float{});
      } else if (e.d.dtype == DType::fp16) {
        store(std::integral_constant<int, 2>{}, __half{});
      } else {
        store(std::integral_constant<int, 2>{}, __nv_bfloat16{});
      }
      return;
    }
    if constexpr (kPlain) {
      const auto store = [&](auto pair) {
        store_tma<decltype(pair), kBuffers, kHoldsChunks>(
            target, buffers, held, acc, e.alpha, tile_row, tile_col, int(tile.batch), barrier, fp8);
      };
      if constexpr (kFp8Out && kBlockN % store_columns(1) == 0) {  // else never this route
        if (fp8_d) {
          e.d.dtype == DType::fp8_e5m2 ? store(__nv_fp8x2_e5m2{}) : store(__nv_fp8x2_e4m3{});
          raise_amax();
          return;
        }
      }
      if (e.d.dtype == DType::bf16) {
        store(__nv_bfloat162{});
      } else if (e.d.dtype == DType::fp16) {
        store(__half2{});
      } else {
        store(float2{});
      }
      return;
    }
    if (route == StoreRoute::tma_general || route == StoreRoute::staged_general) {
      const auto finish = [&](auto element_bytes) {
        finish_tma<decltype(element_bytes)::value, kBuffers, kFp32CInBuffers>(
            e, target, buffers, acc, tile_row, tile_col, int(tile.batch), barrier, c_in_buffers, c,
            &fp8);
      };
      if constexpr (kFp8Out && kBlockN % store_columns(1) == 0) {  // else never this route
        if (fp8_d) {
          finish(std::integral_constant<int, 1>{});
          raise_amax();
          return;
        }
      }
      if (e.d.dtype == DType::fp32) {
        finish(std::integral_constant<int, 4>{});
      } else {
        finish(std::integral_constant<int, 2>{});
      }
      return;
    }
    // From registers (wgmma's accumulator layout): the thread's first pair.
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    const int64_t row0 = row_origin + tile.tile.pid_m * block_m + my_row + warp * 16 + lane / 4;
    const int64_t col0 = tile.tile.pid_n * kBlockN + 2 * (lane % 4);
    if constexpr (kFp8Out) {
      if (fp8_d) {
#pragma unroll
        for (int i = 0; i < kParts; ++i) {
          finish_rolled<true>(e, tile.batch, row0 + i * 64, col0, acc[i], m, n, pairs, &fp8);
        }
        raise_amax();
        return;
      }
    }
    // The unrolled form where every column of the tile lies inside D; rows are masked either way.
    const bool scaled = route == StoreRoute::scaled && tile_col + kBlockN <= n;
#pragma unroll
    for (int i = 0; i < kParts; ++i) {
      const int64_t row = row0 + i * 64;
      if (scaled && e.d.dtype == DType::bf16) {
        store_scaled<__nv_bfloat162>(e, tile.batch, row, col0, acc[i], m);
      } else if (scaled) {
        store_scaled<__half2>(e, tile.batch, row, col0, acc[i], m);
      } else {
        finish_rolled(e, tile.batch, row, col0, acc[i], m, n, pairs);
      }
    }
  }

  // After the consumer's last tile: the held chunks out, and every TMA store's read of the
  // buffers done before the program's shared memory goes.
  __device__ __forceinline__ void finish(const ChunkTarget& target, StoreRoute route) {
    if constexpr (kPlain && kHoldsChunks) held.store(target, buffers, barrier);
    if ((kPlain || route == StoreRoute::tma_general) && threadIdx.x % 128 == 0) {
      cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{});
    }
  }
};

#endif  // TILEGEMM_SM90A_DEVICE_CODE

}  // namespace tilegemm::sm90
