// A grouped GEMM's groups (tilegemm.hpp: Groups): where group g's rows lie in A, C and D, and its
// K values in A and B, from the sizes as the call reads them. Host and device: the sm90 grouped
// kernel, the CPU backend, the reference and the host tests all take a group's part from here.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "tilegemm/tilegemm.hpp"

namespace tilegemm {

// Rows begin .. end - 1 of batch entry `batch` of A, C and D (for offsets, entry 0: the groups
// share one matrix; for counts and k_offsets, entry g of C and D, and of A for counts).
struct GroupRowRange {
  int64_t batch = 0;
  int64_t begin = 0, end = 0;
  TILEGEMM_HOST_DEVICE constexpr int64_t rows() const { return end - begin; }
};

// K values begin .. end - 1 of A and B: a group's own in the k_offsets form, all K otherwise.
struct GroupKRange {
  int64_t begin = 0, end = 0;
  TILEGEMM_HOST_DEVICE constexpr int64_t size() const { return end - begin; }
};

// How many batch entries each matrix has in memory for `batch_count` groups: the offsets form's
// groups share A, C and D (their rows follow each other in one matrix), the k_offsets form's A and
// B (their K values do); the ptr_array form's problems each have matrices of one entry of their
// own; otherwise each group (or batch entry) has its own.
struct GroupEntries {
  int64_t a = 1, b = 1, c_d = 1;
};
TILEGEMM_HOST_DEVICE constexpr GroupEntries entries_in_memory(GroupForm form, int64_t batch_count) {
  const int64_t all = batch_count;
  if (form == GroupForm::offsets) return {1, all, 1};
  if (form == GroupForm::k_offsets) return {1, 1, all};
  if (form == GroupForm::ptr_array) return {1, 1, 1};
  return {all, all, all};
}

TILEGEMM_HOST_DEVICE constexpr int64_t clamp_rows(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

// The ptr_array form's sizes (gemm_grouped()'s problems, made by the library): M, N and K of
// problem g at sizes[3g], sizes[3g + 1] and sizes[3g + 2], each at most 2^31 - 1.
inline constexpr int kPtrArraySizes = 3;

// Group g's rows of a problem of M = m rows, from `sizes` (in memory the caller can read), given
// where group g - 1's rows end (`previous_end`; 0 for group 0): walkers of the groups in turn
// read each size once. Clamped so that whatever the values, the rows lie inside the matrix and the
// groups of the offsets form do not overlap (an offset below the one before leaves its group
// empty).
TILEGEMM_HOST_DEVICE constexpr GroupRowRange group_rows_after(GroupForm kind, const int32_t* sizes,
                                                              int64_t g, int64_t m,
                                                              int64_t previous_end) {
  if (kind == GroupForm::counts) return {g, 0, clamp_rows(sizes[g], 0, m)};
  if (kind == GroupForm::offsets) return {0, previous_end, clamp_rows(sizes[g], previous_end, m)};
  if (kind == GroupForm::ptr_array) return {0, 0, sizes[kPtrArraySizes * g]};
  return {g, 0, m};
}

// Group g's K values of a problem of K = k, given where group g - 1's end (`previous_end`; 0 for
// group 0), clamped as the rows are.
TILEGEMM_HOST_DEVICE constexpr GroupKRange group_k_after(GroupForm kind, const int32_t* sizes,
                                                         int64_t g, int64_t k,
                                                         int64_t previous_end) {
  if (kind == GroupForm::k_offsets) return {previous_end, clamp_rows(sizes[g], previous_end, k)};
  if (kind == GroupForm::ptr_array) return {0, sizes[kPtrArraySizes * g + 2]};
  return {0, k};
}

// Group g's N: the problem's own in the ptr_array form, else the N every group shares.
TILEGEMM_HOST_DEVICE constexpr int64_t group_n(GroupForm kind, const int32_t* sizes, int64_t g,
                                               int64_t n) {
  return kind == GroupForm::ptr_array ? sizes[kPtrArraySizes * g + 1] : n;
}

// Group g's rows, from the start.
TILEGEMM_HOST_DEVICE constexpr GroupRowRange group_rows(GroupForm kind, const int32_t* sizes,
                                                        int64_t g, int64_t m) {
  GroupRowRange r{};
  for (int64_t i = 0; i <= g; ++i) r = group_rows_after(kind, sizes, i, m, r.end);
  return r;
}

// Group g's K values, from the start.
TILEGEMM_HOST_DEVICE constexpr GroupKRange group_k(GroupForm kind, const int32_t* sizes, int64_t g,
                                                   int64_t k) {
  GroupKRange r{};
  for (int64_t i = 0; i <= g; ++i) r = group_k_after(kind, sizes, i, k, r.end);
  return r;
}

}  // namespace tilegemm
