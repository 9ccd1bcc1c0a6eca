#include "problem/problem_list.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "problem/dtype.hpp"
#include "problem/matrix_view.hpp"

namespace tilegemm {
namespace {

Status invalid(const std::string& message) { return {StatusCode::invalid_argument, message}; }

std::string name_of(size_t g) { return "problems[" + std::to_string(g) + "]"; }

// The first byte of D a problem writes and one past its last (equal when it writes none).
std::pair<uintptr_t, uintptr_t> d_bytes(const GemmProblem& p) {
  if (p.m == 0 || p.n == 0) return {0, 0};
  const MatrixView d = view_of(p.d, p.m, p.n);
  const auto first = reinterpret_cast<uintptr_t>(p.d.data);
  return {first, first + uintptr_t(d.offset(0, p.m - 1, p.n - 1) + 1) * dtype_size(p.d.dtype)};
}

// Whether a rows x cols matrix's storage order says anything: one of a single row or column
// (or none) is both row- and column-major.
bool ordered(int64_t rows, int64_t cols) { return rows > 1 && cols > 1; }

// Where problem g differs from problems[0] in what the problems share; empty where it does not.
// Storage orders are compared with the first problem where the matrix has one (`ordered_at`: its
// index for A, B and D, updated here).
std::string differs(std::span<const GemmProblem> problems, size_t g, size_t (&ordered_at)[3]) {
  const GemmProblem &p = problems[g], &first = problems[0];
  const auto same = [&](const char* what, auto mine, auto theirs, size_t at) -> std::string {
    if (mine == theirs) return {};
    return name_of(g) + "." + what + " is " + std::string(to_string(mine)) + " but " + name_of(at) +
           "." + what + " is " + std::string(to_string(theirs)) +
           " (the problems share the element types and storage orders of A, B, C and D)";
  };
  const auto same_order = [&](const char* what, int index, bool has_order, Layout mine,
                              auto layout_of) -> std::string {
    if (!has_order) return {};
    if (ordered_at[index] == SIZE_MAX) ordered_at[index] = g;
    return same(what, mine, layout_of(problems[ordered_at[index]]), ordered_at[index]);
  };
  for (const std::string& why :
       {same("a.dtype", p.a.dtype, first.a.dtype, 0), same("b.dtype", p.b.dtype, first.b.dtype, 0),
        same("d.dtype", p.d.dtype, first.d.dtype, 0),
        same_order("a.layout", 0, ordered(p.m, p.k), p.a.layout,
                   [](const GemmProblem& q) { return q.a.layout; }),
        same_order("b.layout", 1, ordered(p.k, p.n), p.b.layout,
                   [](const GemmProblem& q) { return q.b.layout; }),
        same_order("d.layout", 2, ordered(p.m, p.n), p.d.layout,
                   [](const GemmProblem& q) { return q.d.layout; })}) {
    if (!why.empty()) return why;
  }
  if (p.fast_accumulation != first.fast_accumulation) {
    return name_of(g) + ".fast_accumulation differs from problems[0]'s (the problems share it)";
  }
  if (p.stream != first.stream) {
    return name_of(g) + ".stream differs from problems[0]'s (the problems run on one stream)";
  }
  return {};
}

}  // namespace

Status validate_problems(std::span<const GemmProblem> problems) {
  const GemmProblem* reads_c = nullptr;  // the first problem that reads C
  size_t reads_c_at = 0;
  size_t ordered_at[3] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
  for (size_t g = 0; g < problems.size(); ++g) {
    const GemmProblem& p = problems[g];
    if (Status s = validate(p); !s.ok()) return {s.code, name_of(g) + "." + s.message};
    if (p.batch_count != 1) {
      return invalid(name_of(g) + ".batch_count must be 1 (each problem is a single GEMM; got " +
                     std::to_string(p.batch_count) + ")");
    }
    if (p.groups.form != GroupForm::none) {
      return invalid(name_of(g) + ".groups.form must be none (each problem is a single GEMM; got " +
                     std::string(to_string(p.groups.form)) + ")");
    }
    if (p.scales.mode != ScaleMode::none) {
      return {StatusCode::not_supported, name_of(g) + ".scales.mode is " +
                                             std::string(to_string(p.scales.mode)) +
                                             ": gemm_grouped() takes no fp8 scales yet"};
    }
    if (std::string why = differs(problems, g, ordered_at); !why.empty()) return invalid(why);
    if (p.epilogue.beta != 0.0f) {
      if (reads_c == nullptr) {
        reads_c = &p, reads_c_at = g;
      } else if (p.c.dtype != reads_c->c.dtype ||
                 (ordered(p.m, p.n) && ordered(reads_c->m, reads_c->n) &&
                  p.c.layout != reads_c->c.layout)) {
        return invalid(name_of(g) + ".c differs in element type or storage order from " +
                       name_of(reads_c_at) + ".c (the problems that read C share them)");
      }
    }
  }
  // Two problems writing the same memory of D would race: sorted by their first byte, each D
  // must end before the next begins.
  std::vector<std::pair<std::pair<uintptr_t, uintptr_t>, size_t>> ds;
  for (size_t g = 0; g < problems.size(); ++g) {
    const auto bytes = d_bytes(problems[g]);
    if (bytes.first != bytes.second) ds.push_back({bytes, g});
  }
  std::sort(ds.begin(), ds.end());
  for (size_t i = 1; i < ds.size(); ++i) {
    if (ds[i].first.first < ds[i - 1].first.second) {
      const size_t x = std::min(ds[i].second, ds[i - 1].second),
                   y = std::max(ds[i].second, ds[i - 1].second);
      return invalid(name_of(y) + ".d overlaps " + name_of(x) + ".d");
    }
  }
  return Status::success();
}

GemmProblem stand_in(std::span<const GemmProblem> problems) {
  GemmProblem s = problems[0];
  s.m = s.n = s.k = 0;
  for (const GemmProblem& p : problems) {
    s.m = std::max(s.m, p.m);
    s.n = std::max(s.n, p.n);
    s.k = std::max(s.k, p.k);
  }
  s.batch_count = int64_t(problems.size());
  // Lines of a multiple of 16 elements (so of 16 bytes), each batch entry after the last, at an
  // address as aligned as can be.
  const auto at = reinterpret_cast<void*>(uintptr_t(1) << 20);
  const auto line = [](Layout layout, int64_t rows, int64_t cols) {
    return (min_leading_dim(layout, rows, cols) + 15) / 16 * 16;
  };
  const auto lines = [](Layout layout, int64_t rows, int64_t cols) {
    return layout == Layout::row_major ? rows : cols;
  };
  const int64_t lda = line(s.a.layout, s.m, s.k), ldb = line(s.b.layout, s.k, s.n),
                ldc = line(s.c.layout, s.m, s.n), ldd = line(s.d.layout, s.m, s.n);
  s.a = {at, s.a.dtype, s.a.layout, lda, lda * lines(s.a.layout, s.m, s.k)};
  s.b = {at, s.b.dtype, s.b.layout, ldb, ldb * lines(s.b.layout, s.k, s.n)};
  s.c = {s.epilogue.beta != 0.0f ? at : nullptr, s.c.dtype, s.c.layout, ldc,
         ldc * lines(s.c.layout, s.m, s.n)};
  s.d.data = at;
  s.d.ld = ldd;
  s.d.batch_stride = ldd * lines(s.d.layout, s.m, s.n);
  s.epilogue.bias = nullptr;
  s.d.amax = nullptr;
  s.groups = {GroupForm::counts, static_cast<const int32_t*>(at)};
  return s;
}

}  // namespace tilegemm
