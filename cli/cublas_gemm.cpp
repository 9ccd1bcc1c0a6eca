#include "cublas_gemm.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>

#include <string>

#include "problem/dtype.hpp"

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

cublasLtHandle_t lt_handle() {
  static cublasLtHandle_t h = [] {
    cublasLtHandle_t created = nullptr;
    cublasLtCreate(&created);
    return created;
  }();
  return h;
}

Status lt_status(cublasStatus_t st, const char* what) {
  if (st == CUBLAS_STATUS_SUCCESS) return Status::success();
  return {StatusCode::cuda_error, std::string(what) + ": " + cublasGetStatusString(st)};
}

// Owns a cuBLASLt descriptor of type T, destroyed by `destroy`.
template <class T, cublasStatus_t (*destroy)(T)>
struct LtObject {
  T value = nullptr;
  ~LtObject() {
    if (value) destroy(value);
  }
};

// fp8 through cublasLtMatmul: cuBLASLt takes fp8 "TN" alone, so A row-major (K-major) and B
// column-major, and D row-major here. Column-major cuBLASLt computes D^T (N x M) = B^T A^T: its A
// is our B (transposed), its B our A, so its scales are ours swapped. The scale modes: per tensor
// SCALAR_32F, per channel OUTER_VEC_32F, blocks BLK128x128_32F (its A: our B's 128 x 128 blocks)
// and VEC128_32F (its B: our A's 1 x 128 blocks).
Status cublaslt_fp8_gemm(const GemmProblem& p, void* d_out) {
  if (p.a.layout != Layout::row_major || p.b.layout != Layout::col_major ||
      p.d.layout != Layout::row_major || p.epilogue.beta != 0.0f || p.batch_count != 1) {
    return {StatusCode::not_supported,
            "cuBLASLt fp8: row-major A, column-major B and row-major D (TN), no C or batch"};
  }
  if (lt_handle() == nullptr) return {StatusCode::cuda_error, "cublasLtCreate failed"};
  const auto fp8_type = [](DType d) {
    return d == DType::fp8_e5m2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3;
  };
  const bool fp8_d = is_fp8(p.d.dtype);
  if (fp8_d && (p.c.data == nullptr || p.c.dtype != DType::bf16)) {
    return {StatusCode::not_supported, "cuBLASLt fp8 D: its C (not read) is a bf16 matrix"};
  }
  LtObject<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy> desc;
  if (Status s = lt_status(cublasLtMatmulDescCreate(&desc.value, CUBLAS_COMPUTE_32F, CUDA_R_32F),
                           "cublasLtMatmulDescCreate");
      !s.ok()) {
    return s;
  }
  const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(desc.value, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa));
  cublasLtMatmulDescSetAttribute(desc.value, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb));
  const int8_t fast = p.fast_accumulation ? 1 : 0;
  cublasLtMatmulDescSetAttribute(desc.value, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast));
  if (p.scales.mode != ScaleMode::none) {
    const void* scale_first = p.scales.b;  // cuBLASLt's A is our B
    const void* scale_second = p.scales.a;
    const int64_t k_blocks = (p.k + 127) / 128, n_blocks = (p.n + 127) / 128;
    if (p.scales.mode == ScaleMode::block && k_blocks % 4 != 0) {
      // cuBLASLt reads B's block scales with rows of K blocks padded to 4 values (16 bytes);
      // ours are packed (measured: 4096 x 4096 x 11008, 86 K blocks, was 0.49 off packed). The
      // copy is a few microseconds inside cuBLASLt's timed call.
      static void* padded = nullptr;
      static size_t padded_bytes = 0;
      const int64_t ld = (k_blocks + 3) / 4 * 4;
      const size_t bytes = size_t(ld * n_blocks) * sizeof(float);
      if (bytes > padded_bytes) {
        cudaFree(padded);
        if (cudaMalloc(&padded, bytes) != cudaSuccess) {
          padded_bytes = 0;
          return {StatusCode::cuda_error, "cuBLASLt fp8: cudaMalloc of padded scales failed"};
        }
        padded_bytes = bytes;
      }
      cudaMemcpy2DAsync(padded, size_t(ld) * sizeof(float), p.scales.b,
                        size_t(k_blocks) * sizeof(float), size_t(k_blocks) * sizeof(float),
                        size_t(n_blocks), cudaMemcpyDeviceToDevice);
      scale_first = padded;
    }
    cublasLtMatmulDescSetAttribute(desc.value, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_first,
                                   sizeof(scale_first));
    cublasLtMatmulDescSetAttribute(desc.value, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_second,
                                   sizeof(scale_second));
    cublasLtMatmulMatrixScale_t mode_first = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F,
                                mode_second = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
    if (p.scales.mode == ScaleMode::channel) {
      mode_first = mode_second = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    } else if (p.scales.mode == ScaleMode::block) {
      mode_first = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
      mode_second = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    }
    cublasLtMatmulDescSetAttribute(desc.value, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode_first,
                                   sizeof(mode_first));
    cublasLtMatmulDescSetAttribute(desc.value, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode_second,
                                   sizeof(mode_second));
  }
  // An fp8 D: D's scale and an amax of cuBLASLt's own (AMAX_D), and a bf16 C, which cuBLASLt's
  // fp8 D takes (not read: beta is 0).
  static void* amax = nullptr;
  if (fp8_d) {
    if (amax == nullptr && cudaMalloc(&amax, sizeof(float)) != cudaSuccess) {
      return {StatusCode::cuda_error, "cuBLASLt fp8: cudaMalloc of the amax failed"};
    }
    cublasLtMatmulDescSetAttribute(desc.value, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, &p.d.scale,
                                   sizeof(p.d.scale));
    cublasLtMatmulDescSetAttribute(desc.value, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, &amax,
                                   sizeof(amax));
  }
  const int64_t lda = p.a.ld != 0 ? p.a.ld : p.k, ldb = p.b.ld != 0 ? p.b.ld : p.k,
                ldd = p.d.ld != 0 ? p.d.ld : p.n, ldc = p.c.ld != 0 ? p.c.ld : p.n;
  LtObject<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy> first, second, out, source;
  cublasLtMatrixLayoutCreate(&first.value, fp8_type(p.b.dtype), uint64_t(p.k), uint64_t(p.n), ldb);
  cublasLtMatrixLayoutCreate(&second.value, fp8_type(p.a.dtype), uint64_t(p.k), uint64_t(p.m), lda);
  cublasLtMatrixLayoutCreate(&out.value, fp8_d ? fp8_type(p.d.dtype) : cuda_type(p.d.dtype),
                             uint64_t(p.n), uint64_t(p.m), ldd);
  cublasLtMatrixLayoutCreate(&source.value, fp8_d ? CUDA_R_16BF : cuda_type(p.d.dtype),
                             uint64_t(p.n), uint64_t(p.m), fp8_d ? ldc : ldd);
  const void* c = fp8_d ? p.c.data : d_out;
  static void* workspace = nullptr;
  constexpr size_t kWorkspaceBytes = size_t(64) << 20;
  if (workspace == nullptr && cudaMalloc(&workspace, kWorkspaceBytes) != cudaSuccess) {
    return {StatusCode::cuda_error, "cuBLASLt fp8: cudaMalloc of the workspace failed"};
  }
  LtObject<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy> preference;
  cublasLtMatmulPreferenceCreate(&preference.value);
  cublasLtMatmulPreferenceSetAttribute(preference.value, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                       &kWorkspaceBytes, sizeof(kWorkspaceBytes));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t heuristic =
      cublasLtMatmulAlgoGetHeuristic(lt_handle(), desc.value, first.value, second.value,
                                     source.value, out.value, preference.value, 1, &result, &found);
  if (heuristic != CUBLAS_STATUS_SUCCESS || found == 0) {
    return {StatusCode::not_supported, "cuBLASLt refuses this fp8 problem (no algorithm: " +
                                           std::string(cublasGetStatusString(heuristic)) + ")"};
  }
  const float alpha = p.epilogue.alpha, beta = 0.0f;
  return lt_status(cublasLtMatmul(lt_handle(), desc.value, &alpha, p.b.data, first.value, p.a.data,
                                  second.value, &beta, c, source.value, d_out, out.value,
                                  &result.algo, workspace, kWorkspaceBytes, nullptr),
                   "cublasLtMatmul");
}

}  // namespace

Status cublas_gemm(const GemmProblem& p, void* d_out) {
  if (is_fp8(p.a.dtype)) return cublaslt_fp8_gemm(p, d_out);
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
  const cublasStatus_t st =
      cublasGemmEx(handle(), op_first, op_second, int(m), int(n), int(p.k), &alpha, first,
                   cuda_type(p.a.dtype), int(ld_first), second, cuda_type(p.b.dtype),
                   int(ld_second), &beta, d_out, cuda_type(p.d.dtype), int(ldd),
                   // tf32 inputs: fp32 in memory, TF32 tensor-core math (the opt-in of cuBLAS);
                   // tf32x3 is measured against SGEMM, whose accuracy it offers.
                   p.a.dtype == DType::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                   CUBLAS_GEMM_DEFAULT);
  if (st != CUBLAS_STATUS_SUCCESS) {
    return {StatusCode::cuda_error, std::string("cublasGemmEx: ") + cublasGetStatusString(st)};
  }
  return Status::success();
}

}  // namespace tilegemm::cli
