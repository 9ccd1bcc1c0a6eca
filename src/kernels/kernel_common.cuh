// What every GPU kernel shares: the program -> tile mapping, the launch
// grid, the device's compute capability, and the registry entry and launch dispatch of a kernel
// compiled for a fixed list of configs.
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include "kernels/gemm_args.hpp"
#include "kernels/kernel_registry.hpp"
#include "ptx/common.cuh"
#include "schedule/tile_order.hpp"

namespace tilegemm {

// The program's output tile, from the library's schedule (one place, shared with the host).
__device__ __forceinline__ TileCoord program_tile(const GemmArgs& args, int block_m, int block_n) {
  return grouped_tile_order(blockIdx.x, args.m, args.n, block_m, block_n, args.group_size_m);
}

// Grid of a launch: x = programs of one batch entry, y = batch entries (each program loops
// over y with stride gridDim.y, so any batch count fits the 65535 limit of gridDim.y).
inline dim3 program_grid(const GemmArgs& args, int block_m, int block_n) {
  const int64_t batches = args.batch_count < 65535 ? args.batch_count : 65535;
  return dim3(static_cast<unsigned>(num_tiles(args.m, args.n, block_m, block_n)),
              static_cast<unsigned>(batches));
}

// The registry entry of a kernel compiled for the listed configs (the first is its
// default). GROUP_SIZE_M is a run-time value, so can_implement compares everything else, and
// names the compiled configs when it refuses one. Every config runs every listed input dtype.
inline gpu::Kernel compiled_configs_kernel(const char* name, const char* description,
                                           std::vector<DType> input_dtypes,
                                           std::vector<KernelConfig> compiled, gpu::Launcher launch,
                                           bool takes_groups = false) {
  auto can_implement = [name = std::string(name), input_dtypes, compiled, takes_groups](
                           const GemmProblem& problem, const KernelConfig& asked) {
    // (Built by appending: g++ 12 warns falsely (-Wrestrict) on chains of string operator+.)
    std::string why;
    if (problem.groups.form != GroupForm::none && !takes_groups) {
      why.append("kernel ").append(name).append(" runs no grouped GEMM (groups.form ");
      why.append(to_string(problem.groups.form)).append("); kernel sm90 and the CPU backend do");
      return why;
    }
    bool takes_dtype = false;
    for (DType d : input_dtypes) takes_dtype |= d == problem.a.dtype;
    if (!takes_dtype) {
      why.append("kernel ").append(name).append(" does not take a.dtype ");
      why.append(to_string(problem.a.dtype)).append("; it takes");
      for (DType d : input_dtypes) why.append(" ").append(to_string(d));
      return why;
    }
    for (const KernelConfig& c : compiled) {
      if (same_instantiation(c, asked)) return why;
    }
    why.append("kernel ").append(name).append(" has no compiled config ");
    why.append(to_string(asked)).append(" (GROUP_SIZE_M may change); compiled:");
    for (const KernelConfig& c : compiled) why.append(" ").append(to_string(c));
    return why;
  };
  return {{name, description, compiled.front(), compiled, input_dtypes},
          can_implement,
          std::move(launch)};
}

// The configs of a std::tuple of compiled shapes (types with a static config()).
template <class Shapes>
std::vector<KernelConfig> configs_of() {
  return std::apply([](auto... shapes) { return std::vector{decltype(shapes)::config()...}; },
                    Shapes{});
}

// Calls f(shape) with the compiled shape of `Shapes` that `config` names and returns its status;
// not_supported, naming `kernel` and the config, when none does.
template <class Shapes, class F>
Status with_compiled_shape(const char* kernel, const KernelConfig& config, F&& f) {
  Status status;
  const bool found = std::apply(
      [&](auto... shapes) {
        return ((same_instantiation(decltype(shapes)::config(), config) ? (status = f(shapes), true)
                                                                        : false) ||
                ...);
      },
      Shapes{});
  if (!found) {
    return {StatusCode::not_supported,
            std::string(kernel) + ": config " + to_string(config) + " is not compiled"};
  }
  return status;
}

// The current device's compute capability; false (and the CUDA error cleared) when unreadable.
inline bool current_compute_capability(int* major, int* minor) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return true;
}

// Empty when the current device has compute capability `major`.0 or newer; else why `kernel`
// cannot run on it, with `otherwise` (e.g. "; use --kernel warptile") after.
inline std::string compute_capability_check(const char* kernel, int major_needed,
                                            const char* otherwise = "") {
  int major = 0, minor = 0;
  if (!current_compute_capability(&major, &minor)) {
    return std::string("kernel ") + kernel + ": cannot read the device's compute capability";
  }
  if (major >= major_needed) return {};
  std::string why = std::string("kernel ") + kernel + " needs compute capability ";
  why.append(std::to_string(major_needed)).append(".0 or newer (this device is ");
  why.append(std::to_string(major)).append(".").append(std::to_string(minor)).append(")");
  return why.append(otherwise);
}

}  // namespace tilegemm
