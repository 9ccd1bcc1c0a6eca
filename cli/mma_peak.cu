// The mma.sync ceiling: what the tensor cores deliver through the Ampere-style instruction the
// sm80 kernel uses, with no memory traffic at all. On a Hopper this is well below cuBLAS (which
// uses wgmma), and it is the figure the sm80 kernel's speed should be read against.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda_check.hpp"
#include "ptx/mma_sync.cuh"
#include "timing.hpp"

namespace tilegemm::cli {
namespace {

// Independent accumulator chains per warp, enough to cover the mma latency from one warp.
constexpr int kChains = 8;
constexpr int kThreads = 256, kBlocksPerSm = 8, kIterations = 2048;

// Each warp issues kIterations x kChains mma.sync on register operands. The chains start from
// different values (the thread's index) and every operand comes from the kernel's arguments, so
// the compiler can neither fold chains together nor precompute anything; the sums are written
// only when they hold an impossible value, so no mma is dead code either. (A first version with
// constant operands had its eight chains merged into one by the compiler.)
template <typename T>
__global__ void __launch_bounds__(kThreads) mma_peak(uint32_t operand, float* sink) {
  const uint32_t a[4] = {operand, operand ^ threadIdx.x, operand, operand},
                 b[2] = {operand ^ (threadIdx.x << 16), operand};
  float acc[kChains][4];
#pragma unroll
  for (int c = 0; c < kChains; ++c)
#pragma unroll
    for (int r = 0; r < 4; ++r) acc[c][r] = float(threadIdx.x * kChains * 4 + c * 4 + r);
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
  // Small operands (fp16 2^-14 pairs, bf16 2^-126 pairs, tf32 ~1e-38): the sums stay finite.
  const uint32_t operand = dtype == DType::fp16   ? 0x04000400u
                           : dtype == DType::bf16 ? 0x00800080u
                                                  : 0x00800000u;
  Status launched;
  const double ms = timer.median_ms({[&] {
                                      kernel<<<blocks, kThreads>>>(operand, sink);
                                      launched = cuda_status(cudaGetLastError(), "mma_peak");
                                      return launched;
                                    }},
                                    10)[0];
  cudaFree(sink);
  if (!launched.ok()) return 0.0;
  // m16n8k16 (16-bit) or m16n8k8 (tf32): 2 * 16 * 8 * K flops per mma.
  const double flops_per_mma = 2.0 * 16 * 8 * (dtype == DType::tf32 ? 8 : 16);
  const double mmas = double(blocks) * (kThreads / 32) * kIterations * kChains;
  return ms > 0 ? mmas * flops_per_mma / (ms * 1e-3) / 1e12 : 0.0;
}

}  // namespace tilegemm::cli
