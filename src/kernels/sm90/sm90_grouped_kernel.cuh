// The Hopper grouped kernel (mixture of experts; tilegemm.hpp: Groups): the dense kernel's
// pipeline, mainloop and epilogue on the grouped walk (schedule/grouped_tiles.hpp).
//
// One program per SM walks the tiles of every group in turn. Each program finds its tiles' groups
// on the device, from the sizes the call reads as it runs: the producer's thread and the
// consumers walk the same items, each with its own cursor. What differs from the dense kernel
// (sm90_kernel.cuh):
//   rows    a group's rows start anywhere (the offsets form) or end before the batch entry does
//           (counts): A's tile is loaded from the group's row (the rows past the group's end
//           belong to the next group or lie past the matrix; they are loaded and never stored),
//           and the epilogue stores only the group's rows: by TMA through the group's own D map,
//           whose rows end with the group's (group_maps.hpp), or from registers. In the k_offsets
//           form a group's D is a whole batch entry;
//   B       and the bias are the group's batch entry;
//   ptr     in the ptr_array form (PTR_ARRAY: gemm_grouped()'s problems), each problem has its own
//           sizes, tensor maps of A, B and D, and epilogue (GroupTable), and its matrices one
//           batch entry each;
//   K       in the k_offsets form a group's K values start anywhere and end anywhere: its K loop
//           starts at the group's first, and its loads go through the group's own tensor maps
//           (group_maps.hpp), whose K extent ends with the group, so TMA fills the K values past
//           it with zeros. A group with no K values stores the epilogue of zero sums;
//   scales  fp8 (the rows forms): each group's B, and in the counts form its A, has scales of its
//           own (ScaleView::group): block scales go to the K loop's promotion, tensor and channel
//           scales multiply the accumulators before the epilogue, as in the dense kernel;
//   no      clusters, ping-pong, or tail split: a program on its own takes whole tiles.
#pragma once

#include "epilogue/sm90_epilogue.cuh"
#include "epilogue/sm90_scales.cuh"
#include "kernels/element_traits.cuh"
#include "kernels/sm90/group_maps.hpp"
#include "kernels/sm90/kernel_params.hpp"
#include "kernels/sm90/mainloop.cuh"
#include "kernels/sm90/pipeline.cuh"
#include "kernels/sm90/shared_storage.hpp"
#include "kernels/sm90/sm90_kernel.cuh"
#include "schedule/grouped_tiles.hpp"

namespace tilegemm::sm90 {

#ifdef TILEGEMM_SM90A_DEVICE_CODE

template <Sm90Shape kShape>
__device__ __forceinline__ GroupedTiles grouped_tiles(const GemmArgs& args) {
  return {args.groups.form, args.groups.sizes, int32_t(args.batch_count), args.m, args.n,
          kShape.block_m,   kShape.block_n,    args.group_size_m,         args.k};
}

#endif  // TILEGEMM_SM90A_DEVICE_CODE

// E: the input element kind (16-bit, or fp8 with K-major operands and not PTR_ARRAY); Shape: a
// compiled shape with no cluster, cooperative; A_MN, B_MN: the operand is MN-major in memory
// (column-major A, row-major B). PLAIN: compiled for the tma route alone (D = alpha * AB through
// the store buffers, the last chunks of a tile held into the next one's K loop, as in the dense
// kernel); else launch.route is scaled or general (the routes from registers), or tma_general for
// k_offsets. launch.pairs as for the dense kernel; the rest of `launch` is unused. table.maps: the
// groups' maps, one entry per group (k_offsets and ptr_array: always; the rows forms: on the tma
// route; else null). PTR_ARRAY: the ptr_array form, its problems' epilogues in table.epilogues
// (`maps` and args.epilogue unused).
template <class E, class Shape, bool A_MN, bool B_MN, bool PLAIN, bool PTR_ARRAY>
__global__ void __launch_bounds__(Shape::value.threads(), 1)
    sm90_grouped_gemm(const __grid_constant__ Sm90TensorMaps maps, GemmArgs args, Sm90Launch launch,
                      GroupTable table) {
#ifdef TILEGEMM_SM90A_DEVICE_CODE
  constexpr Sm90Shape kShape = Shape::value;
  static_assert(kShape.cluster_size() == 1 && !kShape.ping_pong(), "programs on their own");
  static_assert(!E::kFp8 || !PTR_ARRAY, "fp8: the rows forms only");
  using Mainloop = Sm90Mainloop<E, kShape, A_MN, B_MN>;
  using Storage = SharedStorage<kShape>;
  // (Promotion's sums take the registers that held chunks would: sm90_kernel.cuh.)
  using Epilogue =
      Sm90Epilogue<kShape.consumer_rows(), kShape.block_n, Storage::kStoreBuffers, PLAIN,
                   PLAIN && holds_chunks<kShape>() && !E::kPromotes, kShape.mma_m() == 1>;
  extern __shared__ unsigned char smem_raw[];
  Storage& smem = *reinterpret_cast<Storage*>(
      smem_raw + (kAtomBytes - shared_address(smem_raw) % kAtomBytes) % kAtomBytes);
  const Pipeline<kShape.num_stages, 1> pipeline{smem.full, smem.empty};
  const int programs = int(gridDim.x);
  // k_offsets: A and B are one matrix each, shared by the groups along K. (fp8 takes the rows
  // forms alone, whose K loops cover all of K: its kernels keep no K range through their loops,
  // where promotion leaves few registers.)
  const bool k_form = !PTR_ARRAY && !E::kFp8 && args.groups.form == GroupForm::k_offsets;
  // Where each group's loads go through maps of its own.
  const bool own_ab = k_form || PTR_ARRAY;
  const GroupMaps* group_maps = table.maps;

  if (threadIdx.x == 0) {
    if constexpr (!PTR_ARRAY) {
      prefetch_tensormap(maps.a);
      prefetch_tensormap(maps.b);
    }
    if (k_form && launch.route != StoreRoute::scaled && launch.route != StoreRoute::general) {
      prefetch_tensormap(maps.d);
    }
    pipeline.init(kShape.stage_readers() * 4);
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
  __syncthreads();

  if (threadIdx.x < 128) {
    // ---- producer: every K step of every tile of the walk, in order, into the ring ----
    if constexpr (kShape.consumers() > 1) registers_decrease<kProducerRegisters>();
    if (threadIdx.x == 0) {
      const GroupedTiles tiles = grouped_tiles<kShape>(args);
      PipelineState<kShape.num_stages> ring;
      GroupCursor cursor;
      const CUtensorMap *map_a = &maps.a, *map_b = &maps.b;
      int mapped = -1;  // the group whose maps the loads go through (own_ab)
      for (int item = int(blockIdx.x); tiles.seek(cursor, item); item += programs) {
        const GroupedTile work = tiles.tile(cursor, item);
        if (own_ab && work.group != mapped) {
          map_a = &group_maps[work.group].a;
          map_b = &group_maps[work.group].b;
          acquire_tensormap(*map_a);
          acquire_tensormap(*map_b);
          mapped = work.group;
        }
        const int a_row = int(work.row0(kShape.block_m)),
                  b_col = int(work.tile.pid_n) * kShape.block_n;
        const int a_batch = own_ab ? 0 : int(work.rows.batch), b_batch = own_ab ? 0 : work.group;
        const int k_steps = int(cdiv(work.k.size(), Mainloop::BK));
        for (int kt = 0; kt < k_steps; ++kt, ring.advance()) {
          Mainloop::load_step_at(*map_a, *map_b, smem, a_row, a_batch, b_col, b_batch, kt,
                                 ring.stage, pipeline.acquire(ring, Mainloop::kStageBytes),
                                 int(work.k.begin));
        }
      }
    }
  } else {
    // ---- consumers: wgmma over each tile's K steps, then the group's rows into D ----
    if constexpr (kShape.consumers() > 1) registers_increase<kConsumerRegisters>();
    const int consumer = threadIdx.x / 128 - 1, lane = threadIdx.x % 32;
    const int my_row = consumer * kShape.consumer_rows();
    PipelineState<kShape.num_stages> ring;
    int previous = 0;
    Epilogue epilogue(smem.store[consumer][0], consumer_barrier(consumer), false,
                      SourceC{&maps.c, &smem.c_full[consumer]});
    float acc[kShape.mma_m()][kShape.block_n / 2];
    const GroupedTiles tiles = grouped_tiles<kShape>(args);
    GroupCursor cursor;
    // D's map: the whole matrix's (k_offsets: a group's D is a batch entry), or on the tma route
    // of the rows forms and ptr_array the group's own, acquired by the thread that issues the
    // stores when the walk enters the group. The chunks held from the last tile go through that
    // tile's map.
    const bool group_d = PLAIN && !k_form;
    // The groups whose D maps the stores and the held chunks go through (-1: the whole matrix's),
    // kept as numbers rather than addresses: fewer registers through the K loops.
    int d_group = -1, held_group = -1;
    const auto map_d = [&](int group) -> const CUtensorMap& {
      return group < 0 ? maps.d : group_maps[group].d;
    };
    // Where the store buffers go (built at each use: sm90_tma_store.cuh). The routes from registers
    // (scaled, general) hand no buffers over; tma_general waits for its buffers' last stores
    // itself, and finish() for every store's read.
    const auto target = [&](const CUtensorMap& map, const EpilogueParams& e) {
      return ChunkTarget{map, e.d, args.m, args.n, false};
    };
    // PLAIN: the last tile's held chunks go out while one of this tile's K steps runs.
    const auto store_held = [&] {
      if constexpr (PLAIN) {
        epilogue.overlap(args.epilogue, target(map_d(held_group), args.epilogue), false, 0, 0, 0);
      }
    };
    Mainloop::start_turns(consumer);
    for (int item = int(blockIdx.x); tiles.seek(cursor, item); item += programs) {
      const int k_steps = int(cdiv(E::kFp8 ? args.k : cursor.k.size(), Mainloop::BK));
      // A group with no K values (k_offsets): its product is zero. (Two tests, not if/else: as
      // one branch with the mainloop, ptxas spilled 272 bytes in 128x256.)
      if (k_steps == 0) {
#pragma unroll
        for (int i = 0; i < kShape.mma_m(); ++i)
#pragma unroll
          for (int r = 0; r < kShape.block_n / 2; ++r) acc[i][r] = 0.0f;
        store_held();
      }
      if (k_steps > 0) {
        const int overlap_step = Epilogue::overlap_step(k_steps);
        const auto at_step = [&](int kt) {
          if (kt == overlap_step) store_held();
        };
        if constexpr (E::kFp8) {
          // The group's block scales from this thread's first row and the tile's first column
          // (block_scales.cuh); the rows forms' K loops start at K = 0.
          const GroupedTile work = tiles.tile(cursor, item);
          const int t = threadIdx.x % 128;
          const BlockScaleTile block_scales{
              args.scales.group(args.groups.form, work.group),
              work.row0(kShape.block_m) + my_row + 16 * (t / 32) + t % 32 / 4,
              int64_t(work.tile.pid_n) * kShape.block_n, args.n};
          Mainloop::mma(pipeline, smem, acc, ring, previous, k_steps, consumer, my_row, lane,
                        lane == 0, at_step, 0, &block_scales);
        } else {
          Mainloop::mma(pipeline, smem, acc, ring, previous, k_steps, consumer, my_row, lane,
                        lane == 0, at_step);
        }
        Mainloop::drain(pipeline, acc, previous, lane, lane == 0);
      }
      const GroupedTile work = tiles.tile(cursor, item);
      if constexpr (E::kFp8) {
        // Rows past the group's end are the next group's or past M: never stored.
        apply_output_scales<kShape.mma_m(), kShape.block_n>(
            args.scales.group(args.groups.form, work.group), acc,
            work.row0(kShape.block_m) + my_row, int64_t(work.tile.pid_n) * kShape.block_n, args.m,
            args.n);
      }
      if (group_d && work.group != d_group) {
        d_group = work.group;
        if (threadIdx.x % 128 == 0) acquire_tensormap(map_d(d_group));
      }
      // The epilogue's batch entry is the group's (its bias; C and D of the offsets form have
      // batch stride 0), its rows those of the group from the group's first row. A TMA store's
      // batch coordinate is D's entry: 0 in the offsets form, whose D map has one, and in
      // ptr_array, whose problems' matrices have one.
      const int64_t entry = PLAIN || PTR_ARRAY ? work.rows.batch : int64_t(work.group);
      const EpilogueParams& e = PTR_ARRAY ? table.epilogues[work.group] : args.epilogue;
      epilogue.store(e, target(map_d(d_group), e), launch.route, acc, BatchedTile{entry, work.tile},
                     kShape.block_m, my_row, work.rows.end, PTR_ARRAY ? work.n : args.n,
                     launch.pairs, work.rows.begin);
      held_group = d_group;
    }
    Mainloop::end_turns(consumer);
    epilogue.finish(target(map_d(held_group), args.epilogue), launch.route);
  }
#endif  // TILEGEMM_SM90A_DEVICE_CODE
}

}  // namespace tilegemm::sm90
