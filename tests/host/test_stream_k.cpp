// The Stream-K split: every K step of every item done once, one partial per program, and the
// finisher finds exactly the programs that worked on its tile.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "schedule/stream_k.hpp"

namespace tilegemm {
namespace {

std::vector<Segment> walk_of(const StreamK& sk, int program) {
  std::vector<Segment> out;
  Segment s;
  for (StreamKWalk w(sk, program); w.next(&s);) out.push_back(s);
  return out;
}

// Checks every property of one split; returns the number of items finished from partials.
int check_split(const StreamK& sk) {
  std::map<std::pair<int64_t, int>, int> done;        // (item, k) -> times
  std::map<int64_t, std::set<int64_t>> contributors;  // item -> programs with a partial
  std::map<int64_t, int64_t> finisher;                // item -> program
  for (int p = 0; p < sk.programs; ++p) {
    const std::vector<Segment> segments = walk_of(sk, p);
    for (size_t i = 0; i < segments.size(); ++i) {
      const Segment& s = segments[i];
      EXPECT_LT(s.k_begin, s.k_end);
      EXPECT_LE(s.k_end, sk.k_tiles);
      for (int k = s.k_begin; k < s.k_end; ++k) ++done[{s.item, k}];
      if (contributes(s)) {
        // Only a program's first Stream-K segment can be partial, and it comes before any wait.
        EXPECT_GE(s.item, sk.dp_items);
        EXPECT_TRUE(i == 0 || segments[i - 1].item < sk.dp_items) << "program " << p;
        contributors[s.item].insert(p);
      } else if (!whole_item(s, sk)) {
        EXPECT_EQ(finisher.count(s.item), 0u);
        finisher[s.item] = p;
      }
    }
  }
  const int64_t items = sk.dp_items + sk.sk_items;
  EXPECT_EQ(int64_t(done.size()), items * sk.k_tiles);
  for (const auto& [step, times] : done) {
    EXPECT_EQ(times, 1) << "item " << step.first << " step " << step.second;
    EXPECT_LT(step.first, items);
  }
  // The finisher's enumeration: programs after it, while is_contributor holds.
  for (const auto& [item, programs] : contributors) {
    EXPECT_EQ(finisher.count(item), 1u) << "item " << item << " has partials and no finisher";
    if (finisher.count(item) == 0) continue;
    std::set<int64_t> found;
    for (int64_t q = finisher[item] + 1; is_contributor(sk, item, q); ++q) found.insert(q);
    EXPECT_EQ(found, programs) << "item " << item;
  }
  EXPECT_EQ(finisher.size(), contributors.size());
  return int(finisher.size());
}

TEST(StreamK, PlainPersistentWalkTakesItemsPPlusG) {
  const StreamK sk{4, 8, 10, 0};
  const std::vector<Segment> s = walk_of(sk, 1);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].item, 1);
  EXPECT_EQ(s[1].item, 5);
  EXPECT_EQ(s[2].item, 9);
  EXPECT_TRUE(whole_item(s[2], sk));
  check_split(sk);
}

TEST(StreamK, FewLongTilesShareTheirKSteps) {
  // 1024 x 1024 x 16384 in 128 x 256 tiles: 32 tiles of 256 K steps on 132 SMs. Each program
  // takes 62 or 63 steps, and each tile is finished from four or five programs' sums.
  EXPECT_EQ(fixup_steps(128, 256), 5);
  const StreamK sk = choose_stream_k(32, 256, 132, fixup_steps(128, 256));
  EXPECT_EQ(sk.programs, 132);
  EXPECT_EQ(sk.dp_items, 0);
  EXPECT_EQ(sk.sk_items, 32);
  EXPECT_EQ(sk.sk_begin(1) - sk.sk_begin(0), 63);
  EXPECT_EQ(sk.sk_begin(132) - sk.sk_begin(131), 62);
  EXPECT_EQ(check_split(sk), 32);
  // Fewer steps than SMs: one program per step.
  const StreamK tiny = choose_stream_k(2, 40, 132, fixup_steps(128, 256));
  EXPECT_EQ(tiny.programs, 80);
  EXPECT_EQ(tiny.sk_items, 2);
  EXPECT_EQ(check_split(tiny), 2);
}

TEST(StreamK, KeepsWholeTilesWhenSharingGainsNothing) {
  // Any whole wave (4096^3 in 128 x 256 tiles: 512 tiles, 3.88 waves; sharing measured slower).
  EXPECT_EQ(choose_stream_k(512, 64, 132, 5).sk_items, 0);
  EXPECT_EQ(choose_stream_k(264, 64, 132, 5).sk_items, 0);
  // Short K: 512^3 in 128 x 64 tiles (8 steps), 2048^3 in 128 x 256 tiles (32 steps).
  EXPECT_EQ(fixup_steps(128, 64), 20);
  EXPECT_EQ(choose_stream_k(32, 8, 132, fixup_steps(128, 64)).sk_items, 0);
  EXPECT_EQ(choose_stream_k(128, 32, 132, fixup_steps(128, 256)).sk_items, 0);
  const StreamK one = choose_stream_k(1, 1, 132, 5);
  EXPECT_EQ(one.sk_items, 0);
  EXPECT_EQ(one.programs, 1);
  EXPECT_EQ(one.dp_items, 1);
}

TEST(StreamK, RandomSplitsCoverEveryStepOnceWithOnePartialPerProgram) {
  std::mt19937_64 rng(20261123);
  for (int trial = 0; trial < 400; ++trial) {
    const int programs = 1 + int(rng() % 40);
    const int k_tiles = 1 + int(rng() % 20);
    StreamK sk{programs, k_tiles, programs * int64_t(rng() % 3), 1 + int64_t(rng() % 50)};
    check_split(sk);
    // And whatever the chooser makes of a random shape.
    check_split(
        choose_stream_k(1 + int64_t(rng() % 150), 1 + int(rng() % 120), programs, int(rng() % 20)));
  }
}

}  // namespace
}  // namespace tilegemm
