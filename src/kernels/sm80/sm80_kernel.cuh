// The portable tensor-core kernel: mma.sync fed by a cp.async pipeline num_stages deep.
//
// Hardware: tensor cores through mma.sync (m16n8k16 for fp16/bf16, m16n8k8 for tf32), cp.async,
// ldmatrix. Runs on every GPU from sm_80 (A100, RTX 30/40, L4, H100).
// Config: BLOCK_SIZE_M x BLOCK_SIZE_N x BLOCK_SIZE_K, GROUP_SIZE_M, num_stages, num_warps and the
// warp tile WM x WN (e.g. 128x128x32/g8/s4/w4/wt64x64). Compiled shapes: compiled_shapes.hpp.
//
// The seeds' Triton kernel written out by hand, in its order:
//   schedule   a persistent grid: program p takes work items p, p + G, ..., each a batch entry's
//              (pid_m, pid_n) in GROUP_SIZE_M grouped order (schedule/tile_order.hpp:
//              persistent_tile), so that the G tiles in flight are consecutive in that order
//   mainloop   the stage ring and each warp's mma on its WM x WN warp tile (mainloop.cuh,
//              fragments.cuh)
//   epilogue   from registers, or through shared memory (epilogue/sm80_epilogue.cuh); staying on
//              its SM, a program issues its next tile's first copies before it stores the last one
//              where it can
// Shared memory is swizzled, or for tf32 tiles that ldmatrix cannot read padded (smem_swizzle.hpp),
// so that cp.async, ldmatrix and the tf32 fragment loads are free of bank conflicts.
#pragma once

#include "epilogue/sm80_epilogue.cuh"
#include "kernels/element_traits.cuh"
#include "kernels/sm80/compiled_shapes.hpp"
#include "kernels/sm80/mainloop.cuh"
#include "schedule/tile_order.hpp"

namespace tilegemm::sm80 {

template <class S, class E>
constexpr int shared_bytes() {
  return int(shared_bytes(S::BM, S::BN, S::BK, S::kStages, E::kBytes));
}

// Work item `index`'s tile of a persistent grid.
template <class S>
__device__ __forceinline__ OutputTile work_item(const GemmArgs& args, int64_t index) {
  const BatchedTile t = persistent_tile(index, args.m, args.n, S::BM, S::BN, args.group_size_m);
  OutputTile w;
  w.batch = t.batch;
  w.row0 = t.tile.pid_m * S::BM;
  w.col0 = t.tile.pid_n * S::BN;
  w.rows_valid = valid_extent(args.m, w.row0, S::BM);
  w.cols_valid = valid_extent(args.n, w.col0, S::BN);
  return w;
}

// E: the input element kind; A_CONTIG_K / B_CONTIG_K: K is the operand's contiguous dimension
// (row-major A, column-major B); ASYNC: the cp.async path (rows 16-byte aligned). d_aligned: D's
// runs of 8 may be written with 16-byte stores.
template <class E, class S, bool A_CONTIG_K, bool B_CONTIG_K, bool ASYNC>
__global__ void __launch_bounds__(S::kThreads) sm80_gemm(GemmArgs args, bool d_aligned) {
  extern __shared__ __align__(128) unsigned char smem[];
  using Mainloop = Sm80Mainloop<E, S, A_CONTIG_K, B_CONTIG_K, ASYNC>;
  using Mma = typename Mainloop::Mma;
  using Accumulators =
      WarpAccumulators<Mma::kMmaM, Mma::kMmaN, Mma::kInterleavedA, Mma::kInterleavedB>;
  static_assert(S::kStages * (Mainloop::LoaderA::Tile::kBytes + Mainloop::LoaderB::Tile::kBytes) <=
                    shared_bytes<S, E>(),
                "the stages must fit the bytes the host asks for");
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_m0 = (warp / S::kWarpsN) * S::WM, warp_n0 = (warp % S::kWarpsN) * S::WN;
  const int64_t work_items = num_tiles(args.m, args.n, S::BM, S::BN) * args.batch_count;
  Mainloop mainloop(args, shared_address(smem));
  const Mma mma(warp_m0, warp_n0, lane);

  // The host launches no more programs than there are work items.
  OutputTile work = work_item<S>(args, blockIdx.x);
  mainloop.start_loads(work);
  for (int64_t index = blockIdx.x; index < work_items; index += gridDim.x) {
    float acc[Mma::kMmaM][Mma::kMmaN][4] = {};
    mainloop.run(mma, acc);

    // Epilogue. D = alpha * AB into a row-major D that takes 16-byte stores, on a tile wholly
    // inside D, goes straight from the accumulators, and the next work item's copies go out
    // first, into the freed stages, to fly while this tile is stored. So does an fp32 D from
    // 16-bit inputs whose rows are not 16-byte aligned, in 4-byte stores, each lane its own
    // pairs: through shared memory it would lose the next item's early copies, which cost more
    // (tf32's interleaved columns gain nothing this way). A 16-bit D with no next item to overlap
    // goes through shared memory all the same: there its 16-byte runs cost fewer instructions
    // than the quad's trades. The rest goes through shared memory.
    const EpilogueParams& e = args.epilogue;
    const bool d_row_major = e.d.stride.col == 1;
    const int64_t next_index = index + gridDim.x;
    const OutputTile next = next_index < work_items ? work_item<S>(args, next_index) : OutputTile{};
    const bool interior = work.rows_valid == S::BM && work.cols_valid == S::BN;
    const bool scaled_interior = d_row_major && d_aligned && scales_only(e) && interior;
    const bool scaled_unaligned_fp32 = E::kBytes == 2 && d_row_major && !d_aligned &&
                                       e.d.dtype == DType::fp32 && scales_only(e) && interior;
    const Accumulators accumulators{acc, warp_m0, warp_n0, lane};
    if ((scaled_interior && (next_index < work_items || e.d.dtype == DType::fp32)) ||
        scaled_unaligned_fp32) {
      __syncthreads();  // every warp is done reading the stages that the next copies overwrite
      if (next_index < work_items) mainloop.start_loads(next);
      accumulators.store_scaled(e, work, scaled_unaligned_fp32);
    } else {
      // The pipeline's stages are free once every copy has landed and every warp has left the
      // mainloop.
      constexpr int kPitch = S::BN + kEpiloguePad;
      cp_async_wait<0>();
      __syncthreads();
      accumulators.template to_shared<kPitch>(reinterpret_cast<float*>(smem));
      __syncthreads();
      store_runs<S::BM, S::BN, kPitch, S::kThreads>(e, work, reinterpret_cast<float*>(smem),
                                                    d_aligned);
      __syncthreads();  // the next item's copies reuse the shared memory
      if (next_index < work_items) mainloop.start_loads(next);
    }
    work = next;
  }
}

}  // namespace tilegemm::sm80
