// The L2 model of seeds 000/004 in numbers: the programs that run at the same time (a "wave")
// read some A row-blocks and some B column-blocks; if L2 keeps every block while the wave runs,
// each is fetched from memory once, and the fewer distinct blocks a wave touches, the fewer bytes
// it needs. `tilegemm explain` prints this for one shape; the rules use it to pick GROUP_SIZE_M
// for the persistent kernel, whose wave is exactly one program per SM. Host only.
#pragma once

#include <cstdint>
#include <set>

#include "schedule/tile_order.hpp"

namespace tilegemm {

struct WaveBlocks {
  int64_t row_blocks = 0, col_blocks = 0;  // distinct A row-blocks and B column-blocks
  // Elements of A and B the wave reads, each block once: (rows * BM + cols * BN) * K.
  double elements(int64_t block_m, int64_t block_n, int64_t k) const {
    return double(row_blocks * block_m + col_blocks * block_n) * double(k);
  }
};

// The blocks programs [first, first + count) read in grouped order with `group_size_m` (1 is
// row-major order).
inline WaveBlocks wave_blocks(int64_t m, int64_t n, int64_t block_m, int64_t block_n,
                              int64_t group_size_m, int64_t first, int64_t count) {
  std::set<int64_t> rows, cols;
  for (int64_t pid = first; pid < first + count; ++pid) {
    const TileCoord t = grouped_tile_order(pid, m, n, block_m, block_n, group_size_m);
    rows.insert(t.pid_m);
    cols.insert(t.pid_n);
  }
  return {int64_t(rows.size()), int64_t(cols.size())};
}

// The GROUP_SIZE_M among 1, 2, 4, ..., up to the tile rows, whose first wave of `wave` programs
// reads the fewest bytes; `preferred` when it ties with the best (with one wave for the whole
// problem every order reads everything once, and the order does not matter).
inline int64_t l2_group_size(int64_t m, int64_t n, int64_t block_m, int64_t block_n, int64_t wave,
                             int64_t preferred) {
  const int64_t programs = num_tiles(m, n, block_m, block_n);
  const int64_t count = wave < programs ? wave : programs;
  const auto cost = [&](int64_t group) {
    return wave_blocks(m, n, block_m, block_n, group, 0, count).elements(block_m, block_n, 1);
  };
  int64_t best = preferred;
  double best_cost = cost(preferred);
  for (int64_t group = 1; group <= cdiv(m, block_m); group *= 2) {
    if (const double c = cost(group); c < best_cost) best = group, best_cost = c;
  }
  return best;
}

}  // namespace tilegemm
