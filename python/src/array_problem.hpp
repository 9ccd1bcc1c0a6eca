// Arrays -> a GemmProblem: how tilegemm.matmul reads the arrays it is given (torch, NumPy, CuPy,
// JAX; through DLPack), following torch.matmul and torch.addmm:
//
//   - an array's last two dimensions are its matrix, any before them its batch (torch.matmul);
//     the batch dimensions are one batch of tilegemm's when they are evenly strided (any view of
//     a contiguous array is), and a 2-D operand is shared by every batch entry of the other;
//   - a matrix whose last dimension has stride 1 is row-major, with its rows `stride(-2)` apart;
//     one whose second-to-last has stride 1 is column-major (a transposed view: `b.T`, `w.t()`),
//     so no view costs a copy; any other strides are refused (make the array contiguous);
//   - c (torch.addmm's `input`) has out's shape, or is one M x N matrix for every batch entry;
//     bias is a vector of N values, or one per batch entry (batch x N);
//   - fp8 scales (tilegemm.scaled_mm, following torch._scaled_mm) say their mode by their
//     shapes: one value each (per tensor); (M, 1) and (1, N) (per row of A and column of B);
//     (M, ceil(K/128)) and (ceil(K/128), ceil(N/128)) (1 x 128 and 128 x 128 blocks), both
//     column-major, as the library stores block scales (A's M rows of a K block together; B's
//     the transpose of DeepSeek-V3's (N/128, K/128) weight scales);
//   - a grouped GEMM (tilegemm.grouped_mm, following torch._grouped_mm) gives its groups' sizes
//     as int32 values: with `offsets`, a is tokens x K with each group's rows one after the
//     other, b is groups x K x N and out tokens x N; with `counts`, a, b and out are batches of
//     one entry per group, as for a batched product.
//
// Host only and free of Python: the module (module.cpp) fills ArrayRefs from the arrays.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tilegemm/tilegemm.hpp"

namespace tilegemm::python {

// An array as DLPack describes it. Strides are in elements.
struct ArrayRef {
  const char* name = "";  // the argument's name in messages: "a", "b", "c", "bias", "out", ...
  void* data = nullptr;
  std::vector<int64_t> shape, strides;
  DType dtype = DType::fp32;  // (a grouped GEMM's sizes: int32, which the module checked)
  bool on_gpu = false;
  int device_id = 0;
};

struct MatmulArgs {
  ArrayRef a, b, out;
  std::optional<ArrayRef> c, bias;
  float alpha = 1.0f, beta = 0.0f;
  Activation activation = Activation::none;
  float leaky_relu_slope = 0.01f;
  // fp32 A and B: "ieee" (fp32 products), "tf32" (DType::tf32) or "tf32x3" (DType::tf32x3)
  std::string precision = "ieee";
  GroupForm groups = GroupForm::none;
  std::optional<ArrayRef> sizes;  // the groups' sizes (offsets or counts), one int32 a group
  // fp8 a and b (tilegemm.scaled_mm, as torch._scaled_mm): float32 scales, whose shapes say the
  // mode (take_scales in array_problem.cpp); an fp8 out's scale and its amax (one float32 each);
  // fast accumulation (use_fast_accum).
  std::optional<ArrayRef> scale_a, scale_b, scale_result, amax;
  bool fast_accumulation = false;
};

// The output's shape for a and b: their batch (the one that has one) then M x N. Empty with
// *error set when they do not multiply.
std::vector<int64_t> output_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                  std::string* error);

// How `args` maps onto tilegemm's problem (stream and scales left as they are). On failure, an
// invalid_argument Status whose message starts with the argument's name; `problem` is then
// unspecified. With no batch entry (a batch dimension of size 0), only the shapes are checked and
// batch_count is 0: there is nothing to compute.
Status make_problem(const MatmulArgs& args, GemmProblem* problem);

// A matrix of rows x cols with these strides as a layout and leading dimension; empty with
// *error set when the strides fit neither layout.
struct MatrixLayout {
  Layout layout = Layout::row_major;
  int64_t ld = 0;
};
std::optional<MatrixLayout> matrix_layout(int64_t rows, int64_t cols, int64_t row_stride,
                                          int64_t col_stride, std::string* error);

}  // namespace tilegemm::python
