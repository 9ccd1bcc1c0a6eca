// Program id -> output tile: the one place the library maps a 1-D launch onto the tile grid.
//
// Used by every GPU kernel and by the CPU backend, and unit-tested on the host. The grouped
// order is the Triton tutorial's, written out step by step with the seeds' names so each
// intermediate can be shown by `tilegemm explain`:
//
//   num_pid_m        = cdiv(M, BLOCK_SIZE_M)
//   num_pid_n        = cdiv(N, BLOCK_SIZE_N)
//   num_pid_in_group = GROUP_SIZE_M * num_pid_n
//   group_id         = pid / num_pid_in_group
//   first_pid_m      = group_id * GROUP_SIZE_M
//   group_size_m     = min(num_pid_m - first_pid_m, GROUP_SIZE_M)   // smaller in the last group
//   pid_m            = first_pid_m + (pid % num_pid_in_group) % group_size_m
//   pid_n            = (pid % num_pid_in_group) / group_size_m
//
// Within a group, programs walk down a column of GROUP_SIZE_M tiles before moving one tile to the
// right, so programs that run at the same time share rows of A and columns of B in L2.
// (The seeds also write pid_m = first_pid_m + pid % group_size_m; that is the same value whenever
// num_pid_in_group is a multiple of group_size_m, i.e. in every group but a smaller last one,
// where only the form above stays inside the group. We use the form above.)
#pragma once

#include <cstdint>

#include "common/host_device.hpp"

namespace tilegemm {

struct TileCoord {
  int64_t pid_m = 0;
  int64_t pid_n = 0;
};

// Every intermediate of the grouped mapping (what `explain` prints), from the tile grid's size,
// on any integer type: int64_t everywhere but in the persistent kernel, which takes int32_t
// (PersistentTiles below).
template <class Int>
struct GroupedOrder {
  Int num_pid_m, num_pid_n, num_pid_in_group, group_id, first_pid_m, group_size_m;
  Int pid_m, pid_n;
};

template <class Int>
TILEGEMM_HOST_DEVICE constexpr GroupedOrder<Int> grouped_order(Int pid, Int num_pid_m,
                                                               Int num_pid_n, Int group_size_m) {
  GroupedOrder<Int> s{};
  s.num_pid_m = num_pid_m;
  s.num_pid_n = num_pid_n;
  s.num_pid_in_group = group_size_m * num_pid_n;
  s.group_id = pid / s.num_pid_in_group;
  s.first_pid_m = s.group_id * group_size_m;
  s.group_size_m =
      s.num_pid_m - s.first_pid_m < group_size_m ? s.num_pid_m - s.first_pid_m : group_size_m;
  const Int in_group = pid - s.group_id * s.num_pid_in_group;  // pid % num_pid_in_group
  s.pid_m = s.first_pid_m + in_group % s.group_size_m;
  s.pid_n = in_group / s.group_size_m;
  return s;
}

using GroupedOrderSteps = GroupedOrder<int64_t>;

TILEGEMM_HOST_DEVICE constexpr GroupedOrderSteps grouped_tile_order_steps(
    int64_t pid, int64_t m, int64_t n, int64_t block_m, int64_t block_n, int64_t group_size_m) {
  return grouped_order<int64_t>(pid, cdiv(m, block_m), cdiv(n, block_n), group_size_m);
}

TILEGEMM_HOST_DEVICE constexpr TileCoord grouped_tile_order(int64_t pid, int64_t m, int64_t n,
                                                            int64_t block_m, int64_t block_n,
                                                            int64_t group_size_m) {
  GroupedOrderSteps s = grouped_tile_order_steps(pid, m, n, block_m, block_n, group_size_m);
  return {s.pid_m, s.pid_n};
}

// Plain row-major launch order: pid walks along N first. Equals the grouped order with
// GROUP_SIZE_M = 1.
TILEGEMM_HOST_DEVICE constexpr TileCoord row_major_tile_order(int64_t pid, int64_t n,
                                                              int64_t block_n) {
  int64_t num_pid_n = cdiv(n, block_n);
  return {pid / num_pid_n, pid % num_pid_n};
}

TILEGEMM_HOST_DEVICE constexpr int64_t num_tiles(int64_t m, int64_t n, int64_t block_m,
                                                 int64_t block_n) {
  return cdiv(m, block_m) * cdiv(n, block_n);
}

// A persistent grid's work item `index`: the tiles of batch entry 0 in grouped order, then those
// of entry 1, and so on. Program p of a grid of G takes items p, p + G, p + 2G, ..., so the G
// tiles in flight at once are consecutive in grouped order, as a launch of G programs would be.
struct BatchedTile {
  int64_t batch = 0;
  TileCoord tile;
};
TILEGEMM_HOST_DEVICE constexpr BatchedTile persistent_tile(int64_t index, int64_t m, int64_t n,
                                                           int64_t block_m, int64_t block_n,
                                                           int64_t group_size_m) {
  const int64_t per_batch = num_tiles(m, n, block_m, block_n);
  return {index / per_batch,
          grouped_tile_order(index % per_batch, m, n, block_m, block_n, group_size_m)};
}

// A persistent grid of clusters of cluster_m x cluster_n programs: those in one column of the
// cluster share B's tile, those in one row A's (TMA multicast). Cluster item `index` is a tile
// cluster_m * block_m rows tall and cluster_n * block_n columns wide, taken in the persistent
// grouped order above (GROUP_SIZE_M counted in block_m rows, so a group covers the same rows),
// and the cluster's program `rank` takes its part rank % cluster_m down and rank / cluster_m
// across. Program c * cluster_m * cluster_n + r of a grid of G clusters takes items c, c + G, ...
// With clusters of 1 this is persistent_tile. When the tiles do not divide evenly, the last
// cluster row (column) has programs below (right of) the matrix: pid_m >= cdiv(m, block_m) or
// pid_n >= cdiv(n, block_n). They still load their parts of A and B for the others, and write
// nothing.
TILEGEMM_HOST_DEVICE constexpr BatchedTile cluster_tile(int64_t index, int rank, int64_t m,
                                                        int64_t n, int64_t block_m, int64_t block_n,
                                                        int64_t group_size_m, int cluster_m,
                                                        int cluster_n = 1) {
  const int64_t group = group_size_m / cluster_m > 0 ? group_size_m / cluster_m : 1;
  BatchedTile t = persistent_tile(index, m, n, cluster_m * block_m, cluster_n * block_n, group);
  t.tile.pid_m = t.tile.pid_m * cluster_m + rank % cluster_m;
  t.tile.pid_n = t.tile.pid_n * cluster_n + rank / cluster_m;
  return t;
}

// Work items of a persistent grid of clusters (tiles for clusters of 1), all batch entries.
TILEGEMM_HOST_DEVICE constexpr int64_t cluster_items(int64_t m, int64_t n, int64_t block_m,
                                                     int64_t block_n, int64_t batch_count,
                                                     int cluster_m, int cluster_n = 1) {
  return num_tiles(m, n, cluster_m * block_m, cluster_n * block_n) * batch_count;
}

// cluster_tile and cluster_items as a persistent kernel uses them: the tile grid's size is worked
// out once per program, and each work item's tile in 32-bit arithmetic. On the GPU a 64-bit
// division is a subroutine of ~100 instructions, and a program works out its first tile before
// its first load. The caller makes sure that the work items number fewer than 2^31 (the sm90
// kernel's problem_check).
struct PersistentTiles {
  int32_t num_pid_m = 0;  // cluster rows of tiles
  int32_t num_pid_n = 0;
  int32_t group = 1;  // GROUP_SIZE_M in cluster rows
  int32_t cluster_m = 1;
  int32_t cluster_n = 1;

  TILEGEMM_HOST_DEVICE constexpr PersistentTiles(int64_t m, int64_t n, int64_t block_m,
                                                 int64_t block_n, int64_t group_size_m,
                                                 int cluster_m_, int cluster_n_ = 1)
      : num_pid_m(int32_t(cdiv(m, cluster_m_ * block_m))),
        num_pid_n(int32_t(cdiv(n, cluster_n_ * block_n))),
        cluster_m(cluster_m_),
        cluster_n(cluster_n_) {
    const int64_t g = group_size_m / cluster_m_ > 0 ? group_size_m / cluster_m_ : 1;
    // A group taller than the grid orders the tiles as one of exactly the grid's height does;
    // clamped, group * num_pid_n stays within the item count.
    group = int32_t(g < num_pid_m || num_pid_m == 0 ? g : num_pid_m);
  }

  TILEGEMM_HOST_DEVICE constexpr int32_t items(int64_t batch_count) const {
    return int32_t(int64_t(num_pid_m) * num_pid_n * batch_count);
  }

  // Work item `item`'s tile for the cluster's program `rank` (cluster_tile).
  TILEGEMM_HOST_DEVICE constexpr BatchedTile tile(int32_t item, int rank) const {
    const int32_t per_batch = num_pid_m * num_pid_n;
    const int32_t batch = item / per_batch;
    const GroupedOrder<int32_t> g =
        grouped_order<int32_t>(item - batch * per_batch, num_pid_m, num_pid_n, group);
    return {batch,
            {int64_t(g.pid_m) * cluster_m + rank % cluster_m,
             int64_t(g.pid_n) * cluster_n + rank / cluster_m}};
  }
};

// How many of a tile's `tile` rows (or columns, or K steps) starting at `start` lie inside an
// extent of `size`: the mask length at the matrix edge.
TILEGEMM_HOST_DEVICE constexpr int valid_extent(int64_t size, int64_t start, int tile) {
  return size - start < tile ? static_cast<int>(size - start) : tile;
}

}  // namespace tilegemm
