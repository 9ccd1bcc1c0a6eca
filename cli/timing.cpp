#include "timing.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>

#include "cublas_gemm.hpp"
#include "harness/workload.hpp"

namespace tilegemm::cli {

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]);
}

GpuTimer::GpuTimer() {
  int device = 0, l2 = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device);
  flush_bytes_ = std::max<size_t>(size_t(l2) * 2, 64u << 20);
  if (cudaMalloc(&flush_buffer_, flush_bytes_) != cudaSuccess) flush_buffer_ = nullptr;
  cudaEventCreate(reinterpret_cast<cudaEvent_t*>(&start_));
  cudaEventCreate(reinterpret_cast<cudaEvent_t*>(&stop_));
}

GpuTimer::~GpuTimer() {
  cudaFree(flush_buffer_);
  cudaEventDestroy(static_cast<cudaEvent_t>(start_));
  cudaEventDestroy(static_cast<cudaEvent_t>(stop_));
}

void GpuTimer::flush_l2() {
  if (flush_buffer_) cudaMemsetAsync(flush_buffer_, 0, flush_bytes_);
}

std::vector<double> GpuTimer::median_ms(const std::vector<Enqueue>& work, int reps, int warmup) {
  for (int i = 0; i < warmup; ++i)
    for (const auto& w : work) w();
  std::vector<std::vector<double>> times(work.size());
  auto start = static_cast<cudaEvent_t>(start_), stop = static_cast<cudaEvent_t>(stop_);
  for (int r = 0; r < reps; ++r) {
    for (size_t i = 0; i < work.size(); ++i) {
      flush_l2();
      cudaEventRecord(start);
      work[i]();
      cudaEventRecord(stop);
      cudaEventSynchronize(stop);
      float ms = 0.0f;
      cudaEventElapsedTime(&ms, start, stop);
      times[i].push_back(ms);
    }
  }
  std::vector<double> out;
  for (auto& t : times) out.push_back(median(t));
  return out;
}

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
  std::unique_ptr<harness::Workload> w;
  if (!harness::Workload::create(spec, true, &w).ok()) return 0.0;
  const GemmProblem p = w->problem();
  const double ms = timer.median_ms({[&] { return cublas_gemm(p, p.d.data); }}, 20)[0];
  return 2.0 * double(size) * size * size / (ms * 1e-3) / 1e12;
}

}  // namespace tilegemm::cli
