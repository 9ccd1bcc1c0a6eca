// The GPU timer of a build without CUDA (TILEGEMM_CUDA=OFF). Nothing reaches it, as no device is
// ever found; were it called, it would time nothing and say so with NaN.
#include <limits>

#include "tune/gpu_timer.hpp"

namespace tilegemm::autotune {

GpuTimer::GpuTimer(void* stream, L2State state) : l2_(state), stream_(stream) {}
GpuTimer::~GpuTimer() = default;

std::vector<TimeSpread> GpuTimer::spread_ms(const std::vector<Enqueue>& work, int, int) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return std::vector<TimeSpread>(work.size(), TimeSpread{nan, nan, nan});
}

}  // namespace tilegemm::autotune
