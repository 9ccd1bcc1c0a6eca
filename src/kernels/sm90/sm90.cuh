// The Hopper kernel: TMA loads, wgmma math, warp-specialised and persistent (sm_90a only).
//
// Hardware: the tensor memory accelerator (cp.async.bulk.tensor) fills shared memory from tensor
// maps made on the host, completing on mbarriers; wgmma.mma_async reads both operands straight
// from shared memory through descriptors; setmaxnreg moves registers between warpgroups.
// Config: BLOCK_SIZE_M x BLOCK_SIZE_N x BLOCK_SIZE_K (64 for fp16 and bf16, 32 for tf32: one
// slab of 128 bytes of K either way; twice that for the 64x64 tile, whose stages hold two
// slabs), GROUP_SIZE_M, num_stages; num_warps is 12 (three warpgroups), 8 for 64-row
// tiles (two), and the "warp tile" is the part of the tile each math warpgroup owns, e.g.
// 128x256x64/g8/s4/w12/wt64x256. Compiled shapes: `Shapes` and `Tf32Shapes` below. tf32 takes
// K-major A and B only (row-major A, column-major B): wgmma has no transposed tf32 operands.
// docs/hopper.md has the long form, with a diagram.
//
//   roles      warpgroup 0 is the producer: one of its threads issues every TMA copy, the rest
//              give their registers away (setmaxnreg.dec). Warpgroups 1 and 2 are consumers: each
//              owns half of the tile's rows and all of its columns, and takes the registers. A
//              64-row tile has one consumer, which owns the whole tile. In the ping-pong config
//              the two consumers take whole tiles in turn instead (Sm90Shape).
//   pipeline   num_stages shared-memory stages, each with a `full` mbarrier (the producer arms it
//              with the stage's byte count; TMA completes it) and an `empty` mbarrier (each
//              consumer warp arrives when its wgmma have finished reading the stage). A stage
//              holds one or two slabs: 128 bytes of K of the A and B tiles each.
//   schedule   persistent: one CTA per SM walks work items blockIdx.x, + gridDim.x, ... in the
//              library's grouped order (schedule/tile_order.hpp: persistent_tile). The producer
//              runs ahead into the next tile while the consumers finish the last one, so the
//              epilogue of one tile overlaps the loads of the next. Where the tiles leave the
//              last round of programs partly idle, its tiles' K steps are shared out: each
//              tile's head to one program, its tail to a helper that leaves fp32 partial sums in
//              a workspace (schedule/tail_split.hpp). Split-K configs (/k2) give each tile a
//              cluster of two CTAs, each taking half of the K steps.
//   mainloop   per slab of a stage, each consumer issues 4 x (WM/64) wgmma m64nBNk16 (k8 for
//              tf32), commits the stage's, and waits until only this stage's group is in
//              flight, then frees the previous stage. Two consumers that share a tile end its K
//              loop three steps apart (kStaggerSteps), so each one's epilogue runs beside the
//              other's wgmma.
//   epilogue   D in fp16/bf16, row-major, that a tensor map can describe: through shared memory,
//              64x64 chunks that TMA stores while the consumer moves on. D = alpha*AB: what does
//              not fit in the buffers waits in registers and goes out during the next tile's K
//              loop (store_tma). With beta*C, bias or an activation: computed a round of 8
//              values at a time into the chunks, C brought into them by TMA during the K loop
//              when it has D's type and layout (finish_tma). Any other D (fp32, column-major,
//              rows TMA cannot describe): the same rounds stored straight from registers, masked
//              at edges (finish_rolled), or for plain alpha*AB an unrolled form (store_scaled).
// Edges cost nothing in the mainloop: TMA fills whatever lies outside the matrix with zeros.
#pragma once

#include <cuda.h>

#include <map>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <utility>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#include <cuda/ptx>
#define TILEGEMM_SM90A_DEVICE_CODE 1
#endif

#include "epilogue/epilogue_stores.cuh"
#include "kernels/cuda_check.hpp"
#include "kernels/kernel_common.cuh"
#include "kernels/sm90/smem_layout.hpp"
#include "kernels/sm90/tensor_map.hpp"
#include "kernels/sm90/wgmma_ops.cuh"
#include "schedule/tail_split.hpp"

namespace tilegemm::sm90 {

// ---- config ------------------------------------------------------------------------------------

// CLUSTER_M: programs per thread-block cluster, along M. The programs of a cluster take vertically
// adjacent tiles, so they need the same B tile: each loads 1/CLUSTER_M of it and TMA multicasts
// that part into every program's shared memory, which halves B's L2 -> SM traffic at 2. A
// compile-time value: with it the kernel's loops are those of a kernel without clusters when it
// is 1. (Read at run time, the cluster size lengthened the producer's and the consumers' K loops,
// and small tiles, whose K steps are short, ran slower.)
// SPLIT_K_: programs per cluster that compute the same tile, each over its own share of the K
// steps (split-K across a cluster): more programs for problems with fewer tiles than SMs. The
// others write their partial sums into the first one's shared memory (distributed shared
// memory), and the first one adds them and runs the epilogue. Not persistent: each cluster
// takes one tile, so one barrier.cluster, which compute-sanitizer's racecheck follows, orders
// the hand-over, and no program touches another's shared memory after it.
// CLUSTER_N_: programs per cluster along N, which share A's tile the same way (a cluster of
// CLUSTER_M x CLUSTER_N; ranks go down M first). Where the operands' lines are off L2 lines, so
// that the K loop waits on L2, a 2 x 2 cluster halves the reads of both operands.
// PING_PONG_: the two consumers take the program's tiles in turn, each a whole tile
// (math_warpgroups in smem_layout.hpp), instead of sharing every tile. The producer loads every
// tile's K steps into the one ring, in order; a consumer starts its tile once the other has
// issued the last K step of the tile before (await_turn). So the two mainloops follow each other
// on the tensor cores, and each consumer's epilogue runs during the other's mainloop. Its config
// names a warpgroup tile as large as the tile (wt<BM>x<BN>) with 12 warps.
// ELEMENT_BYTES_: of the input type, 2 (fp16, bf16) or 4 (tf32); a slab holds 128 bytes of K.
// K_SLABS_: slabs per stage, so BLOCK_SIZE_K = K_SLABS_ x 128 bytes of K. Every stage costs its
// producer a wait on `empty`, an arrive on `full` and a TMA load per box, and its consumers a
// wait on `full` and a release, whatever its size. A small tile's stage is small, so those fixed
// costs set its K step; two slabs per stage pay them once per 128 values of K (64x64 at 512^3:
// 389 -> 260 cycles per 64 values of K; docs/perf-notes.md, sm90 v27).
template <int BM_, int BN_, int STAGES_, int CLUSTER_M_ = 1, int SPLIT_K_ = 1,
          bool PING_PONG_ = false, int ELEMENT_BYTES_ = 2, int CLUSTER_N_ = 1, int K_SLABS_ = 1>
struct Sm90Shape {
  static constexpr int BM = BM_, BN = BN_, kStages = STAGES_, kClusterM = CLUSTER_M_;
  static constexpr int kClusterN = CLUSTER_N_;
  static constexpr int kSlabs = K_SLABS_;
  static constexpr int kClusterMN = kClusterM * kClusterN;  // programs that multicast
  static constexpr int kElementBytes = ELEMENT_BYTES_;
  static constexpr int kSlabK = block_k_for(kElementBytes);  // values of K per slab
  static constexpr int BK = kSlabK * kSlabs;                 // values of K per stage
  static constexpr int kSplitK = SPLIT_K_;
  static constexpr bool kPingPong = PING_PONG_;
  static constexpr int kClusterSize = kClusterMN * kSplitK;
  static constexpr int kConsumers = math_warpgroups(BM, kPingPong);
  static constexpr int kThreads = (kConsumers + 1) * 128;
  static constexpr int WM = warpgroup_rows(BM, kPingPong);  // rows of a tile a consumer owns
  static constexpr int kMmaM = WM / 64;                     // m64 wgmma per consumer per K step
  // Consumers that read each stage: all of them, or in ping-pong the one whose tile it is.
  static constexpr int kStageReaders = kPingPong ? 1 : kConsumers;
  // The epilogue's TMA-store chunk buffers, per consumer and in all (smem_layout.hpp).
  static constexpr int kStoreBuffers = store_buffers(BM, BN, kStages, kSplitK, kPingPong, kSlabs);
  static constexpr int kStoreBytes = kConsumers * kStoreBuffers * kStoreChunkBytes;
  // Whether a consumer carries chunks of a tile's D into its next tile (store_tma): where its
  // buffers hold less than its part of an fp32 D (a 16-bit D's part is half that). Not in
  // ping-pong, whose epilogue runs while the other consumer's mainloop does.
  static constexpr bool kHoldsChunks =
      !kPingPong && kStoreBuffers < store_chunks_per_warpgroup(BM, BN, kPingPong, 4);
  static_assert(WM % 64 == 0, "each consumer owns whole 64-row wgmma tiles");
  static_assert(!kPingPong || (kClusterMN == 1 && kSplitK == 1 &&
                               kStoreBuffers >= store_chunks_per_warpgroup(BM, BN, true)),
                "ping-pong: no clusters, and buffers for a consumer's whole tile of 16-bit D");
  static_assert(BN % 64 == 0 && BN <= 256, "wgmma N: a multiple of 64 up to 256 here");
  static_assert(kStages >= 2, "a pipeline needs at least two stages");
  static_assert(kClusterM == 1 || (kClusterM == 2 && BN % (2 * kMnBlock) == 0),
                "clusters of 2 split B's tile into whole 64-row boxes");
  static_assert(kClusterN == 1 || kClusterN == 2, "clusters of 2 along N: A in halves");
  static_assert(kSplitK == 1 || (kSplitK == 2 && kClusterMN == 1),
                "split-K across clusters of 2, without multicast");

  static KernelConfig config() {
    return {.block_m = BM,
            .block_n = BN,
            .block_k = BK,
            .group_size_m = 8,
            .num_stages = kStages,
            .num_warps = kThreads / 32,
            .warp_m = WM,  // ping-pong: BM
            .warp_n = BN,
            .cluster_m = kClusterM,
            .cluster_n = kClusterN,
            .split_k = kSplitK};
  }
};

// Compiled shapes, each for fp16 and bf16: as many stages as fit in 227 KB. 128x256 and 256x128
// give the tensor cores the most work per byte loaded; 128x128 and 128x64 give small and skinny
// problems more tiles than SMs. The large shapes also launch in clusters of 2, listed after their
// unclustered form, which the rules take on a tie: on the H100, clusters lost 1-4 % with
// 128x256 and won up to 10 % with 256x128 and 128x128 (docs/perf-notes.md, sm90 v4).
// Three stages of 128x256 or 256x128 would leave room for a consumer's whole part of D in store
// buffers, but lost 1-13 % to four stages on every shape tried (perf-notes, sm90 v8).
// The split-K shape is for the autotuner and --config: the rules leave it out (tune/heuristic.cpp).
// 64x128, one consumer with wgmma m64n128: as many tiles as 128x64, and on the H100 2-6 % faster
// where the rules take it (a square or wide problem: 1000^3 with 2048-byte rows, 1024^3,
// 768 x 768 x 4096). Its cluster of 2 multicasts B, the larger part of its stage: where the
// operands' lines are not whole L2 lines apart, each 128-byte box row costs two L2 lines and the
// K loop is bound by L2, so the cluster won 11-13 % at 1000^3 with 2000-byte rows; on 128-byte
// lines, and for tf32, it lost 13-25 %. The rules take the unclustered form on the tie, and the
// cluster where 16-bit lines are off L2 lines (docs/perf-notes.md, sm90 v22 and v23).
// Last, 64x64 with one consumer, for problems whose larger tiles leave SMs idle: each program
// then loads the fewest bytes (512^3: 128 KB against 192 KB for 128x64), and a lone program's K
// step is bound by what its SM takes in (docs/perf-notes.md, sm90 v11 and v13). Its stages hold
// two slabs (BLOCK_SIZE_K 128; K_SLABS_ above), six of them: against one slab per stage (8 or 12
// stages deep, the same shared memory) +1-6 % at 512^3, +10-12 % at 512 x 512 x 1024 and
// 256 x 256 x 2048, a tie at 128 x 4096 x 4096; four such stages lost up to 17 % over a longer
// K. 64x128 and 128x64 with two slabs did not gain (-7 to +4 %; docs/perf-notes.md, sm90 v27).
// Then the ping-pong shapes, whose tiles are a consumer's: 128 accumulators per thread, as in a
// consumer's half of 128x256, and the buffers for a whole tile's D.
// Last, 128x256 and 64x128 in clusters of 2 x 2, which multicast A as well as B: for 16-bit
// operands off L2 lines (not compiled for tf32).
using Shapes =
    std::tuple<Sm90Shape<128, 256, 4>, Sm90Shape<128, 256, 4, 2>, Sm90Shape<256, 128, 4>,
               Sm90Shape<256, 128, 4, 2>, Sm90Shape<128, 128, 6>, Sm90Shape<128, 128, 6, 2>,
               Sm90Shape<128, 64, 8>, Sm90Shape<128, 64, 6, 1, 2>, Sm90Shape<64, 128, 8>,
               Sm90Shape<64, 128, 8, 2>, Sm90Shape<64, 64, 6, 1, 1, false, 2, 1, 2>,
               Sm90Shape<128, 128, 5, 1, 1, true>, Sm90Shape<128, 256, 4, 2, 1, false, 2, 2>,
               Sm90Shape<64, 128, 8, 2, 1, false, 2, 2>>;

// The same shapes for tf32 (BLOCK_SIZE_K 32 per slab): a slab has the same bytes and the same
// four wgmma, each k8 at half the 16-bit rate, so the pipeline's timing carries over (64x64 with
// two slabs: +11 % at 512^3 in NT).
template <class S>
using Tf32Shape = Sm90Shape<S::BM, S::BN, S::kStages, S::kClusterM, S::kSplitK, S::kPingPong, 4,
                            S::kClusterN, S::kSlabs>;
// Not the clusters along N, which are for 16-bit operands off L2 lines (tune/heuristic.cpp).
template <class Tuple>
struct Tf32Of;
template <class... S>
struct Tf32Of<std::tuple<S...>> {
  using type = decltype(std::tuple_cat(
      std::conditional_t<S::kClusterN == 1, std::tuple<Tf32Shape<S>>, std::tuple<>>{}...));
};
using Tf32Shapes = Tf32Of<Shapes>::type;

// The compiled shapes for input type T (float: tf32).
template <typename T>
using ShapesFor = std::conditional_t<std::is_same_v<T, float>, Tf32Shapes, Shapes>;

// Registers per thread after the hand-over: 128 x 40 + 256 x 232 = 64512 of the SM's 65536. With
// one consumer (256 threads) every thread may have 255 from the start, and none change hands.
constexpr int kProducerRegisters = 40;
constexpr int kConsumerRegisters = 232;

// The two consumers that share a tile end its K loop this many K steps apart (stagger_steps):
// the second waits for the first to issue its last step, then does its own last steps while the
// first's epilogue runs (await_stagger), and its own epilogue runs while the first starts the
// next tile. One warpgroup's wgmma keep the tensor cores busy, so the K loop takes as long as
// before, but each consumer's D leaves while the other's wgmma run, and at a program's end only
// half of its D drains after the last wgmma (2048^3 +1.5-1.6 %, 8192 x 8192 x 1024 +2-3 %;
// docs/perf-notes.md, sm90 v30).
template <class S>
constexpr int kStaggerSteps = stagger_steps(S::kConsumers, S::kPingPong, S::kSplitK, S::kStages);

// K steps of the first tile that thread 0 issues before the start barrier; the producer's loop
// issues the rest of the ring. With the whole ring issued there, the first stage landed later
// (docs/perf-notes.md, sm90 v24).
constexpr int kEarlySteps = 2;

// Kernels whose last round may be split (schedule/tail_split.hpp): programs on their own, whose
// consumers share each tile (in a cluster the programs' tiles would have to split alike; in
// ping-pong the consumers take whole tiles in turn), compiled for the tma route alone (PLAIN,
// D = alpha * AB). In the kernels that hold the general epilogue, 256x128's have no register to
// spare: with the head's adds of the sums ptxas spilled there (docs/perf-notes.md, sm90 v31).
template <class S, bool kPlain>
constexpr bool kTailSplits = S::kClusterSize == 1 && !S::kPingPong && kPlain;

// The tail split as a launch gets it: the plan, and the workspace of its tail_items slots. Slot
// j holds the tail's fp32 partial sums of the last round's item j, BM x BN of them in the order
// the consumers' threads hold them (float4 v of wgmma tile i of thread t of consumer c at
// (i * BN / 8 + v) * consumers * 128 + 128c + t, so that each warp's accesses are 512 contiguous
// bytes), and a flag per consumer, flags[j * consumers + c], that the tail sets to `key` once its
// sums are there and the head clears once it has seen it. `key` is new for each launch
// (next_flag_key in sm90.cu), so a flag left in the pool's memory by an earlier launch, or any
// other word there, does not match it, and the workspace needs no clearing before a launch.
struct TailSplitWork {
  TailSplit plan;
  float4* partials = nullptr;
  unsigned long long* flags = nullptr;
  unsigned long long key = 0;
};

// ---- device helpers ----------------------------------------------------------------------------

#ifdef TILEGEMM_SM90A_DEVICE_CODE
__device__ __forceinline__ void wait_barrier(uint64_t* barrier, uint32_t parity) {
  while (!cuda::ptx::mbarrier_try_wait_parity(barrier, parity)) {
  }
}

// wgmma ordering (PTX ISA 9.7.15.6-8): fence before the first wgmma that touches registers other
// instructions wrote; commit closes a group; wait_group N returns when at most N groups fly.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// The accumulators are written asynchronously; this keeps the compiler from reading them
// before the wait above it.
template <int N>
__device__ __forceinline__ void fence_registers(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

template <int kRegisters>
__device__ __forceinline__ void registers_increase() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}
template <int kRegisters>
__device__ __forceinline__ void registers_decrease() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

// TMA: the operand tile of rows mn0.. and K values k0.. of batch entry `batch`, completing on
// `full`: its boxes (tile.boxes()) `first`, `first` + `step`, ... With `multicast` (a mask of
// the cluster's programs) each box lands at the same offset in each of those programs' shared
// memory and completes on each one's `full` at that offset.
__device__ __forceinline__ void load_tile(const CUtensorMap& map, OperandTile tile,
                                          unsigned char* dst, int mn0, int k0, int batch,
                                          uint64_t* full, int first = 0, int step = 1,
                                          uint16_t multicast = 0) {
  for (int box = first; box < tile.boxes(); box += step) {
    const int32_t mn = mn0 + box * tile.box_mn();
    const int32_t coords[3] = {tile.mn_major ? mn : k0, tile.mn_major ? k0 : mn, batch};
    unsigned char* at = dst + box * tile.box_bytes();
    if (multicast != 0) {
      cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, at, &map,
                                      coords, full, multicast);
    } else {
      cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, at, &map,
                                      coords, full);
    }
  }
}

// The tail split's hand-over (TailSplitWork). A tail's consumer stores its sums, meets its
// warpgroup at a barrier, and then one thread raises the flag with a release at GPU scope, which
// orders the warpgroup's stores before it; the head's first thread waits with an acquire (its
// warpgroup's barrier then orders the loads of the sums after that) and clears the flag, so that
// a launch replayed with the same key (captured in a CUDA graph) finds it clear.
__device__ __forceinline__ void raise_flag(unsigned long long* flag, unsigned long long key) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;\n" ::"l"(flag), "l"(key) : "memory");
}
__device__ __forceinline__ void take_flag(unsigned long long* flag, unsigned long long key) {
  unsigned long long seen = 0;
  do {
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];\n" : "=l"(seen) : "l"(flag) : "memory");
  } while (seen != key);
  asm volatile("st.relaxed.gpu.global.u64 [%0], 0;\n" ::"l"(flag) : "memory");
}

// Starts fetching a tensor map (a kernel parameter) into the cache that TMA reads descriptors
// from, so that the first copy through it does not wait for that fetch (PTX prefetch.tensormap).
__device__ __forceinline__ void prefetch_tensormap(const CUtensorMap& map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map)) : "memory");
}

// A consumer warp frees a stage: it arrives on `barrier` (the stage's `empty`) in this program
// and, in a cluster, in every program whose loads write into this one's stage (loads_into in
// smem_layout.hpp), so that none of them reloads it before this warp's wgmma have read it. Lane r
// signals the program of rank r where `signals` (lane 0 alone without a cluster), so a warp's
// arrives go out at once. The remote arrive is mapa on the 32-bit shared-memory address, then
// mbarrier.arrive.shared::cluster with CTA-scope release, as for a local arrive: the stage's
// readers were this warpgroup's wgmma, finished before the arrive. (Through a generic pointer,
// __cluster_map_shared_rank, each arrive read the shared window's base from a special register
// after the wgmma wait: +86 ns per K step of a 64x128 cluster of 2, docs/perf-notes.md, sm90
// v25. cuda::ptx offers the remote arrive with cluster-scope release only, which ptxas implements
// with a MEMBAR.GPU per arrive: measured 2.7x slower end to end.)
template <int kClusterMN>
__device__ __forceinline__ void release_stage(uint64_t* barrier, int lane, bool signals) {
  if (!signals) return;
  if constexpr (kClusterMN == 1) {
    cuda::ptx::mbarrier_arrive(barrier);
  } else {
    uint32_t remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
                 : "=r"(remote)
                 : "r"(shared_address(barrier)), "r"(lane));
    asm volatile("mbarrier.arrive.release.cta.shared::cluster.b64 _, [%0];\n" ::"r"(remote)
                 : "memory");
  }
}

// Every thread of every program of the cluster, at the end: no program leaves while another may
// still signal it (the release orders this thread's remote arrives before its arrival here). Only
// for real clusters: the release of barrier.cluster is a MEMBAR.GPU, which a program on its own
// does not need.
__device__ __forceinline__ void cluster_sync() {
  cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_release);
  cuda::ptx::barrier_cluster_wait(cuda::ptx::sem_acquire);
}

// The same at the start: after it the cluster's barriers are initialised. The release that
// publishes them is thread 0's fence.mbarrier_init, so the arrival can be relaxed and skip
// cluster_sync's MEMBAR.GPU, which held up every program's first load (docs/perf-notes.md,
// sm90 v11).
__device__ __forceinline__ void cluster_start_sync() {
  cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_relaxed);
  cuda::ptx::barrier_cluster_wait(cuda::ptx::sem_acquire);
}

// Stores the finished values of D[row, col] and D[row, col+1] (the pair one thread holds): one
// store of both when D is row-major and `pairs` (aligned), else element by element; masked at
// the edges.
__device__ __forceinline__ void store_pair(const MatrixView& d, int64_t batch, int64_t row,
                                           int64_t col, float v0, float v1, int64_t m, int64_t n,
                                           bool pairs) {
  if (row >= m || col >= n) return;
  const int64_t at = d.offset(batch, row, col);
  if (!(pairs && col + 1 < n)) {
    store_from_float(d.data, d.dtype, at, v0);
    if (col + 1 < n) store_from_float(d.data, d.dtype, d.offset(batch, row, col + 1), v1);
    return;
  }
  if (d.dtype == DType::fp32) {
    *reinterpret_cast<float2*>(static_cast<float*>(d.data) + at) = make_float2(v0, v1);
  } else {
    const bool fp16 = d.dtype == DType::fp16;
    const uint32_t lo = fp16 ? float_to_fp16_bits(v0) : float_to_bf16_bits(v0);
    const uint32_t hi = fp16 ? float_to_fp16_bits(v1) : float_to_bf16_bits(v1);
    *reinterpret_cast<uint32_t*>(static_cast<uint16_t*>(d.data) + at) = lo | hi << 16;
  }
}

// acc[r] += scale * x[index(r)] for the first R values of acc where inside(r), x of type `dtype`
// (fp32, fp16 or bf16, as load_as_float reads them). The type is tested once for all R, and no
// load sits under a branch: a value outside the matrix loads x[0], which always exists, and adds
// nothing. So the R loads go out back to back; each under its own branch, they had waited for one
// another (docs/perf-notes.md, sm90 v19).
template <int R, int N, class Index, class Inside>
__device__ __forceinline__ void add_loaded(float (&acc)[N], const void* x, DType dtype, float scale,
                                           Index index, Inside inside) {
  float loaded[R];
  if (dtype == DType::fp16 || dtype == DType::bf16) {
    const bool fp16 = dtype == DType::fp16;
    const auto* bits = static_cast<const uint16_t*>(x);
    uint16_t b[R];
#pragma unroll
    for (int r = 0; r < R; ++r) b[r] = bits[inside(r) ? index(r) : 0];
#pragma unroll
    for (int r = 0; r < R; ++r)
      loaded[r] = fp16 ? fp16_bits_to_float(b[r]) : bf16_bits_to_float(b[r]);
  } else {
    const auto* values = static_cast<const float*>(x);
#pragma unroll
    for (int r = 0; r < R; ++r) loaded[r] = values[inside(r) ? index(r) : 0];
  }
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] += inside(r) ? scale * loaded[r] : 0.0f;
}

// acc[r] = activation(acc[r]) for the first R values, the activation fixed at compile time.
// kApprox (a 16-bit D only): gelu's tanh and silu's exp and division by the hardware's
// approximations (tanh.approx, ex2.approx, rcp.approx: one instruction each, relative errors
// near 2^-11, below a 16-bit D's rounding) instead of tanhf and expf's exact sequences, where
// nearly a quarter of the general epilogue's stall samples fell (docs/perf-notes.md, sm90 v19).
template <Activation kActivation, bool kApprox, int R, int N>
__device__ __forceinline__ void activate(float (&acc)[N], float slope) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const float x = acc[r];
    if constexpr (kApprox && kActivation == Activation::gelu) {
      float t;
      asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(gelu_tanh_input(x)));
      acc[r] = 0.5f * x * (1.0f + t);
    } else if constexpr (kApprox && kActivation == Activation::silu) {
      acc[r] = __fdividef(x, 1.0f + __expf(-x));
    } else {
      acc[r] = apply_activation(kActivation, x, slope);
    }
  }
}

// The epilogue of one 64-row wgmma tile, in two forms. Unrolled over all BN/8 column blocks, the
// general epilogue (beta*C, bias, four activations, three output types) is tens of kilobytes of
// code per tile and the warps stall on instruction fetch, so:

// The common case, D = alpha * AB in a 16-bit type, row-major and aligned: unrolled, one
// conversion and one 4-byte store per pair of columns.
template <typename Pair, int N>
__device__ __forceinline__ void store_scaled(const EpilogueParams& p, int64_t batch, int64_t row,
                                             int64_t col0, const float (&acc)[N], int64_t m,
                                             int64_t n) {
  auto* d = static_cast<Pair*>(p.d.data);  // D's elements, two at a time
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int64_t r = row + 8 * half;
    if (r >= m) continue;
    const int64_t first = p.d.offset(batch, r, col0);  // even: pairs are aligned
#pragma unroll
    for (int j = 0; j < N / 4; ++j) {
      const int64_t col = col0 + 8 * j;
      const float v0 = p.alpha * acc[4 * j + 2 * half], v1 = p.alpha * acc[4 * j + 2 * half + 1];
      if (col + 1 < n) {
        if constexpr (std::is_same_v<Pair, __half2>) {
          d[(first + 8 * j) / 2] = __floats2half2_rn(v0, v1);
        } else {
          d[(first + 8 * j) / 2] = __floats2bfloat162_rn(v0, v1);
        }
      } else if (col < n) {
        epilogue_store(p, batch, r, col, acc[4 * j + 2 * half]);
      }
    }
  }
}

// The general epilogue (beta*C, bias, activation) goes over a tile's outputs in rounds of two
// column blocks, in a rolled loop (unrolled, it is tens of kilobytes of code per tile). Each round
// copies its eight values out of the accumulators (take_round), and each step (alpha, beta*C,
// bias, activation, store) runs over the whole round under one test of its run-time choice, so
// the round's loads of C go out together and its values' arithmetic interleaves; per value, the
// tests and their indirect branches had made the loop a chain of dependent instructions
// (docs/perf-notes.md, sm90 v14 and v15). Value r of a round is row row + 8 * (r % 4 / 2), column
// col + 8 * (r / 4) + r % 2 (wgmma's accumulator layout).
constexpr int kRoundBlocks = 2, kRoundValues = 4 * kRoundBlocks;

// Everything but the store, for a round's values `acc` (take_round): rows from `row`, columns
// from `col` (the thread's first pair). With `c_added`, the caller has already made them
// alpha * AB + beta * C. kApprox: approximate activations (activate), for a 16-bit D.
template <bool kApprox = false, int N>
__device__ __forceinline__ void finish_round(const EpilogueParams& p, int64_t batch, int64_t row,
                                             int64_t col, float (&acc)[N], int64_t m, int64_t n,
                                             bool c_added = false) {
  static_assert(N == kRoundValues, "one round");
  constexpr int R = kRoundValues;
  const auto row_of = [&](int r) { return row + 8 * (r % 4 / 2); };
  const auto col_of = [&](int r) { return col + 8 * (r / 4) + r % 2; };
  const auto inside = [&](int r) { return row_of(r) < m && col_of(r) < n; };
  if (!c_added) {
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] *= p.alpha;
  }
  if (p.beta != 0.0f && !c_added) {
    add_loaded<R>(
        acc, p.c.data, p.c.dtype, p.beta,
        [&](int r) { return p.c.offset(batch, row_of(r), col_of(r)); }, inside);
  }
  if (p.bias != nullptr) {
    add_loaded<R>(acc, p.bias, p.bias_dtype, 1.0f, col_of, inside);
  }
  switch (p.activation) {
    case Activation::relu:
      activate<Activation::relu, kApprox, R>(acc, p.leaky_relu_slope);
      break;
    case Activation::leaky_relu:
      activate<Activation::leaky_relu, kApprox, R>(acc, p.leaky_relu_slope);
      break;
    case Activation::gelu:
      activate<Activation::gelu, kApprox, R>(acc, p.leaky_relu_slope);
      break;
    case Activation::silu:
      activate<Activation::silu, kApprox, R>(acc, p.leaky_relu_slope);
      break;
    default:
      break;
  }
}

// v = round `round`'s eight values of acc. A switch: one indirect jump and eight moves per round.
// (Shifting the whole array down by a round after each, the form before this, kept the indices
// constant too, but cost N - 8 moves per round: 120 for a 64 x 256 part; docs/perf-notes.md,
// sm90 v18.)
template <int N>
__device__ __forceinline__ void take_round(const float (&acc)[N], int round,
                                           float (&v)[kRoundValues]) {
  static_assert(N % kRoundValues == 0 && N / kRoundValues <= 16, "up to 16 whole rounds");
  const auto take = [&](auto k) {
    constexpr int kFirst = decltype(k)::value * kRoundValues;
    if constexpr (kFirst < N) {
#pragma unroll
      for (int r = 0; r < kRoundValues; ++r) v[r] = acc[kFirst + r];
    }
  };
  using std::integral_constant;
  // clang-format off
  switch (round) {
    case 0: take(integral_constant<int, 0>{}); break;
    case 1: take(integral_constant<int, 1>{}); break;
    case 2: take(integral_constant<int, 2>{}); break;
    case 3: take(integral_constant<int, 3>{}); break;
    case 4: take(integral_constant<int, 4>{}); break;
    case 5: take(integral_constant<int, 5>{}); break;
    case 6: take(integral_constant<int, 6>{}); break;
    case 7: take(integral_constant<int, 7>{}); break;
    case 8: take(integral_constant<int, 8>{}); break;
    case 9: take(integral_constant<int, 9>{}); break;
    case 10: take(integral_constant<int, 10>{}); break;
    case 11: take(integral_constant<int, 11>{}); break;
    case 12: take(integral_constant<int, 12>{}); break;
    case 13: take(integral_constant<int, 13>{}); break;
    case 14: take(integral_constant<int, 14>{}); break;
    default: take(integral_constant<int, 15>{}); break;
  }
  // clang-format on
}

// The general epilogue into any D (column-major, rows TMA cannot describe): each round's
// pairs stored from registers, masked at the edges.
template <int N>
__device__ __forceinline__ void finish_rolled(const EpilogueParams& p, int64_t batch, int64_t row,
                                              int64_t col0, float (&acc)[N], int64_t m, int64_t n,
                                              bool pairs) {
#pragma unroll 1
  for (int round = 0; round < N / kRoundValues; ++round) {
    const int64_t col = col0 + round * 8 * kRoundBlocks;
    float v[kRoundValues];
    take_round(acc, round, v);
    finish_round(p, batch, row, col, v, m, n);
#pragma unroll
    for (int b = 0; b < kRoundBlocks; ++b)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        store_pair(p.d, batch, row + 8 * half, col + 8 * b, v[4 * b + 2 * half],
                   v[4 * b + 2 * half + 1], m, n, pairs);
      }
  }
}

// Synchronises the 128 threads of one consumer warpgroup (named barrier 1 + consumer; 0 is
// __syncthreads).
__device__ __forceinline__ void consumer_barrier(int consumer) {
  asm volatile("bar.sync %0, 128;\n" ::"r"(1 + consumer) : "memory");
}

// Ping-pong's turns (named barriers 3 and 4, 256 threads): a consumer starts a tile's K loop once
// the other has issued all the K steps of the tile before it (pass_turn, which does not wait).
// Without it, a consumer could wait on a stage's `full` barrier more than one phase ahead, and a
// parity wait cannot tell that phase from an earlier one; with it the two mainloops also follow
// each other on the tensor cores instead of sharing them.
__device__ __forceinline__ void await_turn(int consumer) {
  asm volatile("bar.sync %0, 256;\n" ::"r"(3 + consumer) : "memory");
}
__device__ __forceinline__ void pass_turn(int consumer) {
  asm volatile("bar.arrive %0, 256;\n" ::"r"(3 + (1 - consumer)) : "memory");
}

// The staggered end of a shared tile's K loop (named barrier 5, 256 threads): the second consumer
// waits before its last kStaggerSteps K steps (await_stagger) until the first has issued its
// last one (pass_stagger, which does not wait). See kStaggerSteps.
__device__ __forceinline__ void await_stagger() { asm volatile("bar.sync 5, 256;\n" ::: "memory"); }
__device__ __forceinline__ void pass_stagger() {
  asm volatile("bar.arrive 5, 256;\n" ::: "memory");
}

// One chunk of D (64 rows x 128 bytes) as one thread holds it, scaled and converted to the output
// type: 16 words. wgmma's accumulator layout: warp w of the warpgroup holds rows 16w + lane/4 and
// 16w + lane/4 + 8; registers 4j + {0,1} (4j + {2,3} for the second row) hold columns
// 8j + 2(lane%4) + {0,1}. The thread's pair (block, half) is row 16w + lane/4 + 8*half, columns
// 8*block + 2(lane%4) + {0,1} of the chunk:
//   16-bit D (64 columns, 8 blocks): word 2*block + half is the pair, packed;
//   fp32 D (32 columns, 4 blocks):   words 4*block + 2*half + {0,1} are its two values.
struct ChunkWords {
  uint32_t word[16];
};

// Bytes of one value of D for a pair type: __half2 and __nv_bfloat162 hold two 16-bit values,
// float2 two fp32 ones.
template <typename Pair>
constexpr int kPairElementBytes = int(sizeof(Pair)) / 2;

// Chunk `chunk` (columns store_columns() * chunk..) of a 64-row wgmma tile's accumulators.
template <typename Pair, int N>
__device__ __forceinline__ ChunkWords convert_chunk(const float (&acc)[N], int chunk, float alpha) {
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
// 4-byte pair per (block, half) for a 16-bit D, one 8-byte pair for an fp32 D.
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

// Waits until the consumer's earlier TMA stores have read its store buffers.
__device__ __forceinline__ void await_buffers(int consumer) {
  if (threadIdx.x % 128 == 0) cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{});
  consumer_barrier(consumer);
}

// Hands the consumer's first kCount buffers, written by all its threads, to TMA: buffer i goes to
// origin(i) in D, whole lines clipped at the matrix's edges, while the warpgroup moves on. Writes
// go through the generic proxy and TMA reads through the async proxy, hence the proxy fence.
template <int kCount, class Origin>
__device__ __forceinline__ void hand_to_tma(const CUtensorMap& map_d, unsigned char* buffers,
                                            int batch, int consumer, Origin origin) {
  cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  consumer_barrier(consumer);
  if (threadIdx.x % 128 == 0) {
#pragma unroll
    for (int i = 0; i < kCount; ++i) {
      const ChunkOrigin at = origin(i);
      issue_store(map_d, buffers + i * kStoreChunkBytes, at.row, at.col, batch);
    }
    cuda::ptx::cp_async_bulk_commit_group();
  }
}

// One round of TMA stores of kCount chunks of D, through the consumer's first kCount buffers:
// once the stores of the round before have read the buffers, every thread writes its part of
// chunk i (chunk(i), ChunkWords of a D of kElementBytes) into buffer i, and TMA stores it at
// origin(i).
template <int kCount, int kElementBytes, class Chunk, class Origin>
__device__ __forceinline__ void store_round(const CUtensorMap& map_d, unsigned char* buffers,
                                            int batch, int consumer, Chunk chunk, Origin origin) {
  await_buffers(consumer);
#pragma unroll
  for (int i = 0; i < kCount; ++i) {
    write_chunk<kElementBytes>(buffers + i * kStoreChunkBytes, chunk(i));
  }
  hand_to_tma<kCount>(map_d, buffers, batch, consumer, origin);
}

// Chunks kFirst..kEnd-1 in rounds of up to kBuffers, each round once TMA has read the last.
template <int kFirst, int kEnd, int kBuffers, int kElementBytes, class Chunk, class Origin>
__device__ __forceinline__ void store_rounds(const CUtensorMap& map_d, unsigned char* buffers,
                                             int batch, int consumer, Chunk chunk, Origin origin) {
  if constexpr (kFirst < kEnd) {
    constexpr int kCount = kEnd - kFirst < kBuffers ? kEnd - kFirst : kBuffers;
    store_round<kCount, kElementBytes>(
        map_d, buffers, batch, consumer, [&](int i) { return chunk(kFirst + i); },
        [&](int i) { return origin(kFirst + i); });
    store_rounds<kFirst + kCount, kEnd, kBuffers, kElementBytes>(map_d, buffers, batch, consumer,
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
  __device__ __forceinline__ void store(const CUtensorMap& map_d, unsigned char* buffers,
                                        int consumer) {
    if (!waiting) return;
    const auto held = [&](int i) -> const ChunkWords& { return chunk[i]; };
    const auto at = [&](int i) { return origin[i]; };
    if (fp32) {
      store_round<kCount, 4>(map_d, buffers, batch, consumer, held, at);
    } else {
      store_round<kCount, 2>(map_d, buffers, batch, consumer, held, at);
    }
    waiting = false;
  }
};

// D = alpha * AB through shared memory and TMA, for a consumer's part of the tile (kParts wgmma
// tiles of 64 rows, from row0, columns from col0), in chunks of 64 rows x 128 bytes (64 x 64 of a
// 16-bit D, 64 x 32 of an fp32 D; Pair: __half2, __nv_bfloat162 or float2).
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
//                       to read the first ones, with the tensor cores idle (docs/perf-notes.md,
//                       sm90 v10). Holding four takes 64 registers, which spilled.
//   otherwise           (ping-pong with an fp32 D) rounds of kBuffers, each once TMA has read the
//                       last; the other consumer's mainloop runs meanwhile.
template <typename Pair, int kBuffers, bool kHold, int kParts, int N>
__device__ __forceinline__ void store_tma(const CUtensorMap& map_d, unsigned char* buffers,
                                          HeldChunks& held, const float (&acc)[kParts][N],
                                          float alpha, int row0, int col0, int batch,
                                          int consumer) {
  constexpr int kElementBytes = kPairElementBytes<Pair>;
  constexpr int kColumns = store_columns(kElementBytes);
  constexpr int kChunksPerPart = 2 * N / kColumns;  // N accumulators per thread: 2N columns
  constexpr int kChunks = kParts * kChunksPerPart;
  // Chunk c of the part, counted part by part.
  const auto convert = [&](int c) {
    return convert_chunk<Pair>(acc[c / kChunksPerPart], c % kChunksPerPart, alpha);
  };
  const auto origin = [&](int c) { return chunk_origin<kChunksPerPart, kColumns>(row0, col0, c); };
  if constexpr (kBuffers >= kChunks) {
    store_round<kChunks, kElementBytes>(map_d, buffers, batch, consumer, convert, origin);
  } else if constexpr (kHold) {
    static_assert(kBuffers >= HeldChunks::kCount && kChunks > HeldChunks::kCount,
                  "the last two chunks held, the others stored");
    constexpr int kStored = kChunks - HeldChunks::kCount;
    held.store(map_d, buffers, consumer);  // only if the K loop had no step to do it
    store_rounds<0, kStored, kBuffers, kElementBytes>(map_d, buffers, batch, consumer, convert,
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
    store_rounds<0, kChunks, kBuffers, kElementBytes>(map_d, buffers, batch, consumer, convert,
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

// The general epilogue (beta*C, bias, activation) into a D that TMA stores (row-major, described
// by map_d; kElementBytes 2 for fp16 and bf16, 4 for fp32), for a consumer's part of the tile
// (kParts wgmma tiles of 64 rows from row0, columns from col0): finish_rolled's rounds, each
// writing its pairs into a store buffer instead of D. Chunk c of the part (64 rows x 128 bytes:
// four rounds of a 16-bit D, two of fp32) fills buffer c % kBuffers; once every buffer is full
// (e.g. 128x256: four chunks of a 16-bit D, eight of fp32, two buffers) they go to TMA, and the
// next chunks wait until TMA has read them. Nothing is held into the next tile: this route is for
// epilogues that cost more than that wait. A 16-bit D takes the approximate activations
// (activate), an fp32 D the exact ones.
// With `c_in_buffers` (sm90_gemm's: c_by_tma, but for an fp32 C in 256x128), C arrives in the
// buffers by TMA: the first buffers' chunks were requested during the tile's K loop, the rest once
// the ones before have gone to D. Each thread reads the pair of C where it writes D's pair. Else
// each thread loads its values of C itself (finish_round). kFp32CInBuffers: whether the kernel
// ever puts an fp32 C there; where it does not, that code is left out at compile time.
template <int kElementBytes, int kBuffers, bool kFp32CInBuffers, int kParts, int N>
__device__ __forceinline__ void finish_tma(const EpilogueParams& p, const CUtensorMap& map_d,
                                           unsigned char* buffers, float (&acc)[kParts][N],
                                           int row0, int col0, int batch, int consumer, int64_t m,
                                           int64_t n, bool c_in_buffers, SourceC& c) {
  const bool c_tma = c_in_buffers && (kElementBytes == 2 || kFp32CInBuffers);
  constexpr int kColumns = store_columns(kElementBytes);
  constexpr int kChunksPerPart = 2 * N / kColumns, kChunks = kParts * kChunksPerPart;
  constexpr int kRoundsPerChunk = kColumns / (8 * kRoundBlocks);
  static_assert(kBuffers >= kChunks || kChunks % kBuffers == 0, "whole groups of chunks");
  const bool fp16 = p.d.dtype == DType::fp16;
  const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
  const int row = 16 * warp + lane / 4, col = 2 * (lane % 4);  // the thread's first pair
  // Chunks first, first + 1, ... in buffers 0, 1, ...
  const auto from = [&](int first) {
    return [=](int i) { return chunk_origin<kChunksPerPart, kColumns>(row0, col0, first + i); };
  };
  if (c_tma) {
    c.wait();
  } else {
    await_buffers(consumer);  // the last tile's stores
  }
#pragma unroll
  for (int i = 0; i < kParts; ++i) {
#pragma unroll 1
    for (int round = 0; round < N / kRoundValues; ++round) {
      const int chunk = i * kChunksPerPart + round / kRoundsPerChunk;
      if constexpr (kBuffers < kChunks) {
        if (round % kRoundsPerChunk == 0 && chunk > 0 && chunk % kBuffers == 0) {
          hand_to_tma<kBuffers>(map_d, buffers, batch, consumer, from(chunk - kBuffers));
          if (c_tma) {
            c.request<kBuffers>(buffers, batch, from(chunk));
            c.wait();
          } else {
            await_buffers(consumer);
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
      finish_round<kElementBytes == 2>(p, batch, row0 + i * kStoreRows + row,
                                       col0 + round * 8 * kRoundBlocks + col, v, m, n, c_tma);
#pragma unroll
      for (int b = 0; b < kRoundBlocks; ++b)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const float v0 = v[4 * b + 2 * half], v1 = v[4 * b + 2 * half + 1];
          if constexpr (kElementBytes == 4) {
            *reinterpret_cast<float2*>(at(b, half)) = make_float2(v0, v1);
          } else {
            *reinterpret_cast<uint32_t*>(at(b, half)) = pack_pair(fp16, v0, v1);
          }
        }
    }
  }
  constexpr int kLast = (kChunks - 1) / kBuffers * kBuffers;  // the last group's first chunk
  hand_to_tma<kChunks - kLast>(map_d, buffers, batch, consumer, from(kLast));
}
#endif  // TILEGEMM_SM90A_DEVICE_CODE

// ---- the kernel ---------------------------------------------------------------------------

// A_MN / B_MN: the operand is MN-major in memory (column-major A, row-major B). `pairs`: D is
// row-major with 2-element aligned rows. `c_tma`: the tma_general route loads C through map_c.
// PLAIN: compiled for the tma route alone (D = alpha * AB through TMA stores), the launches
// whose route is that. Without the other routes' code (C, bias, activations, stores from
// registers) the kernel is 10-20 times smaller (64x64: 17 KB of SASS against 190 KB), and a
// small problem's call, which fetches its code from DRAM after other kernels, runs 0.2-0.6 us
// sooner (docs/perf-notes.md, sm90 v26).
template <typename T, class S, bool A_MN, bool B_MN, bool PLAIN>
__global__ void __launch_bounds__(S::kThreads, 1)
    sm90_gemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
              const __grid_constant__ CUtensorMap map_d, const __grid_constant__ CUtensorMap map_c,
              GemmArgs args, bool pairs, StoreRoute launch_route, bool launch_c_tma,
              TailSplitWork split) {
#ifdef TILEGEMM_SM90A_DEVICE_CODE
  const StoreRoute route = PLAIN ? StoreRoute::tma : launch_route;
  const bool c_tma = !PLAIN && launch_c_tma;
  static_assert(sizeof(T) == S::kElementBytes, "a shape compiled for this input type");
  static_assert(sizeof(T) == 2 || (!A_MN && !B_MN), "tf32: K-major operands only");
  constexpr OperandTile kTileA{S::BM, A_MN}, kTileB{S::BN, B_MN};  // one slab of each
  constexpr uint32_t kStageBytes = S::kSlabs * (kTileA.bytes() + kTileB.bytes());
  // Shared memory: A stages, B stages, the store chunks, split-K's partial sums, then the
  // barriers; the start rounded up to the swizzle's 1024-byte period (shared_bytes() counts the
  // slack).
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem =
      smem_raw + (kAtomBytes - shared_address(smem_raw) % kAtomBytes) % kAtomBytes;
  unsigned char* const stages_a = smem;
  unsigned char* const stages_b = smem + S::kStages * S::kSlabs * kTileA.bytes();
  // Slab j of stage s: slab s * kSlabs + j of A's stages and of B's.
  const auto slab_a = [&](int stage, int j) {
    return stages_a + (stage * S::kSlabs + j) * kTileA.bytes();
  };
  const auto slab_b = [&](int stage, int j) {
    return stages_b + (stage * S::kSlabs + j) * kTileB.bytes();
  };
  unsigned char* const store_chunks = smem + S::kStages * kStageBytes;
  constexpr int kPartialBytes = S::kSplitK > 1 ? S::BM * S::BN * 4 : 0;
  float4* const partials = reinterpret_cast<float4*>(store_chunks + S::kStoreBytes);
  uint64_t* const full = reinterpret_cast<uint64_t*>(store_chunks + S::kStoreBytes + kPartialBytes);
  uint64_t* const empty = full + S::kStages;
  uint64_t* const c_full = empty + S::kStages;  // one per consumer (SourceC)

  // kCluster: the programs of this program's cluster. rank(): its place in the cluster, read from
  // a special register wherever needed (a value kept across setmaxnreg goes to local memory);
  // rank_mn() its place in a multicasting cluster, rank_m() along M (its part of B), rank_n()
  // along N (its part of A); rank_k() its share of K (split-K).
  constexpr int kCluster = S::kClusterSize;
  const auto rank = [] { return kCluster > 1 ? int(cuda::ptx::get_sreg_cluster_ctarank()) : 0; };
  const auto rank_mn = [&] { return S::kClusterMN > 1 ? rank() : 0; };
  const auto rank_m = [&] { return S::kClusterM > 1 ? rank_mn() % S::kClusterM : 0; };
  const auto rank_n = [&] { return S::kClusterN > 1 ? rank_mn() / S::kClusterM : 0; };
  const auto rank_k = [&] { return S::kSplitK > 1 ? rank() : 0; };
  // This program's number in the persistent walk (its cluster's), read from the special register
  // wherever needed: kept in a register, it and what the walk works out from it stay live
  // through every K loop (ProgramWalk).
  const auto program = [] {
    uint32_t cta;
    asm volatile("mov.u32 %0, %%ctaid.x;\n" : "=r"(cta));
    return int(cta) / kCluster;
  };
  // This program's K steps of every whole tile: k_begin .. k_begin + k_steps - 1 (split-K: its
  // share, the first program's rounded up; the last one's may be empty when K is one step).
  const int k_tiles = int(cdiv(args.k, S::BK));
  const int k_share = (k_tiles + S::kSplitK - 1) / S::kSplitK;
  const int k_begin = S::kSplitK == 1 ? 0 : min(rank_k() * k_share, k_tiles);
  const int k_steps = S::kSplitK == 1 ? k_tiles : min(k_share, k_tiles - k_begin);
  // The persistent walk: this program's cluster takes work items pieces.first(program()),
  // pieces.next(program(), item), ... until -1 (items first, first + step, ..., then the last
  // round's split as the host planned it: schedule/tail_split.hpp), with pieces.piece(program(),
  // item) saying which K steps of the item it takes, and tiles.tile(item, rank_mn()) which tile
  // the item is. All in 32 bits (problem_check), which saves the consumers registers and the
  // program's start a 64-bit division subroutine.
  struct Walk {
    PersistentTiles tiles;
    ProgramWalk pieces;
  };
  const auto walk = [&] {
    const PersistentTiles tiles(args.m, args.n, S::BM, S::BN, args.group_size_m, S::kClusterM,
                                S::kClusterN);
    // A kernel that never splits walks whole items alone, and its walk folds at compile time
    // to items p, p + G, ...
    const TailSplit plan =
        kTailSplits<S, PLAIN> ? split.plan : no_tail_split(split.plan.whole_items);
    return Walk{tiles, ProgramWalk{plan, int(gridDim.x) / kCluster, k_begin, k_steps}};
  };

  // The producer's loads of K step kt of `work` into `stage`: this program's part of A's tile,
  // multicast to the programs of its cluster row (which share A), and its part of B's, multicast
  // to those of its cluster column. A program below (right of) the matrix loads from the last
  // real tile row (column): only its part of the other operand matters, and it writes nothing.
  const auto load_step = [&](const BatchedTile& work, int kt, int stage) {
    constexpr OperandTile kTileAParts{S::BM, A_MN, S::kClusterN};
    constexpr OperandTile kTileBParts{S::BN, B_MN, S::kClusterM};
    // The programs of its cluster row (A) and column (B); none where a tile is not shared.
    const uint16_t to_a = S::kClusterN > 1 ? multicast_a(rank_mn(), S::kClusterM, S::kClusterN) : 0;
    const uint16_t to_b = S::kClusterM > 1 ? multicast_b(rank_mn(), S::kClusterM) : 0;
    const int64_t tile_rows = cdiv(args.m, S::BM), tile_cols = cdiv(args.n, S::BN);
    const int64_t pid_m = work.tile.pid_m < tile_rows ? work.tile.pid_m : tile_rows - 1;
    const int64_t pid_n = work.tile.pid_n < tile_cols ? work.tile.pid_n : tile_cols - 1;
    const int m0 = int(pid_m * S::BM), n0 = int(pid_n * S::BN);
    // The whole stage: every part of A and B (the other programs' parts complete here too).
    cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                         cuda::ptx::space_shared, &full[stage], kStageBytes);
#pragma unroll
    for (int j = 0; j < S::kSlabs; ++j) {
      const int k0 = kt * S::BK + j * S::kSlabK;
      load_tile(map_a, kTileAParts, slab_a(stage, j), m0, k0, int(work.batch), &full[stage],
                rank_n(), S::kClusterN, to_a);
      load_tile(map_b, kTileBParts, slab_b(stage, j), n0, k0, int(work.batch), &full[stage],
                rank_m(), S::kClusterM, to_b);
    }
  };
  // Unless A or B is multicast, thread 0 loads the first tile's first kEarlySteps K steps as soon
  // as it has initialised the barriers, before the barrier below and setmaxnreg. (A multicast
  // writes into the partner's stages, whose barriers must be initialised first.) A program's
  // first piece is a whole tile (a tail split leaves whole rounds before the last).
  const int early_steps = S::kClusterMN == 1 ? min(k_steps, kEarlySteps) : 0;
  if (threadIdx.x == 0) {
    // The descriptors' fetch overlaps the set-up below instead of the first loads and stores.
    prefetch_tensormap(map_a);
    prefetch_tensormap(map_b);
    if (route == StoreRoute::tma || route == StoreRoute::tma_general) prefetch_tensormap(map_d);
    if (c_tma) prefetch_tensormap(map_c);
    for (int i = 0; i < S::kConsumers; ++i) cuda::ptx::mbarrier_init(&c_full[i], 1);
    for (int s = 0; s < S::kStages; ++s) {
      cuda::ptx::mbarrier_init(&full[s], 1);  // the producer's arrive + bytes
      // Every consumer warp of every program this one's parts are multicast to (release_stage):
      // a stage is free once they all have read it. Those are the programs of its cluster row
      // and column, itself once.
      cuda::ptx::mbarrier_init(&empty[s],
                               S::kStageReaders * 4 * cluster_readers(S::kClusterM, S::kClusterN));
    }
    // Make the initialised barriers visible to the TMA unit (the async proxy) and the cluster.
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
    if (early_steps > 0) {
      const Walk w = walk();  // every program has a first item: the grid is no larger than that
      const Piece first = w.pieces.piece(program(), w.pieces.first(program()));
      const BatchedTile work = w.tiles.tile(first.item, 0);
      for (int i = 0; i < early_steps; ++i) load_step(work, first.k_begin + i, i);
    }
  }
  if constexpr (kCluster > 1) {
    cluster_start_sync();
  } else {
    __syncthreads();
  }

  if (threadIdx.x < 128) {
    // ---- producer ----
    if constexpr (S::kConsumers > 1) registers_decrease<kProducerRegisters>();
    if (threadIdx.x == 0) {
      // After the early steps (a first pass over stages 0 .. early_steps-1).
      int stage = early_steps % S::kStages;
      uint32_t phase = early_steps / S::kStages;
      const Walk w = walk();
      int issued = early_steps;  // of the first piece
      for (int item = w.pieces.first(program()); item >= 0; item = w.pieces.next(program(), item)) {
        const Piece piece = w.pieces.piece(program(), item);
        const BatchedTile work = w.tiles.tile(item, rank_mn());
        for (int i = issued; i < piece.k_steps; ++i) {
          // A fresh barrier counts as having completed the phase before its first, so the first
          // pass over the ring does not wait. In a cluster this also waits for the other
          // programs' consumers: the multicast below writes into their stage too.
          wait_barrier(&empty[stage], phase ^ 1);
          load_step(work, piece.k_begin + i, stage);
          if (++stage == S::kStages) stage = 0, phase ^= 1;
        }
        issued = 0;
      }
    }
  } else {
    // ---- consumers ----
    if constexpr (S::kConsumers > 1) registers_increase<kConsumerRegisters>();
    const int consumer = threadIdx.x / 128 - 1;
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    // Whether this lane frees the stages of the program of its rank (release_stage).
    const bool signals =
        S::kClusterMN == 1
            ? lane == 0
            : lane < S::kClusterMN && loads_into(lane, rank_mn(), S::kClusterM, S::kClusterN);
    int stage = 0, previous = 0;
    uint32_t phase = 0;
    unsigned char* const my_chunks = store_chunks + consumer * S::kStoreBuffers * kStoreChunkBytes;
    HeldChunks held;  // chunks of the last tile's D not yet stored (store_tma)
    // C by TMA into the store buffers (c_tma), except for an fp32 C in 256x128: there its
    // requests and reads made ptxas spill a register in the K loop (seen without clusters; both
    // forms are left out), and each thread loads its own C instead.
    constexpr bool kFp32CInBuffers = S::kMmaM == 1 || S::kPingPong;
    const bool c_in_buffers = c_tma && (kFp32CInBuffers || args.epilogue.d.dtype != DType::fp32);
    SourceC source_c{&map_c, &c_full[consumer]};  // C's chunks, with c_tma (finish_tma)
    float acc[S::kMmaM][S::BN / 2];
    // Partial sums leave and arrive as float4 v of wgmma tile i, at (i * kVectors + v) *
    // kMathThreads + 128 * consumer + the thread's place in its warpgroup (split-K's in the first
    // program's shared memory, the tail split's in its workspace; TailSplitWork). Worked out
    // where used: a value kept from here would be one more register through the K loop.
    constexpr int kMathThreads = S::kConsumers * 128;
    constexpr int kVectors = S::BN / 8;  // per 64-row wgmma tile
    const auto vector_at = [](int i, int v) {
      return (i * kVectors + v) * kMathThreads + int(threadIdx.x) - 128;
    };
    const Walk w = walk();
    // Ping-pong: the consumer takes every other piece of the program's walk (whole items: no
    // split there), from its own number on (`turn` counts the walk's pieces), and owns all rows
    // of its tiles.
    constexpr int kTurns = S::kPingPong ? 2 : 1;
    int turn = S::kPingPong ? consumer : 0;
    const int my_row = S::kPingPong ? 0 : consumer * S::WM;
    const auto next = [&](int item) { return w.pieces.next(program(), item); };
    int item = w.pieces.first(program());
    if (S::kPingPong && consumer == 1) item = next(item);
    for (; item >= 0; item = S::kPingPong ? next(next(item)) : next(item)) {
      const BatchedTile work = w.tiles.tile(item, rank_mn());
      const int steps = w.pieces.steps_of(program(), item);
      if constexpr (S::kPingPong) {
        // The ring's place at this item's first K step, past the other consumer's steps: the
        // producer loaded k_steps for each item before it.
        const RingPlace place = ring_place(int64_t(turn) * steps, S::kStages);
        stage = place.stage;
        phase = place.phase;
        if (turn > 0) await_turn(consumer);  // all but the program's first item
        turn += kTurns;
      }
      // The K step at which the last tile's held chunks are stored: late enough that the stores
      // issued at the end of the last tile have read their buffers (two K steps, ~1.4 us at
      // 128x256), early enough for any K.
      const int held_store_step = steps > 2 ? 2 : steps - 1;
      // The staggered end (kStaggerSteps), where the piece has more K steps than that.
      const bool staggered = kStaggerSteps<S> > 0 && steps > kStaggerSteps<S>;
      for (int kt = 0; kt < steps; ++kt) {
        if (staggered && consumer == 1 && kt == steps - kStaggerSteps<S>) await_stagger();
        wait_barrier(&full[stage], phase);
        wgmma_fence();
#pragma unroll
        for (int j = 0; j < S::kSlabs; ++j) {
          const uint32_t a = shared_address(slab_a(stage, j));
          const uint32_t b = shared_address(slab_b(stage, j));
#pragma unroll
          for (int ks = 0; ks < kMmaPerSlab; ++ks)
#pragma unroll
            for (int i = 0; i < S::kMmaM; ++i) {
              Wgmma<T, S::BN, A_MN, B_MN>::run(acc[i], kTileA.descriptor(a, my_row + i * 64, ks),
                                               kTileB.descriptor(b, 0, ks), kt + j + ks > 0);
            }
        }
        wgmma_commit();
        if (staggered && consumer == 0 && kt == steps - 1) pass_stagger();
        // This stage's group may still run; the previous stage's has finished reading.
        wgmma_wait<1>();
        if (kt > 0) release_stage<S::kClusterMN>(&empty[previous], lane, signals);
        previous = stage;
        if (++stage == S::kStages) stage = 0, phase ^= 1;
        // While this stage's wgmma run, the last tile's held chunks of D go to TMA.
        if constexpr (S::kHoldsChunks) {
          if (kt == held_store_step) held.store(map_d, my_chunks, consumer);
        }
        // The same step asks for the first chunks of this tile's C, once the last tile's stores
        // have read the buffers, if the tile has rows in the matrix and this program writes it.
        if (c_in_buffers && kt == held_store_step &&
            w.pieces.piece(program(), item).share != Share::tail &&
            work.tile.pid_m * S::BM < args.m && work.tile.pid_n * S::BN < args.n &&
            (S::kSplitK == 1 || rank_k() == 0)) {
          const int row0 = int(work.tile.pid_m * S::BM) + my_row;
          const int col0 = int(work.tile.pid_n * S::BN);
          // As many chunks of C as there are buffers, of 64 x 64 (16-bit) or 64 x 32 (fp32).
          const auto request_first = [&](auto element_bytes) {
            constexpr int kBytes = decltype(element_bytes)::value, kColumns = store_columns(kBytes);
            constexpr int kChunks = store_chunks_per_warpgroup(S::BM, S::BN, S::kPingPong, kBytes);
            constexpr int kFirst = S::kStoreBuffers < kChunks ? S::kStoreBuffers : kChunks;
            source_c.request<kFirst>(my_chunks, int(work.batch), [&](int i) {
              return chunk_origin<S::BN / kColumns, kColumns>(row0, col0, i);
            });
          };
          if (kFp32CInBuffers && args.epilogue.d.dtype == DType::fp32) {
            request_first(std::integral_constant<int, 4>{});
          } else {
            request_first(std::integral_constant<int, 2>{});
          }
        }
      }
      // Ping-pong: the next item of the walk, if any, is the other consumer's.
      if constexpr (S::kPingPong) {
        if (next(item) >= 0) pass_turn(consumer);
      }
      if (S::kSplitK == 1 || steps > 0) {
        wgmma_wait<0>();
        release_stage<S::kClusterMN>(&empty[previous], lane, signals);
#pragma unroll
        for (int i = 0; i < S::kMmaM; ++i) fence_registers(acc[i]);
      } else {  // split-K with a share of no K steps: this program's sums are zero
#pragma unroll
        for (int i = 0; i < S::kMmaM; ++i)
#pragma unroll
          for (int j = 0; j < S::BN / 2; ++j) acc[i][j] = 0.0f;
      }
      // Partial sums out of and into the accumulators: store(at, value) for each float4,
      // value = load(at) added.
      const auto send_sums = [&](auto store) {
#pragma unroll
        for (int i = 0; i < S::kMmaM; ++i)
#pragma unroll
          for (int v = 0; v < kVectors; ++v) {
            store(vector_at(i, v), make_float4(acc[i][4 * v], acc[i][4 * v + 1], acc[i][4 * v + 2],
                                               acc[i][4 * v + 3]));
          }
      };
      const auto add_sums = [&](auto load) {
#pragma unroll
        for (int i = 0; i < S::kMmaM; ++i)
#pragma unroll
          for (int v = 0; v < kVectors; ++v) {
            const float4 p = load(vector_at(i, v));
            acc[i][4 * v] += p.x, acc[i][4 * v + 1] += p.y;
            acc[i][4 * v + 2] += p.z, acc[i][4 * v + 3] += p.w;
          }
      };
      if constexpr (S::kSplitK > 1) {
        // The cluster's one tile (see Sm90Shape): thread t of consumer c holds the same elements
        // of it in every program. The others store their sums into the first program's
        // `partials`, every thread of the cluster meets at barrier.cluster (its release and
        // acquire order the stores before the loads), the first one adds them.
        if (rank_k() != 0) {
          float4* const to = static_cast<float4*>(__cluster_map_shared_rank(partials, 0));
          send_sums([&](int at, float4 value) { to[at] = value; });
        }
        cluster_sync();
        if (rank_k() != 0) continue;  // the first program writes D
        add_sums([&](int at) { return partials[at]; });
      }
      if constexpr (kTailSplits<S, PLAIN>) {
        // The last round's split: a tail leaves its sums in the item's slot and raises its
        // flag; the head waits for the flag and adds them (TailSplitWork). Through L2 (.cg):
        // the sums were written during this launch.
        // The slot's sums and this consumer's flag are worked out where used, from the piece.
        if (const Piece piece = w.pieces.piece(program(), item); piece.share != Share::whole) {
          const auto sums = [&] {
            return split.partials + int64_t(piece.slot) * (S::BM * S::BN / 4);
          };
          const auto flag = [&] { return split.flags + piece.slot * S::kConsumers + consumer; };
          if (piece.share == Share::tail) {
            send_sums([&](int at, float4 value) { __stcg(sums() + at, value); });
            consumer_barrier(consumer);
            if (threadIdx.x % 128 == 0) raise_flag(flag(), split.key);
            continue;
          }
          if (threadIdx.x % 128 == 0) take_flag(flag(), split.key);
          consumer_barrier(consumer);
          add_sums([&](int at) { return __ldcg(sums() + at); });
        }
      }
      // Below or right of the matrix (clusters' last row or column): nothing to write.
      if (work.tile.pid_m * S::BM >= args.m || work.tile.pid_n * S::BN >= args.n) continue;

      // Epilogue.
      const EpilogueParams& e = args.epilogue;
      const int tile_row = int(work.tile.pid_m * S::BM) + my_row;
      const int tile_col = int(work.tile.pid_n * S::BN);
      if (route == StoreRoute::tma_general) {
        const auto finish = [&](auto element_bytes) {
          finish_tma<decltype(element_bytes)::value, S::kStoreBuffers, kFp32CInBuffers>(
              e, map_d, my_chunks, acc, tile_row, tile_col, int(work.batch), consumer, args.m,
              args.n, c_in_buffers, source_c);
        };
        if (e.d.dtype == DType::fp32) {
          finish(std::integral_constant<int, 4>{});
        } else {
          finish(std::integral_constant<int, 2>{});
        }
        continue;
      }
      if (route == StoreRoute::tma) {
        const auto store = [&](auto pair) {
          store_tma<decltype(pair), S::kStoreBuffers, S::kHoldsChunks>(
              map_d, my_chunks, held, acc, e.alpha, tile_row, tile_col, int(work.batch), consumer);
        };
        if (e.d.dtype == DType::bf16) {
          store(__nv_bfloat162{});
        } else if (e.d.dtype == DType::fp16) {
          store(__half2{});
        } else {
          store(float2{});
        }
        continue;
      }
      // From registers (write_chunk has the accumulator layout): the thread's first pair.
      const int64_t row0 = work.tile.pid_m * S::BM + my_row + warp * 16 + lane / 4;
      const int64_t col0 = work.tile.pid_n * S::BN + 2 * (lane % 4);
#pragma unroll
      for (int i = 0; i < S::kMmaM; ++i) {
        const int64_t row = row0 + i * 64;
        if (route == StoreRoute::scaled && e.d.dtype == DType::bf16) {
          store_scaled<__nv_bfloat162>(e, work.batch, row, col0, acc[i], args.m, args.n);
        } else if (route == StoreRoute::scaled) {
          store_scaled<__half2>(e, work.batch, row, col0, acc[i], args.m, args.n);
        } else {
          finish_rolled(e, work.batch, row, col0, acc[i], args.m, args.n, pairs);
        }
      }
    }
    if constexpr (S::kHoldsChunks) held.store(map_d, my_chunks, consumer);  // the last tile's
    // The consumer's TMA stores must have read their buffers before the CTA (and its shared
    // memory) ends.
    if ((route == StoreRoute::tma || route == StoreRoute::tma_general) && threadIdx.x % 128 == 0) {
      cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{});
    }
  }
  // The other programs of the cluster may still arrive on this one's `empty` barriers. (Split-K:
  // the consumers met at barrier.cluster after their tile; the producer warpgroup meets them.)
  if constexpr (S::kClusterMN > 1) cluster_sync();
  if constexpr (S::kSplitK > 1) {
    if (threadIdx.x < 128) cluster_sync();
  }
#endif  // TILEGEMM_SM90A_DEVICE_CODE
}

// ---- launch -------------------------------------------------------------------------------

// A launch of `programs` programs of `threads` threads, in clusters of `cluster_size` along x
// (plain, with no cluster attribute, when it is 1). `cluster` is the attribute's storage, which
// the returned config points to. Shared by the occupancy query and the launch.
inline cudaLaunchConfig_t launch_config(int programs, int cluster_size, int threads,
                                        int shared_bytes, cudaStream_t stream,
                                        cudaLaunchAttribute* cluster) {
  *cluster = {};
  cluster->id = cudaLaunchAttributeClusterDimension;
  cluster->val.clusterDim = {unsigned(cluster_size), 1, 1};
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(unsigned(programs));
  config.blockDim = dim3(unsigned(threads));
  config.dynamicSmemBytes = size_t(shared_bytes);
  config.stream = stream;
  config.attrs = cluster;
  config.numAttrs = cluster_size > 1 ? 1 : 0;
  return config;
}

// The most clusters of `cluster_size` programs of `kernel` that fit on the device at once. Asked
// once per device and cluster size, and the answer reused for every sm90 kernel (they share one
// function type, so one cache): each takes a whole SM, 384 threads and ~225 KB of shared memory,
// whatever its config, so the answer is the same for all of them.
template <class Kernel>
Status max_active_clusters(Kernel* kernel, int device, int cluster_size, int shared_bytes,
                           int threads, int* clusters) {
  static std::mutex mutex;
  static std::map<std::pair<int, int>, int> known;  // (device, cluster size) -> clusters
  std::lock_guard lock(mutex);
  if (auto it = known.find({device, cluster_size}); it != known.end()) {
    *clusters = it->second;
    return Status::success();
  }
  cudaLaunchAttribute cluster;
  const cudaLaunchConfig_t config =
      launch_config(cluster_size, cluster_size, threads, shared_bytes, nullptr, &cluster);
  if (Status s = cuda_status(cudaOccupancyMaxActiveClusters(clusters, kernel, &config),
                             "sm90: cudaOccupancyMaxActiveClusters");
      !s.ok()) {
    return s;
  }
  if (*clusters < 1) {
    return {StatusCode::cuda_error, "sm90: no cluster of " + std::to_string(cluster_size) +
                                        " programs fits on this device"};
  }
  known[{device, cluster_size}] = *clusters;
  return Status::success();
}

// The tail split's workspace for one launch (TailSplitWork): `work->plan.tail_items` slots of
// `tile_values` fp32 sums and `consumers` flags each, taken from the library's memory pool of
// `device` on `stream` and given back, stream-ordered, when this goes out of scope after the
// launch. Without device memory for it, the launch goes without the split (work->plan becomes
// no_tail_split).
class TailSplitWorkspace {
 public:
  TailSplitWorkspace() = default;
  TailSplitWorkspace(const TailSplitWorkspace&) = delete;
  TailSplitWorkspace& operator=(const TailSplitWorkspace&) = delete;
  ~TailSplitWorkspace();
  Status make(int device, int tile_values, int consumers, cudaStream_t stream, TailSplitWork* work);

 private:
  void* memory_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

// Launches the instantiation for input type T and compiled shape S; the caller matched the
// config and checked the problem (can_implement). The operands' majorness picks one of four,
// and the store route the plain or the whole-epilogue form of that one (sm90_gemm's PLAIN).
// Persistent: as many programs as SMs (clusters: as many as fit), none with nothing to do, and
// the last round split where the model gains (kTailSplits, schedule/tail_split.hpp); split-K: a
// cluster per tile.
template <class S, typename T>
Status launch_shape(const GemmArgs& args, cudaStream_t stream) {
  const OperandShape a = operand_a(args), b = operand_b(args);
  CUtensorMap map_a, map_b;
  // The boxes the kernel's load_tile issues: the same OperandTile geometry (A or B in parts when
  // the programs of a cluster share it).
  const OperandTile tile_a{S::BM, a.mn_major, S::kClusterN},
      tile_b{S::BN, b.mn_major, S::kClusterM};
  if (Status s = encode_operand_map(a, tile_a.box_mn(), &map_a); !s.ok()) return s;
  if (Status s = encode_operand_map(b, tile_b.box_mn(), &map_b); !s.ok()) return s;
  const bool pairs = aligned_pairs(args.epilogue.d);
  CUtensorMap map_d{}, map_c{};
  const StoreRoute route = store_route(args);
  if (route == StoreRoute::tma || route == StoreRoute::tma_general) {
    if (Status s = encode_operand_map(output_d(args), kStoreRows, &map_d); !s.ok()) return s;
  }
  const bool c_tma = c_by_tma(args);
  if (c_tma) {
    if (Status s = encode_operand_map(source_c(args), kStoreRows, &map_c); !s.ok()) return s;
  }

  int device = 0, sms = 0;
  if (Status s = cuda_status(cudaGetDevice(&device), "sm90: cudaGetDevice"); !s.ok()) return s;
  if (Status s = cuda_status(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                             "sm90: cudaDeviceGetAttribute(MultiProcessorCount)");
      !s.ok()) {
    return s;
  }
  const int64_t items =
      cluster_items(args.m, args.n, S::BM, S::BN, args.batch_count, S::kClusterM, S::kClusterN);
  constexpr int kSmem =
      int(shared_bytes(S::BM, S::BN, S::kStages, S::kSplitK, S::kPingPong, S::kSlabs));

  Status status;
  auto launch_kernel = [&](auto* kernel) {
    status = cuda_status(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem),
        "sm90_gemm: cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
    if (!status.ok()) return;
    int slots = sms / S::kClusterSize;  // clusters the grid may have
    if (S::kClusterSize > 1) {
      status = max_active_clusters(kernel, device, S::kClusterSize, kSmem, S::kThreads, &slots);
      if (!status.ok()) return;
    }
    // Split-K takes one tile per cluster (see Sm90Shape): a cluster for every tile.
    const int64_t clusters = S::kSplitK > 1 || items < slots ? items : slots;
    TailSplitWork split;
    split.plan = kTailSplits<S, true> && route == StoreRoute::tma
                     ? plan_tail_split(items, clusters, cdiv(args.k, S::BK))
                     : no_tail_split(items);
    TailSplitWorkspace workspace;  // given back after the launch
    if (split.plan.on()) {
      status = workspace.make(device, S::BM * S::BN, S::kConsumers, stream, &split);
      if (!status.ok()) return;
    }
    cudaLaunchAttribute cluster;
    const cudaLaunchConfig_t config = launch_config(
        int(clusters * S::kClusterSize), S::kClusterSize, S::kThreads, kSmem, stream, &cluster);
    status = cuda_status(cudaLaunchKernelEx(&config, kernel, map_a, map_b, map_d, map_c, args,
                                            pairs, route, c_tma, split),
                         "sm90_gemm: cudaLaunchKernelEx");
    if (status.ok()) status = check_launch("sm90_gemm");
  };
  // tf32 has only the K-major instantiation (problem_check refuses the others).
  auto go = [&](auto a_mn, auto b_mn) {
    if constexpr (sizeof(T) == 4 && (decltype(a_mn)::value || decltype(b_mn)::value)) {
      status = {StatusCode::not_supported, "kernel sm90: tf32 needs K-major A and B"};
    } else {
      constexpr bool kAMn = decltype(a_mn)::value, kBMn = decltype(b_mn)::value;
      if (route == StoreRoute::tma) {
        launch_kernel(sm90_gemm<T, S, kAMn, kBMn, true>);
      } else {
        launch_kernel(sm90_gemm<T, S, kAMn, kBMn, false>);
      }
    }
  };
  using Yes = std::true_type;
  using No = std::false_type;
  auto with_b = [&](auto a_mn) { b.mn_major ? go(a_mn, Yes{}) : go(a_mn, No{}); };
  a.mn_major ? with_b(Yes{}) : with_b(No{});
  return status;
}

// Every compiled shape for input type T (float: tf32): launches the one equal to `config`. One
// translation unit per type (sm90_<type>.cu).
template <typename T>
Status launch_for_type(const GemmArgs& args, const KernelConfig& config, cudaStream_t stream) {
  return launch_compiled_shape<ShapesFor<T>>(
      "sm90", config, [&](auto shape) { return launch_shape<decltype(shape), T>(args, stream); });
}

// The machine-code version this build compiled the kernel for (90 when sm_90a is in the build);
// defined with the bf16 instantiations.
int compiled_binary_version();

extern template Status launch_for_type<__half>(const GemmArgs&, const KernelConfig&, cudaStream_t);
extern template Status launch_for_type<__nv_bfloat16>(const GemmArgs&, const KernelConfig&,
                                                      cudaStream_t);
extern template Status launch_for_type<float>(const GemmArgs&, const KernelConfig&, cudaStream_t);

}  // namespace tilegemm::sm90
