// The sm80 kernel's mma fragments: how a warp reads the operands of one mma step from a stage
// (ldmatrix, transposing for MN-contiguous 16-bit tiles; 16-byte loads of four fragments for
// padded tf32 tiles; scalar loads on the staged path), and the mma.sync that multiply them.
#pragma once

#include <cstdint>

#include "kernels/sm80/operand_loader.cuh"
#include "kernels/sm80/smem_swizzle.hpp"
#include "ptx/mma_sync.cuh"

namespace tilegemm::sm80 {

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
template <class E, int BM, int BK, bool CONTIG_K, bool ASYNC>
__device__ __forceinline__ void load_a_fragment(uint32_t (&a)[4], uint32_t stage, int m0, int ks,
                                                int lane) {
  using Tile = OperandTile<E, BM, BK, CONTIG_K, ASYNC>;
  constexpr int kK = E::kMmaK;
  if constexpr (CONTIG_K || E::kMnMajorOperands) {
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
template <class E, int BN, int BK, bool CONTIG_K, bool ASYNC>
__device__ __forceinline__ void load_b_fragments(uint32_t (&b)[4], uint32_t stage, int n0, int ks,
                                                 int lane) {
  using Tile = OperandTile<E, BN, BK, CONTIG_K, ASYNC>;
  constexpr int kK = E::kMmaK;
  if constexpr (CONTIG_K || E::kMnMajorOperands) {
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
// (with them, the K loop's integer instructions ahead of each ldmatrix are gone). Tiles that
// ldmatrix reads: swizzled, and 16-bit unless K-contiguous.
template <class E, class Tile, bool OPERAND_B, bool CONTIG_K, int kSteps, int kFragments>
struct HeldOffsets {
  static constexpr int kHeld = CONTIG_K ? kSteps : kFragments;
  static constexpr uint32_t kSixteenRows = 16 * Tile::kRowBytes;
  uint32_t held[kHeld];

  // first: the warp tile's first row of M (A) or column of N (B).
  __device__ void init(int first, int lane) {
    static_assert(!Tile::kPadded && (CONTIG_K || E::kMnMajorOperands),
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
template <class E, int N>
__device__ __forceinline__ void round_for_mma(uint32_t (&r)[N]) {
  if constexpr (E::kRoundsToTf32) {
#pragma unroll
    for (int i = 0; i < N; ++i) r[i] = to_tf32(r[i]);
  }
}

// A warp's part of the mma: its WM x WN warp tile as (WM/16) x (WN/8) m16n8 accumulators, the
// fragments of one mma step (K values ks * E::kMmaK ..), loaded from a stage with ldmatrix (or
// plain loads), and the mma.sync that multiply them. tf32 fragments are rounded apart from the
// loads (round), so that the adds need not wait for them. Padded tiles (tf32, MN-contiguous,
// cp.async) are read four fragments at a time, interleaved over each 32 rows (A) or columns (B)
// of the warp tile; the epilogue puts them back (tile_row, and the stores of interleaved B).
template <class E, class S, bool A_CONTIG_K, bool B_CONTIG_K, bool ASYNC>
struct WarpMma {
  using TileA = OperandTile<E, S::BM, S::BK, A_CONTIG_K, ASYNC>;
  using TileB = OperandTile<E, S::BN, S::BK, B_CONTIG_K, ASYNC>;
  static constexpr int kMmaM = S::WM / 16, kMmaN = S::WN / 8;  // mma per warp tile per K step
  static constexpr int kSteps = S::BK / E::kMmaK;              // mma steps per slice
  static constexpr bool kInterleavedA = TileA::kPadded, kInterleavedB = TileB::kPadded;
  // The warp's ldmatrix addresses, held across the K loop on the cp.async path (HeldOffsets).
  static constexpr bool kHeldA = ASYNC && !kInterleavedA && (A_CONTIG_K || E::kMnMajorOperands);
  static constexpr bool kHeldB = ASYNC && !kInterleavedB && (B_CONTIG_K || E::kMnMajorOperands);
  static_assert(!kInterleavedA || S::WM % 32 == 0, "A is interleaved over 32 rows");
  static_assert(!kInterleavedB || S::WN % 32 == 0, "B is interleaved over 32 columns");

  struct Fragments {
    uint32_t a[kMmaM][4], b[kMmaN][2];
  };

  int warp_m0, warp_n0, lane;  // the warp tile's first row and column in the block tile
  HeldOffsets<E, TileA, false, A_CONTIG_K, kSteps, kMmaM> held_a;
  HeldOffsets<E, TileB, true, B_CONTIG_K, kSteps, kMmaN / 2> held_b;

  __device__ __forceinline__ WarpMma(int warp_m0_, int warp_n0_, int lane_)
      : warp_m0(warp_m0_), warp_n0(warp_n0_), lane(lane_) {
    if constexpr (kHeldA) held_a.init(warp_m0, lane);
    if constexpr (kHeldB) held_b.init(warp_n0, lane);
  }

  // The fragments of mma step ks of the stages at stage_a and stage_b.
  __device__ __forceinline__ void load(Fragments& f, uint32_t stage_a, uint32_t stage_b,
                                       int ks) const {
    if constexpr (kInterleavedA) {
#pragma unroll
      for (int i = 0; i < kMmaM; i += 2) {
        // Rows g and g+8 of m16 tile i are values 4g and 4g+1 of the 32, those of i+1 4g+2, 4g+3.
        uint32_t lo[4], hi[4];
        load_interleaved_fragments<TileA>(lo, hi, stage_a, ks * E::kMmaK, warp_m0 + i * 16, lane);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          f.a[i + h][0] = lo[2 * h], f.a[i + h][1] = lo[2 * h + 1];
          f.a[i + h][2] = hi[2 * h], f.a[i + h][3] = hi[2 * h + 1];
        }
      }
    } else if constexpr (kHeldA) {
#pragma unroll
      for (int i = 0; i < kMmaM; ++i) ldmatrix_x4<!A_CONTIG_K>(f.a[i], held_a.at(stage_a, ks, i));
    } else {
#pragma unroll
      for (int i = 0; i < kMmaM; ++i) {
        load_a_fragment<E, S::BM, S::BK, A_CONTIG_K, ASYNC>(f.a[i], stage_a, warp_m0 + i * 16, ks,
                                                            lane);
      }
    }
    if constexpr (kInterleavedB) {
#pragma unroll
      for (int j = 0; j < kMmaN; j += 4) {
        uint32_t lo[4], hi[4];  // column g of n8 tile j+q is value 4g+q of the 32
        load_interleaved_fragments<TileB>(lo, hi, stage_b, ks * E::kMmaK, warp_n0 + j * 8, lane);
#pragma unroll
        for (int q = 0; q < 4; ++q) f.b[j + q][0] = lo[q], f.b[j + q][1] = hi[q];
      }
    } else {
#pragma unroll
      for (int j = 0; j < kMmaN; j += 2) {
        uint32_t pair[4];
        if constexpr (kHeldB) {
          ldmatrix_x4<!B_CONTIG_K>(pair, held_b.at(stage_b, ks, j / 2));
        } else {
          load_b_fragments<E, S::BN, S::BK, B_CONTIG_K, ASYNC>(pair, stage_b, warp_n0 + j * 8, ks,
                                                               lane);
        }
        f.b[j][0] = pair[0], f.b[j][1] = pair[1];
        f.b[j + 1][0] = pair[2], f.b[j + 1][1] = pair[3];
      }
    }
  }

  __device__ __forceinline__ static void round(Fragments& f) {
#pragma unroll
    for (int i = 0; i < kMmaM; ++i) round_for_mma<E>(f.a[i]);
#pragma unroll
    for (int j = 0; j < kMmaN; ++j) round_for_mma<E>(f.b[j]);
  }

  // (WM/16) x (WN/8) mma.sync on one step's fragments.
  __device__ __forceinline__ static void multiply(float (&acc)[kMmaM][kMmaN][4],
                                                  const Fragments& f) {
#pragma unroll
    for (int i = 0; i < kMmaM; ++i)
#pragma unroll
      for (int j = 0; j < kMmaN; ++j) mma<typename E::Storage>(acc[i][j], f.a[i], f.b[j]);
  }
};

}  // namespace tilegemm::sm80
