// The warptile kernel's slice layout: which granules of a BK x X operand slice each thread moves
// to shared memory (src/kernels/simt/slice_layout.hpp).
#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

#include "kernels/simt/slice_layout.hpp"

namespace tilegemm::simt::warptile {
namespace {

struct SliceCase {
  int bk, x, threads, v;
  bool contig_k;
};

// The compiled shapes' slices (256x128x8 and 128x128x16 on 256 threads, 64x64x16 on 128) for
// 4-byte elements and 16-byte vectors of 4 floats or 8 half values, both ways round.
std::vector<SliceCase> slice_cases() {
  std::vector<SliceCase> cases;
  struct Slice {
    int bk, x, threads;
  };
  for (Slice s : {Slice{8, 256, 256}, Slice{8, 128, 256}, Slice{16, 128, 256}, Slice{16, 64, 128}})
    for (int v : {1, 4, 8})
      for (bool contig_k : {true, false}) cases.push_back({s.bk, s.x, s.threads, v, contig_k});
  return cases;
}

TEST(SliceLayout, ThreadsCoverTheSliceOnce) {
  for (const SliceCase& c : slice_cases()) {
    const int along = (c.contig_k ? c.bk : c.x) / c.v;
    // A short slice of 16-bit vectors has fewer granules than threads; the kernel's threads past
    // the last granule (has_granule) copy nothing.
    const int granules = c.bk * c.x / c.v;
    const int per_thread = (granules + c.threads - 1) / c.threads;
    std::set<std::pair<int, int>> seen;
    for (int t = 0; t < c.threads; ++t)
      for (int p = 0; p < per_thread && t + p * c.threads < granules; ++p) {
        const SliceCoord at = slice_granule(t, p, along, c.threads, c.contig_k, c.v);
        ASSERT_GE(at.k, 0);
        ASSERT_LT(at.k, c.bk);
        ASSERT_GE(at.x, 0);
        ASSERT_LT(at.x, c.x);
        // Granules start on multiples of V along the contiguous dimension.
        EXPECT_EQ((c.contig_k ? at.k : at.x) % c.v, 0);
        EXPECT_TRUE(seen.insert({at.k, at.x}).second)
            << "granule (" << at.k << ", " << at.x << ") twice; thread " << t << " p " << p;
        // A thread's granules are a constant number of rows apart (one address per thread).
        const SliceCoord first = slice_granule(t, 0, along, c.threads, c.contig_k, c.v);
        if (c.contig_k) {
          EXPECT_EQ(at.k, first.k);
          EXPECT_EQ(at.x - first.x, p * (c.threads / along));
        } else {
          EXPECT_EQ(at.x, first.x);
          EXPECT_EQ(at.k - first.k, p * (c.threads / along));
        }
      }
    EXPECT_EQ(int(seen.size()), granules);
  }
}

TEST(SliceLayout, AWarpReadsTwoLinesOfAKContiguousOperand) {
  // fp32 A, row-major: 16 elements along k per row, two rows per warp (2 x 64 bytes).
  const int along = 16, threads = 256;
  for (int warp = 0; warp < threads / 32; ++warp) {
    std::set<int> rows;
    for (int lane = 0; lane < 32; ++lane) {
      const SliceCoord at = slice_granule(32 * warp + lane, 0, along, threads, true, 1);
      EXPECT_EQ(at.k, lane % 16);
      rows.insert(at.x);
    }
    EXPECT_EQ(rows.size(), 2u) << "warp " << warp;
  }
}

TEST(SliceLayout, VectorsKeepConsecutiveThreadsAlongTheContiguousDimension) {
  // B row-major (N contiguous), 16-byte vectors: thread t's vector is the t-th along the row.
  for (int t = 0; t < 256; ++t) {
    const SliceCoord at = slice_granule(t, 0, 32, 256, false, 4);
    EXPECT_EQ(at.x, 4 * (t % 32));
    EXPECT_EQ(at.k, t / 32);
  }
}

}  // namespace
}  // namespace tilegemm::simt::warptile
