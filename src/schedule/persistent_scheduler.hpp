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
// `slot`: the item's place in the last round (head, tail), where its partial sums and flag go.
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
    if (item < split.whole_items) return {item, 0, k_steps, Share::whole, 0};
    const int32_t slot = item - split.whole_items;
    if (p >= split.helpers) return {item, 0, split.head_steps, Share::head, slot};
    return {item, split.head_steps, k_steps - split.head_steps, Share::tail, slot};
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
