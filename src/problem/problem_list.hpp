// gemm_grouped()'s problems (tilegemm.hpp): the checks a list of problems takes beyond each
// problem's own, and the one problem that stands in for them all where one choice is made for
// them all (the kernel and its config).
#pragma once

#include <span>

#include "tilegemm/tilegemm.hpp"

namespace tilegemm {

// Each problem valid (validate()), a single GEMM (batch_count 1, groups none, no fp8 scales),
// with the element types of A, B, C (where read) and D, fast_accumulation and the stream of
// problems[0], the same storage order of each matrix wherever it has one (more than one row and
// column), and no two of them writing the same memory of D. Errors name the
// problem: "problems[3].b.ld must be ...".
Status validate_problems(std::span<const GemmProblem> problems);

// A grouped problem (the counts form) that stands for `problems` (validated, at least one) in
// the kernel's and the config's choice: their G groups of up to their largest M rows each (what
// M means in the counts form), their largest N and K, their types and storage orders, matrices of
// 16-byte lines at stand-in addresses (as plan() takes them: only compared, never read).
GemmProblem stand_in(std::span<const GemmProblem> problems);

}  // namespace tilegemm
