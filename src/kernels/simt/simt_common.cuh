// Small device helpers shared by the SIMT (CUDA-core) kernels.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>
#include <vector>

#include "kernels/gemm_args.hpp"
#include "kernels/kernel_registry.hpp"
#include "schedule/tile_order.hpp"

namespace tilegemm::simt {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

// Element (row, col) of batch entry `batch` of an input operand, or 0 outside the matrix
// (the masked load of the seeds: tl.load(ptr, mask=..., other=0.0)).
template <typename T>
__device__ __forceinline__ float load_masked(const MatrixView& v, int64_t batch, int64_t row,
                                             int64_t col, int64_t rows, int64_t cols) {
  if (row >= rows || col >= cols) return 0.0f;
  return to_float(static_cast<const T*>(v.data)[v.offset(batch, row, col)]);
}

// The program's output tile, from the library's schedule (one place, shared with the host).
__device__ __forceinline__ TileCoord program_tile(const GemmArgs& args, int block_m, int block_n) {
  return grouped_tile_order(blockIdx.x, args.m, args.n, block_m, block_n, args.group_size_m);
}

// Grid of a SIMT launch: x = programs of one batch entry, y = batch entries (each program loops
// over y with stride gridDim.y, so any batch count fits the 65535 limit of gridDim.y).
inline dim3 program_grid(const GemmArgs& args, int block_m, int block_n) {
  const int64_t batches = args.batch_count < 65535 ? args.batch_count : 65535;
  return dim3(static_cast<unsigned>(num_tiles(args.m, args.n, block_m, block_n)),
              static_cast<unsigned>(batches));
}

// Calls f(T{}) with T the C++ type of the input dtype.
template <typename F>
decltype(auto) dispatch_input_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::fp16:
      return f(__half{});
    case DType::bf16:
      return f(__nv_bfloat16{});
    default:
      return f(float{});
  }
}

// The registry entry of a SIMT generation compiled for the listed configs (the first is its
// default). GROUP_SIZE_M is a run-time value, so can_implement compares everything else, and
// names the compiled configs when it refuses one.
inline gpu::Kernel compiled_configs_kernel(const char* name, const char* description,
                                           std::vector<KernelConfig> compiled,
                                           gpu::Launcher launch) {
  auto can_implement = [name = std::string(name), compiled](const GemmProblem&,
                                                            const KernelConfig& asked) {
    std::string why;
    for (const KernelConfig& c : compiled) {
      if (same_instantiation(c, asked)) return why;
    }
    why = "kernel ";
    why += name;
    why += " has no compiled config ";
    why += to_string(asked);
    why += " (GROUP_SIZE_M may change); compiled:";
    for (const KernelConfig& c : compiled) {
      why += ' ';
      why += to_string(c);
    }
    return why;
  };
  return {{name, description, compiled.front(), compiled}, can_implement, std::move(launch)};
}

}  // namespace tilegemm::simt
