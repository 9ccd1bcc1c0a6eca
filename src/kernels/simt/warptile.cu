// Generation 4: warp tiling -- config matching and launch. The kernel is in warptile.cuh; its
// instantiations are compiled per input type in warptile_fp32.cu, warptile_fp16.cu and
// warptile_bf16.cu.
#include "kernels/simt/warptile.cuh"
#include "problem/alignment.hpp"

namespace tilegemm::simt::warptile {
namespace {

// 16-byte loads need the base pointer, leading dimension and batch stride to be multiples of
// 16 bytes (the in-tile offsets along the contiguous dimension are multiples of the vector).
bool operand_vector_aligned(const MatrixView& v, int element_size) {
  const int64_t ld = v.stride.row == 1 ? v.stride.col : v.stride.row;
  return vector_aligned(v.data, ld, v.batch_stride, element_size);
}

Status launch(const GemmArgs& args, const KernelConfig& config, void* stream) {
  return dispatch_input_type(args.a.dtype, [&](auto t) -> Status {
    using T = decltype(t);
    const bool vector =
        operand_vector_aligned(args.a, sizeof(T)) && operand_vector_aligned(args.b, sizeof(T));
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
