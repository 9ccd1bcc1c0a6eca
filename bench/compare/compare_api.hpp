// One GEMM as the build comparison runs it: plain types only, so that the same description
// reaches two builds of the library whose namespaces differ (api.cpp is compiled once per build).
#pragma once

#include <cstdint>
#include <string>

namespace compare {

struct Case {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int input = 0, output = 0;  // tilegemm::DType values: fp32 0, fp16 1, bf16 2, tf32 3
  bool a_col = false, b_col = false;
  int64_t lda = 0, ldb = 0, ldd = 0;  // 0: packed
  float alpha = 1.0f, beta = 0.0f;
  int activation = 0;  // tilegemm::Activation: none 0, relu 1, leaky_relu 2, gelu 3, silu 4
  const void* a = nullptr;
  const void* b = nullptr;
  const void* bias = nullptr;                        // N values of D's type
  void* d = nullptr;                                 // also C when beta != 0 (in place)
  int64_t a_stride = 0, b_stride = 0, d_stride = 0;  // batch strides
};

// Runs the case through one build's tilegemm::gemm() (GemmOptions defaults: kernel auto, the
// heuristic's config, aligned copies). Returns false with *error set on failure; *ran names the
// kernel and config the call reported.
using GemmFunction = bool (*)(const Case&, std::string* ran, std::string* error);
bool base_gemm(const Case& c, std::string* ran, std::string* error);
bool head_gemm(const Case& c, std::string* ran, std::string* error);

}  // namespace compare
