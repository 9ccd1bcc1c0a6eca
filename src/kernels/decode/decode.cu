// The decode kernel's registry entry: what it takes and how it launches. The kernel is in
// decode_kernel.cuh, its launcher in launch.cuh; its instantiations are compiled per input type
// in decode_<fp16|bf16>.cu.
#include <climits>

#include "kernels/decode/launch.cuh"

namespace tilegemm::decode {
namespace {

// The 16-bit input types' launcher (can_implement refuses the rest).
Status launch_or_count(const GemmArgs& args, const KernelConfig& config, gpu::Workspace* workspace,
                       size_t* bytes) {
  const bool aligned = sm80::d_takes_vector_stores(args);  // either orientation alike
  return args.a.dtype == DType::fp16
             ? launch_for_element<Fp16>(args, config, aligned, workspace, bytes)
             : launch_for_element<Bf16>(args, config, aligned, workspace, bytes);
}

Status launch(const GemmArgs& args, const KernelConfig& config, gpu::Workspace& workspace) {
  return launch_or_count(args, config, &workspace, nullptr);
}

size_t workspace_bytes(const GemmArgs& args, const KernelConfig& config) {
  size_t bytes = 0;
  return launch_or_count(args, config, nullptr, &bytes).ok() ? bytes : 0;
}

// What the kernel needs of a problem besides a compiled config: the config of its copy path
// (cp.async for rows of A and B that are 16-byte aligned, the staged path for the rest;
// compiled_shapes.hpp), a work list that the schedule's 32-bit items count, and sm_80.
std::string problem_check(const GemmProblem& p, const KernelConfig& c) {
  const GemmArgs args = oriented(make_gemm_args(p, c.group_size_m), c.block_m);
  const bool aligned = sm80::takes_cp_async(args);
  if (aligned != takes_async_path(c.num_stages)) {
    std::string why = "kernel decode: config " + to_string(c);
    return why + (aligned ? " is the staged path's (element loads), for A and B whose rows are not "
                            "16-byte aligned; these rows are: the cp.async config (more than 2 "
                            "stages) takes them"
                          : " reads A and B by cp.async: their base pointers, leading dimensions "
                            "and batch strides must be multiples of 16 bytes (the 2-stage config "
                            "takes the rest)");
  }
  if (num_tiles(args.m, args.n, c.block_m, c.block_n) * p.batch_count > INT_MAX) {
    return "kernel decode: more than 2^31 - 1 tiles of " + to_string(c) + " (batch_count " +
           std::to_string(p.batch_count) + ")";
  }
  return {};
}

// mma.sync, cp.async and ldmatrix need compute capability 8.0.
std::string device_check() { return compute_capability_check("decode", 8); }

}  // namespace
}  // namespace tilegemm::decode

namespace tilegemm::gpu {
Kernel decode_kernel() {
  Kernel kernel = compiled_configs_kernel(
      "decode",
      "few rows or columns (M or N up to 16): mma.sync + cp.async ring 8 deep (element loads "
      "where rows are not 16-byte aligned), K split across the programs so that every SM "
      "streams the large operand (fp16, bf16)",
      {DType::fp16, DType::bf16}, configs_of<decode::Shapes>(), decode::launch);
  kernel.tensor_cores = true;
  kernel.workspace_bytes = decode::workspace_bytes;
  kernel.shared_bytes = [](const KernelConfig& c, DType dtype) {
    return sm80::shared_bytes(c.block_m, c.block_n, c.block_k, c.num_stages, dtype_size(dtype));
  };
  kernel.can_implement_anywhere = [config_check = kernel.can_implement](const GemmProblem& p,
                                                                        const KernelConfig& c) {
    if (std::string why = config_check(p, c); !why.empty()) return why;
    return decode::problem_check(p, c);
  };
  kernel.can_implement = [anywhere = kernel.can_implement_anywhere](const GemmProblem& p,
                                                                    const KernelConfig& c) {
    if (std::string why = anywhere(p, c); !why.empty()) return why;
    return decode::device_check();
  };
  return kernel;
}
}  // namespace tilegemm::gpu
