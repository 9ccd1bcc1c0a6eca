// The Hopper kernel: config matching, the checks that decide whether TMA can take a problem, and
// launch. The kernel is in sm90.cuh; its instantiations in sm90_<fp16|bf16>.cu.
#include <climits>

#include "kernels/sm90/sm90.cuh"

namespace tilegemm::sm90 {
namespace {

Status launch(const GemmArgs& args, const KernelConfig& config, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  return args.a.dtype == DType::fp16 ? launch_for_type<__half>(args, config, s)
                                     : launch_for_type<__nv_bfloat16>(args, config, s);
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

// Empty when TMA can describe both operands (what the sm90 kernel needs beyond its config).
std::string problem_check(const GemmProblem& p) {
  if (p.k == 0) return "kernel sm90 needs K > 0 (K = 0 is the epilogue alone)";
  const GemmArgs args = make_gemm_args(p, 8);
  if (std::string why = tma_check(operand_a(args), "a"); !why.empty()) return "kernel sm90: " + why;
  if (std::string why = tma_check(operand_b(args), "b"); !why.empty()) return "kernel sm90: " + why;
  // The kernel counts its work items (tiles of every batch entry) in 32 bits; 64 rows is the
  // smallest tile of any compiled config.
  if (num_tiles(p.m, p.n, 64, 64) * p.batch_count > INT32_MAX) {
    return "kernel sm90: more than 2^31 tiles (M x N x batch_count too large)";
  }
  return {};
}

}  // namespace
}  // namespace tilegemm::sm90

namespace tilegemm::gpu {
Kernel sm90_kernel() {
  Kernel kernel = compiled_configs_kernel(
      "sm90", "Hopper: TMA + wgmma, warp-specialised, persistent (fp16, bf16; sm_90a)",
      {DType::fp16, DType::bf16}, configs_of<sm90::Shapes>(), sm90::launch);
  kernel.tensor_cores = true;
  kernel.persistent = true;
  kernel.shared_bytes = [](const KernelConfig& c, DType) {
    return sm90::shared_bytes(c.block_m, c.block_n, c.num_stages, c.split_k, ping_pong(c));
  };
  kernel.can_implement = [config_check = kernel.can_implement](const GemmProblem& p,
                                                               const KernelConfig& c) {
    if (std::string why = config_check(p, c); !why.empty()) return why;
    if (std::string why = sm90::problem_check(p); !why.empty()) return why;
    return sm90::device_check();
  };
  return kernel;
}
}  // namespace tilegemm::gpu
