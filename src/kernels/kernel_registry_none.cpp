// The kernel table of a build without CUDA (TILEGEMM_CUDA=OFF): no kernels, no devices, so
// gemm() takes the CPU backend.
#include "kernels/kernel_registry.hpp"

namespace tilegemm::gpu {

const std::vector<Kernel>& kernels() {
  static const std::vector<Kernel> none;
  return none;
}

int device_count() { return 0; }

const Kernel* find_kernel(const std::string&) { return nullptr; }

}  // namespace tilegemm::gpu

namespace tilegemm {

std::vector<KernelInfo> available_kernels() { return {}; }

std::vector<DeviceInfo> devices() { return {}; }

}  // namespace tilegemm
