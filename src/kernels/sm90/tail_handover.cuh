// The tail split's hand-over between programs of one launch (schedule/tail_split.hpp): a tail's
// consumer stores its fp32 partial sums into its workspace slot and raises its flag; the head's
// consumer takes each of its tails' flags and adds their sums to its own, in the order of the
// tails' K steps, before the epilogue.
// Through L2 (.cg): the sums were written during this launch. The order is the flag's: the tail's
// warpgroup meets at its barrier before one thread raises the flag with a release; the head's
// thread takes it with an acquire before its warpgroup's barrier (ptx/flags.cuh: raise_flag).
#pragma once

#include "kernels/sm90/kernel_params.hpp"
#include "kernels/sm90/kernel_shape.hpp"
#include "kernels/sm90/named_barriers.cuh"
#include "ptx/flags.cuh"
#include "ptx/sm90.cuh"
#include "schedule/persistent_scheduler.hpp"

namespace tilegemm::sm90 {

#ifdef TILEGEMM_SM90A_DEVICE_CODE

template <Sm90Shape kShape>
struct TailHandover {
  static constexpr int kMmaM = kShape.mma_m(), BN = kShape.block_n;
  static constexpr int kMathThreads = kShape.consumers() * 128;
  static constexpr int kVectors = BN / 8;  // float4 per thread per 64-row wgmma tile

  // Where float4 v of wgmma tile i of this thread goes in a slot (TailSplitWork). Worked out where
  // used: a value kept from the start would be one more register through the K loop.
  __device__ __forceinline__ static int vector_at(int i, int v) {
    return (i * kVectors + v) * kMathThreads + int(threadIdx.x) - 128;
  }
  __device__ __forceinline__ static float4* sums(const TailSplitWork& split, int slot) {
    return split.partials + int64_t(slot) * (kShape.block_m * BN / 4);
  }
  __device__ __forceinline__ static unsigned long long* flag(const TailSplitWork& split, int slot,
                                                             int consumer) {
    return split.flags + slot * kShape.consumers() + consumer;
  }

  // A tail: the sums out, then the flag.
  __device__ __forceinline__ static void send(const TailSplitWork& split, const Piece& piece,
                                              int consumer, const float (&acc)[kMmaM][BN / 2]) {
#pragma unroll
    for (int i = 0; i < kMmaM; ++i)
#pragma unroll
      for (int v = 0; v < kVectors; ++v) {
        __stcg(sums(split, piece.slot) + vector_at(i, v),
               make_float4(acc[i][4 * v], acc[i][4 * v + 1], acc[i][4 * v + 2], acc[i][4 * v + 3]));
      }
    consumer_barrier(consumer).sync();
    if (threadIdx.x % 128 == 0) raise_flag(flag(split, piece.slot, consumer), split.key);
  }

  // A head: each tail's sums, once its flag is up, added to its own in a fixed order, so that D is
  // the same bit for bit in every run.
  __device__ __forceinline__ static void receive(const TailSplitWork& split, const Piece& piece,
                                                 int consumer, float (&acc)[kMmaM][BN / 2]) {
    for (int slot = piece.slot; slot < piece.slot + split.plan.tails_per_item; ++slot) {
      if (threadIdx.x % 128 == 0) take_flag(flag(split, slot, consumer), split.key);
      consumer_barrier(consumer).sync();
#pragma unroll
      for (int i = 0; i < kMmaM; ++i)
#pragma unroll
        for (int v = 0; v < kVectors; ++v) {
          const float4 p = __ldcg(sums(split, slot) + vector_at(i, v));
          acc[i][4 * v] += p.x, acc[i][4 * v + 1] += p.y;
          acc[i][4 * v + 2] += p.z, acc[i][4 * v + 3] += p.w;
        }
    }
  }
};

#endif  // TILEGEMM_SM90A_DEVICE_CODE

}  // namespace tilegemm::sm90
