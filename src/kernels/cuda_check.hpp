// CUDA errors -> library Status. Every CUDA call in the library goes through one of these.
#pragma once

#include <cuda_runtime.h>

#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "tilegemm/tilegemm.hpp"

namespace tilegemm {

inline Status cuda_status(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return Status::success();
  return {StatusCode::cuda_error,
          std::string(what) + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")"};
}

// Call right after a kernel launch: reports a bad launch configuration or a sticky error.
inline Status check_launch(const char* kernel_name) {
  return cuda_status(cudaGetLastError(), kernel_name);
}

// Lets `kernel` take `bytes` of dynamic shared memory (past 48 KB a kernel must ask), once per
// kernel, size and device: the attribute holds for the device's context, and asking on every
// launch costs the host a driver call each time. (A context torn down with cudaDeviceReset loses
// it; the launch then fails with an error rather than running.)
inline Status allow_dynamic_shared_bytes(const void* kernel, int bytes, const char* what) {
  int device = 0;
  if (Status s = cuda_status(cudaGetDevice(&device), what); !s.ok()) return s;
  static std::mutex mutex;
  static std::set<std::tuple<const void*, int, int>> granted;  // (kernel, bytes, device)
  std::lock_guard lock(mutex);
  if (granted.count({kernel, bytes, device}) != 0) return Status::success();
  if (Status s = cuda_status(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes), what);
      !s.ok()) {
    return s;
  }
  granted.insert({kernel, bytes, device});
  return Status::success();
}

}  // namespace tilegemm
