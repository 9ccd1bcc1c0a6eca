// CUDA errors -> library Status. Every CUDA call in the library goes through one of these.
#pragma once

#include <cuda_runtime.h>

#include <string>

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

}  // namespace tilegemm
