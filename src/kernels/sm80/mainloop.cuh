// The sm80 kernel's mainloop: a ring of num_stages shared-memory stages fed by the operand loaders
// (operand_loader.cuh), and the warps' mma over each slice (fragments.cuh). While the tensor
// cores work on slice kt, slices kt+1 .. kt+num_stages-1 are in flight: cp.async copies global ->
// shared with no register staging, in one commit group per slice, zero-filling what lies outside
// the matrix. Operands whose rows are not 16-byte aligned take the staged path instead: element
// loads into registers before the math, stores to shared memory after it.
#pragma once

#include <cstdint>

#include "epilogue/sm80_epilogue.cuh"
#include "kernels/gemm_args.hpp"
#include "kernels/sm80/fragments.cuh"
#include "kernels/sm80/operand_loader.cuh"
#include "ptx/cp_async.cuh"
#include "schedule/tile_order.hpp"

namespace tilegemm::sm80 {

// ASYNC: the cp.async path (a compile-time choice, so that the cp.async kernel does not hold the
// staged path's registers).
template <class E, class S, bool A_CONTIG_K, bool B_CONTIG_K, bool ASYNC>
struct Sm80Mainloop {
  using T = typename E::Storage;
  using LoaderA = OperandLoader<E, S::BM, S::BK, S::kThreads, A_CONTIG_K, ASYNC>;
  using LoaderB = OperandLoader<E, S::BN, S::BK, S::kThreads, B_CONTIG_K, ASYNC>;
  using Mma = WarpMma<E, S, A_CONTIG_K, B_CONTIG_K, ASYNC>;
  using Fragments = typename Mma::Fragments;
  static constexpr int kSteps = Mma::kSteps;
  static_assert(kSteps >= 2, "the pipelined mainloop needs two mma steps per slice");

  const GemmArgs& args;
  uint32_t smem_base;
  // The K range the loop covers: values k_first .. k_first + k_extent - 1 (all of K, or one
  // part of a split of K), in num_k_tiles slices.
  int64_t k_first, k_extent;
  int64_t num_k_tiles;
  // Values of K in slice kt: BK for every slice wholly inside the range, after one comparison in
  // the K loop instead of the extent's chain of 64-bit arithmetic.
  int64_t whole_k_tiles;
  LoaderA loader_a;
  LoaderB loader_b;
  // The staged path: how many slices past the one in registers have their L2 lines requested
  // (prefetch_slices ahead of each fetch). 0: none.
  int prefetch_slices = 0;

  // The whole of K.
  __device__ __forceinline__ Sm80Mainloop(const GemmArgs& args_, uint32_t smem_base_)
      : Sm80Mainloop(args_, smem_base_, 0, cdiv(args_.k, int64_t(S::BK))) {}
  // Slices first_slice .. first_slice + slices - 1 of K (the last may be partial).
  __device__ __forceinline__ Sm80Mainloop(const GemmArgs& args_, uint32_t smem_base_,
                                          int64_t first_slice, int64_t slices)
      : args(args_),
        smem_base(smem_base_),
        k_first(first_slice * S::BK),
        k_extent(slices * S::BK < args_.k - k_first ? slices * S::BK : args_.k - k_first),
        num_k_tiles(slices),
        whole_k_tiles(k_extent / S::BK) {}

  __device__ __forceinline__ uint32_t stage_a(int s) const {
    return smem_base + s * LoaderA::Tile::kBytes;
  }
  __device__ __forceinline__ uint32_t stage_b(int s) const {
    return smem_base + S::kStages * LoaderA::Tile::kBytes + s * LoaderB::Tile::kBytes;
  }
  __device__ __forceinline__ int k_valid(int64_t kt) const {
    return kt < whole_k_tiles ? S::BK : valid_extent(k_extent, kt * S::BK, S::BK);
  }
  // Slice kt: issued (async) or loaded into registers (staged).
  __device__ __forceinline__ void fetch(int64_t kt, int stage) {
    if constexpr (ASYNC) {
      loader_a.copy_async(kt, k_valid(kt), stage_a(stage));
      loader_b.copy_async(kt, k_valid(kt), stage_b(stage));
    } else {
      loader_a.load_staged(kt, k_valid(kt));
      loader_b.load_staged(kt, k_valid(kt));
    }
  }
  __device__ __forceinline__ void prefetch(int64_t kt) const {
    if (kt < num_k_tiles) {
      loader_a.prefetch_staged(kt, k_valid(kt));
      loader_b.prefetch_staged(kt, k_valid(kt));
    }
  }
  __device__ __forceinline__ void store_staged(int stage) {
    loader_a.store_staged(stage_a(stage));
    loader_b.store_staged(stage_b(stage));
  }

  // A work item's first loads: its loaders' addresses, then the prologue, slices 0 ..
  // num_stages-2 in flight with one commit group each. The stages must be free.
  __device__ __forceinline__ void start_loads(const OutputTile& w) {
    if (num_k_tiles > 0) {  // with K = 0, A and B may be null: not even addresses are formed
      const T* a = static_cast<const T*>(args.a.data);
      const T* b = static_cast<const T*>(args.b.data);
      loader_a.start(a + args.a.offset(w.batch, w.row0, k_first), args.a.stride.row,
                     args.a.stride.col, w.rows_valid);
      loader_b.start(b + args.b.offset(w.batch, k_first, w.col0), args.b.stride.col,
                     args.b.stride.row, w.cols_valid);
    }
    if constexpr (!ASYNC) {
      for (int64_t kt = S::kStages - 1; kt < S::kStages - 1 + prefetch_slices; ++kt) prefetch(kt);
    }
#pragma unroll
    for (int s = 0; s < S::kStages - 1; ++s) {
      if (s < num_k_tiles) {
        fetch(s, s);
        if (!ASYNC) store_staged(s);
      }
      cp_async_commit();
    }
  }

  // Every slice of the work item whose loads start_loads began, into acc.
  __device__ __forceinline__ void run(const Mma& mma, float (&acc)[Mma::kMmaM][Mma::kMmaN][4]) {
    if constexpr (ASYNC) {
      run_double_buffered(mma, acc);
    } else {
      run_staged(mma, acc);
    }
  }

  // Double-buffered fragments on the cp.async path: each step's ldmatrix go out before the
  // previous step's mma, so their latency hides under it -- across the slice boundary too: step 0
  // of slice kt+1 is loaded before the last mma of slice kt. That needs slice kt+1 in shared
  // memory one step before the end of slice kt, so the wait and the barrier sit at step
  // kSteps-2. The barrier also closes the reads of slice kt's stage (the last of them is step
  // kSteps-1's ldmatrix, issued just before it), which the copies of iteration kt+1 overwrite
  // with slice kt+num_stages. tf32 fragments are rounded after the mma that the loads went out
  // before: by then the loads have landed. (The staged path holds a slice's chunks in registers
  // too, and its swizzled tf32 fragment loads have an address each: it spills with two sets.)
  __device__ __forceinline__ void run_double_buffered(const Mma& mma,
                                                      float (&acc)[Mma::kMmaM][Mma::kMmaN][4]) {
    Fragments fragments[2];
    if (num_k_tiles > 0) {
      cp_async_wait<S::kStages - 2>();
      __syncthreads();
      mma.load(fragments[0], stage_a(0), stage_b(0), 0);
      Mma::round(fragments[0]);
    }
    // The stages of slices kt, kt+1 and kt+num_stages-1 (= kt-1's), counted along instead of
    // taken modulo num_stages: a 64-bit remainder by 3 is a dozen instructions per slice.
    int stage = 0, stage_next = 1 % S::kStages, stage_fetch = S::kStages - 1;
    const auto advance = [](int& s) { s = s + 1 == S::kStages ? 0 : s + 1; };
    for (int64_t kt = 0; kt < num_k_tiles; ++kt) {
      const int64_t next = kt + S::kStages - 1;
#pragma unroll
      for (int ks = 0; ks < kSteps; ++ks) {
        if (ks + 1 < kSteps) {
          mma.load(fragments[(ks + 1) % 2], stage_a(stage), stage_b(stage), ks + 1);
        } else if (kt + 1 < num_k_tiles) {
          mma.load(fragments[(ks + 1) % 2], stage_a(stage_next), stage_b(stage_next), 0);
        }
        // Slice kt+num_stages-1 goes into the stage slice kt-1 left (every warp has passed the
        // barrier after its last read), at step 0. Where the wait at step kSteps-2 comes later
        // (three mma steps per slice or more) the copies go after the step's mma: before it, the
        // warps stall on rewriting the copies' address registers ahead of the mma. With two steps
        // they go before, so that the wait at step 0 counts their group. For 16-bit inputs A's
        // copies follow step 0's mma and B's step 1's: the branch between a slice's masked and
        // unmasked copies ends the stretch of code in which the compiler mixes copies with mma,
        // and both warps of a scheduler reach it together, so a shorter run of copies leaves the
        // tensor cores idle for less. tf32 keeps them together: split, its 3-stage kernel spills.
        constexpr bool kFetchAfterMma = kSteps > 2;
        constexpr bool kSplitFetch = kFetchAfterMma && E::kBytes == 2;
        const auto fetch_slice = [&] {
          if (next < num_k_tiles) fetch(next, stage_fetch);
          cp_async_commit();
        };
        if (ks == 0 && !kFetchAfterMma) fetch_slice();
        if (ks == kSteps - 2) {
          cp_async_wait<S::kStages - 2>();  // slice kt+1 has landed
          __syncthreads();
        }
        Mma::multiply(acc, fragments[ks % 2]);
        if (ks == 0 && kFetchAfterMma && !kSplitFetch) fetch_slice();
        if (ks == 0 && kSplitFetch && next < num_k_tiles) {
          loader_a.copy_async(next, k_valid(next), stage_a(stage_fetch));
        }
        if (ks == 1 && kSplitFetch) {  // the slice's one commit group, as fetch_slice's
          if (next < num_k_tiles) loader_b.copy_async(next, k_valid(next), stage_b(stage_fetch));
          cp_async_commit();
        }
        Mma::round(fragments[(ks + 1) % 2]);
      }
      advance(stage), advance(stage_next), advance(stage_fetch);
    }
  }

  // One fragment set (the staged path): a barrier per slice, then each step loads and
  // multiplies. The loads for slice kt+num_stages-1 go out after the first step's mma: right
  // after the barrier every warp is at the same point, and issuing them first would leave the
  // tensor cores idle while all of them do.
  __device__ __forceinline__ void run_staged(const Mma& mma,
                                             float (&acc)[Mma::kMmaM][Mma::kMmaN][4]) {
    for (int64_t kt = 0; kt < num_k_tiles; ++kt) {
      // Slice kt is in its stage (the num_stages-2 younger groups may still fly), and every warp
      // is done with the stage of slice kt-1, which the next fetch overwrites.
      if constexpr (ASYNC) cp_async_wait<S::kStages - 2>();
      __syncthreads();
      const int stage = int(kt % S::kStages);
      const int64_t next = kt + S::kStages - 1;
#pragma unroll
      for (int ks = 0; ks < kSteps; ++ks) {
        Fragments f;
        mma.load(f, stage_a(stage), stage_b(stage), ks);
        Mma::round(f);
        Mma::multiply(acc, f);
        if (ks == 0) {
          if (next < num_k_tiles) fetch(next, int(next % S::kStages));
          if constexpr (ASYNC) cp_async_commit();
          if (!ASYNC && prefetch_slices > 0) prefetch(next + prefetch_slices);
        }
      }
      if (!ASYNC && next < num_k_tiles) store_staged(int(next % S::kStages));
    }
  }
};

}  // namespace tilegemm::sm80
