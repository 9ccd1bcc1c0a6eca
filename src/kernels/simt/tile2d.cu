// Generation 3: 2-D register tiling. A 128x128 program, 256 threads, each computing an 8x8 block
// of outputs from registers.
//
// Hardware: CUDA cores, shared memory. Config: 128x128x8/g8/s1/w8.
// The idea: per K step a thread loads 8 values of A and 8 of B from shared memory into registers
// and does 64 FMAs with them (outer product), so shared-memory traffic per FMA drops from 2 loads
// to 1/4. A is stored transposed ([k][m]) so both fragments are contiguous rows of shared memory.
#include "kernels/cuda_check.hpp"
#include "kernels/kernel_registry.hpp"
#include "kernels/simt/simt_common.cuh"

namespace tilegemm::simt {
namespace {

constexpr int BM = 128, BN = 128, BK = 8;  // BLOCK_SIZE_M/N/K
constexpr int TM = 8, TN = 8;              // outputs per thread
constexpr int kThreads = (BM / TM) * (BN / TN);
static_assert(BM * BK % kThreads == 0 && BK * BN % kThreads == 0, "tiles split evenly");

template <typename T>
__global__ void __launch_bounds__(kThreads) tile2d_gemm(GemmArgs args) {
  __shared__ float tile_a[BK][BM];  // transposed: [k][m]
  __shared__ float tile_b[BK][BN];  // [k][n]
  const TileCoord tile = program_tile(args, BM, BN);
  const int64_t row0 = tile.pid_m * BM, col0 = tile.pid_n * BN;
  const int thread_row = threadIdx.x / (BN / TN), thread_col = threadIdx.x % (BN / TN);

  for (int64_t batch = blockIdx.y; batch < args.batch_count; batch += gridDim.y) {
    float acc[TM][TN] = {};
    float frag_a[TM], frag_b[TN];
    for (int64_t k0 = 0; k0 < args.k; k0 += BK) {
      // Global -> shared, masked. Consecutive threads take consecutive k for A and n for B.
#pragma unroll
      for (int i = 0; i < BM * BK / kThreads; ++i) {
        const int e = threadIdx.x + i * kThreads;
        tile_a[e % BK][e / BK] =
            load_masked<T>(args.a, batch, row0 + e / BK, k0 + e % BK, args.m, args.k);
      }
#pragma unroll
      for (int i = 0; i < BK * BN / kThreads; ++i) {
        const int e = threadIdx.x + i * kThreads;
        tile_b[e / BN][e % BN] =
            load_masked<T>(args.b, batch, k0 + e / BN, col0 + e % BN, args.k, args.n);
      }
      __syncthreads();
      // Outer products from registers.
#pragma unroll
      for (int kk = 0; kk < BK; ++kk) {
#pragma unroll
        for (int i = 0; i < TM; ++i) frag_a[i] = tile_a[kk][thread_row * TM + i];
#pragma unroll
        for (int j = 0; j < TN; ++j) frag_b[j] = tile_b[kk][thread_col * TN + j];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] += frag_a[i] * frag_b[j];
      }
      __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
#pragma unroll
      for (int j = 0; j < TN; ++j) {
        const int64_t row = row0 + thread_row * TM + i, col = col0 + thread_col * TN + j;
        if (row < args.m && col < args.n) epilogue_store(args.epilogue, batch, row, col, acc[i][j]);
      }
    }
  }
}

Status launch(const GemmArgs& args, const KernelConfig&, gpu::Workspace& workspace) {
  return dispatch_input_type(args.a.dtype, [&](auto t) {
    tile2d_gemm<decltype(t)><<<program_grid(args, BM, BN), kThreads, 0,
                               static_cast<cudaStream_t>(workspace.stream())>>>(args);
    return check_launch("tile2d_gemm");
  });
}

}  // namespace
}  // namespace tilegemm::simt

namespace tilegemm::gpu {
Kernel tile2d_kernel() {
  Kernel kernel = compiled_configs_kernel(
      "tile2d", "SIMT gen 3: 128x128 tiles, 8x8 outputs per thread in registers",
      simt::kSimtInputDtypes, {*parse_kernel_config("128x128x8/g8/s1/w8")}, simt::launch);
  kernel.production = false;  // a teaching generation: warptile supersedes it
  return kernel;
}
}  // namespace tilegemm::gpu
