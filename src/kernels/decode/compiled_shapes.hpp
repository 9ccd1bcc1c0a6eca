// The decode kernel's compiled shape: sm80's (BLOCK_SIZE_M x BLOCK_SIZE_N x BLOCK_SIZE_K, the warp
// tile, num_stages), with BLOCK_SIZE_M the problem's few rows and a ring of eight 128-byte K
// slices, 80 KB: two programs per SM, about 110 KB of B in flight on each. The one measured best of
// five tried on the H200 for M up to 16 (docs/history/perf-notes.md, "The decode kernel").
// Host and device.
#pragma once

#include <tuple>

#include "kernels/sm80/compiled_shapes.hpp"

namespace tilegemm::decode {

using sm80::Sm80Shape;

using Shapes = std::tuple<Sm80Shape<16, 64, 64, 16, 32, 8>>;  // w2

}  // namespace tilegemm::decode
