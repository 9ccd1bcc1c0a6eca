// Functions that the host and the device both call: the index math, the shared-memory layouts and
// the schedules, written once and unit-tested on the host.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define TILEGEMM_HOST_DEVICE __host__ __device__
#else
#define TILEGEMM_HOST_DEVICE
#endif

namespace tilegemm {

// x / y rounded up (x >= 0, y > 0): tiles of y that cover x.
TILEGEMM_HOST_DEVICE constexpr int64_t cdiv(int64_t x, int64_t y) { return (x + y - 1) / y; }

}  // namespace tilegemm
