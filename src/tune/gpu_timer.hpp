// Timing on the GPU: warm-up, CUDA events around the timed region only, median of the reps (and
// their spread). Cold, the default: L2 flushed before every timed call, so no shape is timed out of
// the cache. Warm: no flush, the call repeated back to back between the events, as a framework's
// layers follow one another with the operands still in L2. Used by the autotuner (cold) and by the
// benchmark (either). A build without CUDA (TILEGEMM_CUDA=OFF) links gpu_timer_none.cpp, whose
// timer is never reached: there is no device to time.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

#include "tilegemm/tilegemm.hpp"

namespace tilegemm::autotune {

// Something to time: enqueues its work on the timer's stream and reports launch errors.
using Enqueue = std::function<Status()>;

enum class L2State { cold, warm };
// Calls timed between one pair of events in the warm state (the figure is their mean).
constexpr int kWarmCalls = 10;

// The reps' milliseconds of one entry: fastest, median, slowest.
struct TimeSpread {
  double min = 0.0, median = 0.0, max = 0.0;
};

class GpuTimer {
 public:
  // Times work on `stream` (a cudaStream_t; null: the default stream). Allocates the L2 flush
  // buffer (twice the device's L2) and the events.
  explicit GpuTimer(void* stream = nullptr, L2State l2 = L2State::cold);
  ~GpuTimer();
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;

  // Times each of `work` `reps` times; the reps alternate between the entries (a, b, a, b, ...)
  // so clock and thermal drift hit all alike. Before them, `warmup` untimed rounds of the same
  // timed calls: cold, the flush, then each entry alone between two events; warm, kWarmCalls
  // calls of the entry between two events; waited for. (Warm-up calls that differ from the timed
  // ones can leave one entry of an alternation ~1 us slower in every rep that follows.) Returns
  // the spread of each entry's milliseconds per call.
  std::vector<TimeSpread> spread_ms(const std::vector<Enqueue>& work, int reps, int warmup = 3);
  // The medians of spread_ms.
  std::vector<double> median_ms(const std::vector<Enqueue>& work, int reps, int warmup = 3) {
    std::vector<double> out;
    for (const TimeSpread& s : spread_ms(work, reps, warmup)) out.push_back(s.median);
    return out;
  }

  L2State l2_state() const { return l2_; }

 private:
  void flush_l2();
  L2State l2_ = L2State::cold;
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
