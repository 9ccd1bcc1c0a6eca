// The sm90 epilogue's routes through shared memory, for a row-major D: each math warpgroup
// ("consumer") converts its part of the tile into chunks of 64 rows x 128 bytes in its store
// buffers (sm90_store_chunk.hpp) and hands them over (ChunkTarget): to TMA, which stores them while
// the warpgroup moves on, where a tensor map describes D (the tma routes); else the warpgroup
// writes them to D itself, a chunk row per store instruction (the staged routes).
//
//   store_tma   D = alpha * AB. What does not fit in the buffers waits in registers (HeldChunks)
//               and goes out during the next tile's K loop.
//   finish_tma  beta*C, bias, activation: computed a round at a time (sm90_registers.cuh) into
//               the chunks, with C brought into the same buffers by TMA during the K loop when it
//               has D's type and layout (SourceC).
//
// Writes to the buffers go through the generic proxy and TMA reads through the async proxy: a
// proxy fence, then the warpgroup's barrier, before each hand-over.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "epilogue/epilogue.hpp"
#include "epilogue/epilogue_stores.cuh"
#include "epilogue/sm90_registers.cuh"
#include "epilogue/sm90_store_chunk.hpp"
#include "ptx/sm90.cuh"

namespace tilegemm::sm90 {

#ifdef TILEGEMM_SM90A_DEVICE_CODE

// One chunk of D (64 rows x 128 bytes) as one thread holds it, scaled and converted to the output
// type: 16 words. The thread's pair (block, half) is row 16w + lane/4 + 8*half, columns
// 8*block + 2(lane%4) + {0,1} of the chunk:
//   fp8 D (128 columns, 16 blocks):  half `half` of word `block` is the pair, packed;
//   16-bit D (64 columns, 8 blocks): word 2*block + half is the pair, packed;
//   fp32 D (32 columns, 4 blocks):   words 4*block + 2*half + {0,1} are its two values.
struct ChunkWords {
  uint32_t word[16];
};

// Bytes of one value of D for a pair type: __nv_fp8x2_e4m3 and __nv_fp8x2_e5m2 hold two fp8
// values, __half2 and __nv_bfloat162 two 16-bit values, float2 two fp32 ones.
template <typename Pair>
constexpr int kPairElementBytes = int(sizeof(Pair)) / 2;

// Chunk `chunk` (columns store_columns() * chunk..) of a 64-row wgmma tile's accumulators, times
// alpha; an fp8 D's values through `fp8` (its amax, then its scale).
template <typename Pair, int N>
__device__ __forceinline__ ChunkWords convert_chunk(const float (&acc)[N], int chunk, float alpha,
                                                    Fp8Output& fp8) {
  constexpr int kBlocks = store_columns(kPairElementBytes<Pair>) / 8;  // of 4 registers each
  ChunkWords out;
#pragma unroll
  for (int block = 0; block < kBlocks; ++block)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int r = 4 * (kBlocks * chunk + block) + 2 * half;
      const float v0 = alpha * acc[r], v1 = alpha * acc[r + 1];
      if constexpr (std::is_same_v<Pair, float2>) {
        out.word[4 * block + 2 * half] = __float_as_uint(v0);
        out.word[4 * block + 2 * half + 1] = __float_as_uint(v1);
      } else if constexpr (kPairElementBytes<Pair> == 1) {
        const uint32_t pair =
            pack_fp8_pair(std::is_same_v<Pair, __nv_fp8x2_e5m2>, fp8.take(v0), fp8.take(v1));
        out.word[block] = half == 0 ? pair : out.word[block] | pair << 16;
      } else {
        Pair pair;
        if constexpr (std::is_same_v<Pair, __half2>) {
          pair = __floats2half2_rn(v0, v1);
        } else {
          pair = __floats2bfloat162_rn(v0, v1);
        }
        out.word[2 * block + half] = *reinterpret_cast<uint32_t*>(&pair);
      }
    }
  return out;
}

// Writes a thread's words of a chunk into a store buffer (store_chunk_offset's layout): one
// 2-byte pair per (block, half) for an fp8 D, 4-byte for a 16-bit D, 8-byte for an fp32 D.
template <int kElementBytes>
__device__ __forceinline__ void write_chunk(unsigned char* buffer, const ChunkWords& chunk) {
  const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
  const int row = 16 * warp + lane / 4, col = 2 * (lane % 4);  // the thread's first pair
  constexpr int kBlocks = store_columns(kElementBytes) / 8;
#pragma unroll
  for (int block = 0; block < kBlocks; ++block)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      unsigned char* const at =
          buffer + store_chunk_offset(row + 8 * half, 8 * block + col, kElementBytes);
      if constexpr (kElementBytes == 4) {
        *reinterpret_cast<uint2*>(at) =
            make_uint2(chunk.word[4 * block + 2 * half], chunk.word[4 * block + 2 * half + 1]);
      } else if constexpr (kElementBytes == 1) {
        *reinterpret_cast<uint16_t*>(at) = uint16_t(chunk.word[block] >> (16 * half));
      } else {
        *reinterpret_cast<uint32_t*>(at) = chunk.word[2 * block + half];
      }
    }
}

// The warpgroup's first thread hands a written chunk to TMA: rows row0.., columns col0.. of D.
__device__ __forceinline__ void issue_store(const CUtensorMap& map_d, unsigned char* buffer,
                                            int row0, int col0, int batch) {
  const int32_t coords[3] = {col0, row0, batch};
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared, &map_d, coords,
                                  buffer);
}

// Where a chunk goes in D: its first row and column.
struct ChunkOrigin {
  int row, col;
};

// Where chunk c of a consumer's part of a tile goes in D (or comes from in C): the part's first
// row and column are row0 and col0; its chunks (kColumns wide) run along the columns, then down
// the 64-row parts.
template <int kChunksPerPart, int kColumns = kStoreColumns>
__device__ __forceinline__ ChunkOrigin chunk_origin(int row0, int col0, int c) {
  return {row0 + c / kChunksPerPart * kStoreRows, col0 + c % kChunksPerPart * kColumns};
}

// Waits until the warpgroup's earlier TMA stores have read its store buffers.
__device__ __forceinline__ void await_buffers(WarpgroupBarrier barrier) {
  if (threadIdx.x % 128 == 0) cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{});
  barrier.sync();
}

// Hands the warpgroup's first kCount buffers, written by all its threads, to TMA: buffer i goes to
// origin(i) in D, whole lines clipped at the matrix's edges, while the warpgroup moves on. Writes
// go through the generic proxy and TMA reads through the async proxy, hence the proxy fence.
template <int kCount, class Origin>
__device__ __forceinline__ void hand_to_tma(const CUtensorMap& map_d, unsigned char* buffers,
                                            int batch, WarpgroupBarrier barrier, Origin origin) {
  cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  barrier.sync();
  if (threadIdx.x % 128 == 0) {
#pragma unroll
    for (int i = 0; i < kCount; ++i) {
      const ChunkOrigin at = origin(i);
      issue_store(map_d, buffers + i * kStoreChunkBytes, at.row, at.col, batch);
    }
    cuda::ptx::cp_async_bulk_commit_group();
  }
}

// The staged routes (a row-major D that TMA cannot describe): the warpgroup writes its first kCount
// buffers, written by all its threads, to D itself, buffer i at origin(i). Warp w takes rows
// 16w..16w+15 of each chunk and its lanes a row's 128 bytes, 4 each, so that one store
// instruction covers a row's 128 contiguous bytes of D (a lane stores its 4 bytes at once where
// they lie 4-byte aligned in D, else value by value); nothing past D's edges (m, n) is written.
// The buffers are read with generic loads: the next writer waits on the warpgroup's barrier
// (await_buffers), as for TMA's reads.
template <int kCount, int kElementBytes, class Origin>
__device__ __forceinline__ void write_out(const MatrixView& d, int64_t batch,
                                          const unsigned char* buffers, WarpgroupBarrier barrier,
                                          Origin origin, int64_t m, int64_t n) {
  constexpr int kValues = 4 / kElementBytes;  // per lane and row
  barrier.sync();
  const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
  const int col = kValues * lane;  // the lane's first column of the chunk
#pragma unroll 1
  for (int i = 0; i < kCount; ++i) {
    const ChunkOrigin at = origin(i);
    const int64_t d_col = at.col + col;
    if (d_col >= n) continue;
    const unsigned char* const buffer = buffers + i * kStoreChunkBytes;
#pragma unroll 4
    for (int r = 0; r < 16; ++r) {
      const int row = 16 * warp + r;
      if (at.row + row >= m) break;
      const uint32_t word =
          *reinterpret_cast<const uint32_t*>(buffer + store_chunk_offset(row, col, kElementBytes));
      unsigned char* const target = static_cast<unsigned char*>(d.data) +
                                    d.offset(batch, at.row + row, d_col) * kElementBytes;
      if (kElementBytes == 4 ||
          (d_col + kValues <= n && reinterpret_cast<uintptr_t>(target) % 4 == 0)) {
        *reinterpret_cast<uint32_t*>(target) = word;
        continue;
      }
      if constexpr (kElementBytes < 4) {
#pragma unroll
        for (int j = 0; j < kValues; ++j) {
          if (d_col + j >= n) break;
          const uint32_t value = word >> (8 * kElementBytes * j);
          if constexpr (kElementBytes == 2) {
            reinterpret_cast<uint16_t*>(target)[j] = uint16_t(value);
          } else {
            target[j] = uint8_t(value);
          }
        }
      }
    }
  }
}

// Where a warpgroup's written store buffers go: to D by TMA stores (map), or, on the staged routes
// (a row-major D that no tensor map describes), by the threads themselves (write_out). Built at
// each call from the kernel's parameters, not kept across the K loop.
struct ChunkTarget {
  const CUtensorMap& map;
  const MatrixView& d;
  int64_t m, n;  // D's extent
  bool staged;

  // The first kCount buffers, buffer i to origin(i) in D.
  template <int kCount, int kElementBytes, class Origin>
  __device__ __forceinline__ void hand_over(unsigned char* buffers, int batch,
                                            WarpgroupBarrier barrier, Origin origin) const {
    if (staged) {
      write_out<kCount, kElementBytes>(d, batch, buffers, barrier, origin, m, n);
    } else {
      hand_to_tma<kCount>(map, buffers, batch, barrier, origin);
    }
  }
};

// One round of stores of kCount chunks of D, through the consumer's first kCount buffers:
// once the stores of the round before have read the buffers, every thread writes its part of
// chunk i (chunk(i), ChunkWords of a D of kElementBytes) into buffer i, and the buffers go to
// origin(i) in D.
template <int kCount, int kElementBytes, class Chunk, class Origin>
__device__ __forceinline__ void store_round(const ChunkTarget& target, unsigned char* buffers,
                                            int batch, WarpgroupBarrier barrier, Chunk chunk,
                                            Origin origin) {
  await_buffers(barrier);
#pragma unroll
  for (int i = 0; i < kCount; ++i) {
    write_chunk<kElementBytes>(buffers + i * kStoreChunkBytes, chunk(i));
  }
  target.hand_over<kCount, kElementBytes>(buffers, batch, barrier, origin);
}

// Chunks kFirst..kEnd-1 in rounds of up to kBuffers, each round once the last is read.
template <int kFirst, int kEnd, int kBuffers, int kElementBytes, class Chunk, class Origin>
__device__ __forceinline__ void store_rounds(const ChunkTarget& target, unsigned char* buffers,
                                             int batch, WarpgroupBarrier barrier, Chunk chunk,
                                             Origin origin) {
  if constexpr (kFirst < kEnd) {
    constexpr int kCount = kEnd - kFirst < kBuffers ? kEnd - kFirst : kBuffers;
    store_round<kCount, kElementBytes>(
        target, buffers, batch, barrier, [&](int i) { return chunk(kFirst + i); },
        [&](int i) { return origin(kFirst + i); });
    store_rounds<kFirst + kCount, kEnd, kBuffers, kElementBytes>(target, buffers, batch, barrier,
                                                                 chunk, origin);
  }
}

// Chunks of D that wait in a consumer's registers, converted, for a free store buffer.
struct HeldChunks {
  static constexpr int kCount = 2;
  ChunkWords chunk[kCount];
  ChunkOrigin origin[kCount];
  int batch = 0;
  bool waiting = false;
  bool fp32 = false;  // D's type: the chunks' layout (ChunkWords)

  // Stores the held chunks, if any (store_round first waits until the buffers are read).
  __device__ __forceinline__ void store(const ChunkTarget& target, unsigned char* buffers,
                                        WarpgroupBarrier barrier) {
    if (!waiting) return;
    const auto held = [&](int i) -> const ChunkWords& { return chunk[i]; };
    static_assert(kCount == 2);
    // Not origin[i]: write_out's loop over i is rolled, and an array read at a runtime index
    // would live in local memory.
    const auto at = [&](int i) { return i == 0 ? origin[0] : origin[1]; };
    if (fp32) {
      store_round<kCount, 4>(target, buffers, batch, barrier, held, at);
    } else {
      store_round<kCount, 2>(target, buffers, batch, barrier, held, at);
    }
    waiting = false;
  }
};

// D = alpha * AB through shared memory to `target`, for a consumer's part of the tile (kParts wgmma
// tiles of 64 rows, from row0, columns from col0), in chunks of 64 rows x 128 bytes (64 x 128 of
// an fp8 D, 64 x 64 of a 16-bit D, 64 x 32 of an fp32 D; Pair: __nv_fp8x2_e4m3, __nv_fp8x2_e5m2,
// __half2, __nv_bfloat162 or float2). An fp8 D's values go through `fp8` unmasked: past D's
// edges the accumulators are zero (TMA fills the operands' boxes there with zeros), and so count
// nothing into the amax.
//   kBuffers >= chunks  one round: every chunk is written and stored at once; the buffers' last
//                       stores, a tile ago, have long read them.
//   kHold               (buffers for fewer chunks than an fp32 D's part: 128x256, 256x128 and
//                       128x128 with two consumers) the last two chunks wait in registers,
//                       converted (32 of them), and the consumer goes on to its next tile. It
//                       stores them during that tile's K loop, while a K step's wgmma run, when
//                       the chunks before have left the buffers. The chunks before go in rounds
//                       of kBuffers, each once TMA has read the last: none for a 16-bit D in
//                       128x128 (two chunks, two buffers), one round for 128x256, three for an
//                       fp32 D there. Storing every chunk here made the consumer wait for TMA
//                       to read the first ones, with the tensor cores idle. Holding four takes 64
//                       registers, which spill.
//   otherwise           (ping-pong with an fp32 D) rounds of kBuffers, each once TMA has read the
//                       last; the other consumer's mainloop runs meanwhile.
template <typename Pair, int kBuffers, bool kHold, int kParts, int N>
__device__ __forceinline__ void store_tma(const ChunkTarget& target, unsigned char* buffers,
                                          HeldChunks& held, const float (&acc)[kParts][N],
                                          float alpha, int row0, int col0, int batch,
                                          WarpgroupBarrier barrier, Fp8Output& fp8) {
  constexpr int kElementBytes = kPairElementBytes<Pair>;
  constexpr int kColumns = store_columns(kElementBytes);
  constexpr int kChunksPerPart = 2 * N / kColumns;  // N accumulators per thread: 2N columns
  constexpr int kChunks = kParts * kChunksPerPart;
  // Chunk c of the part, counted part by part.
  const auto convert = [&](int c) {
    return convert_chunk<Pair>(acc[c / kChunksPerPart], c % kChunksPerPart, alpha, fp8);
  };
  const auto origin = [&](int c) { return chunk_origin<kChunksPerPart, kColumns>(row0, col0, c); };
  if constexpr (kBuffers >= kChunks) {
    store_round<kChunks, kElementBytes>(target, buffers, batch, barrier, convert, origin);
  } else if constexpr (kHold) {
    static_assert(kElementBytes > 1, "an fp8 D's part is two chunks at most: one round");
    static_assert(kBuffers >= HeldChunks::kCount && kChunks > HeldChunks::kCount,
                  "the last two chunks held, the others stored");
    constexpr int kStored = kChunks - HeldChunks::kCount;
    held.store(target, buffers, barrier);  // only if the K loop had no step to do it
    store_rounds<0, kStored, kBuffers, kElementBytes>(target, buffers, batch, barrier, convert,
                                                      origin);
#pragma unroll
    for (int i = 0; i < HeldChunks::kCount; ++i) {
      held.chunk[i] = convert(kStored + i);
      held.origin[i] = origin(kStored + i);
    }
    held.batch = batch;
    held.fp32 = kElementBytes == 4;
    held.waiting = true;
  } else {
    store_rounds<0, kChunks, kBuffers, kElementBytes>(target, buffers, batch, barrier, convert,
                                                      origin);
  }
}

// C for the tma_general route, loaded by TMA into a consumer's store buffers, where each thread
// finds its values of C and leaves D's in their place. `full` (one per consumer) completes when
// the chunks requested last have landed; every request is waited for by the whole warpgroup, so
// the phases of `full` and `phase` stay in step.
struct SourceC {
  const CUtensorMap* map;
  uint64_t* full;
  uint32_t phase = 0;

  // The warpgroup's first thread asks for kCount chunks of C (chunk i from origin(i)) in the first
  // kCount buffers, once TMA has read what the buffers last stored. A box that reaches past the
  // matrix is filled with zeros and still counts all its bytes.
  template <int kCount, class Origin>
  __device__ __forceinline__ void request(unsigned char* buffers, int batch, Origin origin) {
    if (threadIdx.x % 128 != 0) return;
    cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{});
    cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                         cuda::ptx::space_shared, full, kCount * kStoreChunkBytes);
#pragma unroll
    for (int i = 0; i < kCount; ++i) {
      const ChunkOrigin at = origin(i);
      const int32_t coords[3] = {at.col, at.row, batch};
      cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global,
                                      buffers + i * kStoreChunkBytes, map, coords, full);
    }
  }
  // Every thread of the warpgroup: until the chunks requested last are in shared memory.
  __device__ __forceinline__ void wait() {
    wait_barrier(full, phase);
    phase ^= 1;
  }
};

// The general epilogue (beta*C, bias, activation) into a row-major D through shared memory to
// `target` (kElementBytes 2 for fp16 and bf16, 4 for fp32, 1 for fp8 with D's scale and amax in
// *fp8: scale_fp8_round), for a consumer's part of the tile
// (kParts wgmma tiles of 64 rows from row0, columns from col0): finish_rolled's rounds, each
// writing its pairs into a store buffer instead of D. Chunk c of the part (64 rows x 128 bytes:
// four rounds of a 16-bit D, two of fp32, eight of fp8) fills buffer c % kBuffers; once every
// buffer is full (e.g. 128x256: four chunks of a 16-bit D, eight of fp32, two buffers) they go to
// D, and the next chunks wait until they have been read. Nothing is held into the next tile: this
// route is for epilogues that cost more than that wait. A 16-bit D takes the approximate
// activations (activate); an fp32 D the exact ones, and so does an fp8 D, whose values are then an
// fp32 D's (times the scale), its amax included. With `c_in_buffers` (sm90_gemm's: c_by_tma, but
// for an fp32 C in 256x128), C arrives in the buffers by TMA: the first buffers' chunks were
// requested during the tile's K loop, the rest once the ones before have gone to D. Each thread
// reads the pair of C where it writes D's pair. Else each thread loads its values of C itself
// (finish_round). kFp32CInBuffers: whether the kernel ever puts an fp32 C there; where it does not,
// that code is left out at compile time.
template <int kElementBytes, int kBuffers, bool kFp32CInBuffers, int kParts, int N>
__device__ __forceinline__ void finish_tma(const EpilogueParams& p, const ChunkTarget& target,
                                           unsigned char* buffers, float (&acc)[kParts][N],
                                           int row0, int col0, int batch, WarpgroupBarrier barrier,
                                           bool c_in_buffers, SourceC& c,
                                           Fp8Output* fp8 = nullptr) {
  const int64_t m = target.m, n = target.n;
  const bool c_tma =
      c_in_buffers && (kElementBytes == 2 || (kElementBytes == 4 && kFp32CInBuffers));
  constexpr int kColumns = store_columns(kElementBytes);
  constexpr int kChunksPerPart = 2 * N / kColumns, kChunks = kParts * kChunksPerPart;
  constexpr int kRoundsPerChunk = kColumns / (8 * kRoundBlocks);
  static_assert(kBuffers >= kChunks || kChunks % kBuffers == 0, "whole groups of chunks");
  const bool fp16 = p.d.dtype == DType::fp16, e5m2 = p.d.dtype == DType::fp8_e5m2;
  const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
  const int row = 16 * warp + lane / 4, col = 2 * (lane % 4);  // the thread's first pair
  // Chunks first, first + 1, ... in buffers 0, 1, ...
  const auto from = [&](int first) {
    return [=](int i) { return chunk_origin<kChunksPerPart, kColumns>(row0, col0, first + i); };
  };
  // The first kCount buffers, chunks first.., to D.
  const auto hand_over = [&](auto count, int first) {
    target.hand_over<decltype(count)::value, kElementBytes>(buffers, batch, barrier, from(first));
  };
  if (c_tma) {
    c.wait();
  } else {
    await_buffers(barrier);  // the last tile's stores
  }
#pragma unroll
  for (int i = 0; i < kParts; ++i) {
#pragma unroll 1
    for (int round = 0; round < N / kRoundValues; ++round) {
      const int chunk = i * kChunksPerPart + round / kRoundsPerChunk;
      if constexpr (kBuffers < kChunks) {
        if (round % kRoundsPerChunk == 0 && chunk > 0 && chunk % kBuffers == 0) {
          hand_over(std::integral_constant<int, kBuffers>{}, chunk - kBuffers);
          if (c_tma) {
            c.request<kBuffers>(buffers, batch, from(chunk));
            c.wait();
          } else {
            await_buffers(barrier);
          }
        }
      }
      const int chunk_col = round % kRoundsPerChunk * 8 * kRoundBlocks;
      unsigned char* const buffer = buffers + chunk % kBuffers * kStoreChunkBytes;
      const auto at = [&](int b, int half) {
        return buffer + store_chunk_offset(row + 8 * half, chunk_col + 8 * b + col, kElementBytes);
      };
      float v[kRoundValues];
      take_round(acc[i], round, v);
      if (c_tma) {
#pragma unroll
        for (int b = 0; b < kRoundBlocks; ++b)
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            float2 source;
            if constexpr (kElementBytes == 4) {
              source = *reinterpret_cast<const float2*>(at(b, half));
            } else {
              source = unpack_pair(fp16, *reinterpret_cast<const uint32_t*>(at(b, half)));
            }
            float* const pair = &v[4 * b + 2 * half];
            pair[0] = p.alpha * pair[0] + p.beta * source.x;
            pair[1] = p.alpha * pair[1] + p.beta * source.y;
          }
      }
      const int64_t v_row = row0 + i * kStoreRows + row,
                    v_col = col0 + round * 8 * kRoundBlocks + col;
      finish_round<kElementBytes == 2>(p, batch, v_row, v_col, v, m, n, c_tma);
      if constexpr (kElementBytes == 1) scale_fp8_round(v_row, v_col, v, m, n, *fp8);
#pragma unroll
      for (int b = 0; b < kRoundBlocks; ++b)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const float v0 = v[4 * b + 2 * half], v1 = v[4 * b + 2 * half + 1];
          if constexpr (kElementBytes == 4) {
            *reinterpret_cast<float2*>(at(b, half)) = make_float2(v0, v1);
          } else if constexpr (kElementBytes == 2) {
            *reinterpret_cast<uint32_t*>(at(b, half)) = pack_pair(fp16, v0, v1);
          } else {
            *reinterpret_cast<uint16_t*>(at(b, half)) = pack_fp8_pair(e5m2, v0, v1);
          }
        }
    }
  }
  constexpr int kLast = (kChunks - 1) / kBuffers * kBuffers;  // the last group's first chunk
  hand_over(std::integral_constant<int, kChunks - kLast>{}, kLast);
}

#endif  // TILEGEMM_SM90A_DEVICE_CODE

}  // namespace tilegemm::sm90
