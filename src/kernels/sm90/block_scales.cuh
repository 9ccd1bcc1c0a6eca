// fp8 block scales as a consumer thread of the sm90 kernel reads them in its K loop: for each K
// step (128 values of K, one scale block: the promoting kernels take one slab per stage), the
// scales of the two rows it holds in each of its m64 wgmma tiles (A: 1 x 128 blocks) and of each
// unit of the tile's columns (B: 128 x 128 blocks; a unit of up to 128 columns lies in one). The
// promotion (mainloop.cuh) multiplies each unit's sums by their product. Without block scales
// (tensor and channel scales are applied after the K loop: epilogue/sm90_scales.cuh) every
// factor is 1.
#pragma once

#include <cstdint>

#include "kernels/gemm_args.hpp"

namespace tilegemm::sm90 {

#ifdef TILEGEMM_SM90A_DEVICE_CODE

// One K step's factors: a[m64 tile][row half], b[column unit].
template <int kMmaM, int kUnits>
struct StepScales {
  float a[kMmaM][2];
  float b[kUnits];

  // Every factor 1: the factors without block scales.
  __device__ __forceinline__ static StepScales ones() {
    StepScales s;
#pragma unroll
    for (int i = 0; i < kMmaM; ++i) s.a[i][0] = s.a[i][1] = 1.0f;
#pragma unroll
    for (int c = 0; c < kUnits; ++c) s.b[c] = 1.0f;
    return s;
  }
};

// The factors without block scales: ones at every step.
template <int kMmaM, int kUnits>
struct FactorsOfOne {
  __device__ __forceinline__ StepScales<kMmaM, kUnits> next() const {
    return StepScales<kMmaM, kUnits>::ones();
  }
};

// The factors of a piece's K steps, in order: next() gives one step's and moves on. Each factor is
// read through an address of its own that moves one K block per step (ScaleView's
// a_block_index, b_block_index and their strides), so that a step costs its loads and one add per
// address; worked out from the step's index, the addresses took ~50 instructions per step between
// a step's last adds and the next step's first wgmma (perf-notes, fp8 v9). Past the piece's last
// step the addresses stay on it. Rows and columns past the matrix read the last real one's scale
// (their sums are zeros and are never stored).
template <int kMmaM, int kUnitN, int kUnits>
struct BlockScaleStream {
  const float* a[kMmaM][2];
  const float* b[kUnits];
  int64_t a_step;  // ScaleView::a_block_stride()
  int left;        // steps after the one the addresses point at

  // `row0`: the thread's first row (the consumer's first row + 16 * warp + lane / 4); the piece's
  // K steps from k_step0, `steps` of them (at least 1).
  __device__ __forceinline__ BlockScaleStream(const ScaleView& s, int64_t row0, int64_t n0,
                                              int64_t n, int64_t k_step0, int steps)
      : a_step(s.a_block_stride()), left(steps - 1) {
#pragma unroll
    for (int i = 0; i < kMmaM; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) a[i][h] = s.a + s.a_block_index(row0 + 64 * i + 8 * h, k_step0);
#pragma unroll
    for (int c = 0; c < kUnits; ++c) b[c] = s.b + s.b_block_index(n0 + kUnitN * c, n, k_step0);
  }

  __device__ __forceinline__ StepScales<kMmaM, kUnits> next() {
    StepScales<kMmaM, kUnits> s;
#pragma unroll
    for (int i = 0; i < kMmaM; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) s.a[i][h] = __ldg(a[i][h]);
#pragma unroll
    for (int c = 0; c < kUnits; ++c) s.b[c] = __ldg(b[c]);
    if (left > 0) {
      --left;
#pragma unroll
      for (int i = 0; i < kMmaM; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) a[i][h] += a_step;
#pragma unroll
      for (int c = 0; c < kUnits; ++c) b[c] += ScaleView::b_block_stride();
    }
    return s;
  }
};

// What a consumer thread's BlockScaleStreams start from, for each piece of one tile: the scales,
// its first row (the consumer's first row + 16 * warp + lane / 4), the tile's first column and N.
struct BlockScaleTile {
  ScaleView view;
  int64_t row0 = 0, n0 = 0, n = 0;

  // Block scales (else the factors of one: StepScales::ones).
  __device__ __forceinline__ bool on() const { return view.mode == ScaleMode::block; }
};

#endif  // TILEGEMM_SM90A_DEVICE_CODE

}  // namespace tilegemm::sm90
