// The pid -> tile mapping: the seeds' worked examples, and a bijection on every grid.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <tuple>

#include "schedule/tile_order.hpp"
#include "schedule/wave_traffic.hpp"

namespace tilegemm {
namespace {

TEST(GroupedTileOrder, SeedExampleM1024N768Pid60) {
  // seed 000: M=1024, N=768, BLOCK 128x64, GROUP_SIZE_M=2, pid 60.
  const auto s = grouped_tile_order_steps(60, 1024, 768, 128, 64, 2);
  EXPECT_EQ(s.num_pid_m, 8);
  EXPECT_EQ(s.num_pid_n, 12);
  EXPECT_EQ(num_tiles(1024, 768, 128, 64), 96);
  EXPECT_EQ(s.num_pid_in_group, 24);
  EXPECT_EQ(s.group_id, 2);
  EXPECT_EQ(s.first_pid_m, 4);
  EXPECT_EQ(s.group_size_m, 2);
  EXPECT_EQ(s.pid_m, 4);
  EXPECT_EQ(s.pid_n, 6);
}

TEST(GroupedTileOrder, SeedExampleM8N8Pid15) {
  // seed 003: M=N=8, BLOCK 2x2, GROUP_SIZE_M=2, pid 15 -> (3, 3), the last block of C.
  const auto s = grouped_tile_order_steps(15, 8, 8, 2, 2, 2);
  EXPECT_EQ(s.num_pid_in_group, 8);
  EXPECT_EQ(s.group_id, 1);
  EXPECT_EQ(s.first_pid_m, 2);
  EXPECT_EQ(s.pid_m, 3);
  EXPECT_EQ(s.pid_n, 3);
}

TEST(GroupedTileOrder, SmallerLastGroupStaysInsideTheGrid) {
  // 15 row-blocks in groups of 8: the second group has 7 rows (the seeds' French note).
  const int64_t m = 15 * 16, n = 5 * 16;
  for (int64_t pid = 8 * 5; pid < 15 * 5; ++pid) {
    const auto s = grouped_tile_order_steps(pid, m, n, 16, 16, 8);
    EXPECT_EQ(s.group_size_m, 7);
    EXPECT_GE(s.pid_m, 8);
    EXPECT_LT(s.pid_m, 15);
    EXPECT_LT(s.pid_n, 5);
  }
}

TEST(GroupedTileOrder, WalksDownAGroupColumnFirst) {
  // Within a group, consecutive pids step along M, then move one tile along N.
  EXPECT_EQ(grouped_tile_order(0, 1024, 768, 128, 64, 2).pid_m, 0);
  EXPECT_EQ(grouped_tile_order(1, 1024, 768, 128, 64, 2).pid_m, 1);
  EXPECT_EQ(grouped_tile_order(1, 1024, 768, 128, 64, 2).pid_n, 0);
  EXPECT_EQ(grouped_tile_order(2, 1024, 768, 128, 64, 2).pid_n, 1);
}

TEST(GroupedTileOrder, IsABijectionOntoTheTileGridForRandomShapes) {
  std::mt19937_64 rng(20261123);
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t m = 1 + int64_t(rng() % 700), n = 1 + int64_t(rng() % 700);
    const int64_t bm = int64_t(1) << (rng() % 8), bn = int64_t(1) << (rng() % 8);
    const int64_t group = 1 + int64_t(rng() % 12);
    const int64_t tiles = num_tiles(m, n, bm, bn);
    std::set<std::pair<int64_t, int64_t>> seen;
    for (int64_t pid = 0; pid < tiles; ++pid) {
      const TileCoord t = grouped_tile_order(pid, m, n, bm, bn, group);
      ASSERT_GE(t.pid_m, 0);
      ASSERT_LT(t.pid_m, cdiv(m, bm)) << "m=" << m << " bm=" << bm << " group=" << group;
      ASSERT_GE(t.pid_n, 0);
      ASSERT_LT(t.pid_n, cdiv(n, bn));
      seen.insert({t.pid_m, t.pid_n});
    }
    ASSERT_EQ(int64_t(seen.size()), tiles) << "m=" << m << " n=" << n << " group=" << group;
  }
}

TEST(GroupedTileOrder, GroupOfOneIsRowMajor) {
  for (int64_t pid = 0; pid < num_tiles(1000, 700, 64, 32); ++pid) {
    const TileCoord g = grouped_tile_order(pid, 1000, 700, 64, 32, 1);
    const TileCoord r = row_major_tile_order(pid, 700, 32);
    ASSERT_EQ(g.pid_m, r.pid_m);
    ASSERT_EQ(g.pid_n, r.pid_n);
  }
}

TEST(ClusterTile, ClustersOfTwoCoverEveryTileOnceAndShareTheirColumn) {
  std::mt19937_64 rng(11232026);
  std::uniform_int_distribution<int64_t> dim(1, 3000);
  const int64_t blocks[] = {64, 128, 256};
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t m = dim(rng), n = dim(rng), bm = blocks[rng() % 3], bn = blocks[rng() % 3];
    const int64_t group = 1 + int64_t(rng() % 9), batch = 1 + int64_t(rng() % 3);
    const int64_t items = cluster_items(m, n, bm, bn, batch, 2);
    std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
    int64_t ghosts = 0;
    for (int64_t item = 0; item < items; ++item) {
      const BatchedTile top = cluster_tile(item, 0, m, n, bm, bn, group, 2);
      const BatchedTile bottom = cluster_tile(item, 1, m, n, bm, bn, group, 2);
      // The two programs of a cluster take vertically adjacent tiles: the same B tile.
      ASSERT_EQ(top.batch, bottom.batch);
      ASSERT_EQ(top.tile.pid_n, bottom.tile.pid_n);
      ASSERT_EQ(bottom.tile.pid_m, top.tile.pid_m + 1);
      ASSERT_EQ(top.tile.pid_m % 2, 0);
      for (const BatchedTile& t : {top, bottom}) {
        ASSERT_LT(t.batch, batch);
        ASSERT_LT(t.tile.pid_n, cdiv(n, bn));
        if (t.tile.pid_m >= cdiv(m, bm)) {
          ++ghosts;  // below the matrix: only when the tile rows are odd, and only the bottom
          ASSERT_EQ(t.tile.pid_m, cdiv(m, bm));
          continue;
        }
        ASSERT_TRUE(seen.insert({t.batch, t.tile.pid_m, t.tile.pid_n}).second)
            << "tile twice: m=" << m << " n=" << n << " bm=" << bm << " group=" << group;
      }
    }
    EXPECT_EQ(int64_t(seen.size()), num_tiles(m, n, bm, bn) * batch);
    EXPECT_EQ(ghosts, cdiv(m, bm) % 2 == 1 ? cdiv(n, bn) * batch : 0);
  }
}

TEST(ClusterTile, ClustersOfTwoByTwoCoverEveryTileOnceAndShareRowsAndColumns) {
  std::mt19937_64 rng(11252026);
  std::uniform_int_distribution<int64_t> dim(1, 3000);
  const int64_t blocks[] = {64, 128, 256};
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t m = dim(rng), n = dim(rng), bm = blocks[rng() % 3], bn = blocks[rng() % 3];
    const int64_t group = 1 + int64_t(rng() % 9), batch = 1 + int64_t(rng() % 3);
    const int64_t items = cluster_items(m, n, bm, bn, batch, 2, 2);
    ASSERT_EQ(items, cdiv(m, 2 * bm) * cdiv(n, 2 * bn) * batch);
    std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
    for (int64_t item = 0; item < items; ++item) {
      BatchedTile t[4];
      for (int rank = 0; rank < 4; ++rank)
        t[rank] = cluster_tile(item, rank, m, n, bm, bn, group, 2, 2);
      // Ranks go down M first: 0 and 1 share a column of tiles (B), 0 and 2 a row (A).
      ASSERT_EQ(t[1].tile.pid_m, t[0].tile.pid_m + 1);
      ASSERT_EQ(t[1].tile.pid_n, t[0].tile.pid_n);
      ASSERT_EQ(t[2].tile.pid_m, t[0].tile.pid_m);
      ASSERT_EQ(t[2].tile.pid_n, t[0].tile.pid_n + 1);
      ASSERT_EQ(t[3].tile.pid_m, t[1].tile.pid_m);
      ASSERT_EQ(t[3].tile.pid_n, t[2].tile.pid_n);
      ASSERT_EQ(t[0].tile.pid_m % 2, 0);
      ASSERT_EQ(t[0].tile.pid_n % 2, 0);
      for (const BatchedTile& x : t) {
        ASSERT_EQ(x.batch, t[0].batch);
        ASSERT_LT(x.batch, batch);
        ASSERT_LE(x.tile.pid_m, cdiv(m, bm));
        ASSERT_LE(x.tile.pid_n, cdiv(n, bn));
        if (x.tile.pid_m >= cdiv(m, bm) || x.tile.pid_n >= cdiv(n, bn)) continue;  // outside
        ASSERT_TRUE(seen.insert({x.batch, x.tile.pid_m, x.tile.pid_n}).second)
            << "tile twice: m=" << m << " n=" << n << " bm=" << bm << " bn=" << bn;
      }
    }
    EXPECT_EQ(int64_t(seen.size()), num_tiles(m, n, bm, bn) * batch);
  }
}

TEST(ClusterTile, ClusterOfOneIsThePersistentOrder) {
  const int64_t items = cluster_items(1000, 700, 128, 64, 2, 1);
  ASSERT_EQ(items, num_tiles(1000, 700, 128, 64) * 2);
  for (int64_t item = 0; item < items; ++item) {
    const BatchedTile c = cluster_tile(item, 0, 1000, 700, 128, 64, 8, 1);
    const BatchedTile p = persistent_tile(item, 1000, 700, 128, 64, 8);
    ASSERT_EQ(c.batch, p.batch);
    ASSERT_EQ(c.tile.pid_m, p.tile.pid_m);
    ASSERT_EQ(c.tile.pid_n, p.tile.pid_n);
  }
}

TEST(ClusterTile, AGroupCoversTheSameRowsAsWithoutClusters) {
  // GROUP_SIZE_M 8 with clusters of 2: items walk down 4 cluster rows = 8 tile rows first.
  for (int64_t item = 0; item < 4; ++item) {
    const BatchedTile t = cluster_tile(item, 1, 4096, 4096, 128, 256, 8, 2);
    EXPECT_EQ(t.tile.pid_m, 2 * item + 1);
    EXPECT_EQ(t.tile.pid_n, 0);
  }
  EXPECT_EQ(cluster_tile(4, 0, 4096, 4096, 128, 256, 8, 2).tile.pid_n, 1);
}

// The persistent kernel's 32-bit form must walk exactly cluster_tile's order, GROUP_SIZE_M
// larger than the grid (which it clamps) included.
TEST(PersistentTiles, IsClusterTileIn32Bits) {
  std::mt19937_64 rng(11242026);
  std::uniform_int_distribution<int64_t> dim(1, 3000);
  const int64_t blocks[] = {64, 128, 256};
  const int64_t groups[] = {1, 2, 3, 8, 16, 64, 1000};
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t m = dim(rng), n = dim(rng), bm = blocks[rng() % 3], bn = blocks[rng() % 3];
    const int64_t group = groups[rng() % 7], batch = 1 + int64_t(rng() % 3);
    const int cluster = 1 + int(rng() % 2), cluster_n = 1 + int(rng() % 2);
    const PersistentTiles tiles(m, n, bm, bn, group, cluster, cluster_n);
    const int64_t items = cluster_items(m, n, bm, bn, batch, cluster, cluster_n);
    ASSERT_EQ(tiles.items(batch), items);
    for (int64_t item = 0; item < items; ++item)
      for (int rank = 0; rank < cluster * cluster_n; ++rank) {
        const BatchedTile want = cluster_tile(item, rank, m, n, bm, bn, group, cluster, cluster_n);
        const BatchedTile got = tiles.tile(int32_t(item), rank);
        ASSERT_EQ(got.batch, want.batch);
        ASSERT_EQ(got.tile.pid_m, want.tile.pid_m) << "m=" << m << " n=" << n << " item=" << item;
        ASSERT_EQ(got.tile.pid_n, want.tile.pid_n) << "m=" << m << " n=" << n << " item=" << item;
      }
  }
  // A grid of 2^30 items: no intermediate overflows 32 bits.
  const int64_t m = int64_t(1) << 21, n = int64_t(1) << 21;
  const PersistentTiles big(m, n, 64, 64, 64, 1);
  ASSERT_EQ(big.items(1), int64_t(1) << 30);
  for (int64_t item :
       {int64_t(0), int64_t(12345), (int64_t(1) << 29) + 7, (int64_t(1) << 30) - 1}) {
    const BatchedTile want = cluster_tile(item, 0, m, n, 64, 64, 64, 1);
    const BatchedTile got = big.tile(int32_t(item), 0);
    EXPECT_EQ(got.tile.pid_m, want.tile.pid_m);
    EXPECT_EQ(got.tile.pid_n, want.tile.pid_n);
  }
}

TEST(ValidExtent, IsTheMaskLengthAtTheEdge) {
  EXPECT_EQ(valid_extent(100, 64, 64), 36);
  EXPECT_EQ(valid_extent(128, 64, 64), 64);
  EXPECT_EQ(valid_extent(int64_t(1) << 40, 0, 128), 128);
}

TEST(WaveTraffic, CountsTheBlocksAWaveReads) {
  // 4096^2 in 128x256 tiles: 32 x 16 tiles. 132 programs in row-major order read 9 A row-blocks
  // (8 full rows of 16 tiles, then 4 of the ninth) and all 16 B column-blocks.
  const WaveBlocks row = wave_blocks(4096, 4096, 128, 256, 1, 0, 132);
  EXPECT_EQ(row.row_blocks, 9);
  EXPECT_EQ(row.col_blocks, 16);
  EXPECT_DOUBLE_EQ(row.elements(128, 256, 4096), (9.0 * 128 + 16.0 * 256) * 4096);
  // GROUP_SIZE_M 16: 16 rows of tiles and ceil(132 / 16) = 9 columns.
  const WaveBlocks g16 = wave_blocks(4096, 4096, 128, 256, 16, 0, 132);
  EXPECT_EQ(g16.row_blocks, 16);
  EXPECT_EQ(g16.col_blocks, 9);
  // GROUP_SIZE_M 1 is row-major order: the blocks counted tile by tile in that order agree.
  std::mt19937 rng(11);
  for (int trial = 0; trial < 50; ++trial) {
    const int64_t m = 1 + rng() % 3000, n = 1 + rng() % 3000;
    const int64_t tiles = num_tiles(m, n, 64, 128), count = 1 + int64_t(rng() % tiles);
    std::set<int64_t> rows, cols;
    for (int64_t pid = 0; pid < count; ++pid) {
      const TileCoord t = row_major_tile_order(pid, n, 128);
      rows.insert(t.pid_m);
      cols.insert(t.pid_n);
    }
    const WaveBlocks w = wave_blocks(m, n, 64, 128, 1, 0, count);
    EXPECT_EQ(w.row_blocks, int64_t(rows.size()));
    EXPECT_EQ(w.col_blocks, int64_t(cols.size()));
  }
}

TEST(WaveTraffic, GroupSizeFromTheL2Model) {
  // 132 programs of 128x256: GROUP_SIZE_M 16 reads 16 x 128 + 9 x 256 = 4352 rows of K per wave,
  // against 12 x 128 + 16 x 256 = 5632 with 8.
  EXPECT_EQ(l2_group_size(4096, 4096, 128, 256, 132, 8), 16);
  EXPECT_EQ(l2_group_size(8192, 8192, 128, 256, 132, 8), 16);
  EXPECT_EQ(l2_group_size(4096, 11008, 128, 256, 132, 8), 16);
  // One wave holds the whole problem (128 tiles): every order reads each block once, keep 8.
  EXPECT_EQ(l2_group_size(2048, 2048, 128, 256, 132, 8), 8);
  EXPECT_EQ(l2_group_size(512, 512, 128, 64, 132, 8), 8);
  // 128x128 tiles at 4096^2: 8 and 16 tie (8 x 128 + 17 x 128 = 16 x 128 + 9 x 128), keep 8.
  EXPECT_EQ(l2_group_size(4096, 4096, 128, 128, 132, 8), 8);
}

}  // namespace
}  // namespace tilegemm
