// The sm90 epilogue's stores from registers, and the steps of the general epilogue (alpha,
// beta*C, bias, activation) that every route shares, on wgmma's accumulator layout: warp w of a
// warpgroup holds rows 16w + lane/4 and 16w + lane/4 + 8 of each 64-row wgmma tile; registers
// 4j + {0,1} (4j + {2,3} for the second row) hold columns 8j + 2(lane%4) + {0,1}.
//
// Unrolled over all BN/8 column blocks, the general epilogue (beta*C, bias, four activations,
// three output types) is tens of kilobytes of code per tile and the warps stall on instruction
// fetch; so the general epilogue goes a round of two column blocks at a time in a rolled loop,
// and only D = alpha * AB into a 16-bit D, on a part wholly inside D along N, is unrolled
// (store_scaled).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>
#include <utility>

#include "epilogue/epilogue.hpp"
#include "epilogue/epilogue_stores.cuh"
#include "ptx/sm90.cuh"

namespace tilegemm::sm90 {

#ifdef TILEGEMM_SM90A_DEVICE_CODE

// Stores the finished values of D[row, col] and D[row, col+1] (the pair one thread holds): one
// store of both when D is row-major and `pairs` (aligned), else element by element; masked at
// the edges.
__device__ __forceinline__ void store_pair(const MatrixView& d, int64_t batch, int64_t row,
                                           int64_t col, float v0, float v1, int64_t m, int64_t n,
                                           bool pairs) {
  if (row >= m || col >= n) return;
  const int64_t at = d.offset(batch, row, col);
  if (!(pairs && col + 1 < n)) {
    store_from_float(d.data, d.dtype, at, v0);
    if (col + 1 < n) store_from_float(d.data, d.dtype, d.offset(batch, row, col + 1), v1);
    return;
  }
  if (d.dtype == DType::fp32) {
    *reinterpret_cast<float2*>(static_cast<float*>(d.data) + at) = make_float2(v0, v1);
  } else if (is_fp8(d.dtype)) {
    *reinterpret_cast<uint16_t*>(static_cast<uint8_t*>(d.data) + at) =
        pack_fp8_pair(d.dtype == DType::fp8_e5m2, v0, v1);
  } else {
    const bool fp16 = d.dtype == DType::fp16;
    const uint32_t lo = fp16 ? float_to_fp16_bits(v0) : float_to_bf16_bits(v0);
    const uint32_t hi = fp16 ? float_to_fp16_bits(v1) : float_to_bf16_bits(v1);
    *reinterpret_cast<uint32_t*>(static_cast<uint16_t*>(d.data) + at) = lo | hi << 16;
  }
}

// A round's four columns of x along one row (or of a vector: the bias): v[k] = x at element
// first + j * step for the k-th of the columns j = 0, 1, 8, 9 from the round's first, x of type
// `dtype` (fp32, fp16 or bf16), 0 for columns from `columns` on (outside D, or all of them where
// the row is). The type is tested once for the four, and no load sits under a branch: a column
// outside loads x[0], which always exists. So the loads go out back to back, from one address
// computed per call.
__device__ __forceinline__ void load_round_columns(float (&v)[4], const void* x, DType dtype,
                                                   int64_t first, int64_t step, int columns) {
  const auto column = [](int k) { return 8 * (k / 2) + k % 2; };
  if (dtype == DType::fp16 || dtype == DType::bf16) {
    const bool fp16 = dtype == DType::fp16;
    const auto* bits = static_cast<const uint16_t*>(x);
    const uint16_t* const at = bits + first;
    uint16_t b[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) b[k] = *(column(k) < columns ? at + column(k) * step : bits);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float value = fp16 ? fp16_bits_to_float(b[k]) : bf16_bits_to_float(b[k]);
      v[k] = column(k) < columns ? value : 0.0f;
    }
  } else {
    const auto* values = static_cast<const float*>(x);
    const float* const at = values + first;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float value = *(column(k) < columns ? at + column(k) * step : values);
      v[k] = column(k) < columns ? value : 0.0f;
    }
  }
}

// acc[r] = activation(acc[r]) for the first R values, the activation fixed at compile time.
// kApprox (a 16-bit D only): gelu's tanh and silu's exp and division by the hardware's
// approximations (tanh.approx, ex2.approx, rcp.approx: one instruction each, relative errors
// near 2^-11, below a 16-bit D's rounding) instead of tanhf and expf's exact sequences, which
// dominate the general epilogue's time otherwise.
template <Activation kActivation, bool kApprox, int R, int N>
__device__ __forceinline__ void activate(float (&acc)[N], float slope) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const float x = acc[r];
    if constexpr (kApprox && kActivation == Activation::gelu) {
      float t;
      asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(gelu_tanh_input(x)));
      acc[r] = 0.5f * x * (1.0f + t);
    } else if constexpr (kApprox && kActivation == Activation::silu) {
      acc[r] = __fdividef(x, 1.0f + __expf(-x));
    } else {
      acc[r] = apply_activation(kActivation, x, slope);
    }
  }
}

// The common case, D = alpha * AB in a 16-bit type, row-major and aligned, for a part whose
// columns all lie inside D: unrolled, one conversion and one 4-byte store per pair of columns, no
// column masks. (An edge tile's part takes finish_rolled's masked rounds instead: inlined for every
// pair, the per-element fallback made the kernel several times larger and slower to compile.)
template <typename Pair, int N>
__device__ __forceinline__ void store_scaled(const EpilogueParams& p, int64_t batch, int64_t row,
                                             int64_t col0, const float (&acc)[N], int64_t m) {
  auto* d = static_cast<Pair*>(p.d.data);  // D's elements, two at a time
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int64_t r = row + 8 * half;
    if (r >= m) continue;
    const int64_t first = p.d.offset(batch, r, col0);  // even: pairs are aligned
#pragma unroll
    for (int j = 0; j < N / 4; ++j) {
      const float v0 = p.alpha * acc[4 * j + 2 * half], v1 = p.alpha * acc[4 * j + 2 * half + 1];
      if constexpr (std::is_same_v<Pair, __half2>) {
        d[(first + 8 * j) / 2] = __floats2half2_rn(v0, v1);
      } else {
        d[(first + 8 * j) / 2] = __floats2bfloat162_rn(v0, v1);
      }
    }
  }
}

// The general epilogue (beta*C, bias, activation) goes over a tile's outputs in rounds of two
// column blocks, in a rolled loop (unrolled, it is tens of kilobytes of code per tile). Each round
// copies its eight values out of the accumulators (take_round), and each step (alpha, beta*C,
// bias, activation, store) runs over the whole round under one test of its run-time choice, so
// the round's loads of C go out together and its values' arithmetic interleaves (tested per
// value, the tests and their indirect branches make the loop a chain of dependent instructions).
// Value r of a round is row row + 8 * (r % 4 / 2), column col + 8 * (r / 4) + r % 2 (wgmma's
// accumulator layout).
constexpr int kRoundBlocks = 2, kRoundValues = 4 * kRoundBlocks;

// Everything but the store, for a round's values `acc` (take_round): rows from `row`, columns
// from `col` (the thread's first pair). With `c_added`, the caller has already made them
// alpha * AB + beta * C. kApprox: approximate activations (activate), for a 16-bit D.
template <bool kApprox = false, int N>
__device__ __forceinline__ void finish_round(const EpilogueParams& p, int64_t batch, int64_t row,
                                             int64_t col, float (&acc)[N], int64_t m, int64_t n,
                                             bool c_added = false) {
  static_assert(N == kRoundValues, "one round");
  constexpr int R = kRoundValues;
  // The round's columns inside D, from its first: past 9, all of them. Value r lies in row
  // r % 4 / 2 of the round's two (8 apart) and in its column 2 * (r / 4) + r % 2 of four.
  const int columns = int(n - col < 10 ? n - col : 10);
  if (!c_added) {
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] *= p.alpha;
  }
  if (p.beta != 0.0f && !c_added) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float c[4];
      load_round_columns(c, p.c.data, p.c.dtype, p.c.offset(batch, row + 8 * h, col),
                         p.c.stride.col, row + 8 * h < m ? columns : 0);
#pragma unroll
      for (int k = 0; k < 4; ++k) acc[4 * (k / 2) + 2 * h + k % 2] += p.beta * c[k];
    }
  }
  if (p.bias != nullptr) {  // one per column: rows outside D take it too, and are not stored
    float bias[4];
    load_round_columns(bias, p.bias, p.bias_dtype, batch * p.bias_batch_stride + col, 1, columns);
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] += bias[2 * (r / 4) + r % 2];
  }
  switch (p.activation) {
    case Activation::relu:
      activate<Activation::relu, kApprox, R>(acc, p.leaky_relu_slope);
      break;
    case Activation::leaky_relu:
      activate<Activation::leaky_relu, kApprox, R>(acc, p.leaky_relu_slope);
      break;
    case Activation::gelu:
      activate<Activation::gelu, kApprox, R>(acc, p.leaky_relu_slope);
      break;
    case Activation::silu:
      activate<Activation::silu, kApprox, R>(acc, p.leaky_relu_slope);
      break;
    default:
      break;
  }
}

// v = round `round`'s eight values of acc. A switch: one indirect jump and eight moves per round,
// with every register index a compile-time constant.
template <int N>
__device__ __forceinline__ void take_round(const float (&acc)[N], int round,
                                           float (&v)[kRoundValues]) {
  static_assert(N % kRoundValues == 0 && N / kRoundValues <= 16, "up to 16 whole rounds");
  const auto take = [&](auto k) {
    constexpr int kFirst = decltype(k)::value * kRoundValues;
    if constexpr (kFirst < N) {
#pragma unroll
      for (int r = 0; r < kRoundValues; ++r) v[r] = acc[kFirst + r];
    }
  };
  using std::integral_constant;
  // clang-format off
  switch (round) {
    case 0: take(integral_constant<int, 0>{}); break;
    case 1: take(integral_constant<int, 1>{}); break;
    case 2: take(integral_constant<int, 2>{}); break;
    case 3: take(integral_constant<int, 3>{}); break;
    case 4: take(integral_constant<int, 4>{}); break;
    case 5: take(integral_constant<int, 5>{}); break;
    case 6: take(integral_constant<int, 6>{}); break;
    case 7: take(integral_constant<int, 7>{}); break;
    case 8: take(integral_constant<int, 8>{}); break;
    case 9: take(integral_constant<int, 9>{}); break;
    case 10: take(integral_constant<int, 10>{}); break;
    case 11: take(integral_constant<int, 11>{}); break;
    case 12: take(integral_constant<int, 12>{}); break;
    case 13: take(integral_constant<int, 13>{}); break;
    case 14: take(integral_constant<int, 14>{}); break;
    default: take(integral_constant<int, 15>{}); break;
  }
  // clang-format on
}

// An fp8 D's scale, and the largest magnitude of the values a thread has finished for it (before
// the scale; fmaxf passes over NaNs): a tile's stores raise `amax`, and raise_amax takes the
// warp's largest to D's amax.
struct Fp8Output {
  float scale = 1.0f;
  float amax = 0.0f;

  __device__ __forceinline__ float take(float value) {
    amax = fmaxf(amax, fabsf(value));
    return value * scale;
  }
  // Every lane of the warp: the warp's largest into *d_amax by one atomic max on its bits, which
  // order as the values do for non-negative floats (d_amax starts at zero: gemm() clears it).
  __device__ __forceinline__ void raise_amax(float* d_amax) {
#pragma unroll
    for (int lanes = 16; lanes > 0; lanes /= 2) {
      amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, lanes));
    }
    if (threadIdx.x % 32 == 0 && amax > 0.0f) {
      atomicMax(reinterpret_cast<unsigned int*>(d_amax), __float_as_uint(amax));
    }
  }
};

// An fp8 D: a finished round's values into the amax (those inside D), then times D's scale.
__device__ __forceinline__ void scale_fp8_round(int64_t row, int64_t col, float (&v)[kRoundValues],
                                                int64_t m, int64_t n, Fp8Output& fp8) {
#pragma unroll
  for (int r = 0; r < kRoundValues; ++r) {
    const bool inside = row + 8 * (r % 4 / 2) < m && col + 8 * (r / 4) + r % 2 < n;
    v[r] = fp8.take(inside ? v[r] : 0.0f);
  }
}

// The general epilogue into any D (column-major, rows TMA cannot describe): each round's
// pairs stored from registers, masked at the edges. kFp8Out: D is fp8, with its scale and amax
// in *fp8 (scale_fp8_round).
template <bool kFp8Out = false, int N>
__device__ __forceinline__ void finish_rolled(const EpilogueParams& p, int64_t batch, int64_t row,
                                              int64_t col0, float (&acc)[N], int64_t m, int64_t n,
                                              bool pairs, Fp8Output* fp8 = nullptr) {
#pragma unroll 1
  for (int round = 0; round < N / kRoundValues; ++round) {
    const int64_t col = col0 + round * 8 * kRoundBlocks;
    float v[kRoundValues];
    take_round(acc, round, v);
    finish_round(p, batch, row, col, v, m, n);
    if constexpr (kFp8Out) scale_fp8_round(row, col, v, m, n, *fp8);
#pragma unroll
    for (int b = 0; b < kRoundBlocks; ++b)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        store_pair(p.d, batch, row + 8 * half, col + 8 * b, v[4 * b + 2 * half],
                   v[4 * b + 2 * half + 1], m, n, pairs);
      }
  }
}

#endif  // TILEGEMM_SM90A_DEVICE_CODE

}  // namespace tilegemm::sm90
