// A call's floor: what a kernel that does no GEMM work costs when timed as `bench` times a call
// (the L2 flushed by a write, then the call alone between two events). A 2048^3 call spends about
// a quarter of its time outside its K loop, so its K steps are read against this floor, not
// against zero. Two kernels, both in the 128x256 tile's launch shape at 2048^2 (128 programs of
// 384 threads):
//   - one that does nothing: the launch, the programs' start and end, and the events;
//   - one whose programs each write a 128 x 256 tile of 16-bit D (64 KB, 8 MB in all), what a
//     2048^2 GEMM writes at its end. After the flush L2 is full of dirty lines, so D's lines
//     evict them to DRAM.
#include "kernels/cuda_check.hpp"
#include "timing.hpp"

namespace tilegemm::cli {
namespace {

constexpr int kPrograms = 128, kThreads = 384;
constexpr int kTileVectors = 128 * 256 * 2 / 16;  // 16-byte stores per program

// The store sits behind a test no thread passes, so the kernel has a body the compiler keeps.
__global__ void __launch_bounds__(kThreads) empty_program(int* never) {
  if (never != nullptr && threadIdx.x == blockDim.x) *never = 1;
}

__global__ void __launch_bounds__(kThreads) tile_writing_program(uint4* d) {
  uint4* const tile = d + size_t(blockIdx.x) * kTileVectors;
  for (int i = threadIdx.x; i < kTileVectors; i += kThreads) {
    tile[i] = make_uint4(uint32_t(i), blockIdx.x, 0u, 0u);
  }
}

}  // namespace

CallFloor measure_call_floor(GpuTimer& timer) {
  uint4* d = nullptr;
  if (cudaMalloc(&d, size_t(kPrograms) * kTileVectors * sizeof(uint4)) != cudaSuccess) return {};
  Status empty_launched, writing_launched;
  const auto ms = timer.median_ms({[&] {
                                     empty_program<<<kPrograms, kThreads>>>(nullptr);
                                     return empty_launched = check_launch("empty_program");
                                   },
                                   [&] {
                                     tile_writing_program<<<kPrograms, kThreads>>>(d);
                                     return writing_launched = check_launch("tile_writing_program");
                                   }},
                                  200);
  const Status finished = cuda_status(cudaDeviceSynchronize(), "call floor");
  cudaFree(d);
  if (!empty_launched.ok() || !writing_launched.ok() || !finished.ok()) return {};
  return {ms[0] * 1e3, ms[1] * 1e3};
}

}  // namespace tilegemm::cli
