// A matrix as the kernels see it: a base pointer and a stride per logical dimension, so that
// row- and column-major storage (and any leading dimension) are the same code:
//
//   element (row, col) lives at  data + row * row_stride + col * col_stride   (in elements)
//
// Shared by host and device; built once on the host from the public MatrixInput/MatrixOutput.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "tilegemm/tilegemm.hpp"

namespace tilegemm {

struct Strides {
  int64_t row = 0;
  int64_t col = 0;
};

TILEGEMM_HOST_DEVICE constexpr Strides strides_of(Layout layout, int64_t ld) {
  return layout == Layout::row_major ? Strides{ld, 1} : Strides{1, ld};
}

// The smallest legal leading dimension of a rows x cols matrix.
constexpr int64_t min_leading_dim(Layout layout, int64_t rows, int64_t cols) {
  int64_t v = layout == Layout::row_major ? cols : rows;
  return v > 1 ? v : 1;
}

// The leading dimension actually used: 0 in the public structs means "packed".
constexpr int64_t effective_ld(int64_t ld, Layout layout, int64_t rows, int64_t cols) {
  return ld != 0 ? ld : min_leading_dim(layout, rows, cols);
}

// Type-erased matrix: element type chosen at run time (epilogue operands: C, D, bias).
struct MatrixView {
  void* data = nullptr;
  DType dtype = DType::fp32;
  Strides stride;
  int64_t batch_stride = 0;

  TILEGEMM_HOST_DEVICE int64_t offset(int64_t batch, int64_t row, int64_t col) const {
    return batch * batch_stride + row * stride.row + col * stride.col;
  }
};

inline MatrixView view_of(const MatrixInput& in, int64_t rows, int64_t cols) {
  return {const_cast<void*>(in.data), in.dtype,
          strides_of(in.layout, effective_ld(in.ld, in.layout, rows, cols)), in.batch_stride};
}

inline MatrixView view_of(const MatrixOutput& out, int64_t rows, int64_t cols) {
  return {out.data, out.dtype, strides_of(out.layout, effective_ld(out.ld, out.layout, rows, cols)),
          out.batch_stride};
}

}  // namespace tilegemm
