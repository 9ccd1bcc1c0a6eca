// The last round's split ("tail split"): how a persistent grid shares out the tiles that do not
// fill a whole round of programs.
//
// A persistent grid of G programs walks its work items p, p + G, p + 2G, ... (tile_order.hpp:
// persistent_tile). When the items do not divide evenly, the last round has T < G of them and
// G - T programs sit idle for a whole tile: 512 tiles of 128x256 at 4096 x 4096 x 11008 make
// 3.88 rounds on 132 SMs, and 16 SMs wait through the fourth's 172 K steps. The split keeps every
// program busy in that round without moving the K offsets apart (Stream-K, which gave each
// program its own K offset, lost the L2 reuse of the grouped order):
//
//   whole items   items 0 .. G * (rounds - 1) - 1 as before: program p takes p, p + G, ...
//   heads         the last round's item j (j < T) goes to program H + j: its K steps
//                 0 .. head_steps - 1, at the same K offsets as the other heads, so the T of them
//                 share A and B in L2 as a round of whole tiles does. The head then adds its
//                 tails' partial sums, in the order of their K steps, and writes D.
//   tails         the K steps head_steps .. k_steps - 1 of each of those items, as s tails of
//                 tail_steps steps (the last one the rest): tail r of item j is tail u = j * s + r,
//                 its sums go to slot u of a workspace, then its flag is raised. The H helpers,
//                 programs 0 .. H - 1, share them out: helper h takes tails h * c .. h * c + c - 1
//                 one after another, where either s = 1 and c = cdiv(T, H) (H = G - T), or c = 1
//                 and H = T * s (split-K: s > 1 only where T * (s + 1) <= G).
//
// Where the items do not fill one round (T = items < G, no whole items), the split is split-K
// alone: the grid is the H + T programs of the last round (split_programs), so the 32 tiles of
// 64x128 of 16 x 4096 x 4096 take 128 SMs, each streaming a quarter of the K steps, not 32.
//
// A head waits for its tails' flags; a tail waits for nothing, so helpers are the first programs
// (launched first, none of them waits on a program not yet running). The head adds the tails in a
// fixed order, so D is the same bit for bit from one run to the next.
// plan_tail_split chooses s and head_steps from a model counted in K steps of the tile: a head
// costs its steps plus kHeadFixupSteps per tail it adds, a helper c tails of their steps plus
// kTailStoreSteps each; the split is taken when the busiest program of the round gains at least
// kTailSplitMinGain steps over a whole tile. Both hand-over costs scale with the tile's area, as
// a K step's work does, so one count serves every tile shape.
#pragma once

#include <cstdint>

#include "schedule/tile_order.hpp"

namespace tilegemm {

// The host's plan, passed to the kernel: no division is left for a program's start.
struct TailSplit {
  int32_t whole_items = 0;       // items taken whole (all of them without a split)
  int32_t tail_items = 0;        // T: the last round's items, each a head and s tails
  int32_t helpers = 0;           // H: programs 0 .. H - 1 take the tails
  int32_t tails_per_helper = 0;  // c: cdiv(T, H) with one tail per item, else 1
  int32_t head_steps = 0;        // K steps of a head; 0: no split
  int32_t tails_per_item = 1;    // s
  int32_t tail_steps = 0;        // K steps of each tail of an item but its last, which has the rest

  TILEGEMM_HOST_DEVICE constexpr bool on() const { return head_steps > 0; }
  // Tails, and the workspace's slots: T * s.
  TILEGEMM_HOST_DEVICE constexpr int32_t tails() const { return tail_items * tails_per_item; }
  // Tail r's first K step, and its steps, of an item of k_steps.
  TILEGEMM_HOST_DEVICE constexpr int32_t tail_begin(int32_t r) const {
    return head_steps + r * tail_steps;
  }
  TILEGEMM_HOST_DEVICE constexpr int32_t tail_steps_of(int32_t r, int32_t k_steps) const {
    return r + 1 < tails_per_item ? tail_steps : k_steps - tail_begin(r);
  }
};

// The model's costs, in K steps of the tile (see above), from the H100. A head adds each tail's
// sums in 2 steps. A tail costs 6 steps beyond its own: its wgmma drain, the stores of BM x BN
// fp32 sums (128 KB for 128x256) and the flag's release, which waits for them. With 1, the first
// guess, helpers with eight tails each lost 2.3 % at 4096 x 4096 x 11008 and 9 % at 4096^3,
// where a sweep of head_steps put the best split exactly where a cost of 6 puts it (158 of 172
// steps, +0.8 %; at 4096 x 11008 x 4096, one tail per helper, 34 of 64, +3 %).
constexpr int kHeadFixupSteps = 2;  // a head waits for a tail's flag and adds its sums
constexpr int kTailStoreSteps = 6;  // a tail stores them
constexpr int kTailSplitMinGain = 2;

// The model's steps of a head of `head` steps that adds s tails, each after a wait of `wait`
// steps, and a wait of `once` steps for them all; and of a helper's c tails of at most
// `tail_steps` steps each, with their stores.
constexpr int64_t head_round_steps(int64_t head, int64_t s, int64_t wait = kHeadFixupSteps,
                                   int64_t once = 0) {
  return head + once + s * wait;
}
constexpr int64_t helper_round_steps(int64_t c, int64_t tail_steps,
                                     int64_t store = kTailStoreSteps) {
  return c * (tail_steps + store);
}

// The model's steps of the busiest program of a split's last round (head_steps > 0): a head's with
// its adds, or a helper's tails with their stores. `wait`: a head's steps per tail it adds;
// `once`: its steps of waiting for all of them.
constexpr int64_t split_round_steps(const TailSplit& split, int64_t wait = kHeadFixupSteps,
                                    int64_t once = 0) {
  const int64_t head = head_round_steps(split.head_steps, split.tails_per_item, wait, once);
  const int64_t helper = helper_round_steps(split.tails_per_helper, split.tail_steps);
  return head > helper ? head : helper;
}

// No split: all `items` whole.
TILEGEMM_HOST_DEVICE constexpr TailSplit no_tail_split(int64_t items) {
  TailSplit none;
  none.whole_items = int32_t(items);
  return none;
}

// The split for `items` work items of `k_steps` K steps each on a persistent grid of `programs`,
// or none (head_steps 0, every item whole). With whole rounds before the last, one tail per item
// (c >= 1) or, where the last round leaves room, s > 1 tails of one helper each; under one round,
// split-K alone (s >= 1, c = 1), on split_programs of the grid. The model's busiest program, in K
// steps: max(head + s * kHeadFixupSteps, c * (its tails' longest + kTailStoreSteps)), the least
// of every s and head, the first of them (smallest s, then head) on a tie.
//
// For each s, the head's cost rises with h and the helpers' falls in steps of c every s heads, so
// the least is where they cross: at h*, the first h whose head costs no less than its helpers
// (found by halving), or on the helpers' level just before it, from its first h. A head is taken
// only if its last tail has a step (at most s - 1 heads in a row fail that; a head that leaves a
// multiple of s never does), so each of the two places is a short walk up to a head that does.
// Planned on the host at every launch and for every config the rules weigh: O(s * log k_steps)
// per s, where trying every head cost O(k_steps).
constexpr TailSplit plan_tail_split(int64_t items, int64_t programs, int64_t k_steps,
                                    int64_t head_fixup = kHeadFixupSteps,
                                    int64_t tail_store = kTailStoreSteps) {
  const TailSplit none = no_tail_split(items);
  const int64_t tail = programs > 0 ? items % programs : 0;
  if (programs < 2 || items < 1 || tail == 0 || k_steps < 2) return none;
  TailSplit best = none;
  int64_t best_cost = k_steps;  // the busiest program's steps in the round
  for (int64_t s = 1; tail * (s + 1) <= programs || (s == 1 && items > programs); ++s) {
    const bool split_k = s > 1 || items < programs;
    const int64_t helpers = split_k ? tail * s : programs - tail;
    const int64_t per_helper = split_k ? 1 : cdiv(tail, helpers);
    const int64_t last_head = k_steps - s;  // every tail at least a step
    // A head of one step and s adds costs no less than best: nor does any larger s.
    if (last_head < 1 || head_round_steps(1, s, head_fixup) >= best_cost) break;
    const auto head_cost = [&](int64_t head) { return head_round_steps(head, s, head_fixup); };
    const auto helper_cost = [&](int64_t head) {
      return helper_round_steps(per_helper, cdiv(k_steps - head, s), tail_store);
    };
    const auto fits = [&](int64_t head) {  // the last tail has a step
      return k_steps - head > (s - 1) * cdiv(k_steps - head, s);
    };
    // Takes the first head from `head` to `end` whose last tail has a step, if its cost is less.
    const auto consider_from = [&](int64_t head, int64_t end) {
      while (head <= end && !fits(head)) ++head;
      if (head > end) return;
      const TailSplit split{.whole_items = int32_t(items - tail),
                            .tail_items = int32_t(tail),
                            .helpers = int32_t(helpers),
                            .tails_per_helper = int32_t(per_helper),
                            .head_steps = int32_t(head),
                            .tails_per_item = int32_t(s),
                            .tail_steps = int32_t(cdiv(k_steps - head, s))};
      const int64_t head_steps = head_cost(head);
      const int64_t helper_steps = helper_round_steps(per_helper, split.tail_steps, tail_store);
      if (const int64_t cost = head_steps > helper_steps ? head_steps : helper_steps;
          cost < best_cost) {
        best_cost = cost;
        best = split;
      }
    };
    int64_t lo = 1, hi = last_head + 1;  // h* in [1, last_head + 1]: past the end if none
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (head_cost(mid) >= helper_cost(mid)) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    if (lo > 1) {  // the helpers' level at h* - 1, from its first head (k_steps - q * s)
      const int64_t level = cdiv(k_steps - (lo - 1), s);
      const int64_t first = k_steps - level * s;
      consider_from(first > 1 ? first : 1, lo - 1);
    }
    consider_from(lo, last_head);
  }
  return k_steps - best_cost < kTailSplitMinGain ? none : best;
}

// The programs a launch of `items` items under `split` needs on a grid of at most `programs`: the
// heads and helpers of a split under one round, else every program (none more than the items).
constexpr int64_t split_programs(const TailSplit& split, int64_t items, int64_t programs) {
  if (split.on() && split.whole_items == 0) return int64_t(split.helpers) + split.tail_items;
  return items < programs ? items : programs;
}

}  // namespace tilegemm
