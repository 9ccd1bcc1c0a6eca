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
//   heads         the last round's item j (j < T) goes to program H + j, where H = G - T: its K
//                 steps 0 .. head_steps - 1, at the same K offsets as the other heads, so the T
//                 of them share A and B in L2 as a round of whole tiles does. The head then adds
//                 the tail's partial sums and writes D.
//   tails         the K steps head_steps .. k_steps - 1 of each of those items, shared among the
//                 H helpers, programs 0 .. H - 1: helper h takes items h * c .. h * c + c - 1 (c =
//                 cdiv(T, H)), one after another. Each tail's fp32 partial sums go to the
//                 item's slot j of a workspace, then its flag is raised.
//
// A head waits for its tail's flag; a tail waits for nothing, so helpers are the first programs
// (launched first, none of them waits on a program not yet running).
// plan_tail_split chooses head_steps from a model counted in K steps of the tile: a head costs its
// steps plus kHeadFixupSteps, a helper c tails of (k_steps - head_steps) steps plus
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
  int32_t tail_items = 0;        // T: the last round's items, each a head and a tail
  int32_t helpers = 0;           // H = G - T: programs 0 .. H - 1 take the tails
  int32_t tails_per_helper = 0;  // c = cdiv(T, H)
  int32_t head_steps = 0;        // K steps of a head; 0: no split

  TILEGEMM_HOST_DEVICE constexpr bool on() const { return head_steps > 0; }
};

// The model's costs, in K steps of the tile (see above), from the H100. A tail costs 6 steps
// beyond its own: its wgmma drain, the stores of BM x BN fp32 sums (128 KB for 128x256) and the
// flag's release, which waits for them. With 1, the first guess, helpers with eight tails each
// lost 2.3 % at 4096 x 4096 x 11008 and 9 % at 4096^3, where a sweep of head_steps put the best
// split exactly where a cost of 6 puts it (158 of 172 steps, +0.8 %; at 4096 x 11008 x 4096, one
// tail per helper, 34 of 64, +3 %).
constexpr int kHeadFixupSteps = 2;  // a head waits for the flag and adds the sums
constexpr int kTailStoreSteps = 6;  // a tail stores them
constexpr int kTailSplitMinGain = 2;

// No split: all `items` whole.
TILEGEMM_HOST_DEVICE constexpr TailSplit no_tail_split(int64_t items) {
  TailSplit none;
  none.whole_items = int32_t(items);
  return none;
}

// The split for `items` work items of `k_steps` K steps each on a persistent grid of `programs`,
// or none (head_steps 0, every item whole): only where there are whole rounds before the last
// one, so that every program has a first whole item whose K loop starts the grid as before.
constexpr TailSplit plan_tail_split(int64_t items, int64_t programs, int64_t k_steps) {
  const TailSplit none = no_tail_split(items);
  const int64_t tail = programs > 0 ? items % programs : 0;
  if (programs < 2 || items <= programs || tail == 0 || k_steps < 2) return none;
  const int64_t helpers = programs - tail, per_helper = cdiv(tail, helpers);
  int64_t best_head = 0, best_cost = k_steps;  // the busiest program's steps in the round
  for (int64_t head = 1; head < k_steps; ++head) {
    const int64_t head_cost = head + kHeadFixupSteps;
    const int64_t helper_cost = per_helper * (k_steps - head + kTailStoreSteps);
    const int64_t cost = head_cost > helper_cost ? head_cost : helper_cost;
    if (cost < best_cost) best_cost = cost, best_head = head;
  }
  if (k_steps - best_cost < kTailSplitMinGain) return none;
  return {.whole_items = int32_t(items - tail),
          .tail_items = int32_t(tail),
          .helpers = int32_t(helpers),
          .tails_per_helper = int32_t(per_helper),
          .head_steps = int32_t(best_head)};
}

}  // namespace tilegemm
