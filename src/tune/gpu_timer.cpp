#include "tune/gpu_timer.hpp"

#include <cuda_runtime.h>

#include <algorithm>

namespace tilegemm::autotune {

GpuTimer::GpuTimer(void* stream, L2State state) : l2_(state), stream_(stream) {
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
  if (flush_buffer_) {
    cudaMemsetAsync(flush_buffer_, 0, flush_bytes_, static_cast<cudaStream_t>(stream_));
  }
}

std::vector<TimeSpread> GpuTimer::spread_ms(const std::vector<Enqueue>& work, int reps,
                                            int warmup) {
  auto start = static_cast<cudaEvent_t>(start_), stop = static_cast<cudaEvent_t>(stop_);
  const auto stream = static_cast<cudaStream_t>(stream_);
  const bool warm = l2_ == L2State::warm;
  // One timed call: cold, the flush, then the call alone between two events; warm, kWarmCalls
  // calls back to back between them.
  const auto timed_call = [&](const Enqueue& w) {
    if (!warm) flush_l2();
    cudaEventRecord(start, stream);
    for (int i = 0; i < (warm ? kWarmCalls : 1); ++i) w();
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    return double(ms) / (warm ? kWarmCalls : 1);
  };
  for (int i = 0; i < warmup; ++i)
    for (const auto& w : work) timed_call(w);
  std::vector<std::vector<double>> times(work.size());
  for (int r = 0; r < reps; ++r)
    for (size_t i = 0; i < work.size(); ++i) times[i].push_back(timed_call(work[i]));
  std::vector<TimeSpread> out;
  for (auto& t : times) {
    const auto [low, high] = std::minmax_element(t.begin(), t.end());
    out.push_back(t.empty() ? TimeSpread{} : TimeSpread{*low, median(t), *high});
  }
  return out;
}

}  // namespace tilegemm::autotune
