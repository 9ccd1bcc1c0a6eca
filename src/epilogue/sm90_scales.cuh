// fp8 tensor and channel scales, applied to a consumer's accumulators of one tile once its K loop
// is done and before the epilogue (alpha, beta * C, bias, activation) reads them:
//   tensor   acc *= scale_a[0] * scale_b[0]
//   channel  acc[row, col] *= scale_a[row] * scale_b[col]
// Block scales vary along K, so the K loop applies them (kernels/sm90/block_scales.cuh).
// On wgmma's accumulator layout (sm90_registers.cuh): warp w of the consumer holds rows
// 16w + lane/4 and 8 below it of each m64 tile; registers 4j + {0,1} (4j + {2,3} for the second
// row) hold columns 8j + 2(lane%4) + {0,1}.
#pragma once

#include <cstdint>

#include "problem/scales.hpp"

namespace tilegemm::sm90 {

#ifdef TILEGEMM_SM90A_DEVICE_CODE

// acc: the consumer's kMmaM m64 tiles of BN columns, rows from `row0`, columns from `n0`, of an
// m x n matrix. Rows and columns past it get the factor 0 (they are never stored).
template <int kMmaM, int BN>
__device__ __forceinline__ void apply_output_scales(const ScaleView& s, float (&acc)[kMmaM][BN / 2],
                                                    int64_t row0, int64_t n0, int64_t m,
                                                    int64_t n) {
  if (s.mode == ScaleMode::tensor) {
    const float factor = s.a[0] * s.b[0];
#pragma unroll
    for (int i = 0; i < kMmaM; ++i)
#pragma unroll
      for (int r = 0; r < BN / 2; ++r) acc[i][r] *= factor;
    return;
  }
  if (s.mode != ScaleMode::channel) return;
  const int t = int(threadIdx.x % 128);
  const int64_t first_row = row0 + 16 * (t / 32) + (t % 32) / 4;
  const int64_t first_col = n0 + 2 * (t % 4);
  float col_scale[BN / 4];  // columns 8j + {0, 1} from first_col
#pragma unroll
  for (int j = 0; j < BN / 8; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int64_t col = first_col + 8 * j + e;
      col_scale[2 * j + e] = col < n ? __ldg(s.b + col) : 0.0f;
    }
#pragma unroll
  for (int i = 0; i < kMmaM; ++i) {
    float row_scale[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t row = first_row + 64 * i + 8 * h;
      row_scale[h] = row < m ? __ldg(s.a + row) : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][4 * j + e] *= row_scale[e / 2] * col_scale[2 * j + e % 2];
  }
}

#endif  // TILEGEMM_SM90A_DEVICE_CODE

}  // namespace tilegemm::sm90
