// Alignment classes: what a kernel may assume about an operand's addresses.
#pragma once

#include <cstdint>

#include "problem/matrix_view.hpp"
#include "tilegemm/tilegemm.hpp"

namespace tilegemm {

// True when 16-byte vector loads of the operand are safe along its contiguous dimension:
// the base pointer, the leading dimension and the batch stride are all multiples of 16 bytes.
TILEGEMM_HOST_DEVICE inline bool vector_aligned(const void* data, int64_t ld, int64_t batch_stride,
                                                int element_size) {
  const int64_t per_vector = 16 / element_size;
  return reinterpret_cast<uintptr_t>(data) % 16 == 0 && ld % per_vector == 0 &&
         batch_stride % per_vector == 0;
}

// The same for a matrix view: its rows (row-major) or columns (column-major) can be read in
// 16-byte vectors (the in-tile offsets along the contiguous dimension are multiples of the
// vector).
TILEGEMM_HOST_DEVICE inline bool vector_aligned(const MatrixView& v, int element_size) {
  const int64_t ld = v.stride.row == 1 ? v.stride.col : v.stride.row;
  return vector_aligned(v.data, ld, v.batch_stride, element_size);
}

// The same for a problem's matrix (MatrixInput or MatrixOutput) of rows x cols.
template <typename Matrix>
bool rows_aligned(const Matrix& matrix, int64_t rows, int64_t cols) {
  return vector_aligned(matrix.data, effective_ld(matrix.ld, matrix.layout, rows, cols),
                        matrix.batch_stride, dtype_size(matrix.dtype));
}

}  // namespace tilegemm
