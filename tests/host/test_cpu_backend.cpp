// The CPU backend against the float64 reference: shapes, layouts, leading dims, epilogues,
// batches, element types.
#include <gtest/gtest.h>

#include "gemm_check.hpp"

namespace tilegemm {
namespace {

using harness::WorkloadSpec;
using testing::expect_matches_reference;

GemmOptions cpu(const char* config = nullptr) {
  GemmOptions o;
  o.backend = Backend::cpu;
  if (config) o.config = parse_kernel_config(config);
  return o;
}

TEST(CpuBackend, OddShapesEveryLayout) {
  uint64_t seed = 1;
  const int64_t sizes[] = {1, 7, 31, 127, 129, 255};
  for (int64_t m : sizes)
    for (int64_t n : {int64_t(1), int64_t(33), int64_t(129)})
      for (int64_t k : {int64_t(1), int64_t(31), int64_t(255)}) {
        WorkloadSpec s;
        s.m = m;
        s.n = n;
        s.k = k;
        s.layout_a = seed % 2 ? Layout::row_major : Layout::col_major;
        s.layout_b = seed % 3 ? Layout::row_major : Layout::col_major;
        s.layout_c = seed % 5 ? Layout::row_major : Layout::col_major;
        s.seed = seed++;
        expect_matches_reference(s, cpu());
      }
}

TEST(CpuBackend, AllFourOperandLayoutsWithPaddedLeadingDims) {
  for (Layout la : {Layout::row_major, Layout::col_major})
    for (Layout lb : {Layout::row_major, Layout::col_major})
      for (Layout lc : {Layout::row_major, Layout::col_major}) {
        WorkloadSpec s;
        s.m = 70;
        s.n = 45;
        s.k = 51;
        s.layout_a = la;
        s.layout_b = lb;
        s.layout_c = lc;
        s.lda = (la == Layout::row_major ? 51 : 70) + 3;
        s.ldb = (lb == Layout::row_major ? 45 : 51) + 5;
        s.ldc = (lc == Layout::row_major ? 45 : 70) + 7;
        s.beta = 0.5f;
        expect_matches_reference(s, cpu());
      }
}

TEST(CpuBackend, AlphaBetaBiasAndEveryActivation) {
  for (Activation act : {Activation::none, Activation::relu, Activation::leaky_relu,
                         Activation::gelu, Activation::silu}) {
    WorkloadSpec s;
    s.m = 65;
    s.n = 77;
    s.k = 90;
    s.alpha = -1.5f;
    s.beta = 0.75f;
    s.bias = true;
    s.activation = act;
    s.leaky_relu_slope = 0.2f;
    s.seed = 7 + int(act);
    expect_matches_reference(s, cpu());
  }
}

TEST(CpuBackend, HalfAndBfloatInputsAndOutputs) {
  for (DType in : {DType::fp16, DType::bf16})
    for (DType out : {DType::fp32, in}) {
      WorkloadSpec s;
      s.m = 100;
      s.n = 90;
      s.k = 130;
      s.input_dtype = in;
      s.output_dtype = out;
      s.beta = 1.0f;
      s.bias = true;
      expect_matches_reference(s, cpu());
    }
}

TEST(CpuBackend, StridedBatch) {
  WorkloadSpec s;
  s.m = 33;
  s.n = 17;
  s.k = 29;
  s.batch_count = 5;
  s.beta = 1.0f;
  s.layout_b = Layout::col_major;
  expect_matches_reference(s, cpu());
}

TEST(CpuBackend, InPlaceOnC) {
  WorkloadSpec s;
  s.m = 40;
  s.n = 50;
  s.k = 60;
  s.beta = 2.0f;
  s.in_place = true;
  expect_matches_reference(s, cpu());
}

TEST(CpuBackend, CInTheOtherLayoutThanD) {
  for (Layout ld : {Layout::row_major, Layout::col_major}) {
    WorkloadSpec s;
    s.m = 33;
    s.n = 47;
    s.k = 20;
    s.beta = -0.75f;
    s.layout_c = ld;
    s.c_transposed = true;
    s.batch_count = 2;
    expect_matches_reference(s, cpu());
  }
}

TEST(CpuBackend, KZeroIsTheEpilogueOfBetaC) {
  WorkloadSpec s;
  s.m = 20;
  s.n = 30;
  s.k = 0;
  s.beta = 1.5f;
  s.bias = true;
  s.activation = Activation::relu;
  expect_matches_reference(s, cpu());
}

TEST(CpuBackend, AnyTileConfigGivesTheSameAnswer) {
  for (const char* config : {"16x16x16/g1", "32x64x8/g3", "128x32x64/g8", "7x5x3/g2"}) {
    WorkloadSpec s;
    s.m = 97;
    s.n = 83;
    s.k = 71;
    expect_matches_reference(s, cpu(config));
  }
}

}  // namespace
}  // namespace tilegemm

namespace tilegemm {
namespace {

TEST(Plan, SaysWhatTheCpuBackendWouldRunWithoutRunningIt) {
  std::vector<float> a(6 * 4, 1.0f), b(4 * 5, 1.0f), d(6 * 5, -7.0f);
  GemmProblem p;
  p.m = 6;
  p.n = 5;
  p.k = 4;
  p.a = {a.data(), DType::fp32};
  p.b = {b.data(), DType::fp32};
  p.d = {d.data(), DType::fp32};
  GemmOptions o;
  o.backend = Backend::cpu;
  GemmReport report;
  ASSERT_TRUE(plan(p, o, &report).ok());
  EXPECT_EQ(report.backend, Backend::cpu);
  EXPECT_EQ(report.config_source, "default");
  for (float v : d) EXPECT_EQ(v, -7.0f);  // nothing ran
  o.kernel = "sm80";
  EXPECT_NE(plan(p, o, &report).message.find("kernel 'sm80' is a GPU kernel"), std::string::npos);
  p.k = -1;
  EXPECT_NE(plan(p, o, &report).message.find("k must be >= 0"), std::string::npos);
}

}  // namespace
}  // namespace tilegemm
