// The mma.sync ceiling: what the tensor cores deliver through the Ampere-style instruction the
// sm80 kernel uses, with no memory traffic at all. On a Hopper this is well below cuBLAS (which
// uses wgmma), and it is the figure the sm80 kernel's speed should be read against.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "kernels/cuda_check.hpp"
#include "kernels/sm80/ptx.cuh"
#include "timing.hpp"

namespace tilegemm::cli {
namespace {

// Independent accumulator chains per warp, enough to cover the mma latency from one warp.
constexpr int kChains = 8;
constexpr int kThreads = 256, kBlocksPerSm = 8, kIterations = 2048;

// Each warp issues kIterations x kChains mma.sync on register operands. The operands are 1.0
// (fp16 0x3C00, bf16 0x3F80, tf32 = fp32 0x3F800000); the sums are written only when they hold
// an impossible value, which the compiler cannot know, so no mma is optimised away.
template <typename T>
__global__ void __launch_bounds__(kThreads) mma_peak(float* sink) {
  const uint32_t one = sizeof(T) == 4 ? 0x3F800000u
                       : std::is_same_v<T, __half> ? 0x3C003C00u
                                                   : 0x3F803F80u;
  const uint32_t a[4] = {one, one, one, one}, b[2] = {one, one};
  float acc[kChains][4] = {};
  for (int i = 0; i < kIterations; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) sm80::mma<T>(acc[c], a, b);
  }
  float sum = 0.0f;
#pragma unroll
  for (int c = 0; c < kChains; ++c) sum += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  if (sum == -1.0f) sink[threadIdx.x] = sum;
}

}  // namespace

double measure_mma_sync_tflops(GpuTimer& timer, DType dtype) {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    return 0.0;
  }
  float* sink = nullptr;
  if (cudaMalloc(&sink, kThreads * sizeof(float)) != cudaSuccess) return 0.0;
  const int blocks = sms * kBlocksPerSm;
  auto* kernel = dtype == DType::fp16   ? mma_peak<__half>
                 : dtype == DType::bf16 ? mma_peak<__nv_bfloat16>
                                        : mma_peak<float>;
  const double ms = timer.median_ms({[&] {
                                      kernel<<<blocks, kThreads>>>(sink);
                                      return cuda_status(cudaGetLastError(), "mma_peak");
                                    }},
                                    10)[0];
  cudaFree(sink);
  // m16n8k16 (16-bit) or m16n8k8 (tf32): 2 * 16 * 8 * K flops per mma.
  const double flops_per_mma = 2.0 * 16 * 8 * (dtype == DType::tf32 ? 8 : 16);
  const double mmas = double(blocks) * (kThreads / 32) * kIterations * kChains;
  return ms > 0 ? mmas * flops_per_mma / (ms * 1e-3) / 1e12 : 0.0;
}

}  // namespace tilegemm::cli
