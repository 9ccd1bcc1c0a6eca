// Generation 4: warp tiling, the production fp32 path on CUDA cores.
//
// Hardware: CUDA cores, shared memory, 16-byte vector loads. No tensor cores: fp32 stays IEEE.
// Config: BLOCK_SIZE_M x BLOCK_SIZE_N x BLOCK_SIZE_K, num_warps, warp tile WM x WN; num_stages is 2
// (a double-buffered K loop). Compiled shapes: see `Shapes` below (e.g.
// 128x128x16/g8/s2/w8/wt64x32).
//
// The idea (docs/design.md has the long form): a program's BM x BN tile is split into warp tiles
// of WM x WN, and each warp's tile into 8 x 4 lanes that each own WMITER x WNITER sub-tiles of
// 4 x 4 outputs. Per k a lane reads its A and B fragments with 16-byte shared-memory loads
// (conflict-free: a warp reads 128 contiguous bytes of A and 64 of B) and does 16 FMAs per
// fragment value. The K loop is double-buffered: the next BK slice is loaded from global memory
// into registers while the current slice is multiplied, then written to the other shared-memory
// buffer, so one __syncthreads per step suffices. Global loads are 16 bytes wide along each
// operand's contiguous dimension when pointer, leading dimension and batch stride allow, with a
// masked scalar path for edges and unaligned operands.
#pragma once

#include <tuple>

#include "kernels/cuda_check.hpp"
#include "kernels/kernel_registry.hpp"
#include "kernels/simt/simt_common.cuh"

namespace tilegemm::simt::warptile {

// The compile-time config of one warptile instantiation.
template <int BM_, int BN_, int BK_, int WM_, int WN_>
struct WarptileShape {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_;
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  // Inside a warp: 8 lanes along M x 4 along N, each owning 4 x 4 outputs per warp sub-tile.
  static constexpr int kLanesM = 8, kLanesN = 4, TM = 4, TN = 4;
  static constexpr int WMITER = WM / (kLanesM * TM), WNITER = WN / (kLanesN * TN);
  // Shared-memory rows are padded by 4 floats: rows stay 16-byte aligned for the float4 fragment
  // loads, and the transposing stores of K-contiguous operands hit 2-way instead of 4-way bank
  // conflicts.
  static constexpr int kPad = 4;
  static constexpr int kPitchA = BM + kPad, kPitchB = BN + kPad;
  // Programs resident per SM that the register allocation must allow (__launch_bounds__).
  // Left alone, ptxas gave the 8x8-per-thread kernel 185 registers: one 256-thread program per SM,
  // 8 warps, too few to hide shared-memory latency. Asking for two caps it at 128 registers.
  static constexpr int kOutputsPerThread = WMITER * TM * WNITER * TN;
  static constexpr int kMinBlocksPerSM = kOutputsPerThread <= 64 ? 512 / kThreads : 1;

  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must cover the block tile");
  static_assert(WM % (kLanesM * TM) == 0 && WN % (kLanesN * TN) == 0,
                "warp tile must be a multiple of the 32x16 lane grid");
  static_assert(BK % 8 == 0, "BK must hold whole 16-byte vectors of 16-bit types");
  static_assert(2 * BK * (kPitchA + kPitchB) * 4 <= 48 * 1024, "static shared memory limit");

  static KernelConfig config() {
    return {.block_m = BM,
            .block_n = BN,
            .block_k = BK,
            .group_size_m = 8,
            .num_stages = 2,
            .num_warps = kThreads / 32,
            .warp_m = WM,
            .warp_n = WN};
  }
};

// Compiled shapes, largest first (the heuristic takes the first that fills the GPU). Chosen by
// sweeps on the H100 (docs/perf-notes.md): 128x128x16 was fastest from 2048^3 up, 64x64x16 for
// smaller problems; 128x256x8, 256x128x8, 128x128x8, 128x64x16 and a 4-warp 128x128x16 with
// 8x16 outputs per thread lost everywhere.
using Shapes = std::tuple<WarptileShape<128, 128, 16, 64, 32>,  // 8 warps, 8x8 outputs per thread
                          WarptileShape<64, 64, 16, 32, 32>>;   // small and skinny problems

// Moves one BK x X slice of an operand from global memory to shared memory, in two halves so the
// global loads can be in flight while the previous slice is multiplied:
//   load():  global -> registers (masked, converted to float)
//   store(): registers -> shared, as smem[k][x]
// Element (k, x) of the slice lives at origin + x * stride_x + k * stride_k. For A, x is m; for
// B, x is n. CONTIG_K says which of the two is the operand's contiguous dimension (stride 1); a
// "granule" is one 16-byte vector (VECTOR) or one element along it.
//
// A thread's granules are kThreads apart in the slice's granule order, i.e. a fixed number of
// rows (or columns) apart: the thread keeps one address, of its first granule, and reaches the
// others by a constant offset. The address steps by one slice per K step (next_slice), so the K
// loop does almost no index arithmetic and, but for a partial last slice, no K masking.
template <typename T, int BK, int X, int kThreads, bool CONTIG_K, bool VECTOR>
struct TileLoader {
  static constexpr int V = VECTOR ? int(16 / sizeof(T)) : 1;
  static constexpr int kGranulesAlong = (CONTIG_K ? BK : X) / V;
  static constexpr int kGranules = BK * X / V;
  // A short slice of 16-bit elements can have fewer granules than the program has threads.
  static constexpr int kPerThread = (kGranules + kThreads - 1) / kThreads;
  static_assert(kGranules % kThreads == 0 || kGranules < kThreads,
                "the slice must split evenly over the threads");
  static_assert(kThreads % kGranulesAlong == 0, "a thread's granules must line up");
  // Granule p of a thread lies kAcrossStep rows of granules (x for CONTIG_K, k otherwise) after
  // granule 0.
  static constexpr int kAcrossStep = kThreads / kGranulesAlong;

  float values[kPerThread][V];
  const T* src = nullptr;    // the thread's first granule in the current slice
  int64_t granule_step = 0;  // elements from one of the thread's granules to the next
  int x_valid = 0;           // columns (B) or rows (A) of the slice inside the matrix

  __device__ static bool has_granule(int p) {
    return kGranules % kThreads == 0 || threadIdx.x + p * kThreads < kGranules;
  }

  // Consecutive threads take consecutive granules along the contiguous dimension: coalesced.
  __device__ static void granule_origin(int p, int& k, int& x) {
    const int along = threadIdx.x % kGranulesAlong;
    const int across = threadIdx.x / kGranulesAlong + p * kAcrossStep;
    k = CONTIG_K ? along * V : across;
    x = CONTIG_K ? across : along * V;
  }

  __device__ void start(const T* origin, int64_t stride_x, int64_t stride_k, int valid) {
    int k, x;
    granule_origin(0, k, x);
    src = origin + x * stride_x + k * stride_k;
    granule_step = kAcrossStep * (CONTIG_K ? stride_x : stride_k);
    x_valid = valid;
  }

  __device__ void next_slice(int64_t step) { src += step; }

  // Elements of granule p inside the matrix along x: 0 or 1 for a K-contiguous granule (one x),
  // 0..V for an X-contiguous one.
  __device__ int x_count(int x) const {
    const int along_x = CONTIG_K ? 1 : V;
    return x_valid - x >= along_x ? along_x : (x_valid > x ? x_valid - x : 0);
  }

  // FULL_K: every K index of the slice is inside the matrix (all slices but a partial last one).
  template <bool FULL_K>
  __device__ void load(int k_valid) {
#pragma unroll
    for (int p = 0; p < kPerThread; ++p) {
      if (!has_granule(p)) continue;
      int k, x;
      granule_origin(p, k, x);
      const T* granule = src + p * granule_step;
      const int inside_x = x_count(x);
      const bool k_inside = FULL_K || (CONTIG_K ? k + V <= k_valid : k < k_valid);
      if (VECTOR && k_inside && inside_x == (CONTIG_K ? 1 : V)) {
        const uint4 raw = *reinterpret_cast<const uint4*>(granule);
        const T* elements = reinterpret_cast<const T*>(&raw);
#pragma unroll
        for (int j = 0; j < V; ++j) values[p][j] = to_float(elements[j]);
      } else {
        // Edges: element by element along the contiguous dimension (stride 1), zeros outside.
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const bool inside = CONTIG_K ? inside_x > 0 && (FULL_K || k + j < k_valid)
                                       : j < inside_x && (FULL_K || k < k_valid);
          values[p][j] = inside ? to_float(granule[j]) : 0.0f;
        }
      }
    }
  }

  template <int kPitch>
  __device__ void store(float* smem) const {
#pragma unroll
    for (int p = 0; p < kPerThread; ++p) {
      if (!has_granule(p)) continue;
      int k, x;
      granule_origin(p, k, x);
      if constexpr (CONTIG_K) {
#pragma unroll
        for (int j = 0; j < V; ++j) smem[(k + j) * kPitch + x] = values[p][j];
      } else if constexpr (V % 4 == 0) {
#pragma unroll
        for (int j = 0; j < V; j += 4) {
          *reinterpret_cast<float4*>(&smem[k * kPitch + x + j]) =
              make_float4(values[p][j], values[p][j + 1], values[p][j + 2], values[p][j + 3]);
        }
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) smem[k * kPitch + x + j] = values[p][j];
      }
    }
  }
};

template <typename T, class S, bool A_CONTIG_K, bool B_CONTIG_K, bool VECTOR>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocksPerSM) warptile_gemm(GemmArgs args) {
  __shared__ alignas(16) float smem_a[2][S::BK * S::kPitchA];  // [stage][k][m]
  __shared__ alignas(16) float smem_b[2][S::BK * S::kPitchB];  // [stage][k][n]
  TileLoader<T, S::BK, S::BM, S::kThreads, A_CONTIG_K, VECTOR> loader_a;
  TileLoader<T, S::BK, S::BN, S::kThreads, B_CONTIG_K, VECTOR> loader_b;

  // Schedule: the program's tile, then this thread's place in it.
  const TileCoord tile = program_tile(args, S::BM, S::BN);
  const int64_t row0 = tile.pid_m * S::BM, col0 = tile.pid_n * S::BN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_m0 = (warp / S::kWarpsN) * S::WM, warp_n0 = (warp % S::kWarpsN) * S::WN;
  const int lane_m0 = (lane / S::kLanesN) * S::TM, lane_n0 = (lane % S::kLanesN) * S::TN;
  const int rows_valid = valid_extent(args.m, row0, S::BM);
  const int cols_valid = valid_extent(args.n, col0, S::BN);
  const int64_t num_k_tiles = cdiv(args.k, S::BK);
  const auto k_valid = [&](int64_t kt) { return valid_extent(args.k, kt * S::BK, S::BK); };

  const int64_t full_k_tiles = args.k / S::BK;  // slices that need no K mask

  for (int64_t batch = blockIdx.y; batch < args.batch_count; batch += gridDim.y) {
    const int64_t a_step = S::BK * args.a.stride.col, b_step = S::BK * args.b.stride.row;
    const auto load_slice = [&](int64_t kt) {
      if (kt < full_k_tiles) {
        loader_a.template load<true>(S::BK);
        loader_b.template load<true>(S::BK);
      } else {
        loader_a.template load<false>(k_valid(kt));
        loader_b.template load<false>(k_valid(kt));
      }
    };
    const auto store_slice = [&](int stage) {
      loader_a.template store<S::kPitchA>(smem_a[stage]);
      loader_b.template store<S::kPitchB>(smem_b[stage]);
    };

    float acc[S::WMITER * S::TM][S::WNITER * S::TN] = {};
    if (num_k_tiles >
        0) {  // (with K = 0, A and B may be null: not even their addresses are formed)
      // A slice: x = m (row stride), k = column stride; B slice: x = n (column), k = row.
      loader_a.start(static_cast<const T*>(args.a.data) + args.a.offset(batch, row0, 0),
                     args.a.stride.row, args.a.stride.col, rows_valid);
      loader_b.start(static_cast<const T*>(args.b.data) + args.b.offset(batch, 0, col0),
                     args.b.stride.col, args.b.stride.row, cols_valid);
      load_slice(0);
      store_slice(0);
    }
    __syncthreads();

    // Mainloop: multiply slice kt from shared memory while slice kt+1 is on its way.
    for (int64_t kt = 0; kt < num_k_tiles; ++kt) {
      const int stage = int(kt & 1);
      const bool has_next = kt + 1 < num_k_tiles;
      if (has_next) {
        loader_a.next_slice(a_step);
        loader_b.next_slice(b_step);
        load_slice(kt + 1);
      }
      const float* a_stage = smem_a[stage];
      const float* b_stage = smem_b[stage];
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
      if (has_next) store_slice(stage ^ 1);
      __syncthreads();  // the other buffer is complete, and this one free to overwrite
    }

    // Epilogue: each thread finishes its own outputs, masked at the edges.
#pragma unroll
    for (int i = 0; i < S::WMITER * S::TM; ++i) {
      const int local_m = warp_m0 + (i / S::TM) * S::kLanesM * S::TM + lane_m0 + i % S::TM;
#pragma unroll
      for (int j = 0; j < S::WNITER * S::TN; ++j) {
        const int local_n = warp_n0 + (j / S::TN) * S::kLanesN * S::TN + lane_n0 + j % S::TN;
        if (local_m < rows_valid && local_n < cols_valid) {
          epilogue_store(args.epilogue, batch, row0 + local_m, col0 + local_n, acc[i][j]);
        }
      }
    }
  }
}

// 16-byte loads need the base pointer, leading dimension and batch stride to be multiples of
// 16 bytes (the in-tile offsets along the contiguous dimension are multiples of the vector).
// Launches the instantiation for input type T and compiled shape S; the caller has matched the
// config. Compiled once per input type, each in its own translation unit (warptile_<type>.cu),
// so the build runs them in parallel.
template <class S, typename T>
void launch_shape(const GemmArgs& args, bool vector, cudaStream_t stream) {
  const bool a_contig_k = args.a.stride.col == 1;  // row-major A
  const bool b_contig_k = args.b.stride.row == 1;  // column-major B
  const dim3 grid = program_grid(args, S::BM, S::BN);
  // The four layout combinations x vector/scalar loads, chosen at run time.
  auto go = [&](auto a_k, auto b_k, auto vec) {
    warptile_gemm<T, S, decltype(a_k)::value, decltype(b_k)::value, decltype(vec)::value>
        <<<grid, S::kThreads, 0, stream>>>(args);
  };
  using Yes = std::true_type;
  using No = std::false_type;
  auto with_vector = [&](auto a_k, auto b_k) { vector ? go(a_k, b_k, Yes{}) : go(a_k, b_k, No{}); };
  auto with_b = [&](auto a_k) { b_contig_k ? with_vector(a_k, Yes{}) : with_vector(a_k, No{}); };
  a_contig_k ? with_b(Yes{}) : with_b(No{});
}

// Every compiled shape for input type T: launches the one equal to `config`; false if none is.
template <typename T>
bool launch_for_type(const GemmArgs& args, const KernelConfig& config, bool vector,
                     cudaStream_t stream) {
  return std::apply(
      [&](auto... shapes) {
        return ((same_instantiation(decltype(shapes)::config(), config)
                     ? (launch_shape<decltype(shapes), T>(args, vector, stream), true)
                     : false) ||
                ...);
      },
      Shapes{});
}

extern template bool launch_for_type<float>(const GemmArgs&, const KernelConfig&, bool,
                                            cudaStream_t);
extern template bool launch_for_type<__half>(const GemmArgs&, const KernelConfig&, bool,
                                             cudaStream_t);
extern template bool launch_for_type<__nv_bfloat16>(const GemmArgs&, const KernelConfig&, bool,
                                                    cudaStream_t);

}  // namespace tilegemm::simt::warptile
