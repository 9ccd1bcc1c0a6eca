// Generation 1: naive. One thread per output element, every operand read from global memory.
//
// Hardware: CUDA cores only. Config: 16x16 programs of 256 threads (16x16x1/g8/s1/w8).
// The idea: the plain triple loop, parallel over (m, n). Each A and B element is read from
// global memory by every thread that needs it (16 times per program), so this kernel is bound by
// load throughput; it is the baseline every later generation is measured against.
#include "kernels/cuda_check.hpp"
#include "kernels/kernel_registry.hpp"
#include "kernels/simt/simt_common.cuh"

namespace tilegemm::simt {
namespace {

constexpr int kBlock = 16;

template <typename T>
__global__ void __launch_bounds__(kBlock* kBlock) naive_gemm(GemmArgs args) {
  // Schedule: which output tile this program owns.
  const TileCoord tile = program_tile(args, kBlock, kBlock);
  const int64_t row = tile.pid_m * kBlock + threadIdx.y;
  const int64_t col = tile.pid_n * kBlock + threadIdx.x;  // x fastest: coalesced along N
  if (row >= args.m || col >= args.n) return;
  for (int64_t batch = blockIdx.y; batch < args.batch_count; batch += gridDim.y) {
    // Mainloop: the dot product of row `row` of A and column `col` of B.
    float acc = 0.0f;
    for (int64_t kk = 0; kk < args.k; ++kk) {
      acc += to_float(static_cast<const T*>(args.a.data)[args.a.offset(batch, row, kk)]) *
             to_float(static_cast<const T*>(args.b.data)[args.b.offset(batch, kk, col)]);
    }
    // Epilogue.
    epilogue_store(args.epilogue, batch, row, col, acc);
  }
}

Status launch(const GemmArgs& args, const KernelConfig&, gpu::Workspace& workspace) {
  return dispatch_input_type(args.a.dtype, [&](auto t) {
    naive_gemm<decltype(t)><<<program_grid(args, kBlock, kBlock), dim3(kBlock, kBlock), 0,
                              static_cast<cudaStream_t>(workspace.stream())>>>(args);
    return check_launch("naive_gemm");
  });
}

}  // namespace
}  // namespace tilegemm::simt

namespace tilegemm::gpu {
Kernel naive_kernel() {
  Kernel kernel = compiled_configs_kernel(
      "naive", "SIMT gen 1: one thread per output, operands from global memory",
      simt::kSimtInputDtypes, {*parse_kernel_config("16x16x1/g8/s1/w8")}, simt::launch);
  kernel.production = false;  // a teaching generation: warptile supersedes it
  return kernel;
}
}  // namespace tilegemm::gpu
