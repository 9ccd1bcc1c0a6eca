// The shapes the sm90 kernel is compiled for, each for fp16 and bf16, and all but the clusters
// along N for tf32. Host and device. Why these (the measurements are in docs/history/):
//
//   128x256, 256x128   the most tensor-core work per byte loaded, four stages (three lose 1-13 %
//                      on every shape tried, though they leave room for a whole part of D in the
//                      store buffers); listed before 128x128, so the rules take them on a tie
//   128x192            16-bit inputs, for mid sizes, where 128x256 leaves SMs idle and 128x128
//                      gives some a second tile (1536^2: 96 tiles in one round, where 128x128 has
//                      144 and 128x256 72); four stages and room for a whole part of a 16-bit D
//                      in the store buffers
//   128x128, 128x64    more tiles than SMs for small and skinny problems
//   64x128             one consumer (m64n128 wgmma): as many tiles as 128x64, and faster where the
//                      problem is square or wide
//   64x64              two slabs per stage (BLOCK_SIZE_K 128 for 16-bit inputs): for problems whose
//                      larger tiles leave SMs idle, each program then loads the fewest bytes
//   /c2                a cluster of 2 along M: B multicast, read from L2 once for two programs;
//                      for 16-bit operands whose lines are off 128-byte boundaries, where each box
//                      row costs two L2 lines and the K loop waits on L2
//   /c2x2              A multicast too: the same, over six waves of tiles or more
//   pingpong           128x128, the two consumers taking whole tiles in turn: for an epilogue
//                      beyond alpha * AB over a short K, which it runs during the other's mainloop
//
// Each is compiled for the four operand majors (tf32, fp8: K-major only) and twice, for the plain
// TMA route and for the whole epilogue (sm90_kernel.cuh: PLAIN). The first is the default config.
// Tiles 192 wide are for 16-bit inputs only: tf32 and fp8 have no m64n192 wrapper, and fp8's
// promotion units are 128 columns wide (kernel_shape.hpp).
// fp8 (BLOCK_SIZE_K 128) takes the shapes of one slab per stage, without clusters along N or the
// ping-pong schedule, and clusters of 2 along M on 128-row tiles only: each fp8 input pair is
// compiled twice more (with and without promotion), so the list is kept to the tiles the rules
// pick for large and mid-size problems. With promotion a consumer holds one unit of sums (64 x 128
// at most) beside its accumulators, or two where a K step is one unit (the lookahead):
// kPromotionRegisters of fp32 values at most, of the 232 registers a consumer thread has, leave
// room for the epilogue's addresses and the scales.
#pragma once

#include <array>

#include "kernels/sm90/kernel_shape.hpp"

namespace tilegemm::sm90 {

inline constexpr Sm90Shape kPingPong{
    .block_m = 128, .block_n = 128, .num_stages = 5, .schedule = KernelSchedule::ping_pong};

inline constexpr Sm90Shape kCompiledShapes[] = {
    {.block_m = 128, .block_n = 256, .num_stages = 4},
    {.block_m = 128, .block_n = 256, .num_stages = 4, .cluster_m = 2},
    {.block_m = 256, .block_n = 128, .num_stages = 4},
    {.block_m = 256, .block_n = 128, .num_stages = 4, .cluster_m = 2},
    {.block_m = 128, .block_n = 192, .num_stages = 4},
    {.block_m = 128, .block_n = 128, .num_stages = 6},
    {.block_m = 128, .block_n = 128, .num_stages = 6, .cluster_m = 2},
    {.block_m = 128, .block_n = 64, .num_stages = 8},
    {.block_m = 64, .block_n = 128, .num_stages = 8},
    {.block_m = 64, .block_n = 128, .num_stages = 8, .cluster_m = 2},
    {.block_m = 64, .block_n = 64, .num_stages = 6, .k_slabs = 2},
    kPingPong,
    {.block_m = 128, .block_n = 256, .num_stages = 4, .cluster_m = 2, .cluster_n = 2},
    {.block_m = 64, .block_n = 128, .num_stages = 8, .cluster_m = 2, .cluster_n = 2},
};

// Whether a shape is compiled for inputs of `element_bytes`, with promotion or without (fp8, and
// tf32 for tf32x3): clusters along N are for 16-bit operands off L2 lines (tune/heuristic.cpp);
// fp8's list is above, and promoting tf32 takes the same. Tiles 192 wide: 16-bit only.
constexpr bool shape_compiled_for(const Sm90Shape& shape, int element_bytes,
                                  bool promotes = false) {
  if (shape.block_n == 192 && (element_bytes != 2 || promotes)) return false;
  if (element_bytes == 1 || promotes) {
    const bool fits = !promotes || shape.promotion_registers() <= kPromotionRegisters;
    return shape.cluster_n == 1 && !shape.ping_pong() && shape.k_slabs == 1 &&
           (shape.cluster_m == 1 || shape.block_m == 128) && fits;
  }
  return element_bytes == 2 || shape.cluster_n == 1;
}

// The shapes the grouped kernel (sm90_grouped_kernel.cuh) is compiled for, 16-bit inputs only:
// programs on their own with two consumers for groups of many rows, and 64x128 for groups of
// few (decode).
inline constexpr Sm90Shape kGroupedShapes[] = {
    {.block_m = 128, .block_n = 256, .num_stages = 4},
    {.block_m = 128, .block_n = 128, .num_stages = 6},
    {.block_m = 64, .block_n = 128, .num_stages = 8},
};

// The compiled shapes for inputs of `element_bytes` (with promotion or without), in the order
// above.
template <int kElementBytes, bool kPromotes = false>
constexpr auto compiled_shapes() {
  constexpr int count = [] {
    int n = 0;
    for (const Sm90Shape& s : kCompiledShapes) n += shape_compiled_for(s, kElementBytes, kPromotes);
    return n;
  }();
  std::array<Sm90Shape, count> out{};
  int i = 0;
  for (const Sm90Shape& s : kCompiledShapes)
    if (shape_compiled_for(s, kElementBytes, kPromotes)) out[i++] = s;
  return out;
}

}  // namespace tilegemm::sm90
