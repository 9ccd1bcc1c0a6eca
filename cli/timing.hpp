// The benchmark's ceilings, measured with the library's GPU timer (src/tune/gpu_timer.hpp).
#pragma once

#include "tune/gpu_timer.hpp"

namespace tilegemm::cli {

using autotune::Enqueue;
using autotune::GpuTimer;
using autotune::kWarmCalls;
using autotune::L2State;
using autotune::median;
using autotune::TimeSpread;

// Measured device ceilings: device-to-device copy bandwidth (bytes read + written per second)
// and cuBLAS's rate at 8192^3 for a dtype.
double measure_copy_bandwidth_gbs(GpuTimer& timer);
double measure_cublas_tflops(GpuTimer& timer, DType dtype, int64_t size = 8192);
// The tensor cores' rate through mma.sync (the sm80 kernel's instruction) for fp16, bf16 or tf32,
// from register operands with no memory traffic (cli/mma_peak.cu).
double measure_mma_sync_tflops(GpuTimer& timer, DType dtype);

// The tensor cores' rate through wgmma (the sm90 kernel's instruction, operands from shared
// memory), fp16 or bf16, with no loads, and the SM clock meanwhile (cli/wgmma_peak.cu): the
// loop's rate over all SMs, its cycles per K step of a 128x256 tile (1024 at the full rate), and
// cycles per microsecond. All zero where it cannot run (no compute capability 9.0 or no sm_90a
// code in this build).
struct WgmmaPeak {
  double tflops = 0.0, cycles_per_step = 0.0, sm_mhz = 0.0;
};
WgmmaPeak measure_wgmma_peak(GpuTimer& timer, DType dtype);

// A call's floor, timed as the benchmark times a call (cli/call_floor.cu), in microseconds: a
// kernel that does nothing, and one whose 128 programs each write a 128 x 256 tile of 16-bit D
// (8 MB, what a 2048^2 GEMM writes). Both zero where they cannot run.
struct CallFloor {
  double empty_us = 0.0, tile_writes_us = 0.0;
};
CallFloor measure_call_floor(GpuTimer& timer);

// `info --ceilings`: all of the above, printed (a build without CUDA says it has none).
void print_ceilings();

}  // namespace tilegemm::cli
