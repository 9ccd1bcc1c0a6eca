// The sm80 kernel's compile-time shapes and its shared-memory size: host and device.
#pragma once

#include <cstdint>
#include <tuple>

#include "common/host_device.hpp"
#include "kernels/sm80/smem_swizzle.hpp"
#include "tilegemm/config.hpp"

namespace tilegemm::sm80 {

// BLOCK_SIZE_M x BLOCK_SIZE_N x BLOCK_SIZE_K, the warp tile WM x WN, num_stages.
template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_>
struct Sm80Shape {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, kStages = STAGES_;
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must cover the block tile");
  static_assert(WM % 16 == 0 && WN % 16 == 0, "a warp tile is whole 16x16 mma/ldmatrix blocks");
  static_assert(BK % 16 == 0, "BLOCK_SIZE_K must be whole 16-element mma steps");
  static_assert(kStages >= 2, "a pipeline needs at least two stages");

  static KernelConfig config() {
    return {.block_m = BM,
            .block_n = BN,
            .block_k = BK,
            .group_size_m = 8,
            .num_stages = kStages,
            .num_warps = kThreads / 32,
            .warp_m = WM,
            .warp_n = WN};
  }
};

// Compiled shapes. The first seven, for fp16, bf16 and tf32, are the Triton tutorial's autotune
// list mapped to warp tiles and a second 8-warp shape for tall problems, those that win somewhere
// in the tuning table (src/tune/h100_table.json); the first is the default, compiled for every
// type and copy path. The last four have 3 stages of 128-byte slices, on the cp.async path only
// (compiled_for): BLOCK_SIZE_K 64 for 16-bit inputs, half the barriers per mma (+4-10 % at 4096^3
// and 8192^3); and its tf32 form, 128x128x32, small enough for two programs per SM.
using Shapes = std::tuple<Sm80Shape<128, 128, 32, 64, 64, 4>,   // w4
                          Sm80Shape<128, 64, 32, 64, 32, 4>,    // w4
                          Sm80Shape<64, 128, 32, 32, 64, 4>,    // w4
                          Sm80Shape<128, 32, 32, 32, 32, 4>,    // w4
                          Sm80Shape<64, 32, 32, 32, 32, 5>,     // w2
                          Sm80Shape<32, 64, 32, 32, 32, 5>,     // w2
                          Sm80Shape<256, 128, 32, 64, 64, 4>,   // w8, cp.async only
                          Sm80Shape<128, 256, 64, 64, 64, 3>,   // w8, 16-bit + cp.async only
                          Sm80Shape<256, 128, 64, 64, 64, 3>,   // w8, 16-bit + cp.async only
                          Sm80Shape<128, 128, 64, 64, 64, 3>,   // w4, 16-bit + cp.async only
                          Sm80Shape<128, 128, 32, 64, 64, 3>>;  // w4, tf32 + cp.async only

// Whether a shape is compiled for an input type (element_size bytes in memory) and copy path:
// BLOCK_SIZE_K 32 at 4 stages or more for every type on the cp.async path, and on the staged path
// for tiles up to 128 x 128 (it runs the problems below the aligned-copy threshold, whose rows
// are not 16-byte aligned: small ones, which the rules give small tiles); 3 stages only with
// 128-byte slices on the cp.async path (see Shapes). The kernel's can_implement refuses the rest,
// by name (sm80.cu).
TILEGEMM_HOST_DEVICE constexpr bool compiled_for(int block_m, int block_n, int block_k, int stages,
                                                 int element_size, bool async) {
  if (stages == 3) return async && block_k * element_size == 128;
  return block_k <= 32 && (async || block_m * block_n <= 128 * 128);
}

// Dynamic shared memory of a config: the num_stages pipeline stages, or the epilogue's
// BM x (BN + 8) fp32 tile that reuses them, whichever is larger. The 8 floats of padding put the
// 8 rows a warp writes in one store on 4 different bank offsets. For tf32 the stages are counted
// with both operands' rows padded, the most any layout takes.
constexpr int kEpiloguePad = 8;
constexpr int64_t shared_bytes(int bm, int bn, int bk, int stages, int element_size) {
  const int64_t row_pads = element_size == 4 ? 2 * int64_t(kRowPadBytes) * bk : 0;
  const int64_t pipeline = int64_t(stages) * ((bm + bn) * bk * element_size + row_pads);
  const int64_t epilogue = int64_t(bm) * (bn + kEpiloguePad) * 4;
  return pipeline > epilogue ? pipeline : epilogue;
}

}  // namespace tilegemm::sm80
