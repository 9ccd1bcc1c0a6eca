// The benchmark's ceilings, measured with the library's GPU timer (src/tune/gpu_timer.hpp).
#pragma once

#include "tune/gpu_timer.hpp"

namespace tilegemm::cli {

using autotune::Enqueue;
using autotune::GpuTimer;
using autotune::median;

// Measured device ceilings: device-to-device copy bandwidth (bytes read + written per second)
// and cuBLAS's rate at 8192^3 for a dtype.
double measure_copy_bandwidth_gbs(GpuTimer& timer);
double measure_cublas_tflops(GpuTimer& timer, DType dtype, int64_t size = 8192);
// The tensor cores' rate through mma.sync (the sm80 kernel's instruction) for fp16, bf16 or tf32,
// from register operands with no memory traffic (cli/mma_peak.cu).
double measure_mma_sync_tflops(GpuTimer& timer, DType dtype);

}  // namespace tilegemm::cli
