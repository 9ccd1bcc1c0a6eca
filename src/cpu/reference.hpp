// The float64 reference GEMM that tests and `run --check` compare against.
//
// Deliberately independent of the library's own code paths: it shares no schedule, no epilogue
// and no accumulation type with them (everything in double), only the problem description and
// the element decoding of fp16/bf16.
#pragma once

#include <cstdint>
#include <vector>

#include "tilegemm/tilegemm.hpp"

namespace tilegemm::reference {

// D for every batch entry, as row-major M x N doubles, batch after batch. Pointers in `problem`
// are host memory. `rows` restricts the computation to the listed rows of every batch entry
// (the result then holds rows.size() x N values per batch entry); empty = all rows.
std::vector<double> gemm(const GemmProblem& problem, const std::vector<int64_t>& rows = {},
                         int num_threads = 0);

// A grouped problem's D (problem.groups; `sizes`: the groups' int32 sizes in host memory), as
// row-major M x N doubles per batch entry of D (one for offsets, G for counts and k_offsets), NaN
// in the rows no group takes: those the call must leave as they were. Each group is computed on its
// own, as gemm() above computes a one-entry problem cut out of `problem` by pointer arithmetic.
// `rows`: only these rows of each entry are computed (the others NaN too); empty = all.
std::vector<double> grouped_gemm(const GemmProblem& problem, const std::vector<int32_t>& sizes,
                                 const std::vector<int64_t>& rows = {}, int num_threads = 0);

// Relative Frobenius error ||x - ref|| / ||ref|| (||x - ref|| when ref is all zero). NaN or inf
// anywhere in `x` gives +inf, so an unwritten (NaN-poisoned) element can never pass.
double relative_error(const std::vector<double>& x, const std::vector<double>& ref);

// Reads D (host memory) back as row-major doubles, in the same order as gemm() above (for a
// grouped problem, grouped_gemm's: one batch entry for offsets).
std::vector<double> read_output(const GemmProblem& problem, const std::vector<int64_t>& rows = {});

}  // namespace tilegemm::reference
