// Generation 2: shared-memory tiles. A program stages a 32x32 tile of A and of B in shared memory
// per step of the K loop, and each of its 1024 threads computes one output from them.
//
// Hardware: CUDA cores, shared memory. Config: 32x32x32/g8/s1/w32.
// The idea: each element brought from global memory is now used 32 times (once per thread of a
// row or column of the tile) instead of once, cutting global traffic 32x against `naive`; the
// inner loop now waits on shared memory instead, two loads per FMA.
#include "kernels/cuda_check.hpp"
#include "kernels/kernel_registry.hpp"
#include "kernels/simt/simt_common.cuh"

namespace tilegemm::simt {
namespace {

constexpr int kTile = 32;

template <typename T>
__global__ void __launch_bounds__(kTile* kTile) smem_gemm(GemmArgs args) {
  __shared__ float tile_a[kTile][kTile];  // [m][k]
  __shared__ float tile_b[kTile][kTile];  // [k][n]
  const TileCoord tile = program_tile(args, kTile, kTile);
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row0 = tile.pid_m * kTile, col0 = tile.pid_n * kTile;
  for (int64_t batch = blockIdx.y; batch < args.batch_count; batch += gridDim.y) {
    float acc = 0.0f;
    for (int64_t k0 = 0; k0 < args.k; k0 += kTile) {
      // Masked loads: zeros outside the matrix keep the sum right at every edge.
      tile_a[ty][tx] = load_masked<T>(args.a, batch, row0 + ty, k0 + tx, args.m, args.k);
      tile_b[ty][tx] = load_masked<T>(args.b, batch, k0 + ty, col0 + tx, args.k, args.n);
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < kTile; ++kk) acc += tile_a[ty][kk] * tile_b[kk][tx];
      __syncthreads();  // the next step overwrites the tiles
    }
    if (row0 + ty < args.m && col0 + tx < args.n) {
      epilogue_store(args.epilogue, batch, row0 + ty, col0 + tx, acc);
    }
  }
}

Status launch(const GemmArgs& args, const KernelConfig&, gpu::Workspace& workspace) {
  return dispatch_input_type(args.a.dtype, [&](auto t) {
    smem_gemm<decltype(t)><<<program_grid(args, kTile, kTile), dim3(kTile, kTile), 0,
                             static_cast<cudaStream_t>(workspace.stream())>>>(args);
    return check_launch("smem_gemm");
  });
}

}  // namespace
}  // namespace tilegemm::simt

namespace tilegemm::gpu {
Kernel smem_kernel() {
  Kernel kernel = compiled_configs_kernel(
      "smem", "SIMT gen 2: 32x32 shared-memory tiles, one output per thread",
      simt::kSimtInputDtypes, {*parse_kernel_config("32x32x32/g8/s1/w32")}, simt::launch);
  kernel.production = false;  // a teaching generation: warptile supersedes it
  return kernel;
}
}  // namespace tilegemm::gpu
