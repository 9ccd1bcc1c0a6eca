// Every SIMT kernel and compiled config, against the float64 reference, on the GPU.
// Outputs are poisoned with NaN before each run; inputs are fresh random normals per case.
#include <gtest/gtest.h>

#include "gemm_check.hpp"

namespace tilegemm {
namespace {

using harness::WorkloadSpec;
using testing::expect_matches_reference;

class GpuKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (devices().empty()) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  }
  // Every (kernel, config) pair compiled into this build.
  static std::vector<GemmOptions> every_kernel_config() {
    std::vector<GemmOptions> out;
    for (const auto& k : available_kernels())
      for (const auto& c : k.configs) {
        GemmOptions o;
        o.backend = Backend::gpu;
        o.kernel = k.name;
        o.config = c;
        out.push_back(o);
      }
    return out;
  }
};

TEST_F(GpuKernels, RandomShapesEveryLayoutEveryDtype) {
  const int64_t shapes[][3] = {{1, 1, 1},     {7, 31, 129},    {127, 255, 33}, {129, 1, 255},
                               {255, 129, 7}, {300, 257, 513}, {64, 128, 16}};
  uint64_t seed = 100;
  for (const GemmOptions& o : every_kernel_config())
    for (DType dtype : {DType::fp32, DType::fp16, DType::bf16})
      for (Layout la : {Layout::row_major, Layout::col_major})
        for (Layout lb : {Layout::row_major, Layout::col_major})
          for (const auto& shape : shapes) {
            WorkloadSpec s;
            s.m = shape[0];
            s.n = shape[1];
            s.k = shape[2];
            s.input_dtype = s.output_dtype = dtype;
            s.layout_a = la;
            s.layout_b = lb;
            s.layout_c = seed % 3 ? Layout::row_major : Layout::col_major;
            s.seed = seed++;
            expect_matches_reference(s, o);
          }
}

TEST_F(GpuKernels, UnalignedLeadingDimsTakeTheScalarPath) {
  for (const GemmOptions& o : every_kernel_config())
    for (DType dtype : {DType::fp32, DType::bf16}) {
      WorkloadSpec s;
      s.m = 131;
      s.n = 77;
      s.k = 93;
      s.input_dtype = s.output_dtype = dtype;
      s.lda = 93 + 1;  // breaks 16-byte alignment of rows
      s.ldb = 77 + 3;
      s.ldc = 77 + 5;
      expect_matches_reference(s, o);
    }
}

TEST_F(GpuKernels, AlignedPaddedLeadingDimsTakeTheVectorPath) {
  for (const GemmOptions& o : every_kernel_config()) {
    WorkloadSpec s;
    s.m = 200;
    s.n = 136;
    s.k = 72;
    s.lda = 80;
    s.ldb = 144;
    s.layout_b = Layout::col_major;
    s.ldb = 80;
    expect_matches_reference(s, o);
  }
}

TEST_F(GpuKernels, EpilogueAlphaBetaBiasActivations) {
  for (const GemmOptions& o : every_kernel_config())
    for (Activation act : {Activation::none, Activation::relu, Activation::leaky_relu,
                           Activation::gelu, Activation::silu}) {
      WorkloadSpec s;
      s.m = 150;
      s.n = 100;
      s.k = 64;
      s.alpha = 0.5f;
      s.beta = -1.25f;
      s.bias = true;
      s.activation = act;
      s.leaky_relu_slope = 0.1f;
      s.seed = 1000 + int(act);
      expect_matches_reference(s, o);
    }
}

TEST_F(GpuKernels, MixedOutputTypes) {
  for (const GemmOptions& o : every_kernel_config())
    for (DType in : {DType::fp16, DType::bf16})
      for (DType out : {DType::fp32, DType::fp16, DType::bf16}) {
        WorkloadSpec s;
        s.m = 96;
        s.n = 80;
        s.k = 48;
        s.input_dtype = in;
        s.output_dtype = out;
        s.beta = 1.0f;
        s.bias = true;
        expect_matches_reference(s, o);
      }
}

TEST_F(GpuKernels, StridedBatchInPlaceAndKZero) {
  for (const GemmOptions& o : every_kernel_config()) {
    WorkloadSpec batch;
    batch.m = 70;
    batch.n = 90;
    batch.k = 40;
    batch.batch_count = 3;
    batch.beta = 1.0f;
    expect_matches_reference(batch, o);

    WorkloadSpec in_place;
    in_place.m = 64;
    in_place.n = 64;
    in_place.k = 64;
    in_place.beta = 0.5f;
    in_place.in_place = true;
    expect_matches_reference(in_place, o);

    WorkloadSpec k_zero;
    k_zero.m = 33;
    k_zero.n = 65;
    k_zero.k = 0;
    k_zero.beta = 2.0f;
    k_zero.bias = true;
    expect_matches_reference(k_zero, o);
  }
}

TEST_F(GpuKernels, AutoPicksAKernelThatIsRight) {
  GemmOptions o;
  o.backend = Backend::gpu;
  for (int64_t size : {int64_t(64), int64_t(1000), int64_t(2048)}) {
    WorkloadSpec s;
    s.m = s.n = s.k = size;
    expect_matches_reference(s, o);
  }
}

TEST_F(GpuKernels, UnknownKernelAndWrongConfigAreRejected) {
  WorkloadSpec s;
  s.m = s.n = s.k = 32;
  std::unique_ptr<harness::Workload> w;
  ASSERT_TRUE(harness::Workload::create(s, true, &w).ok());
  GemmOptions o;
  o.backend = Backend::gpu;
  o.kernel = "nope";
  EXPECT_NE(gemm(w->problem(), o).message.find("kernel 'nope' does not exist"), std::string::npos);
  o.kernel = "warptile";
  o.config = parse_kernel_config("96x96x16/g8/s2/w8/wt48x48");
  EXPECT_NE(gemm(w->problem(), o).message.find("kernel warptile has no compiled config 96x96x16"),
            std::string::npos);
}

}  // namespace
}  // namespace tilegemm
