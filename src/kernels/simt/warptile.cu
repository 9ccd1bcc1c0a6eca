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
    if (!launch_for_type<T>(args, config, vector, static_cast<cudaStream_t>(stream))) {
      return {StatusCode::not_supported,
              "warptile: config " + to_string(config) + " is not compiled"};
    }
    return check_launch("warptile_gemm");
  });
}

std::vector<KernelConfig> compiled_configs() {
  return std::apply([](auto... shapes) { return std::vector{decltype(shapes)::config()...}; },
                    Shapes{});
}

}  // namespace
}  // namespace tilegemm::simt::warptile

namespace tilegemm::gpu {
Kernel warptile_kernel() {
  return compiled_configs_kernel(
      "warptile", "SIMT gen 4: warp tiles, 16-byte loads, double-buffered K loop (production fp32)",
      simt::kSimtInputDtypes, simt::warptile::compiled_configs(), simt::warptile::launch);
}
}  // namespace tilegemm::gpu
