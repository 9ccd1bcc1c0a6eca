// The Hopper kernel: TMA loads, wgmma math, warp-specialised and persistent (sm_90a only).
//
// One program (CTA) per SM, or one cluster per group of SMs, walks its work items in the
// scheduler's order (schedule/persistent_scheduler.hpp). Warpgroup 0 is the producer: one thread
// issues every TMA load into the stage ring (pipeline.cuh, mainloop.cuh: load_step), running
// ahead into the next tile while the consumers finish the last one. The math warpgroups after it
// (kernel_shape.hpp: roles) wait for each stage, run their wgmma on it (mainloop.cuh: mma), free
// it, and after a tile's K loop hand the accumulators to the epilogue (epilogue/sm90_epilogue.cuh)
// -- or, for a last-round tile the scheduler split, hand them over between a tail and a head
// (tail_handover.cuh). setmaxnreg moves registers from the producer to the consumers.
//
// The body below reads as the seeds' kernel does: schedule, K loop, epilogue; docs/hopper.md
// follows one tile through it.
#pragma once

#include "epilogue/sm90_epilogue.cuh"
#include "epilogue/sm90_scales.cuh"
#include "kernels/element_traits.cuh"
#include "kernels/sm90/kernel_params.hpp"
#include "kernels/sm90/mainloop.cuh"
#include "kernels/sm90/named_barriers.cuh"
#include "kernels/sm90/pipeline.cuh"
#include "kernels/sm90/shared_storage.hpp"
#include "kernels/sm90/tail_handover.cuh"
#include "schedule/persistent_scheduler.hpp"

namespace tilegemm::sm90 {

// Registers per thread after the hand-over: 128 x 40 + 256 x 232 = 64512 of the SM's 65536. With
// one consumer (256 threads) every thread may have 255 from the start, and none change hands.
constexpr int kProducerRegisters = 40;
constexpr int kConsumerRegisters = 232;

// K steps of the first tile that thread 0 issues before the start barrier, right after it has
// initialised the barriers; the producer's loop issues the rest. (With the whole ring issued
// there, the first stage lands later.) Not with multicast: that writes into the partner's
// stages, whose barriers must be initialised first.
constexpr int kEarlySteps = 2;

// Kernels whose last round may be split (schedule/tail_split.hpp): programs on their own, whose
// consumers share each tile (in a cluster the programs' tiles would have to split alike; in
// ping-pong the consumers take whole tiles in turn), compiled for the plain routes alone (PLAIN).
// In the kernels that hold the general epilogue, 256x128's have no register to spare for the
// head's adds of the sums.
template <Sm90Shape kShape, bool kPlain>
constexpr bool kTailSplits = kShape.cluster_size() == 1 && !kShape.ping_pong() && kPlain;

#ifdef TILEGEMM_SM90A_DEVICE_CODE

// This program's cluster's number in the persistent walk, read from the special register
// wherever needed: kept in a register, it and what the walk works out from it would stay live
// through every K loop.
template <Sm90Shape kShape>
__device__ __forceinline__ int program() {
  uint32_t cta;
  asm volatile("mov.u32 %0, %%ctaid.x;\n" : "=r"(cta));
  return int(cta) / kShape.cluster_size();
}

// The scheduler of this launch, all in 32 bits (the launcher checks the item count): a kernel
// that never splits walks whole items alone, and its walk folds at compile time to items p,
// p + G, ...
template <Sm90Shape kShape, bool kPlain>
__device__ __forceinline__ PersistentScheduler scheduler(const GemmArgs& args,
                                                         const TailSplitWork& split, int k_steps) {
  const TailSplit plan =
      kTailSplits<kShape, kPlain> ? split.plan : no_tail_split(split.plan.whole_items);
  return {PersistentTiles(args.m, args.n, kShape.block_m, kShape.block_n, args.group_size_m,
                          kShape.cluster_m, kShape.cluster_n),
          ProgramWalk{plan, int(gridDim.x) / kShape.cluster_size(), k_steps}};
}

#endif  // TILEGEMM_SM90A_DEVICE_CODE

// E: the input element kind; Shape: the compiled shape (a ShapeTag); A_MN / B_MN: the operand is
// MN-major in memory (column-major A, row-major B). PLAIN: compiled for the plain routes alone (D =
// alpha * AB through the store buffers: tma, staged where no tensor map describes D, or
// tma_transposed into a column-major D: plain_route). Without the other routes' code (C, bias,
// activations, stores from registers) the kernel is 10-20 times smaller, and a small problem's
// call, which fetches its code from DRAM, starts sooner.
template <class E, class Shape, bool A_MN, bool B_MN, bool PLAIN>
__global__ void __launch_bounds__(Shape::value.threads(), 1)
    sm90_gemm(const __grid_constant__ Sm90TensorMaps maps, GemmArgs args, Sm90Launch launch) {
#ifdef TILEGEMM_SM90A_DEVICE_CODE
  constexpr Sm90Shape kShape = Shape::value;
  using Mainloop = Sm90Mainloop<E, kShape, A_MN, B_MN>;
  using Storage = SharedStorage<kShape>;
  // Promotion's sums take the registers that chunks of D held into the next tile would: with
  // both, 128x256 and 256x128 spilled 230 bytes.
  using Epilogue = Sm90Epilogue<kShape.consumer_rows(), kShape.block_n, Storage::kStoreBuffers,
                                PLAIN, holds_chunks<kShape>() && !E::kPromotes,
                                kShape.mma_m() == 1 || kShape.ping_pong(), E::kFp8>;
  constexpr bool kClusters = kShape.cluster_size() > 1;
  static_assert(
      !kShape.ping_pong() || Storage::kStoreBuffers >= store_chunks(kShape.block_m, kShape.block_n),
      "ping-pong: buffers for a consumer's whole tile of 16-bit D");
  const StoreRoute route = launch.route;  // in a PLAIN kernel, a plain_route
  const bool c_tma = !PLAIN && launch.c_tma;
  extern __shared__ unsigned char smem_raw[];
  Storage& smem = *reinterpret_cast<Storage*>(
      smem_raw + (kAtomBytes - shared_address(smem_raw) % kAtomBytes) % kAtomBytes);
  const Pipeline<kShape.num_stages, kShape.cluster_size()> pipeline{smem.full, smem.empty};
  const int k_steps = int(cdiv(args.k, Mainloop::BK));
  // Of the program's first piece (a split's head or tail may have fewer steps than a whole item).
  const auto early_steps = [&] {
    const PersistentScheduler s = scheduler<kShape, PLAIN>(args, launch.split, k_steps);
    return kClusters ? 0
                     : min(s.k_steps(program<kShape>(), s.first(program<kShape>())), kEarlySteps);
  };

  if (threadIdx.x == 0) {
    // The descriptors' fetch overlaps the set-up below instead of the first loads and stores.
    prefetch_tensormap(maps.a);
    prefetch_tensormap(maps.b);
    if (route == StoreRoute::tma || route == StoreRoute::tma_general ||
        route == StoreRoute::tma_transposed) {
      prefetch_tensormap(maps.d);
    }
    if (c_tma) prefetch_tensormap(maps.c);
    for (int i = 0; i < kShape.consumers(); ++i) cuda::ptx::mbarrier_init(&smem.c_full[i], 1);
    pipeline.init(kShape.stage_readers() * 4 * cluster_readers(kShape.cluster_m, kShape.cluster_n));
    // The initialised barriers, visible to the TMA unit (the async proxy) and the cluster.
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
    if (const int early = early_steps(); early > 0) {
      // Every program has a first piece: the grid is no larger than that (split_programs).
      const PersistentScheduler s = scheduler<kShape, PLAIN>(args, launch.split, k_steps);
      const Piece first = s.piece(program<kShape>(), s.first(program<kShape>()));
      const BatchedTile work = s.tile(first.item, 0);
      for (int i = 0; i < early; ++i) {
        Mainloop::load_step(maps.a, maps.b, smem, args, work, first.k_begin + i, i,
                            pipeline.expect(i, Mainloop::kStageBytes));
      }
    }
  }
  if constexpr (kClusters) {
    cluster_start_sync();
  } else {
    __syncthreads();
  }

  if (threadIdx.x < 128) {
    // ---- producer: every K step of every piece of the walk, in order, into the ring ----
    if constexpr (kShape.consumers() > 1) registers_decrease<kProducerRegisters>();
    if (threadIdx.x == 0) {
      const int early = early_steps();
      auto ring = PipelineState<kShape.num_stages>::after(early);
      const PersistentScheduler s = scheduler<kShape, PLAIN>(args, launch.split, k_steps);
      int issued = early;  // of the first piece
      for (int item = s.first(program<kShape>()); item >= 0;
           item = s.next(program<kShape>(), item)) {
        const Piece piece = s.piece(program<kShape>(), item);
        const BatchedTile work = s.tile(item, ClusterRank<kShape>::rank());
        for (int i = issued; i < piece.k_steps; ++i, ring.advance()) {
          Mainloop::load_step(maps.a, maps.b, smem, args, work, piece.k_begin + i, ring.stage,
                              pipeline.acquire(ring, Mainloop::kStageBytes));
        }
        issued = 0;
      }
    }
  } else {
    // ---- consumers: wgmma over each piece's K steps, then the epilogue ----
    if constexpr (kShape.consumers() > 1) registers_increase<kConsumerRegisters>();
    const int consumer = threadIdx.x / 128 - 1, lane = threadIdx.x % 32;
    // Whether this lane frees the stages of the program of its rank (Pipeline::release).
    const bool signals =
        !kClusters ? lane == 0
                   : lane < kShape.cluster_size() && loads_into(lane, ClusterRank<kShape>::rank(),
                                                                kShape.cluster_m, kShape.cluster_n);
    PipelineState<kShape.num_stages> ring;
    int previous = 0;
    const bool c_in_buffers =
        c_tma && (Epilogue::kFp32CInBuffers || args.epilogue.d.dtype != DType::fp32);
    Epilogue epilogue(smem.store[consumer][0], consumer_barrier(consumer), c_in_buffers,
                      SourceC{&maps.c, &smem.c_full[consumer]});
    float acc[kShape.mma_m()][kShape.block_n / 2];
    const PersistentScheduler s = scheduler<kShape, PLAIN>(args, launch.split, k_steps);
    // Where the store buffers go (built at each use: sm90_tma_store.cuh).
    const auto target = [&] {
      const bool staged = route == StoreRoute::staged || route == StoreRoute::staged_general;
      return ChunkTarget{maps.d, args.epilogue.d, args.m, args.n, staged};
    };
    // Ping-pong: the consumer takes every other piece of the program's walk (whole items: no
    // split there), from its own number on (`turn` counts the walk's pieces), and owns all rows
    // of its tiles.
    const int my_row = kShape.ping_pong() ? 0 : consumer * kShape.consumer_rows();
    int turn = kShape.ping_pong() ? consumer : 0;
    const auto next = [&](int item) { return s.next(program<kShape>(), item); };
    int item = s.first(program<kShape>());
    if (kShape.ping_pong() && consumer == 1) item = next(item);
    Mainloop::start_turns(consumer);
    for (; item >= 0; item = kShape.ping_pong() ? next(next(item)) : next(item)) {
      const BatchedTile work = s.tile(item, ClusterRank<kShape>::rank());
      const int steps = s.k_steps(program<kShape>(), item);
      if constexpr (kShape.ping_pong()) {
        // The ring's place at this item's first K step, past the other consumer's steps: the
        // producer loaded k_steps for each item before it.
        ring = PipelineState<kShape.num_stages>::after(int64_t(turn) * steps);
        if (turn > 0) await_turn(consumer);  // all but the program's first item
        turn += 2;
      }
      const int overlap_step = Epilogue::overlap_step(steps);
      const auto inside = [&] {  // below or right of the matrix: a cluster's last row or column
        return work.tile.pid_m * kShape.block_m < args.m &&
               work.tile.pid_n * kShape.block_n < args.n;
      };
      const int64_t row0 = work.tile.pid_m * kShape.block_m + my_row,
                    n0 = work.tile.pid_n * kShape.block_n;
      // fp8 with promotion: where the block scales of this thread's rows and columns start
      // (block_scales.cuh; the other kernels never read them).
      const int t = threadIdx.x % 128;
      const BlockScaleTile block_scales{args.scales, row0 + 16 * (t / 32) + t % 32 / 4, n0, args.n};
      Mainloop::mma(
          pipeline, smem, acc, ring, previous, steps, consumer, my_row, lane, signals,
          [&](int kt) {
            if (kt != overlap_step) return;
            const bool reads_c =
                c_in_buffers && inside() && s.piece(program<kShape>(), item).share != Share::tail;
            epilogue.overlap(args.epilogue, target(), reads_c, int(row0), int(n0), int(work.batch));
          },
          s.piece(program<kShape>(), item).k_begin, &block_scales);
      // Ping-pong: the next item of the walk, if any, is the other consumer's.
      if constexpr (kShape.ping_pong()) {
        if (next(item) >= 0) pass_turn(consumer);
      }
      Mainloop::drain(pipeline, acc, previous, lane, signals);
      if constexpr (kTailSplits<kShape, PLAIN>) {
        if (const Piece piece = s.piece(program<kShape>(), item); piece.share != Share::whole) {
          if (piece.share == Share::tail) {
            TailHandover<kShape>::send(launch.split, piece, consumer, acc);
            continue;
          }
          TailHandover<kShape>::receive(launch.split, piece, consumer, acc);
        }
      }
      if (!inside()) continue;  // nothing to write
      if constexpr (E::kFp8) {
        apply_output_scales<kShape.mma_m(), kShape.block_n>(args.scales, acc, row0, n0, args.m,
                                                            args.n);
      }
      epilogue.store(args.epilogue, target(), route, acc, work, kShape.block_m, my_row, args.m,
                     args.n, launch.pairs);
    }
    Mainloop::end_turns(consumer);
    epilogue.finish(target(), route);
  }
  // The other programs of the cluster may still arrive on this one's `empty` barriers.
  if constexpr (kClusters) cluster_sync();
#endif  // TILEGEMM_SM90A_DEVICE_CODE
}

}  // namespace tilegemm::sm90
