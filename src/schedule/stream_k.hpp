// Stream-K: a persistent grid that shares the K loop of its last, partial wave of tiles.
//
// A persistent grid of G programs over T tiles of k_tiles K steps each runs ceil(T / G) waves;
// when T is not a multiple of G the last wave leaves SMs idle (4096^3 in 128 x 256 tiles: 512
// tiles on 132 SMs, 3.88 waves, the last 12 % empty), and when T < G (512^3) most SMs never get
// a tile. Stream-K (Osama et al., PPoPP 2023, the "data-parallel + Stream-K" hybrid) keeps whole
// tiles for the full waves and spreads the K steps of the remaining tiles evenly over all G
// programs (choose_stream_k below uses it only when there are fewer tiles than programs):
//
//   work items  [0, dp_items)                   data-parallel: program p takes p, p + G, ...
//               [dp_items, dp_items + sk_items)  Stream-K: their K steps, laid end to end
//                                               (item-major), are cut into G ranges, one each
//   a range     covers the end of one item, whole items, the start of another, in that order:
//               `segments`, each a run of K steps [k_begin, k_end) of one item.
//
// Who finishes a tile: the program whose range holds the tile's step 0 (k_begin == 0). Each
// other program that worked on the tile (a "contributor") did so in the *first* segment of its
// range, which it reaches first, so it adds its partial sums to its own workspace slot and
// raises its flag early; the finishing program reaches the tile at the end of its range, waits
// for the flags, adds the slots and runs the epilogue. A program has at most one such partial
// segment, so one slot per program suffices, and the contributors of a tile are the programs
// after the finisher whose non-empty ranges start strictly inside it. No program waits before
// it has written its own partial, and all G are resident at once, so nothing can deadlock.
//
// Everything here is plain index math, shared by the host (which chooses the split) and the
// kernel (which walks it), and unit-tested on the host.
#pragma once

#include <cstdint>

#include "schedule/tile_order.hpp"

namespace tilegemm {

struct StreamK {
  int programs = 1;      // G: the persistent grid
  int k_tiles = 1;       // K steps per work item
  int64_t dp_items = 0;  // items done whole (all of them when sk_items == 0)
  int64_t sk_items = 0;  // items whose K steps are shared out

  // Program p's share of the Stream-K steps: [sk_begin(p), sk_begin(p + 1)), counted from the
  // first step of item dp_items. The first (total % G) programs take one step more.
  TILEGEMM_HOST_DEVICE constexpr int64_t sk_begin(int64_t program) const {
    const int64_t total = sk_items * k_tiles;
    const int64_t share = total / programs, extra = total % programs;
    return program * share + (program < extra ? program : extra);
  }
};

// Consecutive K steps [k_begin, k_end) of one work item.
struct Segment {
  int64_t item = 0;
  int k_begin = 0, k_end = 0;
};

TILEGEMM_HOST_DEVICE constexpr bool whole_item(const Segment& s, const StreamK& sk) {
  return s.k_begin == 0 && s.k_end == sk.k_tiles;
}
// The segment's sums are partial and another program finishes the item.
TILEGEMM_HOST_DEVICE constexpr bool contributes(const Segment& s) { return s.k_begin > 0; }

// One program's walk: its data-parallel items, then the segments of its Stream-K range.
//   for (StreamKWalk w(sk, p); w.next(&segment);) ...
class StreamKWalk {
 public:
  TILEGEMM_HOST_DEVICE constexpr StreamKWalk(const StreamK& sk, int program)
      : sk_(sk), item_(program), at_(sk.sk_begin(program)), end_(sk.sk_begin(program + 1)) {}

  TILEGEMM_HOST_DEVICE constexpr bool next(Segment* s) {
    if (item_ < sk_.dp_items) {
      *s = {item_, 0, sk_.k_tiles};
      item_ += sk_.programs;
      return true;
    }
    if (at_ >= end_) return false;
    const int64_t item = at_ / sk_.k_tiles;
    const int k_begin = int(at_ - item * sk_.k_tiles);
    const int64_t left = end_ - at_;
    const int k_end = left < sk_.k_tiles - k_begin ? k_begin + int(left) : sk_.k_tiles;
    *s = {sk_.dp_items + item, k_begin, k_end};
    at_ += k_end - k_begin;
    return true;
  }

 private:
  StreamK sk_;
  int64_t item_, at_, end_;
};

// For the program that finishes Stream-K item `item` (k_begin == 0, k_end < k_tiles): its
// contributors are programs first_contributor, first_contributor + 1, ... while is_contributor.
TILEGEMM_HOST_DEVICE constexpr bool is_contributor(const StreamK& sk, int64_t item,
                                                   int64_t program) {
  if (program >= sk.programs) return false;
  const int64_t begin = sk.sk_begin(program), end = sk.sk_begin(program + 1);
  const int64_t item_begin = (item - sk.dp_items) * sk.k_tiles;
  return begin < end && begin > item_begin && begin < item_begin + sk.k_tiles;
}

// The cost of a shared tile's fixup (a contributor's partial sums written to L2, and read back
// by the finisher after it has waited for them), in K steps of a block_m x block_n x 64 tile:
// about 3 us, and such a step takes ~0.6 us for 128 x 256 at the H100's wgmma rate, a quarter
// of that for 128 x 64.
constexpr int fixup_steps(int block_m, int block_n) {
  return int(cdiv(5 * 128 * 256, int64_t(block_m) * block_n));
}

// The split a persistent kernel should run: Stream-K when there are fewer items than programs
// and the model says the busiest program finishes at least 20 % sooner (its share of the K steps
// plus `fixup` steps, against a whole item's k_tiles), else plain persistent (sk_items = 0).
//
// Problems with at least one whole wave keep whole tiles. The hybrid split (whole waves, then
// the last wave shared) measured slower on the H100 (4096^3 -10 %, 4096 x 4096 x 11008 -27 %):
// programs that share the last wave work at different K offsets at the same time, so the
// grouped order's reuse of A and B in L2 is lost just when the whole GPU is loading
// (docs/perf-notes.md, sm90 v6). The walk still supports it (dp_items > 0 with sk_items > 0).
//
// `programs`: the SMs the grid may use; the result's may be fewer (no more programs than items,
// or than K steps to share).
constexpr StreamK choose_stream_k(int64_t items, int k_tiles, int programs, int fixup) {
  const StreamK plain{programs < items ? programs : int(items), k_tiles, items, 0};
  if (items <= 0 || items >= programs) return plain;
  const int64_t steps = items * k_tiles;
  const int used = steps < programs ? int(steps) : programs;
  const int64_t busiest = cdiv(steps, used) + fixup;
  if (busiest * 5 > int64_t(k_tiles) * 4) return plain;
  return {used, k_tiles, 0, items};
}

}  // namespace tilegemm
