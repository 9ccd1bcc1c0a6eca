// fp8 block scales as a consumer thread of the sm90 kernel reads them in its K loop: for each
// slab of a K step (128 values of K, one scale block), the scales of the two rows it holds in
// each of its m64 wgmma tiles (A: 1 x 128 blocks) and of each unit of the tile's columns (B:
// 128 x 128 blocks; a unit of up to 128 columns lies in one). The promotion (mainloop.cuh)
// multiplies each unit's sums by their product. Without block scales (tensor and channel scales are
// applied after the K loop: epilogue/sm90_scales.cuh) every factor is 1.
#pragma once

#include <cstdint>

#include "kernels/gemm_args.hpp"

namespace tilegemm::sm90 {

#ifdef TILEGEMM_SM90A_DEVICE_CODE

// One K step's factors: a[slab][m64 tile][row half], b[slab][column unit].
template <int kSlabs, int kMmaM, int kUnits>
struct StepScales {
  float a[kSlabs][kMmaM][2];
  float b[kSlabs][kUnits];

  // Every factor 1: the factors without block scales.
  __device__ __forceinline__ static StepScales ones() {
    StepScales s;
#pragma unroll
    for (int j = 0; j < kSlabs; ++j) {
#pragma unroll
      for (int i = 0; i < kMmaM; ++i) s.a[j][i][0] = s.a[j][i][1] = 1.0f;
#pragma unroll
      for (int c = 0; c < kUnits; ++c) s.b[j][c] = 1.0f;
    }
    return s;
  }
};

// The block scales of one consumer thread's part of one tile: rows row0 + 64i (+ 8), column units
// from n0 + kUnitN * c. Rows and columns past the matrix read the last real one's scale (their
// sums are zeros and are never stored).
template <int kSlabs, int kMmaM, int kUnitN, int kUnits>
struct BlockScaleReader {
  bool on = false;  // block scales (else the factors of one: StepScales::ones)
  const float* a = nullptr;
  const float* b = nullptr;
  int64_t m = 0, k_blocks = 0;
  int64_t rows[kMmaM][2];
  int64_t column_blocks[kUnits];

  // `row0`: the thread's first row (the consumer's first row + 16 * warp + lane / 4).
  __device__ __forceinline__ BlockScaleReader(const ScaleView& s, int64_t row0, int64_t n0,
                                              int64_t n)
      : on(s.mode == ScaleMode::block), a(s.a), b(s.b), m(s.m), k_blocks(s.k_blocks) {
    const int64_t last_block = (n - 1) / kScaleBlock;
#pragma unroll
    for (int i = 0; i < kMmaM; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int64_t row = row0 + 64 * i + 8 * h;
        rows[i][h] = row < m ? row : m - 1;
      }
#pragma unroll
    for (int c = 0; c < kUnits; ++c) {
      const int64_t block = (n0 + int64_t(kUnitN) * c) / kScaleBlock;
      column_blocks[c] = block < last_block ? block : last_block;
    }
  }

  // The factors of K step `k_step` (slab j covers scale block k_step * kSlabs + j), with block
  // scales on: without them the consumers take the promotion's loops compiled for factors of one
  // (mainloop.cuh: step_factors), which never call this.
  __device__ __forceinline__ StepScales<kSlabs, kMmaM, kUnits> load(int64_t k_step) const {
    StepScales<kSlabs, kMmaM, kUnits> s;
#pragma unroll
    for (int j = 0; j < kSlabs; ++j) {
      int64_t kb = k_step * kSlabs + j;
      // A slab past K (the second of a last step) holds zeros: any scale will do.
      if (kSlabs > 1) kb = kb < k_blocks ? kb : k_blocks - 1;
#pragma unroll
      for (int i = 0; i < kMmaM; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) s.a[j][i][h] = __ldg(a + kb * m + rows[i][h]);
#pragma unroll
      for (int c = 0; c < kUnits; ++c) s.b[j][c] = __ldg(b + column_blocks[c] * k_blocks + kb);
    }
    return s;
  }
};

#endif  // TILEGEMM_SM90A_DEVICE_CODE

}  // namespace tilegemm::sm90
