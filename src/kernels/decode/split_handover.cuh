// The decode kernel's split of K (schedule/tail_split.hpp, schedule/persistent_scheduler.hpp): a
// tail stores its fp32 partial sums into its workspace slot and raises its flag; the head takes
// each of its tails' flags and adds their sums to its own, in the order of the tails' K steps,
// before the epilogue, so that D is the same bit for bit in every run.
// A slot holds the program's accumulators as its threads hold them: float4 f (m16n8 tile f of the
// warp tile) of thread t at f * kThreads + t, so that each warp's accesses are 512 contiguous
// bytes. Through L2 (.cg): the sums were written during this launch. The order is the flag's
// (ptx/flags.cuh): the tail's threads meet at a barrier before one thread raises the flag with a
// release; a thread of the head takes it with an acquire before the head's barrier.
#pragma once

#include "kernels/tail_split_work.hpp"
#include "ptx/flags.cuh"

namespace tilegemm::decode {

template <int kThreads, int kMmaM, int kMmaN>
struct SplitHandover {
  using Accumulators = float[kMmaM][kMmaN][4];
  static constexpr int kFragments = kMmaM * kMmaN;

  __device__ __forceinline__ static float4* sums(const TailSplitWork& split, int slot) {
    return split.partials + int64_t(slot) * (kFragments * kThreads);
  }

  // A tail: the sums out, then the flag.
  __device__ __forceinline__ static void send(const TailSplitWork& split, int slot,
                                              const Accumulators& acc) {
    float4* out = sums(split, slot) + threadIdx.x;
#pragma unroll
    for (int i = 0; i < kMmaM; ++i)
#pragma unroll
      for (int j = 0; j < kMmaN; ++j) {
        const float* a = acc[i][j];
        __stcg(out + (i * kMmaN + j) * kThreads, make_float4(a[0], a[1], a[2], a[3]));
      }
    __syncthreads();
    if (threadIdx.x == 0) raise_flag(split.flags + slot, split.key);
  }

  // A head: the tails of slots first .. first + tails_per_item - 1 added in that order. Their
  // flags are taken at once, a thread each, and their sums loaded kBatch tails at a time before
  // they are added: a head waits about one L2 round trip per batch, not two per tail.
  static constexpr int kBatch = 4;
  __device__ __forceinline__ static void receive(const TailSplitWork& split, int first,
                                                 Accumulators& acc) {
    const int tails = split.plan.tails_per_item;
    for (int t = threadIdx.x; t < tails; t += kThreads)
      take_flag(split.flags + first + t, split.key);
    __syncthreads();
    for (int batch = 0; batch < tails; batch += kBatch) {
      float4 part[kBatch][kFragments];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        if (batch + b >= tails) break;
        const float4* in = sums(split, first + batch + b) + threadIdx.x;
#pragma unroll
        for (int f = 0; f < kFragments; ++f) part[b][f] = __ldcg(in + f * kThreads);
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        if (batch + b >= tails) break;
#pragma unroll
        for (int i = 0; i < kMmaM; ++i)
#pragma unroll
          for (int j = 0; j < kMmaN; ++j) {
            const float4 p = part[b][i * kMmaN + j];
            acc[i][j][0] += p.x, acc[i][j][1] += p.y, acc[i][j][2] += p.z, acc[i][j][3] += p.w;
          }
      }
    }
  }
};

}  // namespace tilegemm::decode
