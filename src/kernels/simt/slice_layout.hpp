// Which granules of a BK x X operand slice each warptile thread moves to shared memory.
// Host and device: the host tests check that the threads cover the slice exactly once, each
// thread's granules a constant step apart.
//
// A "granule" is what one thread moves at once along the operand's contiguous dimension: a
// 16-byte vector or one element. The slice has `along` granules along that dimension (BK / V
// when K is contiguous, X / V otherwise) and BK or X rows of them across it. Thread t's granule
// p lies p * (threads / along) rows after its granule 0, so a thread keeps one address and
// reaches the others by a constant offset.
#pragma once

#include "common/host_device.hpp"

namespace tilegemm::simt::warptile {

struct SliceCoord {
  int k = 0;
  int x = 0;  // m for A, n for B
};

// Granule p of thread `thread`: its (k, x) origin in the slice. Consecutive threads take
// consecutive granules along the contiguous dimension, so a warp reads 32 granules in a row
// (coalesced).
//
// For 4-byte elements along K (a K-contiguous fp32 operand, stored [k][x] with a pitch of 4 (mod
// 32) words), 16 lanes along k store pairwise into the same bank (4k and 4(k + 8) coincide). A
// warp of 8 values of k x 4 of x hits 32 banks, but reads 4 lines of the operand instead of 2,
// and measured 10 % slower at 4096^3: the 2-way conflict stays.
// (Unsigned arithmetic: threadIdx.x is unsigned, and signed division by `along` costs the K loop
// extra instructions.)
TILEGEMM_HOST_DEVICE constexpr SliceCoord slice_granule(unsigned thread, int p, int along,
                                                        int threads, bool contig_k, int v) {
  const int along_index = int(thread % unsigned(along));
  const int across = int(thread / unsigned(along)) + p * (threads / along);
  return contig_k ? SliceCoord{along_index * v, across} : SliceCoord{across, along_index * v};
}

}  // namespace tilegemm::simt::warptile
