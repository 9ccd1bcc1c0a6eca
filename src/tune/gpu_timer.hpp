// Timing on the GPU the way METHOD.md asks: warm-up, CUDA events around the timed region only,
// L2 flushed before every rep (so no shape is timed out of the cache), median of the reps.
// Used by the autotuner and by the benchmark.
#pragma once

#include <functional>
#include <vector>

#include "tilegemm/tilegemm.hpp"

namespace tilegemm::autotune {

// Something to time: enqueues its work on the default stream and reports launch errors.
using Enqueue = std::function<Status()>;

class GpuTimer {
 public:
  GpuTimer();  // allocates the L2 flush buffer (twice the device's L2) and the events
  ~GpuTimer();
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;

  // Times each of `work` `reps` times after `warmup` untimed runs; the reps alternate between
  // the entries (a, b, a, b, ...) so clock and thermal drift hit all alike. Returns the median
  // milliseconds of each entry.
  std::vector<double> median_ms(const std::vector<Enqueue>& work, int reps, int warmup = 3);

 private:
  void flush_l2();
  void* flush_buffer_ = nullptr;
  size_t flush_bytes_ = 0;
  void* start_ = nullptr;
  void* stop_ = nullptr;
};

double median(std::vector<double> values);

}  // namespace tilegemm::autotune
