// The scales of fp8 inputs (the public Scales) as host and device code read them: which scale
// multiplies A[m, k] and B[k, n], and how many each pointer holds. tilegemm.hpp's ScaleMode says
// what each mode means and how block scales lie in memory.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "tilegemm/tilegemm.hpp"

namespace tilegemm {

// Values of K (and of N, for B) that one block scale covers.
inline constexpr int kScaleBlock = 128;

// Scale blocks along an extent of K (or of N, for B).
TILEGEMM_HOST_DEVICE constexpr int64_t scale_blocks(int64_t extent) {
  return (extent + kScaleBlock - 1) / kScaleBlock;
}

struct ScaleView {
  ScaleMode mode = ScaleMode::none;
  const float* a = nullptr;
  const float* b = nullptr;
  int64_t m = 0;
  int64_t k_blocks = 0;  // ceil(K / 128)
  int64_t n = 0;

  // The scale of A[row, k] and of B[k, col].
  TILEGEMM_HOST_DEVICE float a_at(int64_t row, int64_t k) const {
    switch (mode) {
      case ScaleMode::tensor:
        return a[0];
      case ScaleMode::channel:
        return a[row];
      case ScaleMode::block:
        return a[(k / kScaleBlock) * m + row];
      default:
        return 1.0f;
    }
  }
  TILEGEMM_HOST_DEVICE float b_at(int64_t k, int64_t col) const {
    switch (mode) {
      case ScaleMode::tensor:
        return b[0];
      case ScaleMode::channel:
        return b[col];
      case ScaleMode::block:
        return b[(col / kScaleBlock) * k_blocks + k / kScaleBlock];
      default:
        return 1.0f;
    }
  }

  // Block scales as a reader that walks K one block at a time finds them (the sm90 kernel's
  // promotion): where A's scale of `row` at K block kb lies in `a`, and B's of column `col` (of N)
  // in `b`; the next K block's lies a_block_stride() and b_block_stride() further on. Rows past M
  // and columns past N read the last real one's scale.
  TILEGEMM_HOST_DEVICE int64_t a_block_index(int64_t row, int64_t kb) const {
    return kb * m + (row < m ? row : m - 1);
  }
  TILEGEMM_HOST_DEVICE int64_t b_block_index(int64_t col, int64_t n, int64_t kb) const {
    const int64_t block = col / kScaleBlock, last = (n - 1) / kScaleBlock;
    return (block < last ? block : last) * k_blocks + kb;
  }
  TILEGEMM_HOST_DEVICE int64_t a_block_stride() const { return m; }
  TILEGEMM_HOST_DEVICE static constexpr int64_t b_block_stride() { return 1; }

  // The scales one batch entry of A (M x K) and of B (K x N) takes: 1, M or N, or one per block.
  TILEGEMM_HOST_DEVICE int64_t a_count() const {
    return mode == ScaleMode::tensor    ? 1
           : mode == ScaleMode::channel ? m
           : mode == ScaleMode::block   ? m * k_blocks
                                        : 0;
  }
  TILEGEMM_HOST_DEVICE int64_t b_count() const {
    return mode == ScaleMode::tensor    ? 1
           : mode == ScaleMode::channel ? n
           : mode == ScaleMode::block   ? scale_blocks(n) * k_blocks
                                        : 0;
  }

  // Group g's scales in a grouped GEMM of `form` offsets or counts (tilegemm.hpp: Scales): its
  // own B's, one set of b_count() per group; in the counts form its own A's too, one set of
  // a_count() per group (batch entry g of A), where the offsets form's groups share A's M rows
  // and the scales of those rows.
  TILEGEMM_HOST_DEVICE ScaleView group(GroupForm form, int64_t g) const {
    ScaleView v = *this;
    if (mode == ScaleMode::none) return v;
    v.b += g * b_count();
    if (form == GroupForm::counts) v.a += g * a_count();
    return v;
  }
};

inline ScaleView scale_view(const GemmProblem& p) {
  return {p.scales.mode, p.scales.a, p.scales.b, p.m, scale_blocks(p.k), p.n};
}

// How many fp32 values scales.a and scales.b must hold: one batch entry's, shared by every entry
// of a dense problem; in a grouped one, B's for each group, and A's for each group of the counts
// form (ScaleView::group).
inline int64_t scale_count_a(const GemmProblem& p) {
  const int64_t sets = p.groups.form == GroupForm::counts ? p.batch_count : 1;
  return scale_view(p).a_count() * sets;
}
inline int64_t scale_count_b(const GemmProblem& p) {
  const bool grouped = p.groups.form == GroupForm::offsets || p.groups.form == GroupForm::counts;
  return scale_view(p).b_count() * (grouped ? p.batch_count : 1);
}

// The scales one tile of D (rows [row0, row1), columns [col0, col1)) reads over the whole K loop,
// for `explain` and its test: A's rows and B's columns (channel), or the column blocks of B and,
// per K block kb, A's entries kb * M + row0 .. kb * M + row1 - 1 (block).
struct TileScales {
  int64_t a_first = 0, a_last = 0;  // A's entries of K block 0 (or the channel's rows)
  int64_t b_first = 0, b_last = 0;  // B's column blocks (block), or columns (channel)
  int64_t k_blocks = 0;             // K blocks each tile walks (block)
  int64_t count = 0;                // scales read in all, A's and B's
};

inline TileScales tile_scales(ScaleMode mode, int64_t k, int64_t row0, int64_t row1, int64_t col0,
                              int64_t col1) {
  TileScales t;
  switch (mode) {
    case ScaleMode::tensor:
      t.count = 2;
      break;
    case ScaleMode::channel:
      t = {row0, row1 - 1, col0, col1 - 1, 0, (row1 - row0) + (col1 - col0)};
      break;
    case ScaleMode::block: {
      t.k_blocks = scale_blocks(k);
      t.a_first = row0;
      t.a_last = row1 - 1;
      t.b_first = col0 / kScaleBlock;
      t.b_last = (col1 - 1) / kScaleBlock;
      t.count = t.k_blocks * ((row1 - row0) + (t.b_last - t.b_first + 1));
      break;
    }
    default:
      break;
  }
  return t;
}

}  // namespace tilegemm
