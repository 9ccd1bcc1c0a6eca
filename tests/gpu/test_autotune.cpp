// The autotuner on the GPU: what it picks, that its pick is right, that it caches, and that it
// never writes the caller's D.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "gemm_check.hpp"

namespace tilegemm {
namespace {

using harness::WorkloadSpec;
using testing::spec_of;

class Autotune : public ::testing::Test {
 protected:
  void SetUp() override {
    if (devices().empty()) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
    // A private cache per test (each test runs in its own process under ctest).
    dir_ = std::filesystem::temp_directory_path() /
           ("tilegemm-autotune-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    setenv("TILEGEMM_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
};

TEST_F(Autotune, TunedConfigIsNoSlowerThanTheHeuristicsAndStored) {
  for (DType dtype : {DType::bf16, DType::tf32, DType::fp32}) {
    std::unique_ptr<harness::Workload> w;
    ASSERT_TRUE(harness::Workload::create(spec_of(1536, 1024, 512, dtype), true, &w).ok());
    TuneResult result;
    ASSERT_TRUE(tune(w->problem(), GemmOptions{}, &result).ok());
    ASSERT_FALSE(result.candidates.empty());
    const TuneCandidate& best = result.candidates.front();
    EXPECT_TRUE(best.dropped.empty());
    bool heuristic_timed = false;
    for (const TuneCandidate& c : result.candidates) {
      if (!c.heuristic) continue;
      heuristic_timed = true;
      EXPECT_LE(best.ms, c.ms) << to_string(dtype);
    }
    EXPECT_TRUE(heuristic_timed) << "the heuristic's config was not among the candidates";
    EXPECT_TRUE(std::filesystem::exists(result.cache_file)) << result.cache_file;
    EXPECT_LT(result.seconds, 10.0);
  }
}

TEST_F(Autotune, TuningNeverWritesTheCallersOutput) {
  std::unique_ptr<harness::Workload> w;
  ASSERT_TRUE(harness::Workload::create(spec_of(256, 320, 128, DType::fp16), true, &w).ok());
  ASSERT_TRUE(w->poison_output().ok());
  TuneResult result;
  ASSERT_TRUE(tune(w->problem(), GemmOptions{}, &result).ok());
  ASSERT_TRUE(w->fetch_output().ok());
  // Still all NaN: check() reports NaN as an infinite error.
  EXPECT_FALSE(std::isfinite(w->check(1e12)));
}

TEST_F(Autotune, OnMissTunesOnceThenServesTheCacheAndTheResultIsRight) {
  for (const auto& [m, n, k] : {std::tuple{700, 900, 300}, std::tuple{64, 4096, 1024}}) {
    WorkloadSpec s = spec_of(m, n, k, DType::bf16);
    s.beta = 0.5f;
    s.bias = true;
    s.activation = Activation::gelu;
    std::unique_ptr<harness::Workload> w;
    ASSERT_TRUE(harness::Workload::create(s, true, &w).ok());
    GemmOptions o;
    o.backend = Backend::gpu;
    o.autotune = AutotunePolicy::on_miss;
    GemmReport first, second;
    ASSERT_TRUE(w->poison_output().ok());
    ASSERT_TRUE(gemm(w->problem(), o, &first).ok());
    EXPECT_EQ(first.config_source, "tuned");
    ASSERT_TRUE(gemm(w->problem(), o, &second).ok());
    EXPECT_EQ(second.config_source, "cache");
    EXPECT_EQ(second.config, first.config);
    EXPECT_EQ(second.tuning_key, first.tuning_key);
    ASSERT_TRUE(w->fetch_output().ok());
    EXPECT_LE(w->check(1e12), harness::tolerance_for(s.input_dtype, s.output_dtype))
        << first.kernel << " " << to_string(first.config);
  }
}

TEST_F(Autotune, TunesTheOperandsTheKernelReads) {
  // bf16 rows of 1021 and 4097 values are not 16-byte aligned. With the aligned copies off the
  // kernel reads them as they are, so the tuner must time the configs on them: a config timed on
  // copies (sm80's 3-stage configs take aligned rows only) could win and then not run.
  WorkloadSpec s = spec_of(4095, 4097, 1021, DType::bf16);
  std::unique_ptr<harness::Workload> w;
  ASSERT_TRUE(harness::Workload::create(s, true, &w).ok());
  GemmOptions o;
  o.backend = Backend::gpu;
  o.autotune = AutotunePolicy::always;
  o.aligned_copies = false;
  GemmReport report;
  ASSERT_TRUE(w->poison_output().ok());
  const Status status = gemm(w->problem(), o, &report);
  ASSERT_TRUE(status.ok()) << status.message;
  EXPECT_EQ(report.config_source, "tuned");
  EXPECT_TRUE(report.aligned_copies.empty()) << report.aligned_copies;
  EXPECT_NE(report.kernel, "sm90");
  ASSERT_TRUE(w->fetch_output().ok());
  EXPECT_LE(w->check(1e12), harness::tolerance_for(s.input_dtype, s.output_dtype))
      << report.kernel << " " << to_string(report.config);
}

TEST_F(Autotune, PolicyComesFromTheEnvironmentWhenNotGiven) {
  std::unique_ptr<harness::Workload> w;
  ASSERT_TRUE(harness::Workload::create(spec_of(200, 200, 200, DType::bf16), true, &w).ok());
  GemmReport report;
  setenv("TILEGEMM_AUTOTUNE", "off", 1);
  ASSERT_TRUE(gemm(w->problem(), GemmOptions{}, &report).ok());
  EXPECT_EQ(report.config_source, "heuristic");
  setenv("TILEGEMM_AUTOTUNE", "always", 1);
  ASSERT_TRUE(gemm(w->problem(), GemmOptions{}, &report).ok());
  EXPECT_EQ(report.config_source, "tuned");
  unsetenv("TILEGEMM_AUTOTUNE");
}

}  // namespace
}  // namespace tilegemm
