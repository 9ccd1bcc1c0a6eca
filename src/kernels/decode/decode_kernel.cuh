// The decode kernel: D = act(alpha * A B + beta * C + bias) for problems of few rows (M up to 16:
// the tokens of a decode step against a weight matrix), whose time is the stream of B from
// memory. Every element of B is read once and used M times, so the kernel is built to keep as
// many bytes of B in flight on every SM as the memory needs (about a latency times its rate),
// not to feed the tensor cores:
//
//   schedule   the persistent walk of schedule/persistent_scheduler.hpp: where the tiles along N
//              do not fill the GPU, each tile's K range is split between a head and its tails
//              (schedule/tail_split.hpp), so that every SM streams a part of B
//   mainloop   sm80's cp.async ring and mma.sync warps (kernels/sm80/mainloop.cuh) over the
//              program's K range: BLOCK_SIZE_M is the problem's rows (16), a stage a 128-byte K
//              slice, 8 stages deep, two programs per SM; for rows that are not 16-byte aligned,
//              sm80's staged path (element loads through registers), 2 stages
//   hand-over  a tail's fp32 sums through the workspace to its head, in a fixed order
//              (split_handover.cuh)
//   epilogue   sm80's (epilogue/sm80_epilogue.cuh): from registers, or through shared memory
//
// Where N < M the launch runs the transposed product (compiled_shapes.hpp: runs_transposed), so
// the tile's few rows are always the problem's smaller side.
// Hardware: mma.sync, cp.async, ldmatrix: every GPU from sm_80. 16-bit inputs.
#pragma once

#include "kernels/decode/split_handover.cuh"
#include "kernels/sm80/sm80_kernel.cuh"
#include "schedule/persistent_scheduler.hpp"

namespace tilegemm::decode {

// The staged path's L2 prefetch distance, in slices past the one in registers (sm80's mainloop:
// prefetch_slices). On the H200 (bf16, cold), against none: 2 x 335 x 13713 37.7 -> 36.8 us
// (8: 35.2), 5 x 1342 x 3157 22.7 -> 21.3; K of a few slices unchanged. Its element loads, not
// memory's latency, bound a slice.
inline constexpr int kPrefetchSlices = 4;

// ASYNC: the cp.async path, else the staged one (compiled_shapes.hpp: takes_async_path).
template <class E, class S, bool A_CONTIG_K, bool B_CONTIG_K, bool ASYNC>
__global__ void __launch_bounds__(S::kThreads)
    decode_gemm(GemmArgs args, TailSplitWork split, bool d_aligned) {
  extern __shared__ __align__(128) unsigned char smem[];
  using Mainloop = sm80::Sm80Mainloop<E, S, A_CONTIG_K, B_CONTIG_K, ASYNC>;
  using Mma = typename Mainloop::Mma;
  using Accumulators =
      sm80::WarpAccumulators<Mma::kMmaM, Mma::kMmaN, Mma::kInterleavedA, Mma::kInterleavedB>;
  using Handover = SplitHandover<S::kThreads, Mma::kMmaM, Mma::kMmaN>;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_m0 = (warp / S::kWarpsN) * S::WM, warp_n0 = (warp % S::kWarpsN) * S::WN;
  const Mma mma(warp_m0, warp_n0, lane);
  const int32_t program = blockIdx.x;
  const ProgramWalk walk{split.plan, int32_t(gridDim.x), int32_t(cdiv(args.k, int64_t(S::BK)))};

  for (int32_t item = walk.first(program); item >= 0; item = walk.next(program, item)) {
    const Piece piece = walk.piece(program, item);
    const sm80::OutputTile work = sm80::work_item<S>(args, item);
    Mainloop mainloop(args, shared_address(smem), piece.k_begin, piece.k_steps);
    mainloop.prefetch_slices = kPrefetchSlices;
    mainloop.start_loads(work);
    float acc[Mma::kMmaM][Mma::kMmaN][4] = {};
    mainloop.run(mma, acc);
    // Every copy has landed and every warp has left the stages: the epilogue's tile and the next
    // item's copies reuse them.
    cp_async_wait<0>();
    __syncthreads();
    if (piece.share == Share::tail) {
      Handover::send(split, piece.slot, acc);
      continue;
    }
    if (piece.share == Share::head) Handover::receive(split, piece.slot, acc);

    // Epilogue: D = alpha * AB on a tile wholly inside a row-major D that takes 16-byte stores
    // from the accumulators; the rest through shared memory, in coalesced runs.
    const EpilogueParams& e = args.epilogue;
    const Accumulators accumulators{acc, warp_m0, warp_n0, lane};
    const bool interior = work.rows_valid == S::BM && work.cols_valid == S::BN;
    const bool from_registers =
        Mma::kMmaN % 4 == 0 && e.d.stride.col == 1 && d_aligned && scales_only(e) && interior;
    if constexpr (Mma::kMmaN % 4 == 0) {
      if (from_registers) accumulators.store_scaled(e, work, false);
    }
    if (!from_registers) {
      constexpr int kPitch = S::BN + sm80::kEpiloguePad;
      accumulators.template to_shared<kPitch>(reinterpret_cast<float*>(smem));
      __syncthreads();
      sm80::store_runs<S::BM, S::BN, kPitch, S::kThreads>(e, work, reinterpret_cast<float*>(smem),
                                                          d_aligned);
    }
    __syncthreads();  // the next item's copies reuse the shared memory
  }
}

}  // namespace tilegemm::decode
