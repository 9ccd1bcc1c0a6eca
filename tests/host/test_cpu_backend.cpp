// The CPU backend against the float64 reference: shapes, layouts, leading dims, epilogues,
// batches, element types.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "cpu/cpu_backend.hpp"
#include "cpu/micro_kernel.hpp"
#include "gemm_check.hpp"
#include "problem/dtype.hpp"
#include "problem/scales.hpp"

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
  EXPECT_NE(plan(p, o, &report)
                .message.find(available_kernels().empty() ? "kernel 'sm80' is not in this build"
                                                          : "kernel 'sm80' is a GPU kernel"),
            std::string::npos);
  p.k = -1;
  EXPECT_NE(plan(p, o, &report).message.find("k must be >= 0"), std::string::npos);
}

}  // namespace
}  // namespace tilegemm

namespace tilegemm {
namespace {

GemmOptions cpu_backend() {
  GemmOptions o;
  o.backend = Backend::cpu;
  return o;
}

TEST(CpuBackend, Fp8EveryPairScaleModeAndLayout) {
  uint64_t seed = 300;
  for (DType a : {DType::fp8_e4m3, DType::fp8_e5m2})
    for (DType b : {DType::fp8_e4m3, DType::fp8_e5m2})
      for (ScaleMode mode :
           {ScaleMode::none, ScaleMode::tensor, ScaleMode::channel, ScaleMode::block}) {
        harness::WorkloadSpec s;
        s.m = 67;
        s.n = 140;  // two column blocks of B's 128 x 128 scales
        s.k = 300;  // three K blocks, the last partial
        s.input_dtype = a;
        s.input_dtype_b = b;
        s.output_dtype = seed % 3 == 0 ? DType::fp32 : DType::bf16;
        s.scale_mode = mode;
        s.layout_a = seed % 2 ? Layout::row_major : Layout::col_major;
        s.layout_b = seed % 4 < 2 ? Layout::row_major : Layout::col_major;
        s.beta = seed % 5 == 0 ? 0.5f : 0.0f;
        s.bias = seed % 2 == 0;
        s.activation = seed % 3 == 1 ? Activation::gelu : Activation::none;
        s.seed = seed++;
        testing::expect_matches_reference(s, cpu_backend());
      }
}

// An fp8 D against the float64 reference (times D's scale), its amax against the reference's
// largest magnitude: both types, every scale mode, layouts and epilogues, C and bias in bf16.
TEST(CpuBackend, Fp8OutputsEveryTypeScaleModeAndEpilogue) {
  uint64_t seed = 700;
  for (DType d : {DType::fp8_e4m3, DType::fp8_e5m2})
    for (ScaleMode mode :
         {ScaleMode::none, ScaleMode::tensor, ScaleMode::channel, ScaleMode::block}) {
      harness::WorkloadSpec s;
      s.m = 45 + int64_t(seed % 7);
      s.n = 131;
      s.k = 1000 + int64_t(seed % 5) * 37;
      s.input_dtype = seed % 2 ? DType::fp8_e4m3 : DType::fp8_e5m2;
      s.input_dtype_b = DType::fp8_e4m3;
      s.output_dtype = d;
      s.scale_mode = mode;
      s.layout_b = seed % 3 ? Layout::col_major : Layout::row_major;
      s.layout_c = seed % 4 == 1 ? Layout::col_major : Layout::row_major;
      s.alpha = seed % 2 ? 1.0f : 0.5f;
      s.beta = seed % 3 == 0 ? 0.75f : 0.0f;
      s.bias = seed % 2 == 0;
      s.activation = seed % 4 == 2 ? Activation::silu : Activation::none;
      s.batch_count = seed % 5 == 0 ? 2 : 1;
      s.seed = seed++;
      testing::expect_matches_reference(s, cpu_backend());
    }
}

// An fp8 D is the same call's fp32 D times the scale, rounded to nearest even and saturated, bit
// for bit; the amax is that fp32 D's largest magnitude, exactly.
TEST(CpuBackend, Fp8OutputIsTheScaledFp32OutputAndItsAmax) {
  const int64_t m = 37, n = 70, k = 300;
  harness::WorkloadSpec s;
  s.m = m, s.n = n, s.k = k;
  s.input_dtype = DType::fp8_e4m3;
  s.output_dtype = DType::fp32;
  s.scale_mode = ScaleMode::channel;
  s.bias = true;
  s.activation = Activation::gelu;
  s.seed = 71;
  std::unique_ptr<harness::Workload> w;
  ASSERT_TRUE(harness::Workload::create(s, false, &w).ok());
  GemmProblem p = w->problem();
  std::vector<float> reference(size_t(m * n));
  p.d.data = reference.data();
  p.d.ld = n;
  ASSERT_TRUE(gemm(p, cpu_backend()).ok());
  float largest = 0.0f;
  for (float x : reference) largest = std::max(largest, std::fabs(x));
  ASSERT_GT(largest, 1.0f);
  for (DType d : {DType::fp8_e4m3, DType::fp8_e5m2})
    for (float scale : {0.25f, 3.0f, 448.0f * 4.0f / largest}) {  // the last saturates e4m3
      std::vector<uint8_t> out(size_t(m * n), 0x7f);              // NaN in both types
      float amax = std::numeric_limits<float>::quiet_NaN();
      GemmProblem q = p;
      q.d = {out.data(), d, Layout::row_major, n, 0};
      q.d.scale = &scale;
      q.d.amax = &amax;
      ASSERT_TRUE(gemm(q, cpu_backend()).ok());
      EXPECT_EQ(amax, largest) << to_string(d) << " scale " << scale;
      const Fp8Format format = d == DType::fp8_e4m3 ? e4m3_format() : e5m2_format();
      int saturated = 0;
      for (size_t i = 0; i < out.size(); ++i) {
        ASSERT_EQ(out[i], float_to_fp8_bits(scale * reference[i], format))
            << to_string(d) << " scale " << scale << " element " << i;
        saturated += std::fabs(fp8_bits_to_float(out[i], format)) == 448.0f;
      }
      if (d == DType::fp8_e4m3 && scale > 100.0f) EXPECT_GT(saturated, 0);
    }
}

// An empty D still sets the amax: the largest of no values is 0.
TEST(CpuBackend, Fp8OutputOfNoElementsHasAmaxZero) {
  std::vector<uint8_t> a(4), b(4);
  float amax = -1.0f, scale = 2.0f;
  GemmProblem p;
  p.m = 0, p.n = 3, p.k = 1;
  p.a = {a.data(), DType::fp8_e4m3, Layout::row_major, 0, 0};
  p.b = {b.data(), DType::fp8_e4m3, Layout::row_major, 0, 0};
  p.d = {nullptr, DType::fp8_e4m3, Layout::row_major, 0, 0};
  p.d.scale = &scale;
  p.d.amax = &amax;
  ASSERT_TRUE(gemm(p, cpu_backend()).ok());
  EXPECT_EQ(amax, 0.0f);
}

// The block scales' layout as tilegemm.hpp documents it, by hand: A and B all ones, every scale 1
// but one, so D shows which rows, columns and K values that scale covered.
TEST(CpuBackend, Fp8BlockScalesCoverTheDocumentedBlocks) {
  const int64_t m = 3, n = 200, k = 260;                      // B: 2 column blocks x 3 K blocks
  const std::vector<uint8_t> a(m * k, 0x38), b(k * n, 0x38);  // e4m3 1.0
  std::vector<float> scale_a(m * 3, 1.0f), scale_b(2 * 3, 1.0f), d(m * n, -1.0f);
  scale_a[1 * m + 2] = 2.0f;  // row 2, K block 1 (k 128..255)
  scale_b[1 * 3 + 2] = 4.0f;  // column block 1 (n 128..199), K block 2 (k 256..259)
  GemmProblem p;
  p.m = m, p.n = n, p.k = k;
  p.a = {a.data(), DType::fp8_e4m3, Layout::row_major, 0, 0};
  p.b = {b.data(), DType::fp8_e4m3, Layout::col_major, 0, 0};
  p.d = {d.data(), DType::fp32, Layout::row_major, 0, 0};
  p.scales = {ScaleMode::block, scale_a.data(), scale_b.data()};
  ASSERT_TRUE(gemm(p, cpu_backend()).ok());
  for (int64_t row = 0; row < m; ++row)
    for (int64_t col = 0; col < n; ++col) {
      const double a_part = row == 2 ? 128.0 * 2.0 : 128.0;  // K block 1 of row 2 doubled
      const double b_last = col >= 128 ? 4.0 * 4 : 4.0;      // K block 2: 4 values of K
      EXPECT_EQ(d[row * n + col], 128.0 + a_part + b_last) << row << ", " << col;
    }
}

}  // namespace
}  // namespace tilegemm

namespace tilegemm {
namespace {

// What `explain --scale-mode` prints: the scales one tile reads over its K loop.
TEST(Fp8Scales, ATileReadsItsRowsAndColumnBlocksAtEveryKBlock) {
  // Rows [0, 128) and columns [128, 256) over K = 1000 (8 K blocks, the last partial).
  const TileScales block = tile_scales(ScaleMode::block, 1000, 0, 128, 128, 256);
  EXPECT_EQ(block.k_blocks, 8);
  EXPECT_EQ(block.a_first, 0);
  EXPECT_EQ(block.a_last, 127);
  EXPECT_EQ(block.b_first, 1);
  EXPECT_EQ(block.b_last, 1);
  EXPECT_EQ(block.count, 8 * (128 + 1));
  // A 64-column tile straddling no block boundary, and one at the matrix's ragged edge.
  EXPECT_EQ(tile_scales(ScaleMode::block, 128, 256, 300, 192, 256).b_first, 1);
  EXPECT_EQ(tile_scales(ScaleMode::block, 128, 256, 300, 256, 300).b_last, 2);
  const TileScales channel = tile_scales(ScaleMode::channel, 1000, 256, 300, 128, 256);
  EXPECT_EQ(channel.a_first, 256);
  EXPECT_EQ(channel.a_last, 299);
  EXPECT_EQ(channel.count, 44 + 128);
  EXPECT_EQ(tile_scales(ScaleMode::tensor, 1000, 0, 128, 0, 128).count, 2);
  EXPECT_EQ(tile_scales(ScaleMode::none, 1000, 0, 128, 0, 128).count, 0);
}

// The sm90 promotion walks each block scale along K from a piece's first K block by a stride
// (ScaleView::a_block_index and kin): at every step it must read what a_at and b_at give for
// that K block, with rows past M and columns past N on the last real one's scale.
TEST(Fp8Scales, AWalkAlongKReadsEachKBlocksScaleOfTheRowAndColumn) {
  std::mt19937 rng(20261202);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t m = 1 + rng() % 300, n = 1 + rng() % 700, k = 1 + rng() % 1500;
    const int64_t k_blocks = scale_blocks(k);
    std::vector<float> a(size_t(m * k_blocks)), b(size_t(scale_blocks(n) * k_blocks));
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(i) + 0.25f;  // every entry its own value
    for (size_t i = 0; i < b.size(); ++i) b[i] = -float(i) - 0.5f;
    const ScaleView s{ScaleMode::block, a.data(), b.data(), m, k_blocks};
    const int64_t first = int64_t(rng() % uint32_t(k_blocks));
    for (int64_t row : {int64_t(0), m - 1, m, m + 8, int64_t(rng() % uint32_t(m))}) {
      const int64_t real = std::min(row, m - 1);
      for (int64_t kb = first; kb < k_blocks; ++kb) {
        const int64_t at = s.a_block_index(row, first) + (kb - first) * s.a_block_stride();
        ASSERT_GE(at, 0);
        ASSERT_LT(at, int64_t(a.size()));
        EXPECT_EQ(a[size_t(at)], s.a_at(real, kb * kScaleBlock)) << m << " " << row << " " << kb;
      }
    }
    for (int64_t col : {int64_t(0), n - 1, n, n + 127, int64_t(rng() % uint32_t(n))}) {
      const int64_t real = std::min(col, n - 1);
      for (int64_t kb = first; kb < k_blocks; ++kb) {
        const int64_t at = s.b_block_index(col, n, first) + (kb - first) * s.b_block_stride();
        ASSERT_GE(at, 0);
        ASSERT_LT(at, int64_t(b.size()));
        EXPECT_EQ(b[size_t(at)], s.b_at(kb * kScaleBlock, real)) << n << " " << col << " " << kb;
      }
    }
  }
}

}  // namespace
}  // namespace tilegemm

namespace tilegemm {
namespace {

// Rows of values that TF32 rounds up, down, to even and by magnitude (GPU test
// Tf32InputsAreRoundedToNearest has the same), times B of ones over K = 64: the CPU backend's D
// for inputs of `dtype`.
constexpr int64_t kRoundedM = 4, kRoundedN = 8, kRoundedK = 64;
constexpr float kUlp = 1.0f / 1024;
constexpr float kRoundedRows[kRoundedM] = {1 + 0.75f * kUlp, 1 + 0.5f * kUlp, 1 + 0.25f * kUlp,
                                           -(1 + 0.5f * kUlp)};
std::vector<float> ones_product_of_rounded_rows(DType dtype) {
  std::vector<float> a(kRoundedM * kRoundedK), b(kRoundedK * kRoundedN, 1.0f);
  std::vector<float> d(kRoundedM * kRoundedN, -1.0f);
  for (int64_t i = 0; i < kRoundedM * kRoundedK; ++i) a[i] = kRoundedRows[i / kRoundedK];
  GemmProblem p;
  p.m = kRoundedM, p.n = kRoundedN, p.k = kRoundedK;
  p.a = {a.data(), dtype, Layout::row_major};
  p.b = {b.data(), dtype, Layout::row_major};
  p.d = {d.data(), DType::fp32, Layout::row_major};
  EXPECT_TRUE(gemm(p, cpu_backend()).ok());
  return d;
}

// tf32 on the CPU backend: the inputs rounded to TF32 to nearest, ties to even, as the Hopper
// kernel's.
TEST(CpuBackend, Tf32InputsAreRoundedToNearestEven) {
  const float expected[kRoundedM] = {kRoundedK * (1 + kUlp), float(kRoundedK), float(kRoundedK),
                                     -float(kRoundedK)};
  const std::vector<float> d = ones_product_of_rounded_rows(DType::tf32);
  for (int64_t i = 0; i < kRoundedM * kRoundedN; ++i)
    EXPECT_EQ(d[i], expected[i / kRoundedN]) << "row " << i / kRoundedN;
}

// tf32x3 on the CPU backend: the fp32 products (at least as accurate as three TF32 products), so
// the same inputs keep their bits and give their exact sums; and on random data of every layout,
// the float64 reference's result.
TEST(CpuBackend, Tf32x3InputsKeepTheirFp32Bits) {
  const std::vector<float> d = ones_product_of_rounded_rows(DType::tf32x3);
  for (int64_t i = 0; i < kRoundedM * kRoundedN; ++i)
    EXPECT_EQ(d[i], kRoundedK * kRoundedRows[i / kRoundedN]) << "row " << i / kRoundedN;
  for (Layout la : {Layout::row_major, Layout::col_major})
    for (Layout lb : {Layout::row_major, Layout::col_major}) {
      WorkloadSpec s;
      s.m = 37, s.n = 45, s.k = 300;
      s.input_dtype = DType::tf32x3;
      s.layout_a = la, s.layout_b = lb;
      s.seed = 77;
      expect_matches_reference(s, cpu());
    }
}

// The CPU backend's products with every instruction set this CPU has (plain, AVX2, AVX-512), on
// blocks whose sizes leave every kind of edge (rows and columns past the register blocks),
// against sums in double; accumulators that start non-zero, as a second K block finds them.
TEST(CpuMicroKernel, EveryInstructionSetAddsTheProduct) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  int tested = 0;
  for (cpu::Isa isa : {cpu::Isa::plain, cpu::Isa::avx2, cpu::Isa::avx512}) {
    if (!cpu::has_isa(isa)) continue;
    ++tested;
    for (int trial = 0; trial < 40; ++trial) {
      const int rows = 1 + int(rng() % 70), cols = 1 + int(rng() % 100),
                depth = 1 + int(rng() % 90);
      const int lda = depth + int(rng() % 3), ldb = cols + int(rng() % 3),
                ldc = cols + int(rng() % 3);
      std::vector<float> a(size_t(rows) * lda), b(size_t(depth) * ldb), acc(size_t(rows) * ldc);
      for (float& x : a) x = value(rng);
      for (float& x : b) x = value(rng);
      for (float& x : acc) x = value(rng);
      std::vector<double> expected(acc.begin(), acc.end());
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j)
          for (int kk = 0; kk < depth; ++kk)
            expected[size_t(i) * ldc + j] +=
                double(a[size_t(i) * lda + kk]) * b[size_t(kk) * ldb + j];
      cpu::multiply_add(isa, a.data(), lda, b.data(), ldb, acc.data(), ldc, rows, cols, depth);
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < ldc; ++j) {
          const size_t at = size_t(i) * ldc + j;
          // past `cols` (the padding of ldc) nothing may change
          const double tolerance = j < cols ? 1e-5 * depth : 0.0;
          ASSERT_NEAR(acc[at], expected[at], tolerance)
              << "isa " << int(isa) << " " << rows << "x" << cols << "x" << depth << " at " << i
              << "," << j;
        }
    }
  }
  EXPECT_GE(tested, 1);
}

// The thread count comes from TILEGEMM_NUM_THREADS, else OMP_NUM_THREADS (its first value); a
// value that is not a count is an error naming the variable, before D is touched.
TEST(CpuBackend, ThreadCountFromTheEnvironment) {
  const auto with = [](const char* name, const char* value) {
    unsetenv("TILEGEMM_NUM_THREADS");
    unsetenv("OMP_NUM_THREADS");
    if (name) setenv(name, value, 1);
    int threads = 0;
    const Status s = cpu::threads_from_environment(&threads);
    return std::pair{s, threads};
  };
  EXPECT_EQ(with("TILEGEMM_NUM_THREADS", "3").second, 3);
  EXPECT_EQ(with("OMP_NUM_THREADS", "5,2").second, 5);
  EXPECT_GE(with(nullptr, "").second, 1);
  for (const char* bad : {"0", "-2", "two", "4x", "100000"}) {
    const Status s = with("OMP_NUM_THREADS", bad).first;
    EXPECT_EQ(s.code, StatusCode::invalid_argument) << bad;
    EXPECT_NE(s.message.find("OMP_NUM_THREADS='"), std::string::npos) << s.message;
  }
  // A call on one thread gives the right D; a bad value leaves D as it was.
  setenv("TILEGEMM_NUM_THREADS", "1", 1);
  WorkloadSpec s;
  s.m = 70;
  s.n = 90;
  s.k = 50;
  expect_matches_reference(s, cpu());
  setenv("TILEGEMM_NUM_THREADS", "many", 1);
  std::unique_ptr<harness::Workload> w;
  ASSERT_TRUE(harness::Workload::create(s, false, &w).ok());
  const Status refused = gemm(w->problem(), cpu());
  EXPECT_NE(refused.message.find("TILEGEMM_NUM_THREADS='many' is not a thread count"),
            std::string::npos)
      << refused.message;
  EXPECT_TRUE(std::isinf(w->check(1e9)));  // still the NaN poison
  unsetenv("TILEGEMM_NUM_THREADS");
}

}  // namespace
}  // namespace tilegemm
