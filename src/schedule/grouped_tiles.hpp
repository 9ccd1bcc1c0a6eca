// A grouped GEMM's persistent walk (tilegemm.hpp: Groups): the work items are the tiles of group
// 0 in grouped order, then those of group 1, and so on, and program p of a grid of P takes items
// p, p + P, ... as in the dense walk (persistent_scheduler.hpp), so the P tiles in flight at once
// are consecutive: mostly one group's, sharing its B in L2.
//
// The groups' sizes are in device memory, so no one knows the item count before the walk: a
// program's items only go up, and its cursor (GroupCursor) moves forward through the groups,
// reading each size once, until an item lies past the last group's tiles. Host and device: the
// sm90 grouped kernel walks it, and the host tests walk every program of random groupings.
#pragma once

#include <cstdint>

#include "problem/groups.hpp"
#include "schedule/tile_order.hpp"

namespace tilegemm {

// The group a program's walk stands in: its number, its rows, and its work items first_item ..
// first_item + items - 1. A fresh cursor stands before group 0.
struct GroupCursor {
  int32_t group = -1;
  int32_t first_item = 0, items = 0;
  GroupRowRange rows;
  GroupKRange k;
};

// One work item: tile `tile` (pid_m counted from the group's first row) of group `group`.
struct GroupedTile {
  int32_t group = 0;
  GroupRowRange rows;  // the group's rows of A, C and D
  GroupKRange k;       // its K values of A and B
  int64_t n = 0;       // its N
  TileCoord tile;
  // The tile's first row in A, C and D.
  TILEGEMM_HOST_DEVICE constexpr int64_t row0(int block_m) const {
    return rows.begin + tile.pid_m * block_m;
  }
};

struct GroupedTiles {
  GroupForm kind = GroupForm::none;
  const int32_t* sizes = nullptr;
  int32_t groups = 0;
  int64_t m = 0;  // M: the rows of A, C and D (of each batch entry, for counts)
  int64_t n = 0;  // N (ptr_array: each problem's own)
  int32_t block_m = 1, block_n = 1;
  int32_t group_size_m = 8;
  int64_t k = 0;  // K: the K values of A and B (k_offsets: those the groups share)

  // Moves `c` forward to the group that holds work item `item` (never back: a walk's items go
  // up); false when the item lies past the last group's tiles, and the walk is over.
  TILEGEMM_HOST_DEVICE constexpr bool seek(GroupCursor& c, int32_t item) const {
    while (item >= c.first_item + c.items) {
      if (c.group + 1 >= groups) return false;
      c.first_item += c.items;
      ++c.group;
      c.rows = group_rows_after(kind, sizes, c.group, m, c.rows.end);
      c.k = group_k_after(kind, sizes, c.group, k, c.k.end);
      c.items =
          int32_t(cdiv(c.rows.rows(), block_m) * cdiv(group_n(kind, sizes, c.group, n), block_n));
    }
    return true;
  }

  // Work item `item` of the group `c` stands in (seek(c, item) was true). (The group's N is read
  // again rather than kept in the cursor: the kernel's cursors live through the K loop, where
  // registers are scarce.)
  TILEGEMM_HOST_DEVICE constexpr GroupedTile tile(const GroupCursor& c, int32_t item) const {
    const int64_t group_cols = group_n(kind, sizes, c.group, n);
    const GroupedOrder<int32_t> g =
        grouped_order<int32_t>(item - c.first_item, int32_t(cdiv(c.rows.rows(), block_m)),
                               int32_t(cdiv(group_cols, block_n)), group_size_m);
    return {c.group, c.rows, c.k, group_cols, {g.pid_m, g.pid_n}};
  }
};

// The most work items a grouping of G groups of M rows in all (offsets: the groups share M rows;
// counts and k_offsets: each has up to M) can have with tiles of block_m x block_n: what the launch
// sizes its grid and checks the 32-bit item count with.
TILEGEMM_HOST_DEVICE constexpr int64_t grouped_items_bound(GroupForm kind, int64_t groups,
                                                           int64_t m, int64_t n, int64_t block_m,
                                                           int64_t block_n) {
  // offsets: each group's last tile may be partial, so cdiv(M, BM) + G tile rows at most
  const int64_t tile_rows =
      kind == GroupForm::offsets ? cdiv(m, block_m) + groups : groups * cdiv(m, block_m);
  return tile_rows * cdiv(n, block_n);
}

}  // namespace tilegemm
