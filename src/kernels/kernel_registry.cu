// The kernel table, config choice and launch: the GPU half of gemm().
#include <cuda_runtime.h>

#include <climits>

#include "kernels/aligned_copies.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/kernel_registry.hpp"
#include "schedule/tile_order.hpp"
#include "tune/autotuner.hpp"

namespace tilegemm::gpu {

const std::vector<Kernel>& kernels() {
  static const std::vector<Kernel> table = {naive_kernel(), smem_kernel(), tile2d_kernel(),
                                            warptile_kernel(), sm80_kernel(),
                                            sm90_kernel()};
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

const Kernel* find_kernel(const std::string& name) {
  for (const Kernel& k : kernels())
    if (k.info.name == name) return &k;
  return nullptr;
}

namespace {
// The order "auto" tries kernels in: fastest first.
constexpr const char* kAutoPreference[] = {"sm90", "sm80", "warptile"};

bool takes_dtype(const Kernel& k, DType d) {
  for (DType x : k.info.input_dtypes)
    if (x == d) return true;
  return false;
}
}  // namespace

const Kernel* auto_kernel(const GemmProblem& p) {
  for (const char* name : kAutoPreference) {
    const Kernel* k = find_kernel(name);
    if (k && k->can_implement(p, k->default_for(p.a.dtype)).empty()) return k;
  }
  return find_kernel("warptile");
}

std::string auto_kernel_note(const GemmProblem& p, const Kernel& chosen) {
  std::string note;
  for (const char* name : kAutoPreference) {
    const Kernel* k = find_kernel(name);
    if (k == &chosen) break;
    if (k == nullptr || !takes_dtype(*k, p.a.dtype)) continue;
    if (std::string why = k->can_implement(p, k->default_for(p.a.dtype)); !why.empty()) {
      note.append(note.empty() ? "" : "; ").append(name).append(" not used: ").append(why);
    }
  }
  return note;
}

Status launch(const Kernel& kernel, const GemmProblem& p, const KernelConfig& config) {
  if (std::string why = kernel.can_implement(p, config); !why.empty()) {
    return {StatusCode::invalid_argument, why};
  }
  if (num_tiles(p.m, p.n, config.block_m, config.block_n) > INT_MAX) {
    return {StatusCode::not_supported, "the problem has more output tiles than one launch holds"};
  }
  if (p.m == 0 || p.n == 0) return Status::success();
  return kernel.launch(make_gemm_args(p, config.group_size_m), config, p.stream);
}

namespace {

void fill_report(const GemmProblem& p, const GemmOptions& options,
                 const autotune::Choice& choice, const std::string& aligned_copies,
                 GemmReport* report) {
  if (report) {
    const bool automatic = options.kernel.empty() || options.kernel == "auto";
    *report = {Backend::gpu, choice.kernel->info.name, choice.config, choice.source,
               choice.source == "given" ? std::string() : autotune::to_string(choice.key),
               automatic ? auto_kernel_note(p, *choice.kernel) : std::string(), aligned_copies};
  }
}

}  // namespace

Status run(const GemmProblem& p, const GemmOptions& options, GemmReport* report) {
  // The copies come first: the kernel, the config and the tuning key are those of the problem
  // the kernel will read.
  AlignedCopies copies;
  if (Status s = copies.make(p, copy_plan(p, options)); !s.ok()) {
    return s;
  }
  const GemmProblem& q = copies.problem();
  autotune::Choice choice;
  if (Status s = autotune::choose(q, options, &choice); !s.ok()) return s;
  fill_report(q, options, choice, copies.description(), report);
  return launch(*choice.kernel, q, choice.config);
}

Status plan(const GemmProblem& p, const GemmOptions& options, GemmReport* report) {
  // The copies' addresses only need to be aligned stand-ins here: plan() reads no memory.
  const AlignedCopyPlan copies = copy_plan(p, options);
  const GemmProblem q =
      with_aligned_copies(p, copies, reinterpret_cast<void*>(kWorkspaceAlignment));
  autotune::Choice choice;
  if (Status s = autotune::choose(q, options, &choice, /*may_tune=*/false); !s.ok()) return s;
  if (std::string why = choice.kernel->can_implement(q, choice.config); !why.empty()) {
    return {StatusCode::invalid_argument, why};
  }
  fill_report(q, options, choice, describe(copies), report);
  return Status::success();
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
