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

void print_ceilings() {
  GpuTimer timer;
  std::printf("ceilings (measured now):\n");
  std::printf("  device-to-device copy: %.0f GB/s (read + write)\n",
              measure_copy_bandwidth_gbs(timer));
  for (DType d : {DType::bf16, DType::fp16, DType::tf32, DType::fp32}) {
    std::printf("  cuBLAS %s 8192^3: %.1f TFLOP/s\n", std::string(to_string(d)).c_str(),
                measure_cublas_tflops(timer, d));
  }
  for (DType d : {DType::bf16, DType::fp16, DType::tf32}) {
    std::printf("  mma.sync %s peak (registers only): %.1f TFLOP/s\n",
                std::string(to_string(d)).c_str(), measure_mma_sync_tflops(timer, d));
  }
  for (DType d : {DType::bf16, DType::fp16}) {
    const WgmmaPeak w = measure_wgmma_peak(timer, d);
    if (w.tflops == 0.0) {
      std::printf("  wgmma %s peak: n/a (needs compute capability 9.0 and sm_90a code)\n",
                  std::string(to_string(d)).c_str());
      continue;
    }
    std::printf(
        "  wgmma %s peak (128x256 K steps from shared memory, random operands): %.1f "
        "TFLOP/s, %.0f cycles per K step of 64, SM clock %.0f MHz meanwhile\n",
        std::string(to_string(d)).c_str(), w.tflops, w.cycles_per_step, w.sm_mhz);
  }
  const CallFloor floor = measure_call_floor(timer);
  if (floor.empty_us == 0.0) {
    std::printf("  a call's floor: n/a (its kernels could not run)\n");
  } else {
    std::printf(
        "  a call's floor, timed as bench times a call (L2 flushed, then events): an empty "
        "kernel %.2f us; 128 programs writing 64 KB each (a 2048^2 16-bit D) %.2f us\n",
        floor.empty_us, floor.tile_writes_us);
  }
}

}  // namespace tilegemm::cli
