// Generation 4: warp tiling -- config matching and launch. The kernel is in warptile.cuh.
#include "kernels/simt/warptile.cuh"
#include "problem/alignment.hpp"

namespace tilegemm::simt::warptile {
namespace {

Status launch(const GemmArgs& args, const KernelConfig& config, gpu::Workspace& workspace) {
  // 16-byte loads need the base pointer, leading dimension and batch stride to be multiples of
  // 16 bytes.
  const bool vector = vector_aligned(args.a, 4) && vector_aligned(args.b, 4);
  return launch_config(args, config, vector, static_cast<cudaStream_t>(workspace.stream()));
}

}  // namespace
}  // namespace tilegemm::simt::warptile

namespace tilegemm::gpu {
Kernel warptile_kernel() {
  return compiled_configs_kernel("warptile",
                                 "SIMT gen 4: warp tiles, a cp.async ring num_stages deep "
                                 "(production fp32)",
                                 {DType::fp32}, configs_of<simt::warptile::Shapes>(),
                                 simt::warptile::launch);
}
}  // namespace tilegemm::gpu
