// Generation 4: warp tiling, the production fp32 path on CUDA cores.
//
// Hardware: CUDA cores, shared memory, 16-byte vector loads, cp.async. No tensor cores: fp32
// stays IEEE. Config: BLOCK_SIZE_M x BLOCK_SIZE_N x BLOCK_SIZE_K, num_stages, num_warps, warp tile
// WM x WN. Compiled shapes: see `Shapes` below (e.g. 128x128x16/g8/s3/w8/wt64x32).
//
// The idea (docs/design.md has the long form): a program's BM x BN tile is split into warp tiles
// of WM x WN, and each warp's tile into 8 x 4 lanes that each own WMITER x WNITER sub-tiles of
// 4 x 4 outputs. Per k a lane reads its A and B fragments with 16-byte shared-memory loads
// (conflict-free: a warp reads 128 contiguous bytes of A and 64 of B) and does 16 FMAs per
// fragment value. Shared memory is a ring of num_stages BK slices, stored [k][m] and [k][n]
// whatever the operands' layouts, so the fragment loads never change. A slice gets there by
// cp.async, global -> shared with no registers in between, zero-filled outside the matrix; the
// next num_stages - 2 slices are in flight while one is multiplied. Each stage has a `full` and
// an `empty` mbarrier, so warps wait for data and for free stages, not for each other. Global
// accesses are 16 bytes wide along each operand's contiguous dimension when pointer, leading
// dimension and batch stride allow, single elements otherwise (and for operands that the [k][x]
// layout transposes: cp.async cannot split a vector).
//
// fp32 inputs only: fp16 and bf16 go to the tensor-core kernels (sm80, sm90), and the teaching
// generations (naive, smem, tile2d) show them on CUDA cores.
#pragma once

#include <tuple>
#include <type_traits>

#include "kernels/cuda_check.hpp"
#include "kernels/kernel_registry.hpp"
#include "kernels/simt/simt_common.cuh"
#include "kernels/simt/slice_layout.hpp"
#include "problem/alignment.hpp"
#include "ptx/cp_async.cuh"

namespace tilegemm::simt::warptile {

// The compile-time config of one warptile instantiation.
template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_>
struct WarptileShape {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, kStages = STAGES_;
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  // Inside a warp: 8 lanes along M x 4 along N, each owning 4 x 4 outputs per warp sub-tile.
  static constexpr int kLanesM = 8, kLanesN = 4, TM = 4, TN = 4;  // TN: one float4 per run
  static constexpr int WMITER = WM / (kLanesM * TM), WNITER = WN / (kLanesN * TN);
  // Shared-memory rows are padded by 4 floats: rows stay 16-byte aligned for the float4 fragment
  // loads, and the transposing stores of K-contiguous operands hit 2-way instead of 4-way bank
  // conflicts.
  static constexpr int kPad = 4;
  static constexpr int kPitchA = BM + kPad, kPitchB = BN + kPad;
  static constexpr int kStageFloats = BK * (kPitchA + kPitchB);  // one A and one B slice
  static constexpr int kSharedBytes = kStages * kStageFloats * 4;
  // Programs resident per SM that the register allocation must allow (__launch_bounds__).
  // Left alone, ptxas gave the 8x8-per-thread kernel 185 registers: one 256-thread program per SM,
  // 8 warps, too few to hide shared-memory latency. Asking for 16 warps per SM caps it at 128.
  static constexpr int kOutputsPerThread = WMITER * TM * WNITER * TN;
  static constexpr int kMinBlocksPerSM = kOutputsPerThread <= 64 ? 512 / kThreads : 1;

  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must cover the block tile");
  static_assert(WM % (kLanesM * TM) == 0 && WN % (kLanesN * TN) == 0,
                "warp tile must be a multiple of the 32x16 lane grid");
  static_assert(BK % 4 == 0, "BK must hold whole 16-byte vectors");
  static_assert(kStages >= 2, "the ring needs a stage to multiply and one to fill");
  static_assert(kMinBlocksPerSM * kSharedBytes <= 227 * 1024,
                "the programs an SM must hold need more than its 227 KB of shared memory");

  static KernelConfig config() {
    return {.block_m = BM,
            .block_n = BN,
            .block_k = BK,
            .group_size_m = 8,
            .num_stages = kStages,
            .num_warps = kThreads / 32,
            .warp_m = WM,
            .warp_n = WN};
  }
};

// Compiled shapes (the rules take the largest tile that fills the GPU), chosen by sweeps on the
// H100 (docs/history/). 256x128x8 is cuBLAS's SGEMM structure: 8 x 16 outputs per thread at two
// warps per scheduler, the most FFMA per shared-memory load, so the fastest where the epilogue
// and the copies are cheap.
using Shapes = std::tuple<WarptileShape<256, 128, 8, 64, 64, 3>,   // 8 warps, 8x16 per thread
                          WarptileShape<128, 128, 16, 64, 32, 3>,  // 8 warps, 8x8, 2 per SM
                          WarptileShape<64, 64, 16, 32, 32, 3>>;   // small and skinny problems

// A thread's share of one BK x X slice of an fp32 operand, and how it gets to shared memory, stored
// as smem[k][x] with row pitch kPitch: copy_inside() / copy_masked(), cp.async straight into a
// stage. For A, x is m; for B, x is n. Element (k, x) of the slice lives at
// origin + x * stride_x + k * stride_k; CONTIG_K says which of the two is the operand's contiguous
// dimension (stride 1). A "granule" is a 16-byte vector (VECTOR) or one element; which ones a
// thread moves, a fixed number of rows apart, is slice_layout.hpp's. The thread keeps the address
// of its first granule and steps it by one slice per fetch, so the K loop does almost no index
// arithmetic and, but for a partial last slice, no K masking.
template <int BK, int X, int kPitch, int kThreads, bool CONTIG_K, bool VECTOR>
struct TileLoader {
  using T = float;
  // cp.async cannot split a vector, so the copy that transposes (CONTIG_K) moves elements.
  static constexpr int V = !VECTOR || CONTIG_K ? 1 : 4;
  static constexpr int kGranulesAlong = (CONTIG_K ? BK : X) / V;
  static constexpr int kGranules = BK * X / V;
  static constexpr int kPerThread = (kGranules + kThreads - 1) / kThreads;
  static_assert(kGranules % kThreads == 0 || kGranules < kThreads,
                "the slice must split evenly over the threads");
  static_assert(kThreads % kGranulesAlong == 0, "a thread's granules must line up");
  // Granule p of a thread lies kAcrossStep rows of granules (x for CONTIG_K, k otherwise) after
  // granule 0; in shared memory that is a constant number of bytes.
  static constexpr int kAcrossStep = kThreads / kGranulesAlong;
  static constexpr uint32_t kSharedGranuleStep =
      4 * (CONTIG_K ? kAcrossStep : kAcrossStep * kPitch);

  const T* src = nullptr;      // the thread's first granule in the next slice to fetch
  const T* origin = nullptr;   // a readable address, for copies that read nothing
  int64_t granule_step = 0;    // elements from one of the thread's granules to the next
  int64_t slice_step = 0;      // elements from one slice to the next
  uint32_t shared_offset = 0;  // bytes from a stage's start to the thread's first granule
  int x_valid = 0;             // columns (B) or rows (A) of the slice inside the matrix

  __device__ static bool has_granule(int p) {
    return kGranules % kThreads == 0 || threadIdx.x + p * kThreads < kGranules;
  }

  // Where granule p of this thread starts (slice_layout.hpp).
  __device__ static void granule_origin(int p, int& k, int& x) {
    const SliceCoord at = slice_granule(threadIdx.x, p, kGranulesAlong, kThreads, CONTIG_K, V);
    k = at.k;
    x = at.x;
  }

  __device__ void start(const T* tile_origin, int64_t stride_x, int64_t stride_k, int valid) {
    int k, x;
    granule_origin(0, k, x);
    origin = tile_origin;
    src = tile_origin + x * stride_x + k * stride_k;
    granule_step = kAcrossStep * (CONTIG_K ? stride_x : stride_k);
    slice_step = BK * stride_k;
    shared_offset = 4 * (k * kPitch + x);
    x_valid = valid;
  }

  // Elements of granule p inside the matrix along x: 0 or 1 for a K-contiguous granule (one x),
  // 0..V for an X-contiguous one.
  __device__ int x_count(int x) const {
    const int along_x = CONTIG_K ? 1 : V;
    return x_valid - x >= along_x ? along_x : (x_valid > x ? x_valid - x : 0);
  }

  // Elements of granule p inside the matrix, which are its first ones along the contiguous
  // dimension. FULL_K: every K index of the slice is inside (all slices but a partial last one).
  template <bool FULL_K>
  __device__ int elements_inside(int p, int k_valid) const {
    int k, x;
    granule_origin(p, k, x);
    if constexpr (CONTIG_K) {
      if (x_count(x) == 0) return 0;
      const int along_k = FULL_K ? V : k_valid - k;
      return along_k >= V ? V : (along_k > 0 ? along_k : 0);
    } else {
      return FULL_K || k < k_valid ? x_count(x) : 0;
    }
  }

  // True when the thread's granules lie within 2 GB of its first, so copy_inside() may address
  // them by 32-bit byte offsets. The same for every thread of a program.
  __device__ bool offsets_fit() const {
    return (kPerThread - 1) * granule_step * int64_t(sizeof(T)) < (int64_t(1) << 31);
  }

  // The next slice, global -> the stage at shared address `stage`, with no registers in
  // between. copy_inside() is for a slice wholly inside the matrix (every slice of an interior
  // tile but a partial last one): no masks, and each granule's address is the first's plus a
  // 32-bit offset computed from p, so no granule's address waits for another's (from
  // src + p * granule_step, ptxas made a chain of dependent 64-bit adds). copy_masked() reads
  // only the elements inside the matrix and zero-fills the rest (cp.async's src-size).
  __device__ void issue(uint32_t stage, int p, const T* granule, int bytes) const {
    const uint32_t dst = stage + shared_offset + p * kSharedGranuleStep;
    if constexpr (V == 4) {
      cp_async_16(dst, granule, bytes);
    } else {
      cp_async_4(dst, granule, bytes);
    }
  }
  __device__ void copy_inside(uint32_t stage) {
    const char* const first = reinterpret_cast<const char*>(src);
    const int32_t granule_bytes = int32_t(granule_step * int64_t(sizeof(T)));
#pragma unroll
    for (int p = 0; p < kPerThread; ++p) {
      if (has_granule(p)) {
        issue(stage, p, reinterpret_cast<const T*>(first + p * granule_bytes), V * 4);
      }
    }
    src += slice_step;
  }
  template <bool FULL_K>
  __device__ void copy_masked(uint32_t stage, int k_valid) {
#pragma unroll
    for (int p = 0; p < kPerThread; ++p) {
      if (!has_granule(p)) continue;
      const int bytes = elements_inside<FULL_K>(p, k_valid) * 4;
      issue(stage, p, bytes > 0 ? src + p * granule_step : origin, bytes);
    }
    src += slice_step;
  }
};

template <class S, bool A_CONTIG_K, bool B_CONTIG_K, bool VECTOR>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocksPerSM) warptile_gemm(GemmArgs args) {
  // The ring: stage s holds A's slice [k][m], then B's [k][n].
  extern __shared__ float4 warptile_smem[];
  float* const smem = reinterpret_cast<float*>(warptile_smem);
  const auto stage_a = [&](int s) { return smem + s * S::kStageFloats; };
  const auto stage_b = [&](int s) { return smem + s * S::kStageFloats + S::BK * S::kPitchA; };
  using LoaderA = TileLoader<S::BK, S::BM, S::kPitchA, S::kThreads, A_CONTIG_K, VECTOR>;
  using LoaderB = TileLoader<S::BK, S::BN, S::kPitchB, S::kThreads, B_CONTIG_K, VECTOR>;
  LoaderA loader_a;
  LoaderB loader_b;

  // Schedule: the program's tile, then this thread's place in it.
  const TileCoord tile = program_tile(args, S::BM, S::BN);
  const int64_t row0 = tile.pid_m * S::BM, col0 = tile.pid_n * S::BN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_m0 = (warp / S::kWarpsN) * S::WM, warp_n0 = (warp % S::kWarpsN) * S::WN;
  const int lane_m0 = (lane / S::kLanesN) * S::TM, lane_n0 = (lane % S::kLanesN) * S::TN;
  const int rows_valid = valid_extent(args.m, row0, S::BM);
  const int cols_valid = valid_extent(args.n, col0, S::BN);
  const int64_t num_k_tiles = cdiv(args.k, S::BK);
  const int64_t full_k_tiles = args.k / S::BK;  // slices that need no K mask
  const int last_k_valid = valid_extent(args.k, (num_k_tiles - 1) * S::BK, S::BK);

  // Whether the slices of this tile that are whole along K are wholly inside the matrix (one test
  // per program, so the K loop branches once per slice, for both operands).
  bool copies_inside = false;
  // Slice kt, the next one in order: its copy into `stage` starts.
  const auto fetch = [&](int64_t kt, int stage) {
    const bool full_k = kt < full_k_tiles;
    const uint32_t a = shared_address(stage_a(stage)), b = shared_address(stage_b(stage));
    if (full_k && copies_inside) {
      loader_a.copy_inside(a);
      loader_b.copy_inside(b);
    } else if (full_k) {
      loader_a.template copy_masked<true>(a, S::BK);
      loader_b.template copy_masked<true>(b, S::BK);
    } else {
      loader_a.template copy_masked<false>(a, last_k_valid);
      loader_b.template copy_masked<false>(b, last_k_valid);
    }
  };

  // Each stage of the ring has two barriers. `full` completes when every thread's copies of
  // the slice in it have landed (cp.async arrives for the thread); `empty` when every thread has
  // multiplied it. Warps wait only for the stage they need, so a warp can run up to
  // num_stages - 2 slices ahead of the slowest instead of meeting all the others every slice.
  __shared__ uint64_t stage_full[S::kStages], stage_empty[S::kStages];
  int read_stage = 0, write_stage = 0;       // the next slice to multiply / to copy
  uint32_t read_phase = 0, write_phase = 0;  // flip at each pass over the ring
  if (threadIdx.x == 0) {
    for (int s = 0; s < S::kStages; ++s) {
      mbarrier_init(&stage_full[s], S::kThreads);
      mbarrier_init(&stage_empty[s], S::kThreads);
    }
  }
  __syncthreads();

  for (int64_t batch = blockIdx.y; batch < args.batch_count; batch += gridDim.y) {
    float acc[S::WMITER * S::TM][S::WNITER * S::TN] = {};
    if (num_k_tiles > 0) {  // with K = 0, A and B may be null: not even addresses are formed
      // A slice: x = m (row stride), k = column stride; B slice: x = n (column), k = row.
      loader_a.start(static_cast<const float*>(args.a.data) + args.a.offset(batch, row0, 0),
                     args.a.stride.row, args.a.stride.col, rows_valid);
      loader_b.start(static_cast<const float*>(args.b.data) + args.b.offset(batch, 0, col0),
                     args.b.stride.col, args.b.stride.row, cols_valid);
      copies_inside = rows_valid == S::BM && cols_valid == S::BN && loader_a.offsets_fit() &&
                      loader_b.offsets_fit();
    }

    // One slice from a stage: per k, the lane's fragments from shared memory, then its outer
    // product.
    const auto multiply = [&](int stage) {
      const float* a_stage = stage_a(stage);
      const float* b_stage = stage_b(stage);
#pragma unroll
      for (int kk = 0; kk < S::BK; ++kk) {
        float frag_a[S::WMITER * S::TM], frag_b[S::WNITER * S::TN];
#pragma unroll
        for (int im = 0; im < S::WMITER; ++im) {
          const float4 v = *reinterpret_cast<const float4*>(
              &a_stage[kk * S::kPitchA + warp_m0 + im * S::kLanesM * S::TM + lane_m0]);
          frag_a[im * 4 + 0] = v.x, frag_a[im * 4 + 1] = v.y;
          frag_a[im * 4 + 2] = v.z, frag_a[im * 4 + 3] = v.w;
        }
#pragma unroll
        for (int jn = 0; jn < S::WNITER; ++jn) {
          const float4 v = *reinterpret_cast<const float4*>(
              &b_stage[kk * S::kPitchB + warp_n0 + jn * S::kLanesN * S::TN + lane_n0]);
          frag_b[jn * 4 + 0] = v.x, frag_b[jn * 4 + 1] = v.y;
          frag_b[jn * 4 + 2] = v.z, frag_b[jn * 4 + 3] = v.w;
        }
#pragma unroll
        for (int i = 0; i < S::WMITER * S::TM; ++i)
#pragma unroll
          for (int j = 0; j < S::WNITER * S::TN; ++j) acc[i][j] += frag_a[i] * frag_b[j];
      }
    };

    // Copy slice kt into the next stage once every thread has multiplied what it held.
    const auto issue = [&](int64_t kt) {
      mbarrier_wait(&stage_empty[write_stage], write_phase ^ 1);
      fetch(kt, write_stage);
      cp_async_arrive(&stage_full[write_stage]);
      if (++write_stage == S::kStages) write_stage = 0, write_phase ^= 1;
    };
    // Prologue: slices 0 .. num_stages-2 on their way.
    for (int64_t kt = 0; kt < S::kStages - 1 && kt < num_k_tiles; ++kt) issue(kt);
    // Mainloop: multiply slice kt, free its stage, then start the copy of slice
    // kt + num_stages - 1 into the stage slice kt - 1 used (free once the slowest warp is past it,
    // which leaves a fast warp one slice of slack before it waits).
    for (int64_t kt = 0; kt < num_k_tiles; ++kt) {
      mbarrier_wait(&stage_full[read_stage], read_phase);
      multiply(read_stage);
      mbarrier_arrive(&stage_empty[read_stage]);
      if (++read_stage == S::kStages) read_stage = 0, read_phase ^= 1;
      if (kt + S::kStages - 1 < num_k_tiles) issue(kt + S::kStages - 1);
    }

    // Epilogue: each thread finishes its own outputs. The common case -- an interior tile of
    // D = alpha * AB, fp32, row-major with 16-byte rows -- needs no masks and no per-element
    // type or activation switches: each run of TN outputs leaves in one 16-byte store, and its
    // code stays small. The general path inlines all of that for every output, which made the
    // epilogue 6 % of the 128x128 kernel's time at 4096^3, mostly instruction-cache misses, and
    // far more on short K.
    const EpilogueParams& e = args.epilogue;
    const bool plain =
        scales_only(e) && e.d.dtype == DType::fp32 && e.d.stride.col == 1 && vector_aligned(e.d, 4);
    if (plain && rows_valid == S::BM && cols_valid == S::BN) {
      float* const d = static_cast<float*>(e.d.data) + e.d.offset(batch, row0, col0);
#pragma unroll
      for (int i = 0; i < S::WMITER * S::TM; ++i) {
        const int local_m = warp_m0 + (i / S::TM) * S::kLanesM * S::TM + lane_m0 + i % S::TM;
        float* const row = d + local_m * e.d.stride.row + warp_n0 + lane_n0;
#pragma unroll
        for (int jn = 0; jn < S::WNITER; ++jn) {
          const float* run = &acc[i][jn * S::TN];
          *reinterpret_cast<float4*>(row + jn * S::kLanesN * S::TN) =
              make_float4(e.alpha * run[0], e.alpha * run[1], e.alpha * run[2], e.alpha * run[3]);
        }
      }
    } else {
#pragma unroll
      for (int i = 0; i < S::WMITER * S::TM; ++i) {
        const int local_m = warp_m0 + (i / S::TM) * S::kLanesM * S::TM + lane_m0 + i % S::TM;
#pragma unroll
        for (int j = 0; j < S::WNITER * S::TN; ++j) {
          const int local_n = warp_n0 + (j / S::TN) * S::kLanesN * S::TN + lane_n0 + j % S::TN;
          if (local_m < rows_valid && local_n < cols_valid) {
            epilogue_store(e, batch, row0 + local_m, col0 + local_n, acc[i][j]);
          }
        }
      }
    }
  }
}

// Launches the instantiation for compiled shape S; the caller has matched the config. The layouts
// and the vector/element choice pick one of eight kernels.
template <class S>
Status launch_shape(const GemmArgs& args, bool vector, cudaStream_t stream) {
  const bool a_contig_k = args.a.stride.col == 1;  // row-major A
  const bool b_contig_k = args.b.stride.row == 1;  // column-major B
  const dim3 grid = program_grid(args, S::BM, S::BN);
  Status status;
  auto go = [&](auto a_k, auto b_k, auto vec) {
    auto* kernel =
        warptile_gemm<S, decltype(a_k)::value, decltype(b_k)::value, decltype(vec)::value>;
    // More than 48 KB of dynamic shared memory must be asked for, per kernel.
    status = allow_dynamic_shared_bytes(
        reinterpret_cast<const void*>(kernel), S::kSharedBytes,
        "warptile_gemm: cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
    if (!status.ok()) return;
    kernel<<<grid, S::kThreads, S::kSharedBytes, stream>>>(args);
    status = check_launch("warptile_gemm");
  };
  using Yes = std::true_type;
  using No = std::false_type;
  auto with_vector = [&](auto a_k, auto b_k) { vector ? go(a_k, b_k, Yes{}) : go(a_k, b_k, No{}); };
  auto with_b = [&](auto a_k) { b_contig_k ? with_vector(a_k, Yes{}) : with_vector(a_k, No{}); };
  a_contig_k ? with_b(Yes{}) : with_b(No{});
  return status;
}

// Every compiled shape: launches the one equal to `config`.
inline Status launch_config(const GemmArgs& args, const KernelConfig& config, bool vector,
                            cudaStream_t stream) {
  return with_compiled_shape<Shapes>("warptile", config, [&](auto shape) {
    return launch_shape<decltype(shape)>(args, vector, stream);
  });
}

}  // namespace tilegemm::simt::warptile
