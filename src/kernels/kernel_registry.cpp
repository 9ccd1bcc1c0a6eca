// The kernel table, and the devices it runs on.
#include "kernels/kernel_registry.hpp"

#include <cuda_runtime.h>

namespace tilegemm::gpu {

const std::vector<Kernel>& kernels() {
  static const std::vector<Kernel> table = {naive_kernel(),    smem_kernel(), tile2d_kernel(),
                                            warptile_kernel(), sm80_kernel(), sm90_kernel(),
                                            decode_kernel()};
  return table;
}

int device_count() {
  // Asked once: the devices a process sees are fixed when CUDA starts in it (and gemm() asks on
  // every call).
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // clear the "no device" error so later calls start clean
      return 0;
    }
    return n;
  }();
  return count;
}

const Kernel* find_kernel(const std::string& name) {
  for (const Kernel& k : kernels())
    if (k.info.name == name) return &k;
  return nullptr;
}

}  // namespace tilegemm::gpu

namespace tilegemm {

std::vector<KernelInfo> available_kernels() {
  std::vector<KernelInfo> infos;
  for (const auto& k : gpu::kernels()) infos.push_back(k.info);
  return infos;
}

std::vector<DeviceInfo> devices() {
  std::vector<DeviceInfo> out;
  const int count = gpu::device_count();
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    DeviceInfo d;
    d.index = i;
    d.name = prop.name;
    d.sm_count = prop.multiProcessorCount;
    d.compute_capability_major = prop.major;
    d.compute_capability_minor = prop.minor;
    d.l2_bytes = prop.l2CacheSize;
    d.shared_memory_per_block_optin = int64_t(prop.sharedMemPerBlockOptin);
    d.global_memory_bytes = int64_t(prop.totalGlobalMem);
    out.push_back(d);
  }
  return out;
}

}  // namespace tilegemm
