// What every GPU kernel receives: the problem reduced to views, sizes and the epilogue.
// Built once on the host (make_gemm_args) and passed to the kernel by value.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "common/host_device.hpp"
#include "epilogue/epilogue.hpp"
#include "problem/matrix_view.hpp"
#include "problem/scales.hpp"

namespace tilegemm {

struct GemmArgs {
  int64_t m = 0, n = 0, k = 0;
  int64_t batch_count = 1;
  MatrixView a;  // M x K
  MatrixView b;  // K x N
  EpilogueParams epilogue;
  ScaleView scales;  // fp8 inputs
  Groups groups;     // a grouped GEMM (batch_count groups)
  bool fast_accumulation = false;
  int group_size_m = 8;
};

// GROUP_SIZE_M for a grid of `m` rows in tiles of `block_m`: past the grid's rows it orders the
// tiles as the grid's rows do; capped there, the kernels' 32-bit products of it (GROUP_SIZE_M x
// programs along N) stay inside the grid's count.
inline int capped_group_size_m(int64_t m, int block_m, int group_size_m) {
  return int(std::max<int64_t>(1, std::min<int64_t>(cdiv(m, int64_t(block_m)), group_size_m)));
}

inline GemmArgs make_gemm_args(const GemmProblem& p, int group_size_m) {
  GemmArgs args;
  args.m = p.m;
  args.n = p.n;
  args.k = p.k;
  args.batch_count = p.batch_count;
  args.a = view_of(p.a, p.m, p.k);
  args.b = view_of(p.b, p.k, p.n);
  args.epilogue = make_epilogue_params(p);
  args.scales = scale_view(p);
  args.groups = p.groups;
  args.fast_accumulation = p.fast_accumulation;
  args.group_size_m = group_size_m;
  return args;
}

// The transposed product D^T = B^T A^T: M and N, A and B swapped, every matrix viewed transposed
// (the same memory), GROUP_SIZE_M capped at the new grid's rows. The same D, for an epilogue
// whose terms run along both of D's dimensions alike: not a bias (along D's columns) or fp8's
// per-row and per-column scales.
inline GemmArgs transposed_product(const GemmArgs& args, int block_m) {
  const auto transposed = [](MatrixView v) {
    std::swap(v.stride.row, v.stride.col);
    return v;
  };
  GemmArgs t = args;
  t.m = args.n;
  t.n = args.m;
  t.a = transposed(args.b);
  t.b = transposed(args.a);
  t.epilogue.c = transposed(args.epilogue.c);
  t.epilogue.d = transposed(args.epilogue.d);
  t.group_size_m = capped_group_size_m(t.m, block_m, args.group_size_m);
  return t;
}

}  // namespace tilegemm
