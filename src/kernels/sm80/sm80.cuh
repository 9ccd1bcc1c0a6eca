// The portable tensor-core kernel: mma.sync fed by a cp.async pipeline num_stages deep.
//
// Hardware: tensor cores through mma.sync (m16n8k16 for fp16/bf16, m16n8k8 for tf32), cp.async,
// ldmatrix. Runs on every GPU from sm_80 (A100, RTX 30/40, L4, H100).
// Config: BLOCK_SIZE_M x BLOCK_SIZE_N x BLOCK_SIZE_K, GROUP_SIZE_M, num_stages, num_warps and the
// warp tile WM x WN (e.g. 128x128x32/g8/s4/w4/wt64x64). Compiled shapes: `Shapes` below.
//
// The idea (docs/design.md has the long form) is the seeds' Triton kernel written out by hand:
//   schedule   a persistent grid: program p takes work items p, p + G, ..., each a batch entry's
//              (pid_m, pid_n) in GROUP_SIZE_M grouped order (schedule/tile_order.hpp)
//   mainloop   a ring of num_stages shared-memory stages. While the tensor cores work on slice kt,
//              slices kt+1 .. kt+num_stages-1 are in flight: cp.async copies global -> shared with
//              no register staging, zero-filling what lies outside the matrix. Operands whose rows
//              are not 16-byte aligned take a staged path instead: element loads into registers
//              before the math, stores to shared memory after it.
//              Each warp owns a WM x WN part of the tile. Per 16 (tf32: 8) values of K it loads its
//              A and B fragments with ldmatrix (transposing for MN-contiguous operands; tf32
//              ones, which it cannot transpose, with 16-byte loads of four fragments interleaved
//              over 32 rows or columns) and issues (WM/16) x (WN/8) mma.sync. On the cp.async path
//              the next step's fragments are loaded while this step's mma run (two register sets).
//   epilogue   D = alpha * AB on an interior tile: straight from the accumulators, the lanes of a
//              quad trading pairs until each holds 16 bytes, while the next item's first copies
//              fly. Otherwise accumulators -> shared memory -> each thread finishes runs of 8
//              outputs that are consecutive in D, so stores are coalesced 16-byte writes; masked
//              at the edges.
// Shared memory is swizzled, or for tf32 tiles that ldmatrix cannot read padded (smem_swizzle.hpp),
// so that cp.async, ldmatrix and the tf32 fragment loads are free of bank conflicts.
#pragma once

#include <map>
#include <mutex>
#include <tuple>

#include "epilogue/aligned_runs.hpp"
#include "epilogue/epilogue_stores.cuh"
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
// problems. The last four have 3 stages of 128-byte slices, on the cp.async path only
// (compiled_for): BLOCK_SIZE_K 64 for 16-bit inputs, half the barriers per mma, +4-10 % at
// 4096^3 and 8192^3 (docs/perf-notes.md, sm80 v4); and its tf32 form, 128x128x32, small enough
// for two programs per SM (sm80 v5). The staged path would hold a whole slice in registers.
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
                          Sm80Shape<128, 128, 64, 64, 64, 3>,   // w4, 16-bit + cp.async only
                          Sm80Shape<128, 128, 32, 64, 64, 3>>;  // w4, tf32 + cp.async only

// Whether a shape is compiled for an input type (element_size bytes in memory) and copy path:
// BLOCK_SIZE_K 32 at 4 stages or more for every type and path; 3 stages only with 128-byte
// slices on the cp.async path (see Shapes). The kernel's can_implement refuses the rest, by name
// (sm80.cu).
TILEGEMM_HOST_DEVICE constexpr bool compiled_for(int block_k, int stages, int element_size,
                                                 bool async) {
  return stages == 3 ? async && block_k * element_size == 128 : block_k <= 32;
}
template <class S, typename T, bool ASYNC>
constexpr bool compiled_for() {
  return compiled_for(S::BK, S::kStages, int(sizeof(T)), ASYNC);
}

// What the element type changes: the K of one mma, and the 16-byte chunk.
template <typename T>
struct MmaShape {
  static constexpr int kK = sizeof(T) == 2 ? 16 : 8;     // m16n8k16, or m16n8k8 for tf32
  static constexpr int kPerChunk = 16 / int(sizeof(T));  // elements in 16 bytes
};

// ---- shared-memory tiles --------------------------------------------------------------------

// One stage of one operand: kRows rows of kCols elements, rows along the operand's strided
// dimension, kCols along its contiguous one ([x][k] for K-contiguous, [k][x] otherwise). Rows are
// swizzled, or PADDED (tf32 tiles that ldmatrix cannot read; smem_swizzle.hpp).
template <typename T, int kRows_, int kCols, bool PADDED>
struct SmemTile {
  static constexpr bool kPadded = PADDED;
  static constexpr int kRows = kRows_;
  static constexpr int kPerChunk = MmaShape<T>::kPerChunk;
  static constexpr int kChunksPerRow = kCols / kPerChunk;
  static constexpr int kRowBytes =
      PADDED ? padded_row_bytes(kChunksPerRow) : kCols * int(sizeof(T));
  static constexpr int kBytes = kRows_ * kRowBytes;
  static_assert(kCols % kPerChunk == 0 && (kChunksPerRow & (kChunksPerRow - 1)) == 0,
                "rows are a power-of-two number of 16-byte chunks (the swizzle needs it)");
  static_assert(!PADDED || kChunksPerRow >= 8, "padded rows are whole 128-byte lines");

  __device__ static uint32_t chunk(uint32_t base, int row, int chunk) {
    return base + (PADDED ? padded_chunk_offset(row, chunk, kChunksPerRow)
                          : swizzled_chunk_offset(row, chunk, kChunksPerRow));
  }
  __device__ static uint32_t element(uint32_t base, int row, int col) {
    return chunk(base, row, col / kPerChunk) + (col % kPerChunk) * int(sizeof(T));
  }
};

// The tile of an operand: X is its extent along M (A) or N (B), CONTIG_K whether K is its
// contiguous dimension (row-major A, column-major B). The tiles that ldmatrix cannot read, tf32
// stored MN-contiguous (it does not transpose 32-bit values), are padded on the cp.async path
// (ASYNC) and read with 16-byte loads; the staged path keeps the swizzle and scalar loads.
template <typename T, int X, int BK, bool CONTIG_K, bool ASYNC>
using OperandTile =
    SmemTile<T, CONTIG_K ? X : BK, CONTIG_K ? BK : X, ASYNC && sizeof(T) == 4 && !CONTIG_K>;

// ---- global -> shared -------------------------------------------------------------------------

// Moves one BK-slice of an operand into a stage. Thread t owns chunks t, t + kThreads, ... of
// the tile in row-major chunk order: consecutive threads read consecutive 16 bytes of a row
// (coalesced) and, kThreads being a multiple of a row's chunks, a thread's chunks all sit in
// the same column of chunks, kRowStep rows apart. Its one global address steps by a slice per
// K step.
template <typename T, int X, int BK, int kThreads, bool CONTIG_K, bool ASYNC>
struct OperandLoader {
  using Tile = OperandTile<T, X, BK, CONTIG_K, ASYNC>;
  static constexpr int V = Tile::kPerChunk;
  static constexpr int kChunks = Tile::kRows * Tile::kChunksPerRow;
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
  // periods apart (or rows are padded) they all sit at one offset from the first: no per-chunk
  // swizzle math.
  __device__ uint32_t destination(uint32_t stage, int p) const {
    if constexpr (Tile::kPadded || kRowStep % kSwizzlePeriod == 0) {
      return Tile::chunk(stage, row0, col0 / V) + p * kRowStep * Tile::kRowBytes;
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

// tf32 fragments of an MN-contiguous swizzled tile (the staged path): lane l reads value
// x0 + l / 4 at K row k0 + l % 4 (r[0]), 4 rows below (r[1]), 8 values along (r[2]) and both
// (r[3]); four scalar loads with an address each.
template <class Tile>
__device__ __forceinline__ void load_scalar_fragments(uint32_t (&r)[4], uint32_t stage, int k0,
                                                      int x0, int lane) {
  static_assert(!Tile::kPadded, "padded tiles take load_interleaved_fragments");
  const int k = k0 + lane % 4, x = x0 + lane / 4;
  const uint32_t at[4] = {Tile::element(stage, k, x), Tile::element(stage, k + 4, x),
                          Tile::element(stage, k, x + 8), Tile::element(stage, k + 4, x + 8)};
#pragma unroll
  for (int i = 0; i < 4; ++i) asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(r[i]) : "r"(at[i]));
}

// tf32 fragments of an MN-contiguous padded tile (the cp.async path), four at a time: lane l reads
// values x0 + 4(l/4) .. x0 + 4(l/4) + 3 of K row k0 + l % 4 into lo[0..3], and of the row 4 below
// into hi[0..3], one 16-byte load each. So of the 32 values x0..x0+31, fragment q (0..3) gets
// x0 + 4g + q as its g-th row (A) or column (B), g = l / 4: a permutation of M or N inside each 32
// that the epilogue undoes (it writes the accumulators back through shared memory anyway). Four
// loads per 32 values instead of sixteen, from one address plus immediate offsets.
template <class Tile>
__device__ __forceinline__ void load_interleaved_fragments(uint32_t (&lo)[4], uint32_t (&hi)[4],
                                                           uint32_t stage, int k0, int x0,
                                                           int lane) {
  static_assert(Tile::kPadded, "swizzled tiles take load_scalar_fragments");
  const uint32_t at = Tile::element(stage, k0 + lane % 4, x0 + 4 * (lane / 4));
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(lo[0]), "=r"(lo[1]), "=r"(lo[2]), "=r"(lo[3])
               : "r"(at));
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(hi[0]), "=r"(hi[1]), "=r"(hi[2]), "=r"(hi[3])
               : "r"(at + 4 * Tile::kRowBytes));
}

// The A fragment of rows m0..m0+15 for mma step `ks` of a stage (registers a0..a3 of the PTX
// fragment layout). lane = threadIdx.x % 32.
template <typename T, int BM, int BK, bool CONTIG_K, bool ASYNC>
__device__ __forceinline__ void load_a_fragment(uint32_t (&a)[4], uint32_t stage, int m0, int ks,
                                                int lane) {
  using Tile = OperandTile<T, BM, BK, CONTIG_K, ASYNC>;
  constexpr int kK = MmaShape<T>::kK;
  if constexpr (CONTIG_K || sizeof(T) == 2) {
    // [m][k], or [k][m] read transposed (a_fragment_chunk); for tf32 an 8x8 matrix of 16-bit
    // values is 8 rows x 4 tf32, which is the same fragment.
    const ChunkAt at = a_fragment_chunk(CONTIG_K, m0, ks, lane);
    ldmatrix_x4<!CONTIG_K>(a, Tile::chunk(stage, at.row, at.chunk));
  } else {
    // tf32 [k][m], swizzled: ldmatrix cannot transpose 32-bit values; four scalar loads. a1 is 8
    // rows of M below a0, a2 four values of K along: the helper's r[2] and r[1].
    uint32_t r[4];
    load_scalar_fragments<Tile>(r, stage, ks * kK, m0, lane);
    a[0] = r[0], a[1] = r[2], a[2] = r[1], a[3] = r[3];
  }
}

// The B fragments of columns n0..n0+7 (b[0..1]) and n0+8..n0+15 (b[2..3]) for mma step `ks`.
template <typename T, int BN, int BK, bool CONTIG_K, bool ASYNC>
__device__ __forceinline__ void load_b_fragments(uint32_t (&b)[4], uint32_t stage, int n0, int ks,
                                                 int lane) {
  using Tile = OperandTile<T, BN, BK, CONTIG_K, ASYNC>;
  constexpr int kK = MmaShape<T>::kK;
  if constexpr (CONTIG_K || sizeof(T) == 2) {
    // [n][k], or [k][n] read transposed (b_fragment_chunk).
    const ChunkAt at = b_fragment_chunk(CONTIG_K, n0, ks, lane);
    ldmatrix_x4<!CONTIG_K>(b, Tile::chunk(stage, at.row, at.chunk));
  } else {
    load_scalar_fragments<Tile>(b, stage, ks * kK, n0, lane);  // (k, n), (k+4, n), (k, n+8), ...
  }
}

// A warp's ldmatrix addresses held across the K loop: one offset per mma step of a K-contiguous
// tile, or per fragment of an MN-contiguous one, and the other index as a constant
// (held_fragment_offset in smem_swizzle.hpp). Without them each read swizzled its address in the
// K loop, two to four integer instructions per ldmatrix in a chain ahead of it
// (docs/perf-notes.md, sm80 v11). Tiles that ldmatrix reads: swizzled, and 16-bit unless
// K-contiguous.
template <typename T, class Tile, bool OPERAND_B, bool CONTIG_K, int kSteps, int kFragments>
struct HeldOffsets {
  static constexpr int kHeld = CONTIG_K ? kSteps : kFragments;
  static constexpr uint32_t kSixteenRows = 16 * Tile::kRowBytes;
  uint32_t held[kHeld];

  // first: the warp tile's first row of M (A) or column of N (B).
  __device__ void init(int first, int lane) {
    static_assert(!Tile::kPadded && (CONTIG_K || sizeof(T) == 2),
                  "ldmatrix reads of a swizzled tile");
#pragma unroll
    for (int v = 0; v < kHeld; ++v) {
      held[v] =
          uint32_t(held_fragment_offset(OPERAND_B, CONTIG_K, first, v, lane, Tile::kChunksPerRow));
    }
  }
  // The address of fragment f (A: m16 tile f; B: n8 tiles 2f, 2f+1) at mma step ks of a stage.
  __device__ uint32_t at(uint32_t stage, int ks, int f) const {
    return CONTIG_K ? stage + held[ks] + f * kSixteenRows : stage + held[f] + ks * kSixteenRows;
  }
};

// tf32 operands arrive as fp32 bits; round them once they are in registers.
template <typename T, int N>
__device__ __forceinline__ void round_for_mma(uint32_t (&r)[N]) {
  if constexpr (sizeof(T) == 4) {
#pragma unroll
    for (int i = 0; i < N; ++i) r[i] = to_tf32(r[i]);
  }
}

// ---- stores straight from the accumulators ------------------------------------------------

// In the mma accumulator layout, lane t of a quad (t = lane % 4) holds columns 2t and 2t+1 of each
// n8 tile of a row: a pair. For 16-byte stores, as the epilogue through shared memory makes, the
// quad trades pairs so that each lane holds runs.

// fp32 D: lanes t and t^1 trade their pairs of n8 tiles j and j+1 (of one row). An even lane then
// holds columns 2t .. 2t+3 of tile j, an odd one columns 2t-2 .. 2t+1 of tile j+1.
__device__ __forceinline__ float4 pairs_to_fours(float2 tile_j, float2 tile_j1, int t) {
  const bool odd = t % 2;
  const float2 send = odd ? tile_j : tile_j1;
  const float got0 = __shfl_xor_sync(0xffffffffu, send.x, 1);
  const float got1 = __shfl_xor_sync(0xffffffffu, send.y, 1);
  return odd ? make_float4(got0, got1, tile_j1.x, tile_j1.y)
             : make_float4(tile_j.x, tile_j.y, got0, got1);
}

// 16-bit D: words[q] is the lane's packed pair of n8 tile j+q. Afterwards lane t holds the four
// pairs of tile j+t, its eight columns in order: a 4 x 4 transpose over the quad, in two trades
// (with lane t^2 the 2 x 2 blocks off the diagonal, then with t^1 the words off the diagonal).
__device__ __forceinline__ void transpose_quad(uint32_t (&words)[4], int t) {
  const bool upper = t & 2, odd = t & 1;
  uint32_t got0 = __shfl_xor_sync(0xffffffffu, upper ? words[0] : words[2], 2);
  uint32_t got1 = __shfl_xor_sync(0xffffffffu, upper ? words[1] : words[3], 2);
  if (upper) {
    words[0] = got0, words[1] = got1;
  } else {
    words[2] = got0, words[3] = got1;
  }
  got0 = __shfl_xor_sync(0xffffffffu, odd ? words[0] : words[1], 1);
  got1 = __shfl_xor_sync(0xffffffffu, odd ? words[2] : words[3], 1);
  if (odd) {
    words[0] = got0, words[2] = got1;
  } else {
    words[1] = got0, words[3] = got1;
  }
}

// ---- the kernel ---------------------------------------------------------------------------

// Dynamic shared memory of a config: the num_stages pipeline stages, or the epilogue's
// BM x (BN + 8) fp32 tile that reuses them, whichever is larger. The 8 floats of padding put the
// 8 rows a warp writes in one store on 4 different bank offsets. For tf32 the stages are counted
// with both operands' rows padded, the most any layout takes.
constexpr int kEpiloguePad = 8;
constexpr int64_t shared_bytes(int bm, int bn, int bk, int stages, int element_size) {
  const int64_t row_pads = element_size == 4 ? 2 * int64_t(kRowPadBytes) * bk : 0;
  const int64_t pipeline = int64_t(stages) * ((bm + bn) * bk * element_size + row_pads);
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
  using LoaderA = OperandLoader<T, S::BM, S::BK, S::kThreads, A_CONTIG_K, ASYNC>;
  using LoaderB = OperandLoader<T, S::BN, S::BK, S::kThreads, B_CONTIG_K, ASYNC>;
  static_assert(
      S::kStages * (LoaderA::Tile::kBytes + LoaderB::Tile::kBytes) <= shared_bytes<S, T>(),
      "the stages must fit the bytes the host asks for");
  constexpr int kMmaK = MmaShape<T>::kK;
  const uint32_t smem_base = shared_address(smem);
  const auto stage_a = [&](int s) { return smem_base + s * LoaderA::Tile::kBytes; };
  const auto stage_b = [&](int s) {
    return smem_base + S::kStages * LoaderA::Tile::kBytes + s * LoaderB::Tile::kBytes;
  };

  // Schedule: a persistent grid of G programs, G no more than fit on the GPU at once. Program p
  // takes work items p, p + G, p + 2G, ...: the tiles of every batch entry in grouped order
  // (persistent_tile), so that the G tiles in flight are consecutive in that order, as they are
  // when each program has one tile. Staying on its SM, a program issues its next tile's first
  // copies before it stores the last one (see the epilogue).
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_m0 = (warp / S::kWarpsN) * S::WM, warp_n0 = (warp % S::kWarpsN) * S::WN;
  const int64_t num_k_tiles = cdiv(args.k, S::BK);
  // Values of K in slice kt: BK for every slice wholly inside K, after one comparison in the K
  // loop instead of the extent's chain of 64-bit arithmetic.
  const int64_t whole_k_tiles = args.k / S::BK;
  const auto k_valid = [&](int64_t kt) {
    return kt < whole_k_tiles ? S::BK : valid_extent(args.k, kt * S::BK, S::BK);
  };
  const int64_t work_items = num_tiles(args.m, args.n, S::BM, S::BN) * args.batch_count;
  struct Work {  // a work item: its batch entry, its tile, and how much of the tile is inside D
    int64_t batch = 0, row0 = 0, col0 = 0;
    int rows_valid = 0, cols_valid = 0;
  };
  const auto work_item = [&](int64_t index) {
    const BatchedTile t = persistent_tile(index, args.m, args.n, S::BM, S::BN, args.group_size_m);
    Work w;
    w.batch = t.batch;
    w.row0 = t.tile.pid_m * S::BM;
    w.col0 = t.tile.pid_n * S::BN;
    w.rows_valid = valid_extent(args.m, w.row0, S::BM);
    w.cols_valid = valid_extent(args.n, w.col0, S::BN);
    return w;
  };

  LoaderA loader_a;
  LoaderB loader_b;
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
  // A work item's first loads: its loaders' addresses, then the prologue, slices 0 ..
  // num_stages-2 in flight with one commit group each. The stages must be free.
  const auto start_loads = [&](const Work& w) {
    if (num_k_tiles > 0) {  // with K = 0, A and B may be null: not even addresses are formed
      const T* a = static_cast<const T*>(args.a.data);
      const T* b = static_cast<const T*>(args.b.data);
      loader_a.start(a + args.a.offset(w.batch, w.row0, 0), args.a.stride.row, args.a.stride.col,
                     w.rows_valid);
      loader_b.start(b + args.b.offset(w.batch, 0, w.col0), args.b.stride.col, args.b.stride.row,
                     w.cols_valid);
    }
#pragma unroll
    for (int s = 0; s < S::kStages - 1; ++s) {
      if (s < num_k_tiles) {
        fetch(s, s);
        if (!ASYNC) store_staged(s);
      }
      cp_async_commit();
    }
  };

  // The warp's ldmatrix addresses, held across the K loop on the cp.async path (HeldOffsets).
  constexpr bool kHeldA = ASYNC && !LoaderA::Tile::kPadded && (A_CONTIG_K || sizeof(T) == 2);
  constexpr bool kHeldB = ASYNC && !LoaderB::Tile::kPadded && (B_CONTIG_K || sizeof(T) == 2);
  constexpr int kMmaM = S::WM / 16, kMmaN = S::WN / 8;  // mma per warp tile per K step
  HeldOffsets<T, typename LoaderA::Tile, false, A_CONTIG_K, S::BK / kMmaK, kMmaM> held_a;
  HeldOffsets<T, typename LoaderB::Tile, true, B_CONTIG_K, S::BK / kMmaK, kMmaN / 2> held_b;
  if constexpr (kHeldA) held_a.init(warp_m0, lane);
  if constexpr (kHeldB) held_b.init(warp_n0, lane);

  // The host launches no more programs than there are work items.
  Work work = work_item(blockIdx.x);
  start_loads(work);
  for (int64_t index = blockIdx.x; index < work_items; index += gridDim.x) {
    float acc[kMmaM][kMmaN][4] = {};

    // The operands of one mma step of the warp tile (K values ks*kMmaK..): WM/16 A fragments and
    // WN/8 B fragments, loaded with ldmatrix (or plain loads) from a stage; tf32 fragments are
    // rounded apart from the loads (round_fragments), so that the adds need not wait for them.
    // Padded tiles (tf32, MN-contiguous, cp.async) are read four fragments at a time, interleaved
    // over each 32 rows (A) or columns (B) of the warp tile; the epilogue puts them back.
    constexpr bool kInterleavedA = LoaderA::Tile::kPadded, kInterleavedB = LoaderB::Tile::kPadded;
    static_assert(!kInterleavedA || S::WM % 32 == 0, "A is interleaved over 32 rows");
    static_assert(!kInterleavedB || S::WN % 32 == 0, "B is interleaved over 32 columns");
    struct Fragments {
      uint32_t a[kMmaM][4], b[kMmaN][2];
    };
    const auto load_fragments = [&](Fragments& f, int stage, int ks) {
      if constexpr (kInterleavedA) {
#pragma unroll
        for (int i = 0; i < kMmaM; i += 2) {
          // Rows g and g+8 of m16 tile i are values 4g and 4g+1 of the 32, those of i+1 4g+2, 4g+3.
          uint32_t lo[4], hi[4];
          load_interleaved_fragments<typename LoaderA::Tile>(lo, hi, stage_a(stage), ks * kMmaK,
                                                             warp_m0 + i * 16, lane);
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            f.a[i + h][0] = lo[2 * h], f.a[i + h][1] = lo[2 * h + 1];
            f.a[i + h][2] = hi[2 * h], f.a[i + h][3] = hi[2 * h + 1];
          }
        }
      } else if constexpr (kHeldA) {
#pragma unroll
        for (int i = 0; i < kMmaM; ++i) {
          ldmatrix_x4<!A_CONTIG_K>(f.a[i], held_a.at(stage_a(stage), ks, i));
        }
      } else {
#pragma unroll
        for (int i = 0; i < kMmaM; ++i) {
          load_a_fragment<T, S::BM, S::BK, A_CONTIG_K, ASYNC>(f.a[i], stage_a(stage),
                                                              warp_m0 + i * 16, ks, lane);
        }
      }
      if constexpr (kInterleavedB) {
#pragma unroll
        for (int j = 0; j < kMmaN; j += 4) {
          uint32_t lo[4], hi[4];  // column g of n8 tile j+q is value 4g+q of the 32
          load_interleaved_fragments<typename LoaderB::Tile>(lo, hi, stage_b(stage), ks * kMmaK,
                                                             warp_n0 + j * 8, lane);
#pragma unroll
          for (int q = 0; q < 4; ++q) f.b[j + q][0] = lo[q], f.b[j + q][1] = hi[q];
        }
      } else {
#pragma unroll
        for (int j = 0; j < kMmaN; j += 2) {
          uint32_t pair[4];
          if constexpr (kHeldB) {
            ldmatrix_x4<!B_CONTIG_K>(pair, held_b.at(stage_b(stage), ks, j / 2));
          } else {
            load_b_fragments<T, S::BN, S::BK, B_CONTIG_K, ASYNC>(pair, stage_b(stage),
                                                                 warp_n0 + j * 8, ks, lane);
          }
          f.b[j][0] = pair[0], f.b[j][1] = pair[1];
          f.b[j + 1][0] = pair[2], f.b[j + 1][1] = pair[3];
        }
      }
    };
    const auto round_fragments = [](Fragments& f) {
#pragma unroll
      for (int i = 0; i < kMmaM; ++i) round_for_mma<T>(f.a[i]);
#pragma unroll
      for (int j = 0; j < kMmaN; ++j) round_for_mma<T>(f.b[j]);
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

    // Double-buffered fragments on the cp.async path. (The staged path holds a slice's chunks
    // in registers too, and its swizzled tf32 fragment loads have an address each: sm80 v3
    // spilled there with two sets.)
    constexpr bool kDoubleBuffered = ASYNC;
    if constexpr (kDoubleBuffered) {
      // Mainloop: each step's ldmatrix go out before the previous step's mma, so their latency
      // hides under it -- across the slice boundary too: step 0 of slice kt+1 is loaded before
      // the last mma of slice kt. That needs slice kt+1 in shared memory one step before the end
      // of slice kt, so the wait and the barrier sit at step kSteps-2. The barrier also closes
      // the reads of slice kt's stage (the last of them is step kSteps-1's ldmatrix, issued just
      // before it), which the copies of iteration kt+1 overwrite with slice kt+num_stages.
      // tf32 fragments are rounded after the mma that the loads went out before: by then the
      // loads have landed.
      Fragments fragments[2];
      if (num_k_tiles > 0) {
        cp_async_wait<S::kStages - 2>();
        __syncthreads();
        load_fragments(fragments[0], 0, 0);
        round_fragments(fragments[0]);
      }
      // The stages of slices kt, kt+1 and kt+num_stages-1 (= kt-1's), counted along instead of
      // taken modulo num_stages: a 64-bit remainder by 3 was a dozen instructions per slice.
      int stage = 0, stage_next = 1 % S::kStages, stage_fetch = S::kStages - 1;
      const auto advance = [](int& s) { s = s + 1 == S::kStages ? 0 : s + 1; };
      for (int64_t kt = 0; kt < num_k_tiles; ++kt) {
        const int64_t next = kt + S::kStages - 1;
#pragma unroll
        for (int ks = 0; ks < kSteps; ++ks) {
          if (ks + 1 < kSteps) {
            load_fragments(fragments[(ks + 1) % 2], stage, ks + 1);
          } else if (kt + 1 < num_k_tiles) {
            load_fragments(fragments[(ks + 1) % 2], stage_next, 0);
          }
          // Slice kt+num_stages-1 goes into the stage slice kt-1 left (every warp has passed the
          // barrier after its last read), at step 0. Where the wait at step kSteps-2 comes later
          // (three mma steps per slice or more) the copies go after the step's mma: before it,
          // the profile showed the warps stalled on rewriting the copies' address registers
          // ahead of the mma, and after it runs 1.5-4 % faster (docs/perf-notes.md, sm80 v6).
          // With two steps they go before, so that the wait at step 0 counts their group. For
          // 16-bit inputs A's copies follow step 0's mma and B's step 1's: the branch between a
          // slice's masked and unmasked copies ends the stretch of code in which the compiler
          // mixes copies with mma, and both warps of a scheduler reach it together, so a shorter
          // run of copies leaves the tensor cores idle for less (2048^3 +2 %; docs/perf-notes.md,
          // sm80 v11). tf32 keeps them together: split, its 3-stage kernel spilled.
          constexpr bool kFetchAfterMma = kSteps > 2;
          constexpr bool kSplitFetch = kFetchAfterMma && sizeof(T) == 2;
          const auto fetch_slice = [&] {
            if (next < num_k_tiles) fetch(next, stage_fetch);
            cp_async_commit();
          };
          if (ks == 0 && !kFetchAfterMma) fetch_slice();
          if (ks == kSteps - 2) {
            cp_async_wait<S::kStages - 2>();  // slice kt+1 has landed
            __syncthreads();
          }
          multiply(fragments[ks % 2]);
          if (ks == 0 && kFetchAfterMma && !kSplitFetch) fetch_slice();
          if (ks == 0 && kSplitFetch && next < num_k_tiles) {
            loader_a.copy_async(next, k_valid(next), stage_a(stage_fetch));
          }
          if (ks == 1 && kSplitFetch) {  // the slice's one commit group, as fetch_slice's
            if (next < num_k_tiles) loader_b.copy_async(next, k_valid(next), stage_b(stage_fetch));
            cp_async_commit();
          }
          round_fragments(fragments[(ks + 1) % 2]);
        }
        advance(stage), advance(stage_next), advance(stage_fetch);
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
          round_fragments(f);
          multiply(f);
          if (ks == 0) {
            if (next < num_k_tiles) fetch(next, int(next % S::kStages));
            if constexpr (ASYNC) cp_async_commit();
          }
        }
        if (!ASYNC && next < num_k_tiles) store_staged(int(next % S::kStages));
      }
    }

    // Epilogue. The common case, D = alpha * AB into a row-major D that takes aligned stores, on
    // a tile wholly inside D, may go straight from the accumulators: the lanes of a quad trade
    // pairs until each holds 16 bytes of a row (interleaved B gives it four columns already),
    // with no per-element tests. That needs no shared memory, so the next work item's copies go
    // out first, into the freed stages, and fly while this tile is stored (docs/perf-notes.md,
    // sm80 v7). The rest goes through shared memory as runs of 8 along D's contiguous dimension:
    // the common case's in 16-byte loads and stores, the others with any type, activation and
    // mask, tested per element.
    const EpilogueParams& e = args.epilogue;
    const bool d_row_major = e.d.stride.col == 1;
    const int64_t next_index = index + gridDim.x;
    const Work next = next_index < work_items ? work_item(next_index) : Work{};
    const int g = lane / 4, t = lane % 4;  // mma accumulator layout: rows g, g+8; cols 2t, 2t+1
    // The tile row of accumulators acc[i][.][2h], acc[i][.][2h+1]: row g (h = 0) or g + 8 of m16
    // tile i, or where the interleaved A fragments took them from.
    const auto tile_row = [&](int i, int h) {
      return kInterleavedA ? warp_m0 + (i / 2) * 32 + 4 * g + (i % 2) * 2 + h
                           : warp_m0 + i * 16 + g + 8 * h;
    };
    // D = alpha * AB into a row-major D whose rows take 16-byte stores: runs of 8 need no
    // per-element tests. On an interior tile every run is whole.
    const bool scaled_aligned = d_row_major && d_aligned && scales_only(e);
    const bool scaled_interior =
        scaled_aligned && work.rows_valid == S::BM && work.cols_valid == S::BN;
    // From 16-bit inputs, an fp32 D whose rows are not 16-byte aligned takes the same path in
    // 4-byte stores, each lane its own pairs: through shared memory it would lose the next item's
    // early copies, which cost more than the scalar stores (bf16 4095 x 4097 x 4093 into fp32 D
    // with ldd 4097: +11 %). tf32's interleaved columns lost 3 % this way (docs/perf-notes.md,
    // sm80 v8).
    const bool scaled_unaligned_fp32 = sizeof(T) == 2 && d_row_major && !d_aligned &&
                                       e.d.dtype == DType::fp32 && scales_only(e) &&
                                       work.rows_valid == S::BM && work.cols_valid == S::BN;
    // A 16-bit D with no next item to overlap goes through shared memory all the same: there its
    // 16-byte runs cost fewer instructions than the quad's trades (2.5 % at bf16 2048^3, where
    // each program has one tile). fp32 D gains either way: through shared memory it moves twice
    // the bytes.
    if ((scaled_interior && (next_index < work_items || e.d.dtype == DType::fp32)) ||
        scaled_unaligned_fp32) {
      static_assert(S::WN % 32 == 0, "the quad trades the pairs of n8 tiles four at a time");
      __syncthreads();  // every warp is done reading the stages that the next copies overwrite
      if (next_index < work_items) start_loads(next);
#pragma unroll
      for (int i = 0; i < kMmaM; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int64_t row = e.d.offset(work.batch, work.row0 + tile_row(i, h), work.col0);
          if (scaled_unaligned_fp32) {
            float* d = static_cast<float*>(e.d.data) + row + warp_n0;
#pragma unroll
            for (int j = 0; j < kMmaN; ++j) {
              d[j * 8 + 2 * t] = e.alpha * acc[i][j][2 * h];
              d[j * 8 + 2 * t + 1] = e.alpha * acc[i][j][2 * h + 1];
            }
          } else if constexpr (kInterleavedB) {
            // Columns 2t + c of n8 tiles j..j+3 are values 4(2t + c) + q of their 32: four
            // consecutive columns.
#pragma unroll
            for (int j = 0; j < kMmaN; j += 4)
#pragma unroll
              for (int c = 0; c < 2; ++c) {
                const float4 four = {acc[i][j][2 * h + c], acc[i][j + 1][2 * h + c],
                                     acc[i][j + 2][2 * h + c], acc[i][j + 3][2 * h + c]};
                store_scaled4(e.d, row + warp_n0 + j * 8 + 8 * t + 4 * c, e.alpha, four);
              }
          } else if (e.d.dtype == DType::fp32) {
#pragma unroll
            for (int j = 0; j < kMmaN; j += 2) {
              const float4 four =
                  pairs_to_fours({acc[i][j][2 * h], acc[i][j][2 * h + 1]},
                                 {acc[i][j + 1][2 * h], acc[i][j + 1][2 * h + 1]}, t);
              store_scaled4(e.d, row + warp_n0 + (j + t % 2) * 8 + 2 * (t & 2), e.alpha, four);
            }
          } else {
            const bool fp16 = e.d.dtype == DType::fp16;
#pragma unroll
            for (int j = 0; j < kMmaN; j += 4) {
              uint32_t words[4];
#pragma unroll
              for (int q = 0; q < 4; ++q) {
                words[q] = pack_pair(fp16, e.alpha * acc[i][j + q][2 * h],
                                     e.alpha * acc[i][j + q][2 * h + 1]);
              }
              transpose_quad(words, t);
              *reinterpret_cast<uint4*>(static_cast<uint16_t*>(e.d.data) + row + warp_n0 +
                                        (j + t) * 8) = {words[0], words[1], words[2], words[3]};
            }
          }
        }
    } else {
      // Accumulators -> shared memory (the pipeline's stages are free once every copy has landed
      // and every warp has left the mainloop).
      cp_async_wait<0>();
      __syncthreads();
      float* tile_out = reinterpret_cast<float*>(smem);
      constexpr int kPitch = S::BN + kEpiloguePad;
#pragma unroll
      for (int i = 0; i < kMmaM; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float* row = &tile_out[tile_row(i, h) * kPitch + warp_n0];
          if constexpr (kInterleavedB) {
#pragma unroll
            for (int j = 0; j < kMmaN; j += 4)
#pragma unroll
              for (int c = 0; c < 2; ++c) {
                *reinterpret_cast<float4*>(&row[j * 8 + 8 * t + 4 * c]) = {
                    acc[i][j][2 * h + c], acc[i][j + 1][2 * h + c], acc[i][j + 2][2 * h + c],
                    acc[i][j + 3][2 * h + c]};
              }
          } else {
#pragma unroll
            for (int j = 0; j < kMmaN; ++j) {
              *reinterpret_cast<float2*>(&row[j * 8 + 2 * t]) = {acc[i][j][2 * h],
                                                                 acc[i][j][2 * h + 1]};
            }
          }
        }
      __syncthreads();

      // Runs of 8 along D's contiguous dimension; consecutive threads take consecutive runs.
      if (scaled_aligned) {
        // Edge tiles too: their whole runs leave as an interior tile's do, and only the run that
        // D's last column cuts goes element by element. With the general path below for its edge
        // tiles, 1000 x 1000 x 1024 ran 65 % longer than 1024^3 on the same tiles; this way 8 %
        // (docs/perf-notes.md, sm80 v10).
        constexpr int kRunsPerRow = S::BN / 8;
        // Rolled: unrolled four times, the loop's addresses raised the spills of the 64 x 64
        // warp-tile kernels (ptxas allocates for the whole kernel) from 4-28 to 48-76 bytes.
#pragma unroll 1
        for (int r = threadIdx.x; r < S::BM * kRunsPerRow; r += S::kThreads) {
          const int m = r / kRunsPerRow, n = (r % kRunsPerRow) * 8;
          if (m >= work.rows_valid || n >= work.cols_valid) continue;
          const float* run = &tile_out[m * kPitch + n];
          if (n + 8 <= work.cols_valid) {
            const float4* quads = reinterpret_cast<const float4*>(run);
            store_scaled_run8(e, work.batch, work.row0 + m, work.col0 + n, quads[0], quads[1]);
          } else {
            const int64_t at = e.d.offset(work.batch, work.row0 + m, work.col0 + n);
            for (int j = 0; j < work.cols_valid - n; ++j) {
              store_from_float(e.d.data, e.d.dtype, at + j, e.alpha * run[j]);
            }
          }
        }
      } else if (d_row_major && !d_aligned && e.d.dtype != DType::fp32) {
        // A 16-bit D whose rows are not 16-byte aligned (an odd ldd, say): runs at the tile's
        // columns would all leave element by element. Each row's runs are shifted back to the
        // 16-byte boundary before it (aligned_runs.hpp), so that all but its first and last leave
        // in one 16-byte store: +1-3 % at fp16 4095 x 4097 x 4093 with ldd 4097. An fp32 D's
        // runs, two 16-byte stores each, lost 1 % this way (docs/perf-notes.md, sm80 v8).
        constexpr int kRunsPerRow = S::BN / 8 + 1;
        const bool fp16 = e.d.dtype == DType::fp16;
#pragma unroll 1
        for (int r = threadIdx.x; r < S::BM * kRunsPerRow; r += S::kThreads) {
          const int m = r / kRunsPerRow;
          if (m >= work.rows_valid) continue;
          const int64_t row = work.row0 + m, first = e.d.offset(work.batch, row, work.col0);
          const OutputRun run = shifted_run(
              r % kRunsPerRow,
              run_shift(reinterpret_cast<uintptr_t>(e.d.data) + uintptr_t(first) * 2, 2),
              work.cols_valid);
          if (run.count == 0) continue;
          float v[8];
#pragma unroll
          for (int j = 0; j < 8; ++j) {  // past the run's end, a stand-in inside it, not stored
            const int n = run.begin + (j < run.count ? j : 0);
            v[j] = epilogue_value(e, work.batch, row, work.col0 + n, tile_out[m * kPitch + n]);
          }
          // Stored here, not by epilogue_store_run: a first build that called it kept the 8
          // values on the stack in every sm80 kernel (docs/perf-notes.md, sm80 v8).
          const int64_t at = first + run.begin;
          if (run.aligned && run.count == 8) {
            *reinterpret_cast<uint4*>(static_cast<uint16_t*>(e.d.data) + at) =
                make_uint4(pack_pair(fp16, v[0], v[1]), pack_pair(fp16, v[2], v[3]),
                           pack_pair(fp16, v[4], v[5]), pack_pair(fp16, v[6], v[7]));
          } else {
#pragma unroll
            for (int j = 0; j < 8; ++j)
              if (j < run.count) store_from_float(e.d.data, e.d.dtype, at + j, v[j]);
          }
        }
      } else {
        const int run_extent = d_row_major ? S::BN : S::BM;  // along the run
        for (int r = threadIdx.x; r < S::BM * S::BN / 8; r += S::kThreads) {
          const int along = (r % (run_extent / 8)) * 8, across = r / (run_extent / 8);
          const int m = d_row_major ? across : along, n = d_row_major ? along : across;
          const int inside = d_row_major ? (m < work.rows_valid ? work.cols_valid - n : 0)
                                         : (n < work.cols_valid ? work.rows_valid - m : 0);
          if (inside <= 0) continue;
          float run[8];
#pragma unroll
          for (int j = 0; j < 8; ++j) {
            run[j] = d_row_major ? tile_out[m * kPitch + n + j] : tile_out[(m + j) * kPitch + n];
          }
          epilogue_store_run(e, work.batch, work.row0 + m, work.col0 + n, inside < 8 ? inside : 8,
                             d_aligned, run);
        }
      }
      __syncthreads();  // the next item's copies reuse the shared memory
      if (next_index < work_items) start_loads(next);
    }
    work = next;
  }
}

// ---- launch -------------------------------------------------------------------------------

// How many programs of `kernel` fit on the current device at once: the persistent grid's size.
// Asked once per kernel and device (the occupancy query costs more than a launch).
template <class Kernel>
Status resident_programs(Kernel* kernel, int threads, int shared_bytes, int* programs) {
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, int> known;  // (kernel, device) -> programs
  int device = 0;
  if (Status s = cuda_status(cudaGetDevice(&device), "sm80: cudaGetDevice"); !s.ok()) return s;
  std::lock_guard lock(mutex);
  const std::pair<const void*, int> key{reinterpret_cast<const void*>(kernel), device};
  if (auto it = known.find(key); it != known.end()) {
    *programs = it->second;
    return Status::success();
  }
  int sms = 0, per_sm = 0;
  if (Status s = cuda_status(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                             "sm80: cudaDeviceGetAttribute(MultiProcessorCount)");
      !s.ok()) {
    return s;
  }
  if (Status s = cuda_status(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared_bytes),
          "sm80: cudaOccupancyMaxActiveBlocksPerMultiprocessor");
      !s.ok()) {
    return s;
  }
  if (per_sm < 1) return {StatusCode::cuda_error, "sm80: the kernel does not fit on an SM"};
  *programs = known[key] = sms * per_sm;
  return Status::success();
}

// Launches the instantiation for input type T, compiled shape S and copy path ASYNC; the caller
// matched the config. The layouts pick one of four kernels, on a persistent grid.
template <class S, typename T, bool ASYNC>
Status launch_shape(const GemmArgs& args, bool d_aligned, cudaStream_t stream) {
  const bool a_contig_k = args.a.stride.col == 1;  // row-major A
  const bool b_contig_k = args.b.stride.row == 1;  // column-major B
  constexpr int kSmem = shared_bytes<S, T>();
  Status status;
  auto go = [&](auto a_k, auto b_k) {
    auto* kernel = sm80_gemm<T, S, decltype(a_k)::value, decltype(b_k)::value, ASYNC>;
    // More than 48 KB of dynamic shared memory must be asked for, per kernel.
    status = cuda_status(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem),
        "sm80_gemm: cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
    if (!status.ok()) return;
    int resident = 0;  // programs that fit on the GPU at once
    status = resident_programs(kernel, S::kThreads, kSmem, &resident);
    if (!status.ok()) return;
    const int64_t work_items = num_tiles(args.m, args.n, S::BM, S::BN) * args.batch_count;
    const auto grid = static_cast<unsigned>(work_items < resident ? work_items : resident);
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
