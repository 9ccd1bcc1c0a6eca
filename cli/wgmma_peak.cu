// The wgmma ceiling: what the tensor cores deliver through the Hopper kernel's instruction and
// operand path, with no loads at all, and the SM clock they run at meanwhile. Each program runs the
// K loop of the sm90 kernel's 128x256 tile (two warpgroups, each issuing 4 x m64n256k16 per K step
// of 64, commit, wait until one group is in flight) over four stages of shared memory that it
// filled once with random values. The clock matters: under this load the H100 runs below its
// 1980 MHz maximum (the power limit), lower still with random operands than with zeros, so the
// sm90 kernel's K loop is read against this rate, not against the datasheet's.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <vector>

#include "kernels/cuda_check.hpp"
#include "kernels/sm90/operand_tile.hpp"
#include "ptx/common.cuh"
#include "ptx/wgmma.cuh"
#include "timing.hpp"

namespace tilegemm::cli {
namespace {

constexpr int kStages = 4, kSteps = 2000, kThreads = 256;  // two math warpgroups, no producer
constexpr int kTileA = 128 * sm90::kRowBytes, kTileB = 256 * sm90::kRowBytes;  // one stage
constexpr int kSharedBytes = kStages * (kTileA + kTileB) + sm90::kAtomBytes;   // + alignment slack

// Per warpgroup: the loop's SM cycles (clock64) and nanoseconds (globaltimer).
struct LoopStamp {
  unsigned long long cycles, nanoseconds;
};

template <typename T>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_peak(uint32_t seed, LoopStamp* stamps, float* sink) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  // The 128x256 tile's operands as the kernel reads a row-major A (K-major) and a row-major B
  // (MN-major), 128-byte swizzle; the values are random, so the swizzle does not matter here.
  constexpr sm90::OperandTile tile_a{128, false}, tile_b{256, true};
  extern __shared__ unsigned char smem_raw[];
  unsigned char* const smem =
      smem_raw +
      (sm90::kAtomBytes - shared_address(smem_raw) % sm90::kAtomBytes) % sm90::kAtomBytes;
  auto* values = reinterpret_cast<T*>(smem);
  for (int i = threadIdx.x; i < kStages * (kTileA + kTileB) / 2; i += kThreads) {
    uint32_t h = (uint32_t(i) + 1) * 2654435761u ^ (seed + blockIdx.x) * 40503u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    values[i] = T(float(int(h & 0xFFFF) - 32768) / 16384.0f);  // uniform in [-2, 2)
  }
  // Written through the generic proxy, read by wgmma through the async proxy.
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();

  const int consumer = threadIdx.x / 128;
  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
  unsigned long long ns0, ns1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns0));
  const long long c0 = clock64();
  for (int kt = 0; kt < kSteps; ++kt) {
    const uint32_t a = shared_address(smem + kt % kStages * (kTileA + kTileB));
    const uint32_t b = a + kTileA;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int ks = 0; ks < sm90::kMmaPerSlab; ++ks) {
      sm90::Wgmma<T, 256, 0, 1>::run(acc, tile_a.descriptor(a, consumer * 64, ks),
                                     tile_b.descriptor(b, 0, ks), 1);
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
  for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(acc[i])::"memory");
  const long long c1 = clock64();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns1));
  if (threadIdx.x % 128 == 0) {
    stamps[blockIdx.x * 2 + consumer] = {static_cast<unsigned long long>(c1 - c0), ns1 - ns0};
  }
  // The sums are written only when they hold an impossible value, so no wgmma is dead code.
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < 128; ++i) sum += acc[i];
  if (sum == -1.0f) sink[threadIdx.x] = sum;
#endif
}

}  // namespace

WgmmaPeak measure_wgmma_peak(GpuTimer& timer, DType dtype) {
  int device = 0, sms = 0, major = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      major != 9) {
    return {};
  }
  auto* kernel = dtype == DType::fp16 ? wgmma_peak<__half> : wgmma_peak<__nv_bfloat16>;
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes) !=
      cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  LoopStamp* stamps = nullptr;
  float* sink = nullptr;
  const size_t stamp_bytes = size_t(sms) * 2 * sizeof(LoopStamp);
  if (cudaMalloc(&stamps, stamp_bytes) != cudaSuccess ||
      cudaMalloc(&sink, kThreads * sizeof(float)) != cudaSuccess ||
      cudaMemset(stamps, 0, stamp_bytes) != cudaSuccess) {
    cudaFree(stamps);
    cudaFree(sink);
    return {};
  }
  Status launched;
  timer.median_ms({[&] {
                    kernel<<<sms, kThreads, kSharedBytes>>>(12345u, stamps, sink);
                    launched = cuda_status(cudaGetLastError(), "wgmma_peak");
                    return launched;
                  }},
                  5);
  std::vector<LoopStamp> host(size_t(sms) * 2);
  const bool copied = launched.ok() && cudaMemcpy(host.data(), stamps, stamp_bytes,
                                                  cudaMemcpyDeviceToHost) == cudaSuccess;
  cudaFree(stamps);
  cudaFree(sink);
  // Zeros: the build has no sm_90a code for this kernel (its body is compiled out).
  if (!copied || host[0].nanoseconds == 0) return {};
  // Medians over the warpgroups of the last call.
  std::vector<double> cycles, ns;
  for (const LoopStamp& s : host) {
    cycles.push_back(double(s.cycles) / kSteps);
    ns.push_back(double(s.nanoseconds) / kSteps);
  }
  const double cycles_per_step = median(cycles), ns_per_step = median(ns);
  // All programs run at once: each K step of each is 128 x 256 x 64 multiply-adds.
  const double flops_per_step = 2.0 * 128 * 256 * 64 * sms;
  return {flops_per_step / ns_per_step / 1e3, cycles_per_step, cycles_per_step / ns_per_step * 1e3};
}

}  // namespace tilegemm::cli
