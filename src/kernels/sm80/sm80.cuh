// The portable tensor-core kernel: mma.sync fed by a cp.async pipeline num_stages deep.
//
// Hardware: tensor cores through mma.sync (m16n8k16 for fp16/bf16, m16n8k8 for tf32), cp.async,
// ldmatrix. Runs on every GPU from sm_80 (A100, RTX 30/40, L4, H100).
// Config: BLOCK_SIZE_M x BLOCK_SIZE_N x BLOCK_SIZE_K, GROUP_SIZE_M, num_stages, num_warps and the
// warp tile WM x WN (e.g. 128x128x32/g8/s4/w4/wt64x64). Compiled shapes: `Shapes` below.
//
// The idea (docs/design.md has the long form) is the seeds' Triton kernel written out by hand:
//   schedule   program id -> (pid_m, pid_n) in GROUP_SIZE_M grouped order (schedule/tile_order.hpp)
//   mainloop   a ring of num_stages shared-memory stages. While the tensor cores work on slice kt,
//              slices kt+1 .. kt+num_stages-1 are in flight: cp.async copies global -> shared with
//              no register staging, zero-filling what lies outside the matrix. Operands whose rows
//              are not 16-byte aligned take a staged path instead: element loads into registers
//              before the math, stores to shared memory after it.
//              Each warp owns a WM x WN part of the tile. Per 16 (tf32: 8) values of K it loads its
//              A and B fragments with ldmatrix (transposing for MN-contiguous operands) and issues
//              (WM/16) x (WN/8) mma.sync. With 16-bit inputs on the cp.async path the next step's
//              fragments are loaded while this step's mma run (two register sets).
//   epilogue   accumulators -> shared memory -> each thread finishes runs of 8 outputs that are
//              consecutive in D, so stores are coalesced 16-byte writes; masked at the edges.
// Shared memory is swizzled (smem_swizzle.hpp) so that cp.async, ldmatrix and the tf32 fragment
// loads are free of bank conflicts.
#pragma once

#include <tuple>

#include "kernels/cuda_check.hpp"
#include "kernels/kernel_common.cuh"
#include "kernels/sm80/ptx.cuh"
#include "kernels/sm80/smem_swizzle.hpp"

namespace tilegemm::sm80 {

// ---- config ------------------------------------------------------------------------------------

template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_>
struct Sm80Shape {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, kStages = STAGES_;
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must cover the block tile");
  static_assert(WM % 16 == 0 && WN % 16 == 0, "a warp tile is whole 16x16 mma/ldmatrix blocks");
  static_assert(BK % 16 == 0, "BLOCK_SIZE_K must be whole 16-element mma steps");
  static_assert(kStages >= 2, "a pipeline needs at least two stages");

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

// Compiled shapes. The first nine, for fp16, bf16 and tf32, are the Triton tutorial's autotune
// list mapped to warp tiles (its 128x256x64 at 3 stages becomes 128x256x32 at 4: tf32 doubles
// the bytes of a stage and 3 x 64 would not fit in 227 KB), and a second 8-warp shape for tall
// problems. The last three take BLOCK_SIZE_K = 64 for 16-bit inputs on the cp.async path only
// (compiled_for): half the barriers per mma, +4-10 % at 4096^3 and 8192^3 (docs/perf-notes.md,
// sm80 v4). The staged path would hold a 64-wide slice in registers, and tf32 spilled there.
using Shapes = std::tuple<Sm80Shape<128, 256, 32, 64, 64, 4>,   // w8
                          Sm80Shape<64, 256, 32, 64, 64, 4>,    // w4
                          Sm80Shape<128, 128, 32, 64, 64, 4>,   // w4
                          Sm80Shape<128, 64, 32, 64, 32, 4>,    // w4
                          Sm80Shape<64, 128, 32, 32, 64, 4>,    // w4
                          Sm80Shape<128, 32, 32, 32, 32, 4>,    // w4
                          Sm80Shape<64, 32, 32, 32, 32, 5>,     // w2
                          Sm80Shape<32, 64, 32, 32, 32, 5>,     // w2
                          Sm80Shape<256, 128, 32, 64, 64, 4>,   // w8
                          Sm80Shape<128, 256, 64, 64, 64, 3>,   // w8, 16-bit + cp.async only
                          Sm80Shape<256, 128, 64, 64, 64, 3>,   // w8, 16-bit + cp.async only
                          Sm80Shape<128, 128, 64, 64, 64, 3>>;  // w4, 16-bit + cp.async only

// Whether shape S is compiled for input type T and copy path ASYNC (see Shapes). The kernel's
// can_implement refuses the rest, by name (sm80.cu).
template <class S, typename T, bool ASYNC>
constexpr bool compiled_for() {
  return S::BK <= 32 || (sizeof(T) == 2 && ASYNC);
}

// What the element type changes: the K of one mma, and the 16-byte chunk.
template <typename T>
struct MmaShape {
  static constexpr int kK = sizeof(T) == 2 ? 16 : 8;     // m16n8k16, or m16n8k8 for tf32
  static constexpr int kPerChunk = 16 / int(sizeof(T));  // elements in 16 bytes
};

// ---- shared-memory tiles --------------------------------------------------------------------

// One stage of one operand: kRows rows of kCols elements, rows along the operand's strided
// dimension, kCols along its contiguous one ([x][k] for K-contiguous, [k][x] otherwise).
template <typename T, int kRows, int kCols>
struct SmemTile {
  static constexpr int kPerChunk = MmaShape<T>::kPerChunk;
  static constexpr int kChunksPerRow = kCols / kPerChunk;
  static constexpr int kBytes = kRows * kCols * int(sizeof(T));
  static_assert(kCols % kPerChunk == 0 && (kChunksPerRow & (kChunksPerRow - 1)) == 0,
                "rows are a power-of-two number of 16-byte chunks (the swizzle needs it)");

  __device__ static uint32_t chunk(uint32_t base, int row, int chunk) {
    return base + swizzled_chunk_offset(row, chunk, kChunksPerRow);
  }
  __device__ static uint32_t element(uint32_t base, int row, int col) {
    return chunk(base, row, col / kPerChunk) + (col % kPerChunk) * int(sizeof(T));
  }
};

// The tile of an operand: X is its extent along M (A) or N (B), CONTIG_K whether K is its
// contiguous dimension (row-major A, column-major B).
template <typename T, int X, int BK, bool CONTIG_K>
using OperandTile = SmemTile<T, CONTIG_K ? X : BK, CONTIG_K ? BK : X>;

// ---- global -> shared -------------------------------------------------------------------------

// Moves one BK-slice of an operand into a stage. Thread t owns chunks t, t + kThreads, ... of
// the tile in row-major chunk order: consecutive threads read consecutive 16 bytes of a row
// (coalesced) and, kThreads being a multiple of a row's chunks, a thread's chunks all sit in
// the same column of chunks, kRowStep rows apart. Its one global address steps by a slice per
// K step.
template <typename T, int X, int BK, int kThreads, bool CONTIG_K>
struct OperandLoader {
  using Tile = OperandTile<T, X, BK, CONTIG_K>;
  static constexpr int V = Tile::kPerChunk;
  static constexpr int kChunks = Tile::kBytes / 16;
  static constexpr int kPerThread = kChunks / kThreads;
  static constexpr int kRowStep = kThreads / Tile::kChunksPerRow;
  static_assert(kChunks % kThreads == 0 && kThreads % Tile::kChunksPerRow == 0,
                "the tile must split evenly over the threads");

  const T* first = nullptr;        // the thread's first element in slice 0
  const T* origin = nullptr;       // element (0, 0) of slice 0: always inside the matrix
  int64_t ld = 0;                  // elements between rows of the tile in global memory
  int64_t chunk_step = 0;          // elements from one of the thread's chunks to the next
  int64_t slice_step = 0;          // elements from one slice to the next
  int row0 = 0, col0 = 0;          // the thread's first chunk in the tile
  int x_valid = 0;                 // rows (A) or columns (B) of the tile inside the matrix
  uint32_t staged[kPerThread][4];  // the staged path's chunks, between load and store

  // `tile_origin` is element (x0, 0) of the operand; stride_x/stride_k its strides.
  __device__ void start(const T* tile_origin, int64_t stride_x, int64_t stride_k, int valid) {
    row0 = threadIdx.x / Tile::kChunksPerRow;
    col0 = (threadIdx.x % Tile::kChunksPerRow) * V;
    ld = CONTIG_K ? stride_x : stride_k;
    chunk_step = kRowStep * ld;
    slice_step = BK * stride_k;
    origin = tile_origin;
    first = tile_origin + row0 * ld + col0;
    x_valid = valid;
  }

  // Where chunk p goes in a stage. When the thread's chunks are a whole number of swizzle
  // periods apart they all sit at one offset from the first: no per-chunk swizzle math.
  __device__ uint32_t destination(uint32_t stage, int p) const {
    if constexpr (kRowStep % kSwizzlePeriod == 0) {
      return Tile::chunk(stage, row0, col0 / V) + p * kRowStep * Tile::kChunksPerRow * 16;
    } else {
      return Tile::chunk(stage, row0 + p * kRowStep, col0 / V);
    }
  }

  // Elements of chunk p inside the matrix (0..V), for a slice with k_valid values of K.
  __device__ int elements_inside(int p, int k_valid) const {
    const int rows_valid = CONTIG_K ? x_valid : k_valid;
    const int cols_valid = CONTIG_K ? k_valid : x_valid;
    if (row0 + p * kRowStep >= rows_valid) return 0;
    const int n = cols_valid - col0;
    return n >= V ? V : (n > 0 ? n : 0);
  }

  // Aligned operands: straight to shared memory, zero-filling outside the matrix. A slice wholly
  // inside the matrix (every slice of an interior tile but a partial last one) needs no masks.
  __device__ void copy_async(int64_t kt, int k_valid, uint32_t stage) const {
    const T* slice = first + kt * slice_step;
    if (x_valid == X && k_valid == BK) {
#pragma unroll
      for (int p = 0; p < kPerThread; ++p) {
        cp_async_16(destination(stage, p), slice + p * chunk_step, 16);
      }
      return;
    }
#pragma unroll
    for (int p = 0; p < kPerThread; ++p) {
      const int inside = elements_inside(p, k_valid);
      const T* src = inside > 0 ? slice + p * chunk_step : origin;
      cp_async_16(destination(stage, p), src, inside * int(sizeof(T)));
    }
  }

  // Unaligned operands, first half: element loads into registers, zeros outside the matrix.
  __device__ void load_staged(int64_t kt, int k_valid) {
    const T* slice = first + kt * slice_step;
#pragma unroll
    for (int p = 0; p < kPerThread; ++p) {
      const int inside = elements_inside(p, k_valid);
      const T* src = slice + p * chunk_step;
      T values[V];
#pragma unroll
      for (int j = 0; j < V; ++j) values[j] = j < inside ? src[j] : T(0.0f);
      static_assert(sizeof(values) == sizeof(staged[p]));
      memcpy(staged[p], values, sizeof(values));
    }
  }

  // Second half: registers -> the stage.
  __device__ void store_staged(uint32_t stage) const {
#pragma unroll
    for (int p = 0; p < kPerThread; ++p) {
      asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(destination(stage, p)),
                   "r"(staged[p][0]), "r"(staged[p][1]), "r"(staged[p][2]), "r"(staged[p][3]));
    }
  }
};

// ---- fragments ----------------------------------------------------------------------------

// The A fragment of rows m0..m0+15 for mma step `ks` of a stage (registers a0..a3 of the PTX
// fragment layout). lane = threadIdx.x % 32.
template <typename T, int BM, int BK, bool CONTIG_K>
__device__ __forceinline__ void load_a_fragment(uint32_t (&a)[4], uint32_t stage, int m0, int ks,
                                                int lane) {
  using Tile = OperandTile<T, BM, BK, CONTIG_K>;
  constexpr int kK = MmaShape<T>::kK;
  if constexpr (CONTIG_K) {
    // [m][k]: matrices (m 0-7, k lo), (m 8-15, k lo), (m 0-7, k hi), (m 8-15, k hi); for tf32
    // an 8x8 matrix of 16-bit values is 8 rows x 4 tf32, which is the same fragment.
    ldmatrix_x4<false>(a, Tile::chunk(stage, m0 + lane % 16, ks * 2 + lane / 16));
  } else if constexpr (sizeof(T) == 2) {
    // [k][m]: the same four matrices, stored transposed.
    ldmatrix_x4<true>(
        a, Tile::chunk(stage, ks * kK + lane % 8 + (lane / 16) * 8, m0 / 8 + (lane / 8) % 2));
  } else {
    // tf32 [k][m]: ldmatrix cannot transpose 32-bit values; four scalar loads.
    const int k = ks * kK + lane % 4, m = m0 + lane / 4;
    const uint32_t at[4] = {Tile::element(stage, k, m), Tile::element(stage, k, m + 8),
                            Tile::element(stage, k + 4, m), Tile::element(stage, k + 4, m + 8)};
#pragma unroll
    for (int r = 0; r < 4; ++r) asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(a[r]) : "r"(at[r]));
  }
}

// The B fragments of columns n0..n0+7 (b[0..1]) and n0+8..n0+15 (b[2..3]) for mma step `ks`.
template <typename T, int BN, int BK, bool CONTIG_K>
__device__ __forceinline__ void load_b_fragments(uint32_t (&b)[4], uint32_t stage, int n0, int ks,
                                                 int lane) {
  using Tile = OperandTile<T, BN, BK, CONTIG_K>;
  constexpr int kK = MmaShape<T>::kK;
  if constexpr (CONTIG_K) {
    // [n][k]: matrices (n 0-7, k lo), (n 0-7, k hi), (n 8-15, k lo), (n 8-15, k hi).
    ldmatrix_x4<false>(
        b, Tile::chunk(stage, n0 + lane % 8 + (lane / 16) * 8, ks * 2 + (lane / 8) % 2));
  } else if constexpr (sizeof(T) == 2) {
    // [k][n], transposed: (k lo, n 0-7), (k hi, n 0-7), (k lo, n 8-15), (k hi, n 8-15).
    ldmatrix_x4<true>(
        b, Tile::chunk(stage, ks * kK + lane % 8 + ((lane / 8) % 2) * 8, n0 / 8 + lane / 16));
  } else {
    const int k = ks * kK + lane % 4, n = n0 + lane / 4;
    const uint32_t at[4] = {Tile::element(stage, k, n), Tile::element(stage, k + 4, n),
                            Tile::element(stage, k, n + 8), Tile::element(stage, k + 4, n + 8)};
#pragma unroll
    for (int r = 0; r < 4; ++r) asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(b[r]) : "r"(at[r]));
  }
}

// tf32 operands arrive as fp32 bits; round them once they are in registers.
template <typename T, int N>
__device__ __forceinline__ void round_for_mma(uint32_t (&r)[N]) {
  if constexpr (sizeof(T) == 4) {
#pragma unroll
    for (int i = 0; i < N; ++i) r[i] = to_tf32(__uint_as_float(r[i]));
  }
}

// ---- the kernel ---------------------------------------------------------------------------

// Dynamic shared memory of a config: the num_stages pipeline stages, or the epilogue's
// BM x (BN + 8) fp32 tile that reuses them, whichever is larger. The 8 floats of padding put the
// 8 rows a warp writes in one store on 4 different bank offsets.
constexpr int kEpiloguePad = 8;
constexpr int64_t shared_bytes(int bm, int bn, int bk, int stages, int element_size) {
  const int64_t pipeline = int64_t(stages) * (bm + bn) * bk * element_size;
  const int64_t epilogue = int64_t(bm) * (bn + kEpiloguePad) * 4;
  return pipeline > epilogue ? pipeline : epilogue;
}
template <class S, typename T>
constexpr int shared_bytes() {
  return int(shared_bytes(S::BM, S::BN, S::BK, S::kStages, sizeof(T)));
}

// Run-time facts the host worked out about the problem's addresses.
struct Sm80Flags {
  bool async_copy;  // A and B rows are 16-byte aligned: cp.async; else the staged path
  bool d_aligned;   // D's runs of 8 may be written with 16-byte stores
};

// ASYNC: the cp.async path (a compile-time choice, so that the cp.async kernel does not hold
// the staged path's registers).
template <typename T, class S, bool A_CONTIG_K, bool B_CONTIG_K, bool ASYNC>
__global__ void __launch_bounds__(S::kThreads) sm80_gemm(GemmArgs args, bool d_aligned) {
  extern __shared__ __align__(128) unsigned char smem[];
  using LoaderA = OperandLoader<T, S::BM, S::BK, S::kThreads, A_CONTIG_K>;
  using LoaderB = OperandLoader<T, S::BN, S::BK, S::kThreads, B_CONTIG_K>;
  constexpr int kMmaK = MmaShape<T>::kK;
  constexpr int kMmaM = S::WM / 16, kMmaN = S::WN / 8;  // mma per warp tile per K step
  const uint32_t smem_base = shared_address(smem);
  const auto stage_a = [&](int s) { return smem_base + s * LoaderA::Tile::kBytes; };
  const auto stage_b = [&](int s) {
    return smem_base + S::kStages * LoaderA::Tile::kBytes + s * LoaderB::Tile::kBytes;
  };

  // Schedule: the program's tile, and this warp's part of it.
  const TileCoord tile = program_tile(args, S::BM, S::BN);
  const int64_t row0 = tile.pid_m * S::BM, col0 = tile.pid_n * S::BN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_m0 = (warp / S::kWarpsN) * S::WM, warp_n0 = (warp % S::kWarpsN) * S::WN;
  const int rows_valid = valid_extent(args.m, row0, S::BM);
  const int cols_valid = valid_extent(args.n, col0, S::BN);
  const int64_t num_k_tiles = cdiv(args.k, S::BK);
  const auto k_valid = [&](int64_t kt) { return valid_extent(args.k, kt * S::BK, S::BK); };

  LoaderA loader_a;
  LoaderB loader_b;
  for (int64_t batch = blockIdx.y; batch < args.batch_count; batch += gridDim.y) {
    float acc[kMmaM][kMmaN][4] = {};
    // Slice kt: issued (async) or loaded into registers (staged).
    const auto fetch = [&](int64_t kt, int stage) {
      if constexpr (ASYNC) {
        loader_a.copy_async(kt, k_valid(kt), stage_a(stage));
        loader_b.copy_async(kt, k_valid(kt), stage_b(stage));
      } else {
        loader_a.load_staged(kt, k_valid(kt));
        loader_b.load_staged(kt, k_valid(kt));
      }
    };
    const auto store_staged = [&](int stage) {
      loader_a.store_staged(stage_a(stage));
      loader_b.store_staged(stage_b(stage));
    };

    if (num_k_tiles > 0) {  // with K = 0, A and B may be null: not even addresses are formed
      const T* a = static_cast<const T*>(args.a.data);
      const T* b = static_cast<const T*>(args.b.data);
      loader_a.start(a + args.a.offset(batch, row0, 0), args.a.stride.row, args.a.stride.col,
                     rows_valid);
      loader_b.start(b + args.b.offset(batch, 0, col0), args.b.stride.col, args.b.stride.row,
                     cols_valid);
    }
    // Prologue: slices 0 .. num_stages-2 in flight, one commit group each.
#pragma unroll
    for (int s = 0; s < S::kStages - 1; ++s) {
      if (s < num_k_tiles) {
        fetch(s, s);
        if (!ASYNC) store_staged(s);
      }
      cp_async_commit();
    }

    // The operands of one mma step of the warp tile (K values ks*kMmaK..): WM/16 A fragments and
    // WN/8 B fragments, loaded with ldmatrix from a stage.
    struct Fragments {
      uint32_t a[kMmaM][4], b[kMmaN][2];
    };
    const auto load_fragments = [&](Fragments& f, int stage, int ks) {
#pragma unroll
      for (int i = 0; i < kMmaM; ++i) {
        load_a_fragment<T, S::BM, S::BK, A_CONTIG_K>(f.a[i], stage_a(stage), warp_m0 + i * 16, ks,
                                                     lane);
        round_for_mma<T>(f.a[i]);
      }
#pragma unroll
      for (int j = 0; j < kMmaN; j += 2) {
        uint32_t pair[4];
        load_b_fragments<T, S::BN, S::BK, B_CONTIG_K>(pair, stage_b(stage), warp_n0 + j * 8, ks,
                                                      lane);
        round_for_mma<T>(pair);
        f.b[j][0] = pair[0], f.b[j][1] = pair[1], f.b[j + 1][0] = pair[2], f.b[j + 1][1] = pair[3];
      }
    };
    // (WM/16) x (WN/8) mma.sync on one step's fragments.
    const auto multiply = [&](const Fragments& f) {
#pragma unroll
      for (int i = 0; i < kMmaM; ++i)
#pragma unroll
        for (int j = 0; j < kMmaN; ++j) mma<T>(acc[i][j], f.a[i], f.b[j]);
    };
    constexpr int kSteps = S::BK / kMmaK;  // mma steps per slice
    static_assert(kSteps >= 2, "the pipelined mainloop needs two mma steps per slice");

    // Double-buffered fragments for 16-bit inputs on the cp.async path. (A tf32 fragment of an
    // MN-contiguous operand is four scalar loads with their own addresses: two sets of them spill.)
    constexpr bool kDoubleBuffered = ASYNC && sizeof(T) == 2;
    if constexpr (kDoubleBuffered) {
      // Mainloop: each step's ldmatrix go out before the previous step's mma, so their latency
      // hides under it -- across the slice boundary too: step 0 of slice kt+1 is loaded before
      // the last mma of slice kt. That needs slice kt+1 in shared memory one step before the end
      // of slice kt, so the wait and the barrier sit at step kSteps-2. The barrier also closes
      // the reads of slice kt's stage (the last of them is step kSteps-1's ldmatrix, issued just
      // before it), which the copies of iteration kt+1 overwrite with slice kt+num_stages.
      Fragments fragments[2];
      if (num_k_tiles > 0) {
        cp_async_wait<S::kStages - 2>();
        __syncthreads();
        load_fragments(fragments[0], 0, 0);
      }
      for (int64_t kt = 0; kt < num_k_tiles; ++kt) {
        const int stage = int(kt % S::kStages);
        const int64_t next = kt + S::kStages - 1;
#pragma unroll
        for (int ks = 0; ks < kSteps; ++ks) {
          if (ks + 1 < kSteps) {
            load_fragments(fragments[(ks + 1) % 2], stage, ks + 1);
          } else if (kt + 1 < num_k_tiles) {
            load_fragments(fragments[(ks + 1) % 2], int((kt + 1) % S::kStages), 0);
          }
          if (ks == 0) {
            // Slice kt+num_stages-1 into the stage slice kt-1 left (every warp has passed the
            // barrier after its last read).
            if (next < num_k_tiles) fetch(next, int(next % S::kStages));
            cp_async_commit();
          }
          if (ks == kSteps - 2) {
            cp_async_wait<S::kStages - 2>();  // slice kt+1 has landed
            __syncthreads();
          }
          multiply(fragments[ks % 2]);
        }
      }
    } else {
      // Mainloop, one fragment set: a barrier per slice, then each step loads and multiplies.
      for (int64_t kt = 0; kt < num_k_tiles; ++kt) {
        // Slice kt is in its stage (the num_stages-2 younger groups may still fly), and every
        // warp is done with the stage of slice kt-1, which the next fetch overwrites.
        if constexpr (ASYNC) cp_async_wait<S::kStages - 2>();
        __syncthreads();
        const int stage = int(kt % S::kStages);
        const int64_t next = kt + S::kStages - 1;
        // The copies (or loads) for slice kt+num_stages-1 go out after the first step's mma:
        // right after the barrier every warp is at the same point, and issuing them first would
        // leave the tensor cores idle while all of them do.
#pragma unroll
        for (int ks = 0; ks < kSteps; ++ks) {
          Fragments f;
          load_fragments(f, stage, ks);
          multiply(f);
          if (ks == 0) {
            if (next < num_k_tiles) fetch(next, int(next % S::kStages));
            if constexpr (ASYNC) cp_async_commit();
          }
        }
        if (!ASYNC && next < num_k_tiles) store_staged(int(next % S::kStages));
      }
    }

    // Epilogue: accumulators -> shared memory (the pipeline's stages are free once every copy
    // has landed and every warp has left the mainloop).
    cp_async_wait<0>();
    __syncthreads();
    float* tile_out = reinterpret_cast<float*>(smem);
    constexpr int kPitch = S::BN + kEpiloguePad;
    const int g = lane / 4, t = lane % 4;  // mma accumulator layout: rows g, g+8; cols 2t, 2t+1
#pragma unroll
    for (int i = 0; i < kMmaM; ++i)
#pragma unroll
      for (int j = 0; j < kMmaN; ++j) {
        const int m = warp_m0 + i * 16 + g, n = warp_n0 + j * 8 + 2 * t;
        *reinterpret_cast<float2*>(&tile_out[m * kPitch + n]) = {acc[i][j][0], acc[i][j][1]};
        *reinterpret_cast<float2*>(&tile_out[(m + 8) * kPitch + n]) = {acc[i][j][2], acc[i][j][3]};
      }
    __syncthreads();

    // Runs of 8 along D's contiguous dimension; consecutive threads take consecutive runs.
    const bool d_row_major = args.epilogue.d.stride.col == 1;
    const int run_extent = d_row_major ? S::BN : S::BM;  // along the run
    for (int r = threadIdx.x; r < S::BM * S::BN / 8; r += S::kThreads) {
      const int along = (r % (run_extent / 8)) * 8, across = r / (run_extent / 8);
      const int m = d_row_major ? across : along, n = d_row_major ? along : across;
      const int inside = d_row_major ? (m < rows_valid ? cols_valid - n : 0)
                                     : (n < cols_valid ? rows_valid - m : 0);
      if (inside <= 0) continue;
      float run[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        run[j] = d_row_major ? tile_out[m * kPitch + n + j] : tile_out[(m + j) * kPitch + n];
      }
      epilogue_store_run(args.epilogue, batch, row0 + m, col0 + n, inside < 8 ? inside : 8,
                         d_aligned, run);
    }
    __syncthreads();  // the next batch entry's prologue reuses the shared memory
  }
}

// ---- launch -------------------------------------------------------------------------------

// Launches the instantiation for input type T, compiled shape S and copy path ASYNC; the caller
// matched the config. The layouts pick one of four kernels.
template <class S, typename T, bool ASYNC>
Status launch_shape(const GemmArgs& args, bool d_aligned, cudaStream_t stream) {
  const bool a_contig_k = args.a.stride.col == 1;  // row-major A
  const bool b_contig_k = args.b.stride.row == 1;  // column-major B
  const dim3 grid = program_grid(args, S::BM, S::BN);
  constexpr int kSmem = shared_bytes<S, T>();
  Status status;
  auto go = [&](auto a_k, auto b_k) {
    auto* kernel = sm80_gemm<T, S, decltype(a_k)::value, decltype(b_k)::value, ASYNC>;
    // More than 48 KB of dynamic shared memory must be asked for, per kernel.
    status = cuda_status(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem),
        "sm80_gemm: cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
    if (!status.ok()) return;
    kernel<<<grid, S::kThreads, kSmem, stream>>>(args, d_aligned);
    status = check_launch("sm80_gemm");
  };
  using Yes = std::true_type;
  using No = std::false_type;
  auto with_b = [&](auto a_k) { b_contig_k ? go(a_k, Yes{}) : go(a_k, No{}); };
  a_contig_k ? with_b(Yes{}) : with_b(No{});
  return status;
}

// Every compiled shape for input type T and copy path ASYNC: launches the one equal to
// `config`. Compiled in one translation unit per (T, ASYNC), sm80_<type>_<path>.cu, so the build
// runs them in parallel.
template <typename T, bool ASYNC>
Status launch_for_type(const GemmArgs& args, const KernelConfig& config, bool d_aligned,
                       cudaStream_t stream) {
  return launch_compiled_shape<Shapes>("sm80", config, [&](auto shape) -> Status {
    using S = decltype(shape);
    if constexpr (compiled_for<S, T, ASYNC>()) {
      return launch_shape<S, T, ASYNC>(args, d_aligned, stream);
    } else {
      return {StatusCode::not_supported, "sm80: config not compiled for this input type and path"};
    }
  });
}

extern template Status launch_for_type<__half, true>(const GemmArgs&, const KernelConfig&, bool,
                                                     cudaStream_t);
extern template Status launch_for_type<__half, false>(const GemmArgs&, const KernelConfig&, bool,
                                                      cudaStream_t);
extern template Status launch_for_type<__nv_bfloat16, true>(const GemmArgs&, const KernelConfig&,
                                                            bool, cudaStream_t);
extern template Status launch_for_type<__nv_bfloat16, false>(const GemmArgs&, const KernelConfig&,
                                                             bool, cudaStream_t);
extern template Status launch_for_type<float, true>(const GemmArgs&, const KernelConfig&, bool,
                                                    cudaStream_t);
extern template Status launch_for_type<float, false>(const GemmArgs&, const KernelConfig&, bool,
                                                     cudaStream_t);

}  // namespace tilegemm::sm80
