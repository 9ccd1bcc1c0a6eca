// The persistent grid's scheduler: what each program of a grid of one program (or cluster) per
// SM does next. A program takes work items first(p), next(p, first(p)), ... until -1; tile(item,
// rank) is the output tile a work item is for the cluster's program `rank`, and k_steps(p, item)
// and piece(p, item) which of the tile's K steps program p runs. Host and device: the sm90 kernel
// calls it, `explain` prints it and the host tests walk every program of random grids.
//
//   items      the tiles of every batch entry in grouped order (tile_order.hpp:
//              PersistentTiles); program p of a grid of G takes p, p + G, ..., so the G tiles in
//              flight at once are consecutive in grouped order, as a launch of G programs would be.
//   last round where the items leave the last round of programs partly idle, its tiles' K steps
//              are shared out between heads and tails (tail_split.hpp).
//
// The interface is what other schedulers fill in the same way: a grouped (MoE) scheduler's items
// run over the tiles of every group, its tile() naming the group as well; a Stream-K scheduler's
// piece() gives each program its own range of K steps. docs/design.md says how each plugs in.
//
// Every call takes the program's number, and the scheduler keeps nothing from one item to the
// next but the item: in the kernel's loops anything kept across a K loop, or worked out once per
// program, is a register through every K step.
#pragma once

#include <cstdint>

#include "schedule/tail_split.hpp"
#include "schedule/tile_order.hpp"

namespace tilegemm {

// What a program does with one work item: all of its K steps, the head's or the tail's.
enum class Share : int32_t { whole, head, tail };

// One piece of a program's walk: K steps k_begin .. k_begin + k_steps - 1 of work item `item`.
// `slot`: where the piece's partial sums and flags are, a tail's own slot, a head's first (its
// tails are slots slot .. slot + tails_per_item - 1, in the order of their K steps).
struct Piece {
  int32_t item = -1;
  int32_t k_begin = 0, k_steps = 0;
  Share share = Share::whole;
  int32_t slot = 0;
};

// The walk of the programs of a grid of `programs` under `split`: program p takes items first(p),
// next(p, first(p)), ... until -1, and piece(p, item) says what it does with each: all k_steps of
// a whole item, or a head's or a tail's share of a last-round one.
struct ProgramWalk {
  TailSplit split;
  int32_t programs = 1;
  int32_t k_steps = 0;

  // The tail a helper p runs for `item`: with one tail per item, the item's; with several, the
  // helper's one (c = 1).
  TILEGEMM_HOST_DEVICE constexpr int32_t tail_of(int32_t p, int32_t item) const {
    return split.tails_per_item == 1 ? item - split.whole_items : p;
  }
  // Program p's item in the last round: with a split, its head's or its first tail's (none, -1,
  // for a program left without one); without it, none (the whole items include that round).
  TILEGEMM_HOST_DEVICE constexpr int32_t last_round(int32_t p) const {
    if (!split.on()) return -1;
    if (p >= split.helpers) {
      return p - split.helpers < split.tail_items ? split.whole_items + p - split.helpers : -1;
    }
    const int32_t tail = p * split.tails_per_helper;
    return tail < split.tails() ? split.whole_items + tail / split.tails_per_item : -1;
  }
  TILEGEMM_HOST_DEVICE constexpr int32_t first(int32_t p) const {
    return p < split.whole_items ? p : last_round(p);
  }
  TILEGEMM_HOST_DEVICE constexpr int32_t next(int32_t p, int32_t item) const {
    if (item < 0) return -1;
    if (item < split.whole_items) {
      return item + programs < split.whole_items ? item + programs : last_round(p);
    }
    if (p >= split.helpers) return -1;  // a head is the program's last piece
    // A helper's next tail (one tail per item here, when c > 1).
    const int32_t tail = tail_of(p, item) + 1;
    const bool mine = tail < (p + 1) * split.tails_per_helper && tail < split.tails();
    return mine ? item + 1 : -1;
  }
  // piece(p, item).k_steps alone.
  TILEGEMM_HOST_DEVICE constexpr int32_t steps_of(int32_t p, int32_t item) const {
    if (item < split.whole_items) return k_steps;
    if (p >= split.helpers) return split.head_steps;
    return split.tail_steps_of(tail_of(p, item) % split.tails_per_item, k_steps);
  }
  TILEGEMM_HOST_DEVICE constexpr Piece piece(int32_t p, int32_t item) const {
    if (item < split.whole_items) return {item, 0, k_steps, Share::whole, 0};
    if (p >= split.helpers) {
      const int32_t first_tail = (item - split.whole_items) * split.tails_per_item;
      return {item, 0, split.head_steps, Share::head, first_tail};
    }
    const int32_t tail = tail_of(p, item), r = tail % split.tails_per_item;
    return {item, split.tail_begin(r), split.tail_steps_of(r, k_steps), Share::tail, tail};
  }
};

struct PersistentScheduler {
  PersistentTiles tiles;
  ProgramWalk walk;

  TILEGEMM_HOST_DEVICE constexpr int32_t first(int32_t program) const {
    return walk.first(program);
  }
  TILEGEMM_HOST_DEVICE constexpr int32_t next(int32_t program, int32_t item) const {
    return walk.next(program, item);
  }
  TILEGEMM_HOST_DEVICE constexpr BatchedTile tile(int32_t item, int rank) const {
    return tiles.tile(item, rank);
  }
  TILEGEMM_HOST_DEVICE constexpr int32_t k_steps(int32_t program, int32_t item) const {
    return walk.steps_of(program, item);
  }
  TILEGEMM_HOST_DEVICE constexpr Piece piece(int32_t program, int32_t item) const {
    return walk.piece(program, item);
  }
};

}  // namespace tilegemm
