// The fused epilogue: one implementation, called by every GPU kernel and by the CPU backend.
//
//   D[b, m, n] = to_dtype_D( activation( alpha * acc + beta * C[b, m, n] + bias[n] ) )
//
// (times D's scale first for an fp8 D).
//
// C, bias and D have run-time element types: the epilogue runs once per output element, so a
// switch on the type costs nothing next to the K loop, and it keeps the number of compiled kernel
// variants down to the types of A and B.
#pragma once

#include <cmath>

#include "problem/dtype.hpp"
#include "problem/matrix_view.hpp"

namespace tilegemm {

struct EpilogueParams {
  float alpha = 1.0f;
  float beta = 0.0f;
  Activation activation = Activation::none;
  float leaky_relu_slope = 0.01f;
  const void* bias = nullptr;
  DType bias_dtype = DType::fp32;
  int64_t bias_batch_stride = 0;  // batch entry b's bias at bias + b * bias_batch_stride
  MatrixView c;                   // read only when beta != 0
  MatrixView d;
  const float* d_scale = nullptr;  // an fp8 D's scale (null: 1)
  float* d_amax = nullptr;         // an fp8 D's amax: max |value| before the scale (null: none)
};

// Whether an epilogue (EpilogueParams or the problem's EpilogueDesc) is D = alpha * AB alone: no
// beta * C, bias or activation. The kernels give that case a store path without per-element tests.
template <class Epilogue>
TILEGEMM_HOST_DEVICE inline bool scales_only(const Epilogue& e) {
  return e.beta == 0.0f && e.bias == nullptr && e.activation == Activation::none;
}

// gelu's tanh form, as PyTorch's gelu(approximate="tanh"): 0.5 x (1 + tanh(gelu_tanh_input(x))).
TILEGEMM_HOST_DEVICE inline float gelu_tanh_input(float x) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  return kSqrt2OverPi * (x + 0.044715f * x * x * x);
}

TILEGEMM_HOST_DEVICE inline float apply_activation(Activation activation, float x, float slope) {
  switch (activation) {
    case Activation::relu:
      return x > 0.0f ? x : 0.0f;
    case Activation::leaky_relu:
      return x > 0.0f ? x : slope * x;
    case Activation::gelu:
      return 0.5f * x * (1.0f + tanhf(gelu_tanh_input(x)));
    case Activation::silu:
      return x / (1.0f + expf(-x));
    default:
      return x;
  }
}

// The finished value of one output element, from its fp32 accumulator (before conversion).
TILEGEMM_HOST_DEVICE inline float epilogue_value(const EpilogueParams& p, int64_t batch,
                                                 int64_t row, int64_t col, float acc) {
  float value = p.alpha * acc;
  if (p.beta != 0.0f)
    value += p.beta * load_as_float(p.c.data, p.c.dtype, p.c.offset(batch, row, col));
  if (p.bias != nullptr) {
    value += load_as_float(p.bias, p.bias_dtype, batch * p.bias_batch_stride + col);
  }
  return apply_activation(p.activation, value, p.leaky_relu_slope);
}

// Stores a finished value as D's element `index`: times D's scale, if any, then converted.
TILEGEMM_HOST_DEVICE inline void store_value(const EpilogueParams& p, int64_t index, float value) {
  store_from_float(p.d.data, p.d.dtype, index, p.d_scale != nullptr ? *p.d_scale * value : value);
}

// Finishes one output element from its fp32 accumulator and stores it. Returns the finished value
// (before D's scale), of which an fp8 D's amax is the largest magnitude.
TILEGEMM_HOST_DEVICE inline float epilogue_store(const EpilogueParams& p, int64_t batch,
                                                 int64_t row, int64_t col, float acc) {
  const float value = epilogue_value(p, batch, row, col, acc);
  store_value(p, p.d.offset(batch, row, col), value);
  return value;
}

// One 16-byte store (a plain struct, so the host compiler needs no CUDA vector types).
struct alignas(16) Bytes16 {
  uint32_t word[4];
};

// Finishes a run of 8 outputs that are consecutive in D's memory (along a row of a row-major D,
// down a column of a column-major one), starting at (row, col); `count` of them are inside D.
// A whole run whose first element is 16-byte aligned (`aligned`) leaves in 16-byte stores.
TILEGEMM_HOST_DEVICE inline void epilogue_store_run(const EpilogueParams& p, int64_t batch,
                                                    int64_t row, int64_t col, int count,
                                                    bool aligned, const float (&acc)[8]) {
  const bool along_row = p.d.stride.col == 1;
  float value[8];
  for (int j = 0; j < 8; ++j) {
    if (j < count) {
      value[j] =
          epilogue_value(p, batch, along_row ? row : row + j, along_row ? col + j : col, acc[j]);
    }
  }
  const int64_t first = p.d.offset(batch, row, col);
  if (!(aligned && count == 8) || is_fp8(p.d.dtype)) {
    for (int j = 0; j < count; ++j) store_value(p, first + j, value[j]);
    return;
  }
  if (p.d.dtype == DType::fp32) {
    uint32_t bits[8];
    for (int j = 0; j < 8; ++j) bits[j] = float_bits(value[j]);
    Bytes16* out = reinterpret_cast<Bytes16*>(static_cast<float*>(p.d.data) + first);
    out[0] = {{bits[0], bits[1], bits[2], bits[3]}};
    out[1] = {{bits[4], bits[5], bits[6], bits[7]}};
  } else {
    uint32_t pairs[4];
    for (int j = 0; j < 4; ++j) {
      const bool fp16 = p.d.dtype == DType::fp16;
      const uint16_t lo =
          fp16 ? float_to_fp16_bits(value[2 * j]) : float_to_bf16_bits(value[2 * j]);
      const uint16_t hi =
          fp16 ? float_to_fp16_bits(value[2 * j + 1]) : float_to_bf16_bits(value[2 * j + 1]);
      pairs[j] = uint32_t(lo) | uint32_t(hi) << 16;
    }
    *reinterpret_cast<Bytes16*>(static_cast<uint16_t*>(p.d.data) +
                                first) = {{pairs[0], pairs[1], pairs[2], pairs[3]}};
  }
}

inline EpilogueParams make_epilogue_params(const GemmProblem& problem) {
  EpilogueParams p;
  const EpilogueDesc& e = problem.epilogue;
  p.alpha = e.alpha;
  p.beta = e.beta;
  p.activation = e.activation;
  p.leaky_relu_slope = e.leaky_relu_slope;
  p.bias = e.bias;
  p.bias_dtype = e.bias_dtype;
  p.bias_batch_stride = e.bias_batch_stride;
  p.c = view_of(problem.c, problem.m, problem.n);
  p.d = view_of(problem.d, problem.m, problem.n);
  p.d_scale = problem.d.scale;
  p.d_amax = problem.d.amax;
  return p;
}

}  // namespace tilegemm
