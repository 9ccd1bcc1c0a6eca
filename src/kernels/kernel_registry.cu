// The kernel table, config choice and launch: the GPU half of gemm().
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>

#include "kernels/cuda_check.hpp"
#include "kernels/kernel_registry.hpp"
#include "schedule/tile_order.hpp"

namespace tilegemm::gpu {

const std::vector<Kernel>& kernels() {
  static const std::vector<Kernel> table = {naive_kernel(), smem_kernel(), tile2d_kernel(),
                                            warptile_kernel(), sm80_kernel()};
  return table;
}

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the "no device" error so later calls start clean
    return 0;
  }
  return count;
}

namespace {

int current_sm_count() {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    return 132;
  }
  return sms;
}

// The heuristic until the autotuner exists: the config with the largest tile that still gives
// every SM a program (larger tiles reuse each loaded byte more), else the one with the most
// programs. Among equal areas the tile whose aspect follows the problem's (tall for M > N).
KernelConfig default_config(const Kernel& kernel, const GemmProblem& p) {
  const int64_t sms = current_sm_count();
  std::vector<KernelConfig> by_area = kernel.info.configs;
  const bool tall = p.m > p.n;
  std::stable_sort(
      by_area.begin(), by_area.end(), [&](const KernelConfig& x, const KernelConfig& y) {
        const int64_t ax = int64_t(x.block_m) * x.block_n, ay = int64_t(y.block_m) * y.block_n;
        if (ax != ay) return ax > ay;
        return tall ? x.block_m > y.block_m : x.block_n > y.block_n;
      });
  for (const KernelConfig& c : by_area) {
    if (num_tiles(p.m, p.n, c.block_m, c.block_n) * p.batch_count >= sms) return c;
  }
  return by_area.back();
}

// "auto": the tensor-core kernel for the types it takes, when the device has one; else warptile.
const Kernel* find_kernel(const std::string& name);
const Kernel* auto_kernel(const GemmProblem& p) {
  const Kernel* sm80 = find_kernel("sm80");
  if (sm80 && sm80->can_implement(p, sm80->info.default_config).empty()) return sm80;
  return find_kernel("warptile");
}

const Kernel* find_kernel(const std::string& name) {
  for (const Kernel& k : kernels())
    if (k.info.name == name) return &k;
  return nullptr;
}

}  // namespace

Status run(const GemmProblem& p, const GemmOptions& options, GemmReport* report) {
  const bool automatic = options.kernel.empty() || options.kernel == "auto";
  const Kernel* kernel = automatic ? auto_kernel(p) : find_kernel(options.kernel);
  if (kernel == nullptr) {
    std::string list;
    for (const Kernel& k : kernels()) list += " " + k.info.name;
    return {StatusCode::invalid_argument,
            "kernel '" + options.kernel + "' does not exist; available: auto" + list};
  }
  KernelConfig config = options.config ? *options.config : default_config(*kernel, p);
  if (std::string why = kernel->can_implement(p, config); !why.empty()) {
    return {StatusCode::invalid_argument, why};
  }
  if (num_tiles(p.m, p.n, config.block_m, config.block_n) > INT_MAX) {
    return {StatusCode::not_supported, "the problem has more output tiles than one launch holds"};
  }
  if (report) *report = {Backend::gpu, kernel->info.name, config};
  if (p.m == 0 || p.n == 0) return Status::success();
  return kernel->launch(make_gemm_args(p, config.group_size_m), config, p.stream);
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
