// The fused epilogue: one implementation, called by every GPU kernel and by the CPU backend.
//
//   D[b, m, n] = to_dtype_D( activation( alpha * acc + beta * C[b, m, n] + bias[n] ) )
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
  MatrixView c;  // read only when beta != 0
  MatrixView d;
};

TILEGEMM_HOST_DEVICE inline float apply_activation(Activation activation, float x, float slope) {
  switch (activation) {
    case Activation::relu:
      return x > 0.0f ? x : 0.0f;
    case Activation::leaky_relu:
      return x > 0.0f ? x : slope * x;
    case Activation::gelu: {
      // tanh form, as PyTorch's gelu(approximate="tanh")
      constexpr float kSqrt2OverPi = 0.7978845608028654f;
      float inner = kSqrt2OverPi * (x + 0.044715f * x * x * x);
      return 0.5f * x * (1.0f + tanhf(inner));
    }
    case Activation::silu:
      return x / (1.0f + expf(-x));
    default:
      return x;
  }
}

// Finishes one output element from its fp32 accumulator and stores it.
TILEGEMM_HOST_DEVICE inline void epilogue_store(const EpilogueParams& p, int64_t batch, int64_t row,
                                                int64_t col, float acc) {
  float value = p.alpha * acc;
  if (p.beta != 0.0f)
    value += p.beta * load_as_float(p.c.data, p.c.dtype, p.c.offset(batch, row, col));
  if (p.bias != nullptr) value += load_as_float(p.bias, p.bias_dtype, col);
  value = apply_activation(p.activation, value, p.leaky_relu_slope);
  store_from_float(p.d.data, p.d.dtype, p.d.offset(batch, row, col), value);
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
  p.c = view_of(problem.c, problem.m, problem.n);
  p.d = view_of(problem.d, problem.m, problem.n);
  return p;
}

}  // namespace tilegemm
