// Generation 4: warp tiling -- config matching and launch. The kernel is in warptile.cuh; its
// instantiations are compiled per input type in warptile_fp32.cu, warptile_fp16.cu and
// warptile_bf16.cu.
#include "kernels/simt/warptile.cuh"
#include "problem/alignment.hpp"

namespace tilegemm::simt::warptile {
namespace {

Status launch(const GemmArgs& args, const KernelConfig& config, void* stream) {
  return dispatch_input_type(args.a.dtype, [&](auto t) -> Status {
    using T = decltype(t);
    // 16-byte loads need the base pointer, leading dimension and batch stride to be multiples of
    // 16 bytes.
    const bool vector = vector_aligned(args.a, sizeof(T)) && vector_aligned(args.b, sizeof(T));
    return launch_for_type<T>(args, config, vector, static_cast<cudaStream_t>(stream));
  });
}

}  // namespace
}  // namespace tilegemm::simt::warptile

namespace tilegemm::gpu {
Kernel warptile_kernel() {
  return compiled_configs_kernel("warptile",
                                 "SIMT gen 4: warp tiles, cp.async (fp32) or 16-byte loads, K loop "
                                 "num_stages deep (production fp32)",
                                 simt::kSimtInputDtypes, configs_of<simt::warptile::Shapes>(),
                                 simt::warptile::launch);
}
}  // namespace tilegemm::gpu
