// The sm80 tensor-core kernel's registry entry: config matching and the copy-path choice. The
// kernel is in sm80_kernel.cuh, its launcher in launch.cuh; its instantiations are compiled per
// input type and copy path in sm80_<fp16|bf16|tf32>_<async|staged>.cu.
#include "kernels/sm80/launch.cuh"

namespace tilegemm::sm80 {
namespace {

Status launch(const GemmArgs& args, const KernelConfig& config, gpu::Workspace& workspace) {
  const bool async_copy = takes_cp_async(args);  // else the staged path
  const bool d_aligned = d_takes_vector_stores(args);
  const auto s = static_cast<cudaStream_t>(workspace.stream());
  return with_element(args.a.dtype, [&](auto element) {
    using E = decltype(element);
    return async_copy ? launch_for_element<E, true>(args, config, d_aligned, s)
                      : launch_for_element<E, false>(args, config, d_aligned, s);
  });
}

// mma.sync with these shapes, cp.async and ldmatrix need compute capability 8.0.
std::string device_check() {
  return compute_capability_check("sm80", 8, "; use --kernel warptile");
}

// The 3-stage shapes are compiled for one input type each, on the cp.async path; the tiles larger
// than 128 x 128 for the cp.async path alone (compiled_for).
std::string compiled_check(const GemmProblem& p, const KernelConfig& c) {
  const int element_size = dtype_size(p.a.dtype);  // tf32: fp32 in memory
  if (!compiled_for(c.block_m, c.block_n, c.block_k, c.num_stages, element_size, true)) {
    return "kernel sm80: 3-stage configs are compiled for 128-byte K slices (BLOCK_SIZE_K 64 for "
           "fp16 and bf16, 32 for tf32); for " +
           std::string(to_string(p.a.dtype)) + " take another config";
  }
  if (!compiled_for(c.block_m, c.block_n, c.block_k, c.num_stages, element_size, false) &&
      !takes_cp_async(make_gemm_args(p, c.group_size_m))) {
    return "kernel sm80: " + to_string(c) +
           " needs 16-byte aligned rows of A and B (cp.async): 3-stage configs and tiles larger "
           "than 128 x 128 are compiled for that path alone; take a smaller 4-stage config";
  }
  return {};
}

}  // namespace
}  // namespace tilegemm::sm80

namespace tilegemm::gpu {
Kernel sm80_kernel() {
  Kernel kernel = compiled_configs_kernel(
      "sm80", "tensor cores: mma.sync + cp.async pipeline num_stages deep (fp16, bf16, tf32)",
      {DType::fp16, DType::bf16, DType::tf32}, configs_of<sm80::Shapes>(), sm80::launch);
  kernel.tensor_cores = true;
  kernel.shared_bytes = [](const KernelConfig& c, DType dtype) {
    return sm80::shared_bytes(c.block_m, c.block_n, c.block_k, c.num_stages, dtype_size(dtype));
  };
  kernel.can_implement = [config_check = kernel.can_implement](const GemmProblem& p,
                                                               const KernelConfig& c) {
    if (std::string why = config_check(p, c); !why.empty()) return why;
    if (std::string why = sm80::compiled_check(p, c); !why.empty()) return why;
    return sm80::device_check();
  };
  return kernel;
}
}  // namespace tilegemm::gpu
