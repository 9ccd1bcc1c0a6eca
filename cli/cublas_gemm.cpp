#include "cublas_gemm.hpp"

#include <cublas_v2.h>

#include <string>

namespace tilegemm::cli {
namespace {

cudaDataType_t cuda_type(DType d) {
  switch (d) {
    case DType::fp16:
      return CUDA_R_16F;
    case DType::bf16:
      return CUDA_R_16BF;
    default:
      return CUDA_R_32F;
  }
}

cublasHandle_t handle() {
  static cublasHandle_t h = [] {
    cublasHandle_t created = nullptr;
    cublasCreate(&created);
    // Default math with CUBLAS_COMPUTE_32F: fp32 stays IEEE (TF32 needs an explicit opt-in).
    cublasSetMathMode(created, CUBLAS_DEFAULT_MATH);
    return created;
  }();
  return h;
}

}  // namespace

Status cublas_gemm(const GemmProblem& p, void* d_out) {
  if (handle() == nullptr) return {StatusCode::cuda_error, "cublasCreate failed"};
  auto ld = [](int64_t ld, Layout layout, int64_t rows, int64_t cols) {
    return ld != 0 ? ld
                   : (layout == Layout::row_major ? (cols > 1 ? cols : 1) : (rows > 1 ? rows : 1));
  };
  const int64_t lda = ld(p.a.ld, p.a.layout, p.m, p.k), ldb = ld(p.b.ld, p.b.layout, p.k, p.n),
                ldd = ld(p.d.ld, p.d.layout, p.m, p.n);
  // cuBLAS is column-major. A column-major D is computed directly; a row-major D is computed as
  // its transpose, D^T = B^T A^T, which column-major cuBLAS sees as an N x M product.
  const bool d_row = p.d.layout == Layout::row_major;
  const void *first = p.a.data, *second = p.b.data;
  int64_t m = p.m, n = p.n, ld_first = lda, ld_second = ldb;
  cublasOperation_t op_first = p.a.layout == Layout::col_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  cublasOperation_t op_second = p.b.layout == Layout::col_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  if (d_row) {
    std::swap(first, second);
    std::swap(m, n);
    std::swap(ld_first, ld_second);
    op_first = p.b.layout == Layout::row_major ? CUBLAS_OP_N : CUBLAS_OP_T;
    op_second = p.a.layout == Layout::row_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  }
  const float alpha = p.epilogue.alpha, beta = p.epilogue.beta;
  const void* c = beta != 0.0f ? p.c.data : d_out;
  if (beta != 0.0f && c != d_out) {
    // GemmEx reads C from the output buffer: copy C there first.
    const size_t bytes = size_t(ldd) * size_t(d_row ? p.m : p.n) * dtype_size(p.d.dtype);
    cudaMemcpyAsync(d_out, c, bytes, cudaMemcpyDeviceToDevice);
  }
  const cublasStatus_t st = cublasGemmEx(
      handle(), op_first, op_second, int(m), int(n), int(p.k), &alpha, first, cuda_type(p.a.dtype),
      int(ld_first), second, cuda_type(p.b.dtype), int(ld_second), &beta, d_out,
      cuda_type(p.d.dtype), int(ldd),
      // tf32 inputs: fp32 in memory, TF32 tensor-core math (the opt-in of cuBLAS).
      p.a.dtype == DType::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT);
  if (st != CUBLAS_STATUS_SUCCESS) {
    return {StatusCode::cuda_error, std::string("cublasGemmEx: ") + cublasGetStatusString(st)};
  }
  return Status::success();
}

}  // namespace tilegemm::cli
