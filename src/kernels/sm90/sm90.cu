// The Hopper kernel: config matching, the checks that decide whether TMA can take a problem, and
// launch. The kernel is in sm90.cuh; its instantiations in sm90_<fp16|bf16|tf32>.cu.
#include <climits>

#include "kernels/sm90/sm90.cuh"

namespace tilegemm::sm90 {
namespace {

Status launch(const GemmArgs& args, const KernelConfig& config, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  switch (args.a.dtype) {
    case DType::fp16:
      return launch_for_type<__half>(args, config, s);
    case DType::bf16:
      return launch_for_type<__nv_bfloat16>(args, config, s);
    default:  // tf32: fp32 in memory
      return launch_for_type<float>(args, config, s);
  }
}

// wgmma and setmaxnreg exist only on compute capability 9.0 and only in sm_90a machine code.
std::string device_check() {
  int major = 0, minor = 0;
  if (!current_compute_capability(&major, &minor)) {
    return "kernel sm90: cannot read the device's compute capability";
  }
  if (major != 9 || minor != 0) {
    return "kernel sm90 needs a Hopper GPU (compute capability 9.0; this device is " +
           std::to_string(major) + "." + std::to_string(minor) + "); use --kernel sm80";
  }
  static const int binary = compiled_binary_version();
  if (binary != 90) {
    return "kernel sm90: this build has no sm_90a code (configure with CMAKE_CUDA_ARCHITECTURES "
           "including 90a)";
  }
  return {};
}

// Empty when TMA can describe both operands (what the sm90 kernel needs beyond its config), and
// for tf32 both are K-major.
std::string problem_check(const GemmProblem& p) {
  if (p.k == 0) return "kernel sm90 needs K > 0 (K = 0 is the epilogue alone)";
  const GemmArgs args = make_gemm_args(p, 8);
  const OperandShape a = operand_a(args), b = operand_b(args);
  if (std::string why = tma_check(a, "a"); !why.empty()) return "kernel sm90: " + why;
  if (std::string why = tma_check(b, "b"); !why.empty()) return "kernel sm90: " + why;
  if (p.a.dtype == DType::tf32 && (a.mn_major || b.mn_major)) {
    return std::string(
               "kernel sm90: tf32 needs K-major operands (row-major A, column-major B): "
               "wgmma reads tf32 K-major only; here ") +
           (a.mn_major ? "A is column-major" : "B is row-major") +
           " (larger problems get a transposed copy first)";
  }
  // The kernel counts its work items (tiles of every batch entry) in 32 bits; 64 rows is the
  // smallest tile of any compiled config.
  if (num_tiles(p.m, p.n, 64, 64) * p.batch_count > INT32_MAX) {
    return "kernel sm90: more than 2^31 tiles (M x N x batch_count too large)";
  }
  return {};
}

// Each config is compiled for one stage width of 128 bytes: BLOCK_SIZE_K 64 for fp16 and bf16, 32
// for tf32.
std::string compiled_check(const GemmProblem& p, const KernelConfig& c) {
  const int block_k = block_k_for(dtype_size(p.a.dtype));  // tf32: fp32 in memory
  if (c.block_k == block_k) return {};
  return "kernel sm90: " + std::string(to_string(p.a.dtype)) + " takes configs with BLOCK_SIZE_K " +
         std::to_string(block_k) + " (128 bytes of K per stage), not " + std::to_string(c.block_k);
}

}  // namespace
}  // namespace tilegemm::sm90

namespace tilegemm::gpu {
namespace {
// The 16-bit configs first (the first is the kernel's default), then tf32's.
std::vector<KernelConfig> all_configs() {
  std::vector<KernelConfig> configs = configs_of<sm90::Shapes>();
  for (const KernelConfig& c : configs_of<sm90::Tf32Shapes>()) configs.push_back(c);
  return configs;
}
}  // namespace

Kernel sm90_kernel() {
  Kernel kernel = compiled_configs_kernel(
      "sm90", "Hopper: TMA + wgmma, warp-specialised, persistent (fp16, bf16, tf32; sm_90a)",
      {DType::fp16, DType::bf16, DType::tf32}, all_configs(), sm90::launch);
  kernel.tensor_cores = true;
  kernel.persistent = true;
  kernel.type_defaults[DType::tf32] = configs_of<sm90::Tf32Shapes>().front();
  kernel.shared_bytes = [](const KernelConfig& c, DType) {
    return sm90::shared_bytes(c.block_m, c.block_n, c.num_stages, c.split_k, ping_pong(c));
  };
  kernel.can_implement = [config_check = kernel.can_implement](const GemmProblem& p,
                                                               const KernelConfig& c) {
    if (std::string why = config_check(p, c); !why.empty()) return why;
    if (std::string why = sm90::compiled_check(p, c); !why.empty()) return why;
    if (std::string why = sm90::problem_check(p); !why.empty()) return why;
    return sm90::device_check();
  };
  return kernel;
}
}  // namespace tilegemm::gpu
