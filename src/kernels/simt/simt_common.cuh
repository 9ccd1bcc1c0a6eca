// Small device helpers shared by the SIMT (CUDA-core) kernels.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/kernel_common.cuh"

namespace tilegemm::simt {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

// Element (row, col) of batch entry `batch` of an input operand, or 0 outside the matrix
// (the masked load of the seeds: tl.load(ptr, mask=..., other=0.0)).
template <typename T>
__device__ __forceinline__ float load_masked(const MatrixView& v, int64_t batch, int64_t row,
                                             int64_t col, int64_t rows, int64_t cols) {
  if (row >= rows || col >= cols) return 0.0f;
  return to_float(static_cast<const T*>(v.data)[v.offset(batch, row, col)]);
}

// Every SIMT kernel is compiled for these A/B types (fp32 is IEEE float32 math).
inline const std::vector<DType> kSimtInputDtypes = {DType::fp32, DType::fp16, DType::bf16};

// Calls f(T{}) with T the C++ type of the input dtype.
template <typename F>
decltype(auto) dispatch_input_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::fp16:
      return f(__half{});
    case DType::bf16:
      return f(__nv_bfloat16{});
    default:
      return f(float{});
  }
}

}  // namespace tilegemm::simt
