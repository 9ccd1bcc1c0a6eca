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
//           and the epilogue stores only the group's rows, from registers (a TMA store would
//           write the next group's rows);
//   B       and the bias are the group's batch entry;
//   no      clusters, ping-pong, or tail split: a program on its own takes whole tiles.
#pragma once

#include "epilogue/sm90_epilogue.cuh"
#include "kernels/element_traits.cuh"
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
  return {args.groups.rows,
          args.groups.sizes,
          int32_t(args.batch_count),
          args.m,
          int32_t(cdiv(args.n, kShape.block_n)),
          kShape.block_m,
          args.group_size_m};
}

#endif  // TILEGEMM_SM90A_DEVICE_CODE

// E: the input element kind (16-bit); Shape: a compiled shape with no cluster, cooperative;
// B_MN: B is MN-major in memory (row-major K x N per group). A is K-major (row-major tokens x K).
// launch.route: scaled or general (the routes from registers); launch.pairs as for the dense
// kernel; the rest of `launch` is unused.
template <class E, class Shape, bool B_MN>
__global__ void __launch_bounds__(Shape::value.threads(), 1)
    sm90_grouped_gemm(const __grid_constant__ Sm90TensorMaps maps, GemmArgs args,
                      Sm90Launch launch) {
#ifdef TILEGEMM_SM90A_DEVICE_CODE
  constexpr Sm90Shape kShape = Shape::value;
  static_assert(kShape.cluster_size() == 1 && !kShape.ping_pong(), "programs on their own");
  using Mainloop = Sm90Mainloop<E, kShape, false, B_MN>;
  using Storage = SharedStorage<kShape>;
  using Epilogue = Sm90Epilogue<kShape.consumer_rows(), kShape.block_n, Storage::kStoreBuffers,
                                false, false, kShape.mma_m() == 1>;
  extern __shared__ unsigned char smem_raw[];
  Storage& smem = *reinterpret_cast<Storage*>(
      smem_raw + (kAtomBytes - shared_address(smem_raw) % kAtomBytes) % kAtomBytes);
  const Pipeline<kShape.num_stages, 1> pipeline{smem.full, smem.empty};
  const int k_steps = int(cdiv(args.k, Mainloop::BK));
  const int programs = int(gridDim.x);

  if (threadIdx.x == 0) {
    prefetch_tensormap(maps.a);
    prefetch_tensormap(maps.b);
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
      for (int item = int(blockIdx.x); tiles.seek(cursor, item); item += programs) {
        const GroupedTile work = tiles.tile(cursor, item);
        const int a_row = int(work.row0(kShape.block_m)),
                  b_col = int(work.tile.pid_n) * kShape.block_n;
        for (int kt = 0; kt < k_steps; ++kt, ring.advance()) {
          Mainloop::load_step_at(maps.a, maps.b, smem, a_row, int(work.rows.batch), b_col,
                                 work.group, kt, ring.stage,
                                 pipeline.acquire(ring, Mainloop::kStageBytes));
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
    // The grouped routes (scaled, general) store from registers: no buffers are handed over.
    const ChunkTarget target{maps.d, args.epilogue.d, args.m, args.n, false};
    for (int item = int(blockIdx.x); tiles.seek(cursor, item); item += programs) {
      Mainloop::mma(pipeline, smem, acc, ring, previous, k_steps, consumer, my_row, lane, lane == 0,
                    [](int) {});
      Mainloop::drain(pipeline, acc, previous, lane, lane == 0);
      const GroupedTile work = tiles.tile(cursor, item);
      // The epilogue's batch entry is the group's (its bias; C and D of the offsets form have
      // batch stride 0), its rows those of the group from the group's first row.
      epilogue.store(args.epilogue, target, launch.route, acc, BatchedTile{work.group, work.tile},
                     kShape.block_m, my_row, work.rows.end, args.n, launch.pairs, work.rows.begin);
    }
    epilogue.finish(target, launch.route);
  }
#endif  // TILEGEMM_SM90A_DEVICE_CODE
}

}  // namespace tilegemm::sm90
