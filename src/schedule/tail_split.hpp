// The last round's split ("tail split"): how a persistent grid shares out the tiles that do not
// fill a whole round of programs.
//
// A persistent grid of G programs walks its work items p, p + G, p + 2G, ... (tile_order.hpp:
// persistent_tile). When the items do not divide evenly, the last round has T < G of them and
// G - T programs sit idle for a whole tile: 512 tiles of 128x256 at 4096 x 4096 x 11008 make
// 3.88 rounds on 132 SMs, and 16 SMs wait through the fourth's 172 K steps. The split keeps every
// program busy in that round without moving the K offsets apart (Stream-K, which gave each
// program its own K offset, lost the L2 reuse of the grouped order: docs/perf-notes.md, sm90 v6):
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

// The model's costs, in K steps of the tile (see above), from the H100 (docs/perf-notes.md, sm90
// v31). A tail costs 6 steps beyond its own: its wgmma drain, the stores of BM x BN fp32 sums
// (128 KB for 128x256) and the flag's release, which waits for them. With 1, the first guess,
// helpers with eight tails each lost 2.3 % at 4096 x 4096 x 11008 and 9 % at 4096^3, where a
// sweep of head_steps put the best split exactly where a cost of 6 puts it (158 of 172 steps,
// +0.8 %; at 4096 x 11008 x 4096, one tail per helper, 34 of 64, +3 %).
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

// What a program does with one work item: all of its K steps, the head's or the tail's.
enum class Share : int32_t { whole, head, tail };

// One piece of a program's walk: K steps k_begin .. k_begin + k_steps - 1 of work item `item`.
// `slot`: the item's place in the last round (head, tail), where its partial sums and flag go.
struct Piece {
  int32_t item = -1;
  int32_t k_begin = 0, k_steps = 0;
  Share share = Share::whole;
  int32_t slot = 0;
};

// The walk of the programs of a grid of `programs` under `split`: program p takes items first(p),
// next(p, first(p)), ... until -1, and piece(p, item) says what it does with each. Whole items run
// K steps k_begin .. k_begin + k_steps - 1 (split-K: the program's share; else all of them). The
// walk carries only the item from one piece to the next, and takes the program's number at each
// call: in the kernel's loops anything kept from one piece to the next, or worked out once per
// program, is a register through every K loop.
struct ProgramWalk {
  TailSplit split;
  int32_t programs = 1;
  int32_t k_begin = 0, k_steps = 0;

  // Program p's item in the last round: with a split, its head's or its first tail's (none, -1,
  // for a helper left without one); without it, none (the whole items include that round).
  TILEGEMM_HOST_DEVICE constexpr int32_t last_round(int32_t p) const {
    if (!split.on()) return -1;
    const int32_t slot = p >= split.helpers ? p - split.helpers : p * split.tails_per_helper;
    return slot < split.tail_items ? split.whole_items + slot : -1;
  }
  TILEGEMM_HOST_DEVICE constexpr int32_t first(int32_t p) const {
    return p < split.whole_items ? p : last_round(p);
  }
  TILEGEMM_HOST_DEVICE constexpr int32_t next(int32_t p, int32_t item) const {
    if (item < 0) return -1;
    if (item < split.whole_items) {
      return item + programs < split.whole_items ? item + programs : last_round(p);
    }
    if (p >= split.helpers) return -1;                  // a head is the program's last piece
    const int32_t slot = item - split.whole_items + 1;  // a helper's next tail
    const bool mine = slot < (p + 1) * split.tails_per_helper && slot < split.tail_items;
    return mine ? item + 1 : -1;
  }
  // piece(p, item).k_steps alone.
  TILEGEMM_HOST_DEVICE constexpr int32_t steps_of(int32_t p, int32_t item) const {
    if (item < split.whole_items) return k_steps;
    return p >= split.helpers ? split.head_steps : k_steps - split.head_steps;
  }
  TILEGEMM_HOST_DEVICE constexpr Piece piece(int32_t p, int32_t item) const {
    if (item < split.whole_items) return {item, k_begin, k_steps, Share::whole, 0};
    const int32_t slot = item - split.whole_items;
    if (p >= split.helpers) return {item, 0, split.head_steps, Share::head, slot};
    return {item, split.head_steps, k_steps - split.head_steps, Share::tail, slot};
  }
};

}  // namespace tilegemm
