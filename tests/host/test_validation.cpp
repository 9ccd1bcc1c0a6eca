// Every bad input gets an error that names the argument, and D is left untouched.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "problem/alignment.hpp"
#include "tilegemm/tilegemm.hpp"

namespace tilegemm {
namespace {

// A valid 8x6x5 fp32 problem in host memory, D filled with a marker pattern.
struct HostProblem {
  std::vector<float> a = std::vector<float>(8 * 5, 1.0f), b = std::vector<float>(5 * 6, 2.0f),
                     c = std::vector<float>(8 * 6, 3.0f), d = std::vector<float>(8 * 6, 42.0f),
                     bias = std::vector<float>(6, 0.5f);
  GemmProblem p;
  HostProblem() {
    p.m = 8;
    p.n = 6;
    p.k = 5;
    p.a = {a.data(), DType::fp32, Layout::row_major, 5, 0};
    p.b = {b.data(), DType::fp32, Layout::row_major, 6, 0};
    p.c = {c.data(), DType::fp32, Layout::row_major, 6, 0};
    p.d = {d.data(), DType::fp32, Layout::row_major, 6, 0};
    p.epilogue.beta = 1.0f;
  }
};

GemmOptions cpu() {
  GemmOptions o;
  o.backend = Backend::cpu;
  return o;
}

// Applies `mutate` to a valid problem and expects `code` with `fragment` in the message and D
// unchanged.
void expect_rejected(const std::function<void(HostProblem&)>& mutate, StatusCode code,
                     const std::string& fragment) {
  HostProblem h;
  mutate(h);
  const std::vector<float> before = h.d;
  const Status s = gemm(h.p, cpu());
  EXPECT_EQ(s.code, code) << s.message;
  EXPECT_NE(s.message.find(fragment), std::string::npos)
      << "message '" << s.message << "' lacks '" << fragment << "'";
  EXPECT_EQ(0, std::memcmp(before.data(), h.d.data(), before.size() * sizeof(float)))
      << "D was written";
}

TEST(Validation, AValidProblemRuns) {
  HostProblem h;
  ASSERT_TRUE(gemm(h.p, cpu()).ok());
  EXPECT_FLOAT_EQ(h.d[0], 5 * 2.0f + 3.0f);
}

// GemmOptions::workspace: a size without memory is refused, naming the field, with D unwritten;
// the CPU backend takes no workspace (workspace_size says 0) and ignores one given.
TEST(Validation, WorkspaceBytesWithoutAWorkspaceAreRefused) {
  HostProblem h;
  GemmOptions o = cpu();
  o.workspace_bytes = 1024;
  const std::vector<float> before = h.d;
  const Status s = gemm(h.p, o);
  EXPECT_EQ(s.code, StatusCode::invalid_argument);
  EXPECT_NE(s.message.find("options.workspace is null"), std::string::npos) << s.message;
  EXPECT_EQ(before, h.d);
  size_t bytes = 7;
  EXPECT_EQ(workspace_size(h.p, o, &bytes).code, StatusCode::invalid_argument);
  EXPECT_EQ(workspace_size(h.p, cpu(), nullptr).code, StatusCode::invalid_argument);
}

TEST(Validation, TheCpuBackendTakesNoWorkspace) {
  HostProblem h;
  size_t bytes = 7;
  ASSERT_TRUE(workspace_size(h.p, cpu(), &bytes).ok());
  EXPECT_EQ(bytes, 0u);
  std::vector<unsigned char> workspace(256, 0xab);
  GemmOptions o = cpu();
  o.workspace = workspace.data();
  o.workspace_bytes = workspace.size();
  ASSERT_TRUE(gemm(h.p, o).ok());
  EXPECT_FLOAT_EQ(h.d[0], 5 * 2.0f + 3.0f);
  EXPECT_EQ(workspace, std::vector<unsigned char>(256, 0xab));
  // A bad problem is refused by the query as by the call.
  h.p.m = -1;
  EXPECT_EQ(workspace_size(h.p, cpu(), &bytes).code, StatusCode::invalid_argument);
}

TEST(Validation, NegativeDimensions) {
  expect_rejected([](HostProblem& h) { h.p.m = -1; }, StatusCode::invalid_argument,
                  "m must be >= 0 (got -1)");
  expect_rejected([](HostProblem& h) { h.p.n = -3; }, StatusCode::invalid_argument,
                  "n must be >= 0");
  expect_rejected([](HostProblem& h) { h.p.k = -2; }, StatusCode::invalid_argument,
                  "k must be >= 0");
  expect_rejected([](HostProblem& h) { h.p.batch_count = 0; }, StatusCode::invalid_argument,
                  "batch_count");
}

TEST(Validation, OverflowingDimensions) {
  const int64_t huge = std::numeric_limits<int64_t>::max() / 2;
  expect_rejected(
      [&](HostProblem& h) {
        h.p.m = huge;
        h.p.n = huge;
      },
      StatusCode::invalid_argument, "overflows");
  expect_rejected([&](HostProblem& h) { h.p.a.ld = huge; }, StatusCode::invalid_argument,
                  "a: matrix extent overflows");
}

TEST(Validation, NullPointers) {
  expect_rejected([](HostProblem& h) { h.p.a.data = nullptr; }, StatusCode::invalid_argument,
                  "a.data is null");
  expect_rejected([](HostProblem& h) { h.p.b.data = nullptr; }, StatusCode::invalid_argument,
                  "b.data is null");
  expect_rejected([](HostProblem& h) { h.p.c.data = nullptr; }, StatusCode::invalid_argument,
                  "c.data is null");
  HostProblem h;
  h.p.d.data = nullptr;
  EXPECT_NE(gemm(h.p, cpu()).message.find("d.data is null"), std::string::npos);
}

TEST(Validation, NullCIsFineWhenBetaIsZero) {
  HostProblem h;
  h.p.c.data = nullptr;
  h.p.epilogue.beta = 0.0f;
  EXPECT_TRUE(gemm(h.p, cpu()).ok());
}

TEST(Validation, LeadingDimensionTooSmall) {
  expect_rejected([](HostProblem& h) { h.p.a.ld = 4; }, StatusCode::invalid_argument,
                  "a.ld = 4 is smaller than the row length 5");
  expect_rejected(
      [](HostProblem& h) {
        h.p.b.layout = Layout::col_major;
        h.p.b.ld = 4;
      },
      StatusCode::invalid_argument, "b.ld = 4 is smaller than the column length 5");
  expect_rejected([](HostProblem& h) { h.p.d.ld = 5; }, StatusCode::invalid_argument, "d.ld = 5");
  expect_rejected([](HostProblem& h) { h.p.c.ld = -1; }, StatusCode::invalid_argument,
                  "c.ld must be >= 0");
}

TEST(Validation, Fp8InputsTakeScalesOfEveryMode) {
  // The buffers are fp32-sized, more than the fp8 problem reads.
  for (ScaleMode mode :
       {ScaleMode::none, ScaleMode::tensor, ScaleMode::channel, ScaleMode::block}) {
    HostProblem h;
    h.p.a.dtype = DType::fp8_e4m3;
    h.p.b.dtype = DType::fp8_e5m2;
    h.p.scales.mode = mode;
    if (mode != ScaleMode::none) {
      h.p.scales.a = reinterpret_cast<const float*>(h.c.data());
      h.p.scales.b = reinterpret_cast<const float*>(h.bias.data());
    }
    const Status s = validate(h.p);
    EXPECT_TRUE(s.ok()) << to_string(mode) << ": " << s.message;
  }
}

// An fp8 D: from fp8 inputs only, a bf16 or fp32 bias, its scale and amax for an fp8 D only and
// apart from D and every input.
TEST(Validation, Fp8OutputsAreCheckedAndNamed) {
  const auto fp8_d = [](HostProblem& h) {
    h.p.a.dtype = h.p.b.dtype = DType::fp8_e4m3;
    h.p.d.dtype = DType::fp8_e5m2;
    h.p.epilogue.beta = 0.0f;
  };
  {
    HostProblem h;
    fp8_d(h);
    h.p.d.scale = &h.bias[0];
    h.p.d.amax = &h.bias[1];
    h.p.epilogue.bias = h.c.data();
    h.p.epilogue.bias_dtype = DType::bf16;
    EXPECT_TRUE(validate(h.p).ok()) << validate(h.p).message;
  }
  expect_rejected([](HostProblem& h) { h.p.d.dtype = DType::fp8_e4m3; }, StatusCode::not_supported,
                  "d.dtype fp8_e4m3 needs fp8 inputs (a.dtype is fp32)");
  expect_rejected([](HostProblem& h) { h.p.d.scale = &h.bias[0]; }, StatusCode::invalid_argument,
                  "d.scale is for an fp8 D, and d.dtype is fp32; leave it null");
  expect_rejected([](HostProblem& h) { h.p.d.amax = &h.bias[0]; }, StatusCode::invalid_argument,
                  "d.amax is for an fp8 D, and d.dtype is fp32; leave it null");
  expect_rejected(
      [&](HostProblem& h) {
        fp8_d(h);
        h.p.epilogue.bias = h.bias.data();
        h.p.epilogue.bias_dtype = DType::fp16;
      },
      StatusCode::not_supported,
      "epilogue.bias_dtype (fp16) must be fp32 or bf16 (d.dtype is fp8)");
  expect_rejected(
      [&](HostProblem& h) {
        fp8_d(h);
        h.p.d.scale = reinterpret_cast<const float*>(reinterpret_cast<const char*>(h.d.data()) + 4);
      },
      StatusCode::invalid_argument, "d overlaps d.scale");
  expect_rejected(
      [&](HostProblem& h) {
        fp8_d(h);
        h.p.d.amax = reinterpret_cast<float*>(reinterpret_cast<char*>(h.d.data()) + 8);
      },
      StatusCode::invalid_argument, "d.amax overlaps d");
  expect_rejected(
      [&](HostProblem& h) {
        fp8_d(h);
        h.p.d.amax = reinterpret_cast<float*>(h.a.data()) + 1;
      },
      StatusCode::invalid_argument, "d.amax overlaps a");
  expect_rejected(
      [&](HostProblem& h) {
        fp8_d(h);
        h.p.d.scale = &h.bias[0];
        h.p.d.amax = &h.bias[0];
      },
      StatusCode::invalid_argument, "d.amax overlaps d.scale");
  expect_rejected(
      [&](HostProblem& h) {
        fp8_d(h);
        h.p.epilogue.bias = h.bias.data();
        h.p.d.amax = &h.bias[2];
      },
      StatusCode::invalid_argument, "d.amax overlaps epilogue.bias");
}

TEST(Validation, ScalesAreCheckedAndNamed) {
  const auto fp8 = [](HostProblem& h, ScaleMode mode) {
    h.p.a.dtype = h.p.b.dtype = DType::fp8_e4m3;
    h.p.scales = {mode, reinterpret_cast<const float*>(h.c.data()),
                  reinterpret_cast<const float*>(h.bias.data())};
  };
  expect_rejected(
      [](HostProblem& h) {
        h.p.scales = {ScaleMode::tensor, reinterpret_cast<const float*>(h.c.data()),
                      reinterpret_cast<const float*>(h.bias.data())};
      },
      StatusCode::not_supported, "scales.mode tensor needs fp8 inputs (a.dtype is fp32)");
  expect_rejected(
      [&](HostProblem& h) {
        fp8(h, ScaleMode::channel);
        h.p.scales.a = nullptr;
      },
      StatusCode::invalid_argument, "scales.a is null but scales.mode is channel");
  expect_rejected(
      [&](HostProblem& h) {
        fp8(h, ScaleMode::block);
        h.p.scales.b = nullptr;
      },
      StatusCode::invalid_argument, "scales.b is null but scales.mode is block");
  expect_rejected([&](HostProblem& h) { fp8(h, ScaleMode::none); }, StatusCode::invalid_argument,
                  "scales.a and scales.b must be null when scales.mode is none");
  expect_rejected([&](HostProblem& h) { fp8(h, static_cast<ScaleMode>(9)); },
                  StatusCode::invalid_argument, "scales.mode is not a ScaleMode (value 9)");
  expect_rejected(
      [&](HostProblem& h) {
        fp8(h, ScaleMode::channel);
        h.p.scales.b = reinterpret_cast<const float*>(h.d.data());
      },
      StatusCode::invalid_argument, "d overlaps scales.b");
}

TEST(Validation, UnsupportedTypes) {
  expect_rejected([](HostProblem& h) { h.p.d.dtype = DType::tf32; }, StatusCode::not_supported,
                  "d.dtype tf32 is a math mode of the inputs A and B, not a storage type");
  expect_rejected([](HostProblem& h) { h.p.d.dtype = DType::tf32x3; }, StatusCode::not_supported,
                  "d.dtype tf32x3 is a math mode of the inputs A and B, not a storage type");
  expect_rejected([](HostProblem& h) { h.p.b.dtype = DType::fp16; }, StatusCode::not_supported,
                  "a.dtype (fp32) and b.dtype (fp16) must be the same");
  expect_rejected([](HostProblem& h) { h.p.d.dtype = DType::fp8_e4m3; }, StatusCode::not_supported,
                  "d.dtype fp8_e4m3 needs fp8 inputs (a.dtype is fp32)");
  for (const auto& [a, b] :
       {std::pair{DType::fp8_e4m3, DType::bf16}, std::pair{DType::tf32x3, DType::tf32}}) {
    expect_rejected(
        [a, b](HostProblem& h) {
          h.p.a.dtype = a;
          h.p.b.dtype = b;
        },
        StatusCode::not_supported,
        "a.dtype (" + std::string(to_string(a)) + ") and b.dtype (" + std::string(to_string(b)) +
            ") must be the same");
  }
  expect_rejected([](HostProblem& h) { h.p.a.dtype = static_cast<DType>(42); },
                  StatusCode::invalid_argument, "a.dtype is not a DType (value 42)");
  expect_rejected(
      [](HostProblem& h) {
        h.p.epilogue.bias = h.bias.data();
        h.p.epilogue.bias_dtype = DType::bf16;
      },
      StatusCode::not_supported, "epilogue.bias_dtype (bf16) must be fp32 or d.dtype (fp32)");
}

TEST(Validation, OutputOverlappingAnInput) {
  expect_rejected(
      [](HostProblem& h) {
        h.p.d.data = h.a.data() + 1;
        h.p.d.ld = 1;
        h.p.n = 1;
        h.p.b.ld = 1;
        h.p.c.ld = 1;
      },
      StatusCode::invalid_argument, "d overlaps a");
  expect_rejected([](HostProblem& h) { h.p.b.data = h.d.data() + 10; },
                  StatusCode::invalid_argument, "d overlaps b");
  expect_rejected([](HostProblem& h) { h.p.c.data = h.d.data() + 1; }, StatusCode::invalid_argument,
                  "d overlaps c but is not the same matrix");
  expect_rejected([](HostProblem& h) { h.p.epilogue.bias = h.d.data(); },
                  StatusCode::invalid_argument, "d overlaps epilogue.bias");
}

TEST(Validation, InPlaceOnCIsAllowedWhenItIsTheSameMatrix) {
  HostProblem h;
  h.p.c.data = h.d.data();
  h.d.assign(h.d.size(), 1.0f);
  ASSERT_TRUE(gemm(h.p, cpu()).ok());
  EXPECT_FLOAT_EQ(h.d[7], 10.0f + 1.0f);
}

TEST(Validation, OverlappingBatchEntriesOfD) {
  expect_rejected(
      [](HostProblem& h) {
        h.p.batch_count = 2;
        h.p.d.batch_stride = 10;
      },
      StatusCode::invalid_argument, "d.batch_stride = 10 makes batch entries of D overlap");
  expect_rejected(
      [](HostProblem& h) {
        h.p.batch_count = 2;
        h.p.a.batch_stride = -1;
      },
      StatusCode::invalid_argument, "a.batch_stride must be >= 0");
}

TEST(Validation, EmptyOutputIsANoOp) {
  HostProblem h;
  h.p.m = 0;
  h.p.a.data = h.p.b.data = nullptr;
  h.p.d.data = nullptr;
  EXPECT_TRUE(gemm(h.p, cpu()).ok());
  HostProblem g;
  g.p.n = 0;
  EXPECT_TRUE(gemm(g.p, cpu()).ok());
  EXPECT_FLOAT_EQ(g.d[0], 42.0f);
}

TEST(Validation, KZeroGivesTheEpilogueOfBetaC) {
  HostProblem h;
  h.p.k = 0;
  h.p.a.data = h.p.b.data = nullptr;
  h.p.epilogue.beta = 2.0f;
  h.p.epilogue.bias = h.bias.data();
  ASSERT_TRUE(gemm(h.p, cpu()).ok());
  for (float v : h.d) EXPECT_FLOAT_EQ(v, 2.0f * 3.0f + 0.5f);
}

TEST(Validation, UnknownKernelOnTheCpuBackend) {
  HostProblem h;
  GemmOptions o = cpu();
  o.kernel = "warptile";
  const std::vector<float> before = h.d;
  const Status s = gemm(h.p, o);
  EXPECT_EQ(s.code, StatusCode::invalid_argument);
  EXPECT_NE(s.message.find("CPU backend"), std::string::npos);
  EXPECT_EQ(before, h.d);
}

TEST(Validation, NoDeviceSuggestsTheCpuBackend) {
  if (!devices().empty()) GTEST_SKIP() << "a CUDA device is present";
  HostProblem h;
  GemmOptions o;
  o.backend = Backend::gpu;
  const std::vector<float> before = h.d;
  const Status s = gemm(h.p, o);
  EXPECT_EQ(s.code, StatusCode::no_device);
  EXPECT_NE(s.message.find("--backend cpu"), std::string::npos);
  EXPECT_EQ(before, h.d);
}

TEST(Alignment, VectorLoadsNeedPointerLeadingDimAndBatchStrideOn16Bytes) {
  alignas(16) static float buffer[64];
  EXPECT_TRUE(vector_aligned(buffer, 8, 0, 4));
  EXPECT_TRUE(vector_aligned(buffer, 8, 64, 2));
  EXPECT_FALSE(vector_aligned(buffer + 1, 8, 0, 4));  // pointer off by 4 bytes
  EXPECT_FALSE(vector_aligned(buffer, 6, 0, 4));      // rows 24 bytes apart
  EXPECT_TRUE(vector_aligned(buffer, 8, 0, 2));       // 8 halves = 16 bytes
  EXPECT_FALSE(vector_aligned(buffer, 12, 0, 2));     // 12 halves = 24 bytes
  EXPECT_FALSE(vector_aligned(buffer, 8, 30, 4));     // batch entries 120 bytes apart
  // A view's leading dimension is its row stride (row-major) or column stride (column-major).
  EXPECT_TRUE(vector_aligned(MatrixView{buffer, DType::fp32, {8, 1}, 0}, 4));
  EXPECT_TRUE(vector_aligned(MatrixView{buffer, DType::fp32, {1, 8}, 0}, 4));
  EXPECT_FALSE(vector_aligned(MatrixView{buffer, DType::fp32, {6, 1}, 0}, 4));
  EXPECT_FALSE(vector_aligned(MatrixView{buffer, DType::fp32, {1, 6}, 0}, 4));
}

}  // namespace
}  // namespace tilegemm

namespace tilegemm {
namespace {

TEST(Validation, ScalarsMustBeFinite) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  expect_rejected([&](HostProblem& h) { h.p.epilogue.alpha = nan; }, StatusCode::invalid_argument,
                  "epilogue.alpha must be finite (got NaN)");
  expect_rejected([&](HostProblem& h) { h.p.epilogue.beta = -inf; }, StatusCode::invalid_argument,
                  "epilogue.beta must be finite (got -inf)");
  expect_rejected(
      [&](HostProblem& h) {
        h.p.epilogue.activation = Activation::leaky_relu;
        h.p.epilogue.leaky_relu_slope = inf;
      },
      StatusCode::invalid_argument, "epilogue.leaky_relu_slope must be finite (got inf)");
}

TEST(Validation, EnumsOutOfRangeAreRefused) {
  expect_rejected([](HostProblem& h) { h.p.epilogue.activation = static_cast<Activation>(42); },
                  StatusCode::invalid_argument,
                  "epilogue.activation is not an Activation (value 42)");
  expect_rejected([](HostProblem& h) { h.p.b.layout = static_cast<Layout>(7); },
                  StatusCode::invalid_argument, "b.layout is not a Layout (value 7)");
  expect_rejected([](HostProblem& h) { h.p.d.dtype = static_cast<DType>(-1); },
                  StatusCode::invalid_argument, "d.dtype is not a DType (value -1)");
}

// A negative leading dimension or batch stride is refused whatever the sizes, K = 0 too.
TEST(Validation, NegativeLeadingDimensionsAreRefusedWhenNothingIsRead) {
  expect_rejected(
      [](HostProblem& h) {
        h.p.k = 0;
        h.p.a.ld = -2;
      },
      StatusCode::invalid_argument, "a.ld must be >= 0 (got -2)");
  expect_rejected(
      [](HostProblem& h) {
        h.p.m = 0;
        h.p.d.batch_stride = -5;
      },
      StatusCode::invalid_argument, "d.batch_stride must be >= 0 (got -5)");
}

}  // namespace
}  // namespace tilegemm

namespace tilegemm {
namespace {

TEST(Validation, OptionsOutOfRangeAreRefusedAndDIsUntouched) {
  const auto expect_refused = [](GemmOptions options, const std::string& fragment) {
    HostProblem h;
    const std::vector<float> before = h.d;
    const Status s = gemm(h.p, options);
    EXPECT_EQ(s.code, StatusCode::invalid_argument) << s.message;
    EXPECT_NE(s.message.find(fragment), std::string::npos) << s.message;
    EXPECT_EQ(before, h.d);
  };
  GemmOptions o = cpu();
  o.config = parse_kernel_config("65536x65536x1/g8/s1/w4");
  expect_refused(o, "the CPU backend takes BLOCK_SIZE_M, BLOCK_SIZE_N and BLOCK_SIZE_K from 1 to");
  o.config = parse_kernel_config("64x64x64/g8/s1/w4");
  o.config->group_size_m = 0;
  expect_refused(o, "GROUP_SIZE_M must be >= 1");
  o = cpu();
  o.kernel = "bogus";
  expect_refused(o, available_kernels().empty() ? "kernel 'bogus' is not in this build"
                                                : "kernel 'bogus' does not exist");
  o = cpu();
  o.backend = static_cast<Backend>(9);
  expect_refused(o, "options.backend is not a Backend (value 9)");
  o = cpu();
  o.autotune = static_cast<AutotunePolicy>(-3);
  expect_refused(o, "options.autotune is not an AutotunePolicy (value -3)");
}

}  // namespace
}  // namespace tilegemm
