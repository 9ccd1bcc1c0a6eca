#include "harness/device_memory.hpp"

#include <cuda_runtime.h>

#include <string>

namespace tilegemm::harness {
namespace {

Status cuda_status(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return Status::success();
  return {StatusCode::cuda_error, std::string(call) + ": " + cudaGetErrorString(e)};
}

void free_device(void* p) { cudaFree(p); }

}  // namespace

Status upload(const void* host, size_t bytes, DeviceBuffer* out) {
  void* p = nullptr;
  if (Status s = cuda_status(cudaMalloc(&p, bytes), "cudaMalloc"); !s.ok()) return s;
  *out = DeviceBuffer(p, free_device);
  return copy_to_device(p, host, bytes);
}

Status copy_to_device(void* device, const void* host, size_t bytes) {
  return cuda_status(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
}

Status copy_to_host(void* host, const void* device, size_t bytes) {
  if (Status s = device_synchronize(); !s.ok()) return s;
  return cuda_status(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
}

Status device_synchronize() { return cuda_status(cudaDeviceSynchronize(), "kernel execution"); }

}  // namespace tilegemm::harness
