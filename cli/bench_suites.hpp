// The benchmark's shape suites and its result writers (host code, unit-tested).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tilegemm/tilegemm.hpp"

namespace tilegemm::cli {

struct BenchShape {
  std::string suite;
  int64_t m = 0, n = 0, k = 0;
};

// The suites of the anchor figures: square, unaligned, skinny, llm, longk; "all" = every one.
std::vector<std::string> suite_names();
// Shapes of one suite or of all; nullopt when the name is unknown.
std::optional<std::vector<BenchShape>> suite_shapes(const std::string& name);
// Lines of "M N K" (or "M,N,K"); '#' starts a comment. Errors name the line.
std::vector<BenchShape> parse_shapes(const std::string& text, std::string* error);

// The moe suite: grouped GEMMs of mixture-of-experts layers, bf16, each compared with a loop of
// cuBLAS calls (one per group) in the same run. `m`: A's rows (offsets: all the groups' tokens;
// counts: the most rows a group may have); `rows`: each group's rows (k_offsets: its K values,
// out of `k`).
struct MoeCase {
  std::string name;
  GroupForm form = GroupForm::offsets;
  int64_t m = 0, n = 0, k = 0;
  std::vector<int32_t> rows;
};
std::vector<MoeCase> moe_cases();

struct BenchRow {
  std::string suite, dtype, layouts, kernel, config;
  int64_t m = 0, n = 0, k = 0;
  std::string timing = "cold";  // the L2 state of the timed calls: "cold" (flushed) or "warm"
  double tilegemm_ms = 0, cublas_ms = 0;  // medians per call, and the reps' spread:
  double tilegemm_ms_min = 0, tilegemm_ms_max = 0, cublas_ms_min = 0, cublas_ms_max = 0;
  double tilegemm_tflops = 0, cublas_tflops = 0, ratio = 0;
  double percent_of_ceiling = 0;  // tilegemm vs the measured cuBLAS peak of the dtype
  double tilegemm_gbs = 0;        // achieved bandwidth over the minimum bytes
  double relative_error = 0;      // tilegemm vs cuBLAS
  std::string note;  // what gemm() did first, e.g. the aligned copies (GemmReport::aligned_copies)
  // A grouped row's groups: the form and each group's rows (JSON only), e.g. "offsets 512,512".
  std::string groups;
  // A moe row's groups as problems of their own in one gemm_grouped() call (the ptr_array form),
  // timed beside the grouped call, and its error (JSON only; 0: not run).
  double ptr_array_tflops = 0, ptr_array_error = 0;
  // The run's machine and source: the GPU's name, its driver, the source tree's commit.
  std::string gpu, driver, commit;
};

void write_csv(std::ostream& out, const std::vector<BenchRow>& rows);
void write_json(std::ostream& out, const std::vector<BenchRow>& rows);
// Geometric mean of a positive quantity over the rows of one suite (0 when there are none).
double geomean(const std::vector<BenchRow>& rows, const std::string& suite,
               double BenchRow::*field);

}  // namespace tilegemm::cli
