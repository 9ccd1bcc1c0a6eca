// The last round's split (schedule/tail_split.hpp): every K step of every item exactly once, heads
// and tails paired through their slots, helpers that never wait, split-K under one round, and the
// model's choices.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "schedule/persistent_scheduler.hpp"

namespace tilegemm {
namespace {

// Every piece of every program's walk, per program.
std::vector<std::vector<Piece>> walk_all(const TailSplit& split, int32_t programs,
                                         int32_t k_steps) {
  std::vector<std::vector<Piece>> out(programs);
  for (int32_t p = 0; p < programs; ++p) {
    const ProgramWalk w{split, programs, k_steps};
    for (int32_t item = w.first(p); item >= 0; item = w.next(p, item)) {
      out[p].push_back(w.piece(p, item));
      EXPECT_EQ(w.steps_of(p, item), out[p].back().k_steps);
    }
    EXPECT_EQ(w.next(p, -1), -1) << "the end stays the end";
  }
  return out;
}

// Checks one walk of `items` items of `k_steps` steps on `programs` programs under `split`.
void expect_every_step_once(const TailSplit& split, int32_t items, int32_t programs,
                            int32_t k_steps) {
  const auto pieces = walk_all(split, programs, k_steps);
  std::vector<std::vector<int>> covered(items, std::vector<int>(k_steps, 0));
  std::map<int32_t, std::pair<int, int>> heads, tails;  // slot -> (program, item)
  const int32_t s = split.tails_per_item;
  for (int32_t p = 0; p < programs; ++p) {
    int32_t whole_seen = 0;
    for (const Piece& piece : pieces[p]) {
      ASSERT_GE(piece.item, 0);
      ASSERT_LT(piece.item, items);
      ASSERT_GE(piece.k_steps, 1) << "no empty piece";
      for (int32_t k = piece.k_begin; k < piece.k_begin + piece.k_steps; ++k) {
        ASSERT_LT(k, k_steps);
        ++covered[piece.item][k];
      }
      switch (piece.share) {
        case Share::whole:
          // Whole items in the persistent order p, p + G, ..., before any other piece.
          EXPECT_EQ(piece.item, p + whole_seen * programs);
          EXPECT_EQ(piece.k_begin, 0);
          EXPECT_EQ(piece.k_steps, k_steps);
          ++whole_seen;
          break;
        case Share::head:
          EXPECT_GE(p, split.helpers) << "heads are the programs after the helpers";
          EXPECT_EQ(piece.k_begin, 0) << "heads share their K offsets";
          EXPECT_EQ(piece.k_steps, split.head_steps);
          EXPECT_TRUE(heads.emplace(piece.slot, std::make_pair(p, piece.item)).second);
          EXPECT_EQ(&piece, &pieces[p].back()) << "a head is a program's last piece";
          break;
        case Share::tail:
          EXPECT_LT(p, split.helpers) << "only helpers take tails";
          EXPECT_EQ(piece.k_begin, split.tail_begin(piece.slot % s)) << "tail r's K steps";
          EXPECT_TRUE(tails.emplace(piece.slot, std::make_pair(p, piece.item)).second);
          break;
      }
      if (piece.share != Share::whole) {
        EXPECT_EQ(piece.item - split.whole_items, piece.slot / s)
            << "slots j * s .. j * s + s - 1 are the last round's item j's";
      }
      if (piece.share == Share::head) EXPECT_EQ(piece.slot % s, 0) << "a head's first slot";
    }
    if (split.on()) {
      EXPECT_EQ(whole_seen, split.whole_items / programs) << "every program: the whole rounds";
      EXPECT_LE(int64_t(pieces[p].size()) - whole_seen, split.tails_per_helper);
    }
  }
  for (int32_t i = 0; i < items; ++i)
    for (int32_t k = 0; k < k_steps; ++k)
      ASSERT_EQ(covered[i][k], 1) << "item " << i << " step " << k;
  EXPECT_EQ(int32_t(heads.size()), split.tail_items);
  EXPECT_EQ(int32_t(tails.size()), split.tails());
  for (const auto& [slot, head] : heads)
    for (int32_t r = 0; r < s; ++r) {
      ASSERT_TRUE(tails.count(slot + r)) << "slot " << slot + r;
      EXPECT_EQ(tails[slot + r].second, head.second) << "a head's tails are of its item";
    }
}

// The plan by trying every s and every head, in order, as the model's definition reads: what
// plan_tail_split finds by halving (and by stopping where a head's adds alone cost too much) must
// be the same plan, for the model's costs and for others.
TailSplit plan_by_trying_every_head(int64_t items, int64_t programs, int64_t k_steps,
                                    int64_t head_fixup = kHeadFixupSteps,
                                    int64_t tail_store = kTailStoreSteps) {
  const TailSplit none = no_tail_split(items);
  const int64_t tail = programs > 0 ? items % programs : 0;
  if (programs < 2 || items < 1 || tail == 0 || k_steps < 2) return none;
  TailSplit best = none;
  int64_t best_cost = k_steps;
  for (int64_t s = 1; tail * (s + 1) <= programs || (s == 1 && items > programs); ++s) {
    const bool split_k = s > 1 || items < programs;
    const int64_t helpers = split_k ? tail * s : programs - tail;
    const int64_t per_helper = split_k ? 1 : cdiv(tail, helpers);
    for (int64_t head = 1; head + s <= k_steps; ++head) {
      const int64_t steps = cdiv(k_steps - head, s);
      if ((s - 1) * steps >= k_steps - head) continue;  // the last tail would be empty
      const int64_t cost = std::max(head + s * head_fixup, per_helper * (steps + tail_store));
      if (cost < best_cost) {
        best_cost = cost;
        best = {.whole_items = int32_t(items - tail),
                .tail_items = int32_t(tail),
                .helpers = int32_t(helpers),
                .tails_per_helper = int32_t(per_helper),
                .head_steps = int32_t(head),
                .tails_per_item = int32_t(s),
                .tail_steps = int32_t(steps)};
      }
    }
  }
  return k_steps - best_cost < kTailSplitMinGain ? none : best;
}

TEST(TailSplit, ThePlanIsTheOneTryingEveryHeadFinds) {
  std::mt19937 rng(12);
  int compared = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const auto programs = int64_t(1 + rng() % 140);
    const auto items = int64_t(1 + rng() % (3 * programs));
    const auto k_steps = int64_t(1 + rng() % (trial % 4 == 0 ? 2000 : 90));
    // Every third trial with other costs (the decode kernel's, and others).
    const bool other_costs = trial % 3 == 0;
    const int64_t fixup = other_costs ? int64_t(1 + rng() % 4) : kHeadFixupSteps;
    const int64_t store = other_costs ? int64_t(rng() % 7) : kTailStoreSteps;
    const TailSplit fast = plan_tail_split(items, programs, k_steps, fixup, store);
    const TailSplit slow = plan_by_trying_every_head(items, programs, k_steps, fixup, store);
    ASSERT_EQ(fast.on(), slow.on()) << items << " items, " << programs << ", " << k_steps;
    compared += slow.on();
    EXPECT_EQ(fast.whole_items, slow.whole_items);
    EXPECT_EQ(fast.tail_items, slow.tail_items);
    EXPECT_EQ(fast.helpers, slow.helpers);
    EXPECT_EQ(fast.tails_per_helper, slow.tails_per_helper);
    EXPECT_EQ(fast.tails_per_item, slow.tails_per_item)
        << items << ", " << programs << ", " << k_steps;
    ASSERT_EQ(fast.head_steps, slow.head_steps) << items << ", " << programs << ", " << k_steps;
    EXPECT_EQ(fast.tail_steps, slow.tail_steps);
  }
  EXPECT_GT(compared, 5000) << "most trials split";
  // A K loop as long as 32 bits count is planned at once (explain takes it): one tile, a tail on
  // each of the 131 other programs, the last ending at the last step.
  const TailSplit longest = plan_tail_split(1, 132, INT32_MAX);
  ASSERT_EQ(longest.tails_per_item, 131);
  EXPECT_EQ(int64_t(longest.tail_begin(130)) + longest.tail_steps_of(130, INT32_MAX), INT32_MAX);
}

TEST(TailSplit, EveryKStepOfEveryItemOnceOnEveryGrid) {
  std::mt19937 rng(11);
  int splits = 0, split_k = 0, under_one_round = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int32_t programs = 1 + int32_t(rng() % 140);
    const int32_t items = 1 + int32_t(rng() % (5 * programs));
    const int32_t k_steps = 1 + int32_t(rng() % 200);
    const TailSplit split = plan_tail_split(items, programs, k_steps);
    splits += split.on();
    split_k += split.tails_per_item > 1;
    under_one_round += split.on() && split.whole_items == 0;
    const auto grid = int32_t(split_programs(split, items, programs));
    ASSERT_LE(grid, programs);
    expect_every_step_once(split, items, grid, k_steps);
  }
  EXPECT_GT(splits, 100) << "the trials exercise the split";
  EXPECT_GT(split_k, 30) << "and several tails per item";
  EXPECT_GT(under_one_round, 30) << "and split-K under one round";
}

TEST(TailSplit, UnderOneRoundEachItemIsSplitAcrossTheIdlePrograms) {
  // 16 x 4096 x 4096 on 64x128 tiles: 32 items of 64 K steps, 132 SMs. Three tails per item (96
  // helpers, 128 programs): heads 16 + 3 x 2 steps, tails 16 + 6.
  const TailSplit decode = plan_tail_split(32, 132, 64);
  EXPECT_EQ(decode.whole_items, 0);
  EXPECT_EQ(decode.tail_items, 32);
  EXPECT_EQ(decode.tails_per_item, 3);
  EXPECT_EQ(decode.helpers, 96);
  EXPECT_EQ(decode.tails_per_helper, 1);
  EXPECT_EQ(decode.head_steps, 16);
  EXPECT_EQ(decode.tail_steps, 16);
  EXPECT_EQ(split_programs(decode, 32, 132), 128);
  // On 64x64 tiles (BLOCK_SIZE_K 128): 64 items of 32 steps, one tail each: heads 18 + 2, tails
  // 14 + 6.
  const TailSplit narrow = plan_tail_split(64, 132, 32);
  EXPECT_EQ(narrow.tails_per_item, 1);
  EXPECT_EQ(narrow.head_steps, 18);
  EXPECT_EQ(split_programs(narrow, 64, 132), 128);
  // A tail's steps: the last one takes the rest. 10 items of 100 steps on 132 programs.
  const TailSplit deep = plan_tail_split(10, 132, 100);
  ASSERT_GT(deep.tails_per_item, 1);
  int32_t steps = deep.head_steps;
  for (int32_t r = 0; r < deep.tails_per_item; ++r) {
    EXPECT_EQ(deep.tail_begin(r), steps);
    EXPECT_GE(deep.tail_steps_of(r, 100), 1);
    steps += deep.tail_steps_of(r, 100);
  }
  EXPECT_EQ(steps, 100);
  // Without a split the grid is the items', as before.
  EXPECT_EQ(split_programs(plan_tail_split(100, 132, 64), 100, 132), 100);
  EXPECT_EQ(split_programs(plan_tail_split(32, 132, 3), 32, 132), 32) << "too short to split";
}

TEST(TailSplit, WithoutASplitTheWalkIsThePersistentOne) {
  const TailSplit none = plan_tail_split(100, 132, 64);  // fewer items than programs
  EXPECT_FALSE(none.on());
  EXPECT_EQ(none.whole_items, 100);
  const auto pieces = walk_all(none, 132, 64);
  for (int32_t p = 0; p < 132; ++p) {
    ASSERT_EQ(pieces[p].size(), p < 100 ? 1u : 0u);
    if (p < 100) {
      EXPECT_EQ(pieces[p][0].item, p);
    }
  }
  EXPECT_FALSE(plan_tail_split(528, 132, 172).on()) << "four whole rounds";
  EXPECT_FALSE(plan_tail_split(128, 132, 32).on()) << "2048^3: one round, under the grid";
}

TEST(TailSplit, TheModelsChoicesForTheSuitesShapes) {
  // 4096 x 4096 x 11008 on 128x256 tiles: 512 items, 132 programs, 172 K steps of 64.
  const TailSplit long_k = plan_tail_split(512, 132, 172);
  EXPECT_EQ(long_k.whole_items, 396);
  EXPECT_EQ(long_k.tail_items, 116);
  EXPECT_EQ(long_k.helpers, 16);
  EXPECT_EQ(long_k.tails_per_helper, 8);
  // Heads 158 + 2 = 160 steps, helpers 8 x (14 + 6) = 160; one step fewer and the helpers'
  // 8 x 21 = 168 are the longer.
  EXPECT_EQ(long_k.head_steps, 158);
  // 4096 x 11008 x 4096: 1376 items, 56 in the last round, 76 helpers with one tail each: heads
  // 34 + 2 steps, helpers 30 + 6.
  const TailSplit wide = plan_tail_split(1376, 132, 64);
  EXPECT_EQ(wide.tails_per_helper, 1);
  EXPECT_EQ(wide.head_steps, 34);
  // 8192^3: 2048 items, 68 in the last round, two tails per helper: heads 89 + 2, helpers
  // 2 x (39 + 6).
  EXPECT_EQ(plan_tail_split(2048, 132, 128).head_steps, 89);
  // Eight tails per helper over 64 steps (4096^3), two over 16 (8192 x 8192 x 1024), one over 4:
  // the tails cost as much as they save, so no split.
  EXPECT_FALSE(plan_tail_split(512, 132, 64).on());
  EXPECT_FALSE(plan_tail_split(2048, 132, 16).on());
  EXPECT_FALSE(plan_tail_split(140, 132, 4).on());
}

TEST(TailSplit, ASplitShortensTheLastRoundByTheMinimumGain) {
  // Where the model splits, both kinds of program finish the round at least kTailSplitMinGain
  // steps before a whole tile would; one step more for the heads would cost the helpers that.
  for (int32_t programs : {16, 66, 132})
    for (int32_t items = 1; items < 4 * programs; items += 7)
      for (int32_t k_steps : {2, 3, 8, 16, 33, 64, 172}) {
        const TailSplit s = plan_tail_split(items, programs, k_steps);
        if (!s.on()) continue;
        const int32_t heads = s.head_steps + s.tails_per_item * kHeadFixupSteps;
        const int32_t helpers = s.tails_per_helper * (s.tail_steps + kTailStoreSteps);
        EXPECT_LE(heads, k_steps - kTailSplitMinGain) << items << " items, " << k_steps;
        EXPECT_LE(helpers, k_steps - kTailSplitMinGain) << items << " items, " << k_steps;
        EXPECT_GE(s.helpers * s.tails_per_helper, s.tails());
        EXPECT_LT(s.helpers * (s.tails_per_helper - 1), s.tails()) << "c = cdiv(T * s, H)";
        EXPECT_LE(s.helpers + s.tail_items, programs) << "heads and helpers fit the grid";
        EXPECT_TRUE(s.tails_per_item == 1 || s.tails_per_helper == 1) << "s > 1: one tail each";
      }
}

}  // namespace
}  // namespace tilegemm
