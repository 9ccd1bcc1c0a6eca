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

struct ScaleView {
  ScaleMode mode = ScaleMode::none;
  const float* a = nullptr;
  const float* b = nullptr;
  int64_t m = 0;
  int64_t k_blocks = 0;  // ceil(K / 128)

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
};

TILEGEMM_HOST_DEVICE constexpr int64_t scale_blocks(int64_t extent) {
  return (extent + kScaleBlock - 1) / kScaleBlock;
}

inline ScaleView scale_view(const GemmProblem& p) {
  return {p.scales.mode, p.scales.a, p.scales.b, p.m, scale_blocks(p.k)};
}

// How many fp32 values scales.a and scales.b must hold.
inline int64_t scale_count_a(const GemmProblem& p) {
  switch (p.scales.mode) {
    case ScaleMode::tensor:
      return 1;
    case ScaleMode::channel:
      return p.m;
    case ScaleMode::block:
      return p.m * scale_blocks(p.k);
    default:
      return 0;
  }
}
inline int64_t scale_count_b(const GemmProblem& p) {
  switch (p.scales.mode) {
    case ScaleMode::tensor:
      return 1;
    case ScaleMode::channel:
      return p.n;
    case ScaleMode::block:
      return scale_blocks(p.n) * scale_blocks(p.k);
    default:
      return 0;
  }
}

}  // namespace tilegemm
