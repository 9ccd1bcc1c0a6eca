#include "timing.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>

#include "cublas_gemm.hpp"
#include "harness/workload.hpp"
#include "problem/dtype.hpp"

namespace tilegemm::cli {

double measure_copy_bandwidth_gbs(GpuTimer& timer) {
  const size_t bytes = size_t(1) << 30;
  void *src = nullptr, *dst = nullptr;
  if (cudaMalloc(&src, bytes) != cudaSuccess || cudaMalloc(&dst, bytes) != cudaSuccess) {
    cudaFree(src);
    return 0.0;
  }
  cudaMemset(src, 1, bytes);
  const double ms = timer.median_ms({[&] {
                                      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice);
                                      return Status::success();
                                    }},
                                    20)[0];
  cudaFree(src);
  cudaFree(dst);
  return 2.0 * double(bytes) / (ms * 1e-3) / 1e9;
}

double measure_cublas_tflops(GpuTimer& timer, DType dtype, int64_t size) {
  harness::WorkloadSpec spec;
  spec.m = spec.n = spec.k = size;
  spec.input_dtype = dtype;
  spec.output_dtype = harness::default_output_dtype(dtype);
  if (is_fp8(dtype)) spec.layout_b = Layout::col_major;  // cuBLASLt's fp8 takes "TN" alone
  std::unique_ptr<harness::Workload> w;
  if (!harness::Workload::create(spec, true, &w).ok()) return 0.0;
  const GemmProblem p = w->problem();
  const double ms = timer.median_ms({[&] { return cublas_gemm(p, p.d.data); }}, 20)[0];
  return 2.0 * double(size) * size * size / (ms * 1e-3) / 1e12;
}

}  // namespace tilegemm::cli
