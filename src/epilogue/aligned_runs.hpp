// Runs of 8 outputs placed on D's 16-byte boundaries. The epilogues that stage a tile in shared
// memory finish it in runs of 8 consecutive outputs of a row of D, each run leaving in 16-byte
// stores when its first output is 16-byte aligned. Runs that start at the tile's own columns are
// aligned only when D's rows are. When they are not (an odd ldd, say), a row's runs can be
// shifted back to the boundary at or before its first output: all of them but a partial first and
// last then still leave in 16-byte stores. Host and device; unit-tested
// (tests/host/test_epilogue.cpp).
#pragma once

#include <cstdint>

#include "common/host_device.hpp"

namespace tilegemm {

// Outputs between the 16-byte boundary at or before `address` (a row's first output in the
// tile) and that output: 0 .. 16 / element_size - 1.
TILEGEMM_HOST_DEVICE inline int run_shift(uintptr_t address, int element_size) {
  return int(address % 16) / element_size;
}

// Run `run` of a row whose runs are shifted back by `shift` outputs: it covers [begin, begin +
// count) of the row's `valid` outputs inside D (count 0: nothing of the row is left), and its
// first output is on a 16-byte boundary (`aligned`) unless it is the row's partial first run.
// A row of `extent` tile outputs takes runs 0 .. extent / 8 (one more than unshifted).
struct OutputRun {
  int begin = 0, count = 0;
  bool aligned = false;
};
TILEGEMM_HOST_DEVICE inline OutputRun shifted_run(int run, int shift, int valid) {
  const int start = run * 8 - shift;
  const int begin = start > 0 ? start : 0;
  const int end = start + 8 < valid ? start + 8 : valid;
  return {begin, end > begin ? end - begin : 0, start >= 0};
}

}  // namespace tilegemm
