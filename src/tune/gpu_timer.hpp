// Timing on the GPU: warm-up, CUDA events around the timed region only,
// L2 flushed before every rep (so no shape is timed out of the cache), median of the reps.
// Used by the autotuner and by the benchmark. A build without CUDA (TILEGEMM_CUDA=OFF) links
// gpu_timer_none.cpp, whose timer is never reached: there is no device to time.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

#include "tilegemm/tilegemm.hpp"

namespace tilegemm::autotune {

// Something to time: enqueues its work on the timer's stream and reports launch errors.
using Enqueue = std::function<Status()>;

class GpuTimer {
 public:
  // Times work on `stream` (a cudaStream_t; null: the default stream). Allocates the L2 flush
  // buffer (twice the device's L2) and the events.
  explicit GpuTimer(void* stream = nullptr);
  ~GpuTimer();
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;

  // Times each of `work` `reps` times; the reps alternate between the entries (a, b, a, b, ...)
  // so clock and thermal drift hit all alike. Before them, `warmup` untimed rounds of the same
  // timed calls: the flush, then each entry alone between two events, waited for. (Warm-up calls
  // that differ from the timed ones can leave one entry of an alternation ~1 us slower in every
  // rep that follows.) Returns the median milliseconds of each entry.
  std::vector<double> median_ms(const std::vector<Enqueue>& work, int reps, int warmup = 3);

 private:
  void flush_l2();
  void* stream_ = nullptr;
  void* flush_buffer_ = nullptr;
  size_t flush_bytes_ = 0;
  void* start_ = nullptr;
  void* stop_ = nullptr;
};

inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]);
}

}  // namespace tilegemm::autotune
