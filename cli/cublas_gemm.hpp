// The same GEMM through cuBLAS (cublasGemmEx), for the benchmark's side-by-side comparison.
#pragma once

#include "tilegemm/tilegemm.hpp"

namespace tilegemm::cli {

// Runs D = alpha * A B + beta * C with cuBLAS on the problem's device buffers, writing `d_out`
// (same layout and leading dimension as the problem's D). C must have D's layout and ld. No bias
// or activation (cuBLAS GemmEx has none): the benchmark runs plain GEMMs. fp32 runs IEEE (TF32
// off); tf32 inputs run with CUBLAS_COMPUTE_32F_FAST_TF32. fp8 inputs go through cublasLtMatmul
// with the problem's scale mode and fast accumulation, for row-major A, column-major B and
// row-major D (cuBLASLt's fp8 "TN"), and an fp8 D with D's scale (cuBLASLt writes an amax of its
// own, not the problem's); a problem it refuses returns not_supported.
Status cublas_gemm(const GemmProblem& problem, void* d_out);

}  // namespace tilegemm::cli
