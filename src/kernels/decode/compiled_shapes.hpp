// The decode kernel's compiled shapes, the copy path each is compiled for, and the orientation a
// launch runs in. Host and device.
#pragma once

#include <tuple>

#include "kernels/gemm_args.hpp"
#include "kernels/sm80/compiled_shapes.hpp"

namespace tilegemm::decode {

using sm80::Sm80Shape;

// sm80's shapes (BLOCK_SIZE_M x BLOCK_SIZE_N x BLOCK_SIZE_K, the warp tile, num_stages), with
// BLOCK_SIZE_M the problem's few rows and 128-byte K slices.
//   s8  cp.async, for A and B with 16-byte aligned rows: a ring of eight slices, 80 KB, two
//       programs per SM, about 110 KB of B in flight on each. The one measured best of five
//       tried on the H200 for M up to 16 (docs/history/perf-notes.md, "The decode kernel").
//   s2  the staged path, for rows that are not 16-byte aligned: element loads into registers,
//       stored to shared memory after the slice's mma. Its loads are in flight one slice at a
//       time whatever the depth, so two stages (20 KB) leave room for more programs per SM.
using Shapes = std::tuple<Sm80Shape<16, 64, 64, 16, 32, 8>,   // w2, cp.async
                          Sm80Shape<16, 64, 64, 16, 32, 2>>;  // w2, staged

// Whether a config of num_stages is compiled for the cp.async path (else the staged one).
TILEGEMM_HOST_DEVICE constexpr bool takes_async_path(int num_stages) { return num_stages > 2; }

// Whether a launch runs the transposed product D^T = B^T A^T (gemm_args.hpp): where N < M, so
// that the few rows of the tile are the problem's smaller side and the kernel streams the larger
// operand (A, for N of 16 or less). Not with a bias, which runs along D's columns, the
// transposed product's rows, where the epilogue does not take it.
inline bool runs_transposed(const GemmArgs& args) {
  return args.n < args.m && args.epilogue.bias == nullptr;
}

// The arguments a launch of tiles block_m rows high runs: the problem's, or its transposed
// product (runs_transposed).
inline GemmArgs oriented(const GemmArgs& args, int block_m) {
  return runs_transposed(args) ? transposed_product(args, block_m) : args;
}

}  // namespace tilegemm::decode
