// Shared by the host and GPU test suites: run one workload through gemm() from a poisoned D and
// return its relative error against the float64 reference.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "harness/workload.hpp"

namespace tilegemm::testing {

inline std::string describe(const harness::WorkloadSpec& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
         " batch=" + std::to_string(s.batch_count) + " " + std::string(to_string(s.input_dtype)) +
         "->" + std::string(to_string(s.output_dtype)) +
         " A=" + std::string(to_string(s.layout_a)) + " B=" + std::string(to_string(s.layout_b)) +
         " C=" + std::string(to_string(s.layout_c)) + " lda=" + std::to_string(s.lda) +
         " ldb=" + std::to_string(s.ldb) + " ldc=" + std::to_string(s.ldc) +
         " alpha=" + std::to_string(s.alpha) + " beta=" + std::to_string(s.beta) +
         (s.bias ? " bias" : "") + " act=" + std::string(to_string(s.activation)) +
         (s.in_place ? " in-place" : "") +
         (s.input_dtype_b ? " b=" + std::string(to_string(*s.input_dtype_b)) : "") +
         (s.scale_mode != ScaleMode::none ? " scales=" + std::string(to_string(s.scale_mode))
                                          : "") +
         (s.fast_accumulation ? " fast-accum" : "");
}

// A spec with inputs of `dtype` and D of the matching type (fp32 for tf32 inputs).
inline harness::WorkloadSpec spec_of(int64_t m, int64_t n, int64_t k, DType dtype) {
  harness::WorkloadSpec s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.input_dtype = dtype;
  s.output_dtype = harness::default_output_dtype(dtype);
  return s;
}

// Runs `spec` with `options` and checks the result against the reference within the output
// type's tolerance. Fresh random inputs per seed; D poisoned with NaN before the run.
inline void expect_matches_reference(const harness::WorkloadSpec& spec,
                                     const GemmOptions& options) {
  std::unique_ptr<harness::Workload> w;
  const bool gpu = options.backend == Backend::gpu;
  ASSERT_TRUE(harness::Workload::create(spec, gpu, &w).ok());
  const Status s = gemm(w->problem(), options);
  ASSERT_TRUE(s.ok()) << s.message << " | " << describe(spec);
  ASSERT_TRUE(w->fetch_output().ok());
  double amax_error = 0.0;  // an fp8 D's
  const double error = w->check(1e12, nullptr, &amax_error);
  EXPECT_LE(amax_error, harness::amax_tolerance(spec.fast_accumulation))
      << "amax " << w->amax() << " | " << describe(spec);
  EXPECT_LE(error,
            harness::tolerance_for(spec.input_dtype, spec.output_dtype, spec.fast_accumulation))
      << describe(spec) << " kernel=" << options.kernel
      << (options.config ? " config=" + to_string(*options.config) : "");
}

// Runs the problems of `specs` (each its own workload, D poisoned with NaN) in one
// gemm_grouped() call with `options`, and checks each D against the reference within its
// output type's tolerance. `report`: what the call ran (may be null).
inline void expect_problems_match_reference(const std::vector<harness::WorkloadSpec>& specs,
                                            const GemmOptions& options,
                                            GemmReport* report = nullptr) {
  std::vector<std::unique_ptr<harness::Workload>> workloads(specs.size());
  std::vector<GemmProblem> problems;
  for (size_t g = 0; g < specs.size(); ++g) {
    ASSERT_TRUE(
        harness::Workload::create(specs[g], options.backend == Backend::gpu, &workloads[g]).ok());
    problems.push_back(workloads[g]->problem());
  }
  const Status s = gemm_grouped(problems, options, report);
  ASSERT_TRUE(s.ok()) << s.message;
  for (size_t g = 0; g < specs.size(); ++g) {
    ASSERT_TRUE(workloads[g]->fetch_output().ok());
    const harness::WorkloadSpec& spec = specs[g];
    EXPECT_LE(workloads[g]->check(1e12),
              harness::tolerance_for(spec.input_dtype, spec.output_dtype, spec.fast_accumulation))
        << "problems[" << g << "] " << describe(spec)
        << (options.config ? " config=" + to_string(*options.config) : "");
  }
}

}  // namespace tilegemm::testing
