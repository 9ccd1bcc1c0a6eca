// Every GPU kernel and compiled config, against the float64 reference, on the GPU.
// Outputs are poisoned with NaN before each run; inputs are fresh random normals per case.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gemm_check.hpp"
#include "kernels/decode/compiled_shapes.hpp"
#include "problem/dtype.hpp"
#include "schedule/tail_split.hpp"

namespace tilegemm {
namespace {

using harness::WorkloadSpec;
using testing::spec_of;

bool contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

// Checks one case against the reference. The exceptions, where the refusal must say why: sm90
// refuses problems its TMA loads cannot describe (rows not 16-byte aligned, K = 0; "auto" sends
// those to sm80), tf32 with a column-major A beside a row-major B (or a row-major B with a bias)
// too small to copy, and every problem on a GPU that is not a Hopper; sm80's 3-stage configs are
// compiled for one input type each (128-byte K slices), and they and the tiles larger than
// 128 x 128 refuse rows that are not 16-byte aligned (cp.async only), as the decode kernel's
// cp.async config does; its staged config refuses the aligned ones.
// (RandomShapesPaddedLeadingDimsEveryLayout lets no other sm80 refusal through.)
void expect_matches_reference(const WorkloadSpec& spec, const GemmOptions& options) {
  const bool async_only_sm80 = options.kernel == "sm80" && options.config &&
                               (options.config->num_stages == 3 ||
                                options.config->block_m * options.config->block_n > 128 * 128);
  const bool decode = options.kernel == "decode";
  if (options.kernel == "sm90" || async_only_sm80 || decode) {
    std::unique_ptr<harness::Workload> w;
    ASSERT_TRUE(harness::Workload::create(spec, true, &w).ok());
    const Status s = plan(w->problem(), options, nullptr);
    if (!s.ok()) {
      EXPECT_TRUE(async_only_sm80 ? contains(s.message, "3-stage configs")
                  : decode        ? contains(s.message, "reads A and B by cp.async") ||
                                 contains(s.message, "is the staged path's")
                           : contains(s.message, "TMA") || contains(s.message, "K > 0") ||
                                 contains(s.message, "Hopper") ||
                                 contains(s.message, "tf32 needs K-major") ||
                                 contains(s.message, "with promoted sums has no compiled"))
          << s.message << " | " << testing::describe(spec);
      return;
    }
  }
  testing::expect_matches_reference(spec, options);
}

// Whether an sm80 config is compiled for an input type: 3 stages of 128-byte K slices are
// (BLOCK_SIZE_K 64 for 16-bit inputs, 32 for tf32), and every config of more stages.
bool sm80_compiled_for(const KernelConfig& c, DType dtype) {
  const int element_size = dtype == DType::fp16 || dtype == DType::bf16 ? 2 : 4;
  return c.num_stages != 3 || c.block_k * element_size == 128;
}

// sm90 configs are compiled for slabs of 128 bytes of K (BLOCK_SIZE_K 64 for 16-bit inputs, 32
// for tf32): two per stage in the 64x64 tile, one in every other. So 64x64x64 is tf32's 64x64 and
// 64x128x64 a 16-bit 64x128.
bool sm90_compiled_for(const KernelConfig& c, DType dtype) {
  const int stage_bytes = c.block_k * dtype_size(dtype);
  const int slabs = c.block_m == 64 && c.block_n == 64 ? 2 : 1;
  return stage_bytes == 128 * slabs;
}

// The smallest leading dimension of a rows x cols matrix, rounded up to 8 elements: rows that
// start on 16-byte boundaries for every input type.
int64_t padded_ld(Layout layout, int64_t rows, int64_t cols) {
  const int64_t packed = std::max<int64_t>(layout == Layout::row_major ? cols : rows, 1);
  return (packed + 7) / 8 * 8;
}

// Makes the workload of `s` (kept in *w for checks) and runs it on the GPU with `options`.
Status run_on_gpu(const WorkloadSpec& s, std::unique_ptr<harness::Workload>* w, GemmReport* report,
                  GemmOptions options = {}) {
  if (Status status = harness::Workload::create(s, true, w); !status.ok()) return status;
  options.backend = Backend::gpu;
  return gemm((*w)->problem(), options, report);
}

bool hopper() {
  const DeviceInfo d = devices().front();
  return d.compute_capability_major == 9 && d.compute_capability_minor == 0;
}

class GpuKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (devices().empty()) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  }
  // Every (kernel, config) pair compiled into this build, with the input dtypes it takes (an sm90
  // config is compiled for fp16 and bf16 or for tf32).
  struct KernelCase {
    GemmOptions options;
    std::vector<DType> dtypes;
    bool takes(DType d) const { return std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end(); }
    // The kernel's first 16-bit input type, else its first.
    DType half_type() const {
      for (DType d : dtypes)
        if (d == DType::fp16 || d == DType::bf16) return d;
      return dtypes.front();
    }
  };
  // sm90 reads tf32 K-major only, and refuses a row-major B too small to copy: its tf32 cases
  // take a column-major B, so that the epilogue tests run on it instead of being refused.
  static WorkloadSpec suited(WorkloadSpec s, const KernelCase& kc) {
    if (kc.options.kernel == "sm90" && s.input_dtype == DType::tf32) s.layout_b = Layout::col_major;
    return s;
  }
  static std::vector<KernelCase> every_kernel_config() {
    std::vector<KernelCase> out;
    for (const auto& k : available_kernels())
      for (const auto& c : k.configs) {
        GemmOptions o;
        o.backend = Backend::gpu;
        o.kernel = k.name;
        o.config = c;
        // fp8 has tests of its own (Fp8...), with its scales and accumulation modes.
        std::vector<DType> dtypes;
        for (DType d : k.input_dtypes)
          if (!is_fp8(d) && (k.name != "sm90" || sm90_compiled_for(c, d))) dtypes.push_back(d);
        if (dtypes.empty()) continue;
        out.push_back({o, dtypes});
      }
    return out;
  }
  // Every kernel config x input type x layout of A and B x shape, against the reference. With
  // `padded`, every leading dimension is rounded up to 8 elements (16-byte aligned rows).
  template <size_t kShapes>
  static void every_layout_and_shape(const int64_t (&shapes)[kShapes][3], uint64_t seed,
                                     bool padded) {
    for (const KernelCase& kc : every_kernel_config())
      for (DType dtype : kc.dtypes)
        for (Layout la : {Layout::row_major, Layout::col_major})
          for (Layout lb : {Layout::row_major, Layout::col_major})
            for (const auto& shape : shapes) {
              WorkloadSpec s = spec_of(shape[0], shape[1], shape[2], dtype);
              s.layout_a = la;
              s.layout_b = lb;
              s.layout_c = seed % 3 ? Layout::row_major : Layout::col_major;
              if (padded) {
                s.lda = padded_ld(la, s.m, s.k);
                s.ldb = padded_ld(lb, s.k, s.n);
                s.ldc = padded_ld(s.layout_c, s.m, s.n);
              }
              s.seed = seed++;
              // Aligned rows: every sm80 config compiled for the input type must run.
              const bool must_run = padded && kc.options.kernel == "sm80" &&
                                    sm80_compiled_for(*kc.options.config, dtype);
              must_run ? testing::expect_matches_reference(s, kc.options)
                       : expect_matches_reference(s, kc.options);
            }
  }
};

TEST_F(GpuKernels, RandomShapesEveryLayoutEveryDtype) {
  const int64_t shapes[][3] = {{1, 1, 1},     {7, 31, 129},    {127, 255, 33}, {129, 1, 255},
                               {255, 129, 7}, {300, 257, 513}, {64, 128, 16},  {256, 192, 320},
                               {136, 72, 200}};  // the last two: aligned rows
  every_layout_and_shape(shapes, 100, /*padded=*/false);
}

TEST_F(GpuKernels, RandomShapesPaddedLeadingDimsEveryLayout) {
  // Any M, N, K, with rows padded to 16 bytes: every edge of every tile, on the paths that need
  // aligned rows (cp.async, TMA); odd N in aligned rows of D leaves a lone last column.
  const int64_t shapes[][3] = {{1, 1, 1},     {7, 31, 129},    {127, 255, 33}, {129, 1, 255},
                               {255, 129, 7}, {300, 257, 513}, {200, 136, 72}, {520, 264, 1000}};
  every_layout_and_shape(shapes, 500, /*padded=*/true);
}

TEST_F(GpuKernels, UnalignedLeadingDimsTakeTheScalarPath) {
  for (const KernelCase& kc : every_kernel_config())
    for (DType dtype : kc.dtypes)
      for (Layout la : {Layout::row_major, Layout::col_major}) {
        WorkloadSpec s = spec_of(131, 77, 93, dtype);
        s.layout_a = la;
        s.layout_b = la == Layout::row_major ? Layout::col_major : Layout::row_major;
        s.lda = 133;  // odd: breaks 16-byte alignment of rows (or columns) for every dtype
        s.ldb = 97;
        s.ldc = 77 + 5;
        expect_matches_reference(s, kc.options);
      }
}

TEST_F(GpuKernels, LargeUnalignedProblemsRunOnAlignedCopies) {
  // 520 x 300 x 451 is past the copy threshold (M*N*K >= 2^26); lda = 453 and ldb = 303 break
  // 16-byte alignment for every input type. The copies must hold every element (any layout, a
  // batch), the kernel must then take its aligned path (sm90 for 16-bit and tf32 inputs on a
  // Hopper; tf32's column-major A and row-major B transposed on the way), and with the copies
  // switched off the same problem still runs, on element loads.
  uint64_t seed = 3000;
  for (DType dtype : {DType::fp32, DType::fp16, DType::bf16, DType::tf32})
    for (Layout la : {Layout::row_major, Layout::col_major})
      for (bool copies : {true, false}) {
        WorkloadSpec s = spec_of(520, 300, 451, dtype);
        s.layout_a = la;
        s.layout_b = la == Layout::row_major ? Layout::col_major : Layout::row_major;
        s.lda = 523;  // holds 520 (column-major) or 451 (row-major)
        s.ldb = 523;
        s.batch_count = la == Layout::row_major ? 2 : 1;
        s.beta = 0.5f;
        s.seed = seed++;
        std::unique_ptr<harness::Workload> w;
        GemmOptions o;
        o.aligned_copies = copies;
        GemmReport report;
        const Status status = run_on_gpu(s, &w, &report, o);
        ASSERT_TRUE(status.ok()) << status.message << " | " << testing::describe(s);
        ASSERT_TRUE(w->fetch_output().ok());
        EXPECT_LE(w->check(1e12), harness::tolerance_for(s.input_dtype, s.output_dtype))
            << testing::describe(s) << " copies=" << copies << " kernel=" << report.kernel;
        EXPECT_EQ(contains(report.aligned_copies, "a ld 523 -> "), copies) << report.aligned_copies;
        const bool wgmma = hopper() && dtype != DType::fp32;
        if (wgmma) EXPECT_EQ(report.kernel, copies ? "sm90" : "sm80") << testing::describe(s);
        const bool transposed = wgmma && copies && dtype == DType::tf32 && la == Layout::col_major;
        EXPECT_EQ(contains(report.aligned_copies, "row-major ld"), transposed)
            << report.aligned_copies;
        EXPECT_EQ(contains(report.aligned_copies, "b ld 523 -> column-major ld"), transposed)
            << report.aligned_copies;
      }
}

// Plain tf32 on the sm90 kernel reads a column-major A through registers and a row-major B as it
// lies (the transposed product D^T = B^T A^T), with no copy, wherever D^T goes out through the
// store buffers: alpha * AB into a row-major D, anything into a column-major one. A row-major B
// with a bias, or with beta * C into a row-major D, is still copied transposed first. Packed and
// padded rows, a batch of 2, an fp32 and a bf16 D, against the float64 reference.
TEST_F(GpuKernels, Tf32ReadsOperandsAsTheyLie) {
  if (!hopper()) GTEST_SKIP() << "sm90 runs only on compute capability 9.0";
  enum class Epilogue { plain, beta_into_column_major, beta_into_row_major, bias };
  uint64_t seed = 3500;
  for (const auto& [la, lb] : {std::pair{Layout::row_major, Layout::row_major},
                               std::pair{Layout::col_major, Layout::col_major}})
    for (Epilogue epilogue : {Epilogue::plain, Epilogue::beta_into_column_major,
                              Epilogue::beta_into_row_major, Epilogue::bias}) {
      const bool padded = seed % 2 == 1;
      WorkloadSpec s = spec_of(1032, 520, 1000, DType::tf32);
      s.layout_a = la;
      s.layout_b = lb;
      if (padded) {
        s.lda = padded_ld(la, s.m, s.k) + 8;
        s.ldb = padded_ld(lb, s.k, s.n) + 8;
      }
      s.batch_count = 2;
      s.beta = epilogue == Epilogue::plain ? 0.0f : 0.5f;
      s.bias = epilogue == Epilogue::bias;
      s.layout_c =
          epilogue == Epilogue::beta_into_column_major ? Layout::col_major : Layout::row_major;
      s.output_dtype = padded ? DType::bf16 : DType::fp32;
      s.seed = seed++;
      std::unique_ptr<harness::Workload> w;
      GemmReport report;
      const Status status = run_on_gpu(s, &w, &report);
      ASSERT_TRUE(status.ok()) << status.message << " | " << testing::describe(s);
      ASSERT_TRUE(w->fetch_output().ok());
      EXPECT_LE(w->check(1e12), harness::tolerance_for(s.input_dtype, s.output_dtype))
          << testing::describe(s) << " kernel=" << report.kernel;
      EXPECT_EQ(report.kernel, "sm90") << testing::describe(s);
      const bool copied = la == Layout::row_major &&
                          (epilogue == Epilogue::bias || epilogue == Epilogue::beta_into_row_major);
      EXPECT_EQ(contains(report.aligned_copies, "b ld"), copied)
          << report.aligned_copies << " | " << testing::describe(s);
      if (!copied) EXPECT_TRUE(report.aligned_copies.empty()) << report.aligned_copies;
    }
}

// The relative error of `s` run on the GPU in `dtype` (1 where it does not run).
double gpu_error(WorkloadSpec s, DType dtype, GemmReport* report, const GemmOptions& options = {}) {
  s.input_dtype = dtype;
  std::unique_ptr<harness::Workload> w;
  const Status status = run_on_gpu(s, &w, report, options);
  EXPECT_TRUE(status.ok()) << status.message << " | " << testing::describe(s);
  if (!status.ok() || !w->fetch_output().ok()) return 1.0;
  return w->check(1e12);
}

// tf32x3: A and B split into their tf32 halves (problem/aligned_copies.hpp) and multiplied by the
// tf32 kernels over three times K. Every layout of A and B, a padded leading dimension, a batch,
// the whole epilogue and a K off every multiple of 32, against the
// float64 reference at fp32's tolerance; on the same inputs its error stays near fp32's (the
// CUDA-core kernels) and far below a single tf32 product's.
TEST_F(GpuKernels, Tf32x3RunsOnSplitCopiesAtAboutFp32sAccuracy) {
  uint64_t seed = 4000;
  for (Layout la : {Layout::row_major, Layout::col_major})
    for (Layout lb : {Layout::row_major, Layout::col_major}) {
      WorkloadSpec s = spec_of(300, 260, 517, DType::tf32x3);
      s.layout_a = la, s.layout_b = lb;
      s.lda = la == Layout::row_major ? 521 : 303;
      s.batch_count = 2;
      s.beta = 0.5f;
      s.bias = true;
      s.activation = Activation::gelu;
      s.seed = seed++;
      GemmReport report, other;
      const double split = gpu_error(s, DType::tf32x3, &report);
      EXPECT_LE(split, harness::tolerance_for(DType::tf32x3, DType::fp32))
          << testing::describe(s) << " kernel=" << report.kernel;
      EXPECT_TRUE(contains(report.aligned_copies, "tf32x3: A and B split into tf32 parts"))
          << report.aligned_copies;
      const double fp32 = gpu_error(s, DType::fp32, &other);
      const double tf32 = gpu_error(s, DType::tf32, &other);
      EXPECT_LE(split, 10 * fp32) << testing::describe(s) << " fp32 " << fp32;
      EXPECT_LE(split * 10, tf32) << testing::describe(s) << " tf32 " << tf32;
    }
}

// Over a long K: the tensor cores truncate the fp32 sums they keep, so tf32x3's error with fast
// accumulation grows with K (about 2.3e-9 x K); with its sums promoted into fp32 registers every
// 32 values of K (the default) it stays within 2x of fp32's on the CUDA cores, whose sums round
// to nearest. Each of the promoting tiles, and the heuristic's choice.
TEST_F(GpuKernels, Tf32x3PromotedSumsKeepFp32sAccuracyOverALongK) {
  if (!hopper()) GTEST_SKIP() << "the promoting tf32 kernels are sm90's";
  WorkloadSpec s = spec_of(256, 256, 8192, DType::tf32x3);
  s.seed = 4100;
  GemmReport other;
  const double fp32 = gpu_error(s, DType::fp32, &other);
  for (const char* config : {"", "128x256x32/g8/s4/w12/wt64x256", "256x128x32/g8/s4/w12/wt128x128",
                             "128x128x32/g8/s6/w12/wt64x128", "64x128x32/g8/s8/w8/wt64x128",
                             "128x64x32/g8/s8/w12/wt64x64"}) {
    WorkloadSpec t = s;
    GemmOptions options;
    options.kernel = "sm90";
    if (*config != 0) options.config = parse_kernel_config(config);
    GemmReport report;
    const double promoted = gpu_error(t, DType::tf32x3, &report, options);
    EXPECT_EQ(report.kernel, "sm90") << config;
    EXPECT_LE(promoted, 2 * fp32) << config << " fp32 " << fp32;
    t.fast_accumulation = true;
    const double fast = gpu_error(t, DType::tf32x3, &report, options);
    EXPECT_LE(fast, harness::tolerance_for(DType::tf32x3, DType::fp32, true)) << config;
    EXPECT_LT(promoted, fast) << config;
  }
}

TEST_F(GpuKernels, AlignedPaddedLeadingDimsTakeTheVectorPath) {
  // K = 75 inside rows padded to 80: the last 16-byte chunk of each row is partly outside K.
  for (const KernelCase& kc : every_kernel_config())
    for (DType dtype : kc.dtypes) {
      WorkloadSpec s = spec_of(200, 136, 75, dtype);
      s.lda = 80;
      s.layout_b = Layout::col_major;
      s.ldb = 80;
      expect_matches_reference(s, kc.options);
    }
}

TEST_F(GpuKernels, EpilogueAlphaBetaBiasActivations) {
  for (const KernelCase& kc : every_kernel_config())
    for (Activation act : {Activation::none, Activation::relu, Activation::leaky_relu,
                           Activation::gelu, Activation::silu}) {
      WorkloadSpec s = spec_of(150, 104, 64, kc.dtypes.front());
      s.alpha = 0.5f;
      s.beta = -1.25f;
      s.bias = true;
      s.activation = act;
      s.leaky_relu_slope = 0.1f;
      s.seed = 1000 + int(act);
      expect_matches_reference(suited(s, kc), kc.options);
    }
}

TEST_F(GpuKernels, EpilogueWithCInTheOtherLayoutThanD) {
  // A column-major C into a row-major D with 16-byte rows: sm90 stores D by TMA but cannot load
  // this C by TMA, so each thread loads its own values of C. And the other way round.
  for (const KernelCase& kc : every_kernel_config())
    for (Layout ld : {Layout::row_major, Layout::col_major}) {
      WorkloadSpec s = spec_of(150, 104, 72, kc.half_type());
      s.layout_c = ld;
      s.c_transposed = true;
      s.beta = 0.75f;
      s.bias = true;
      s.activation = Activation::gelu;
      s.batch_count = 2;
      s.seed = 1100 + int(ld);
      expect_matches_reference(suited(s, kc), kc.options);
    }
}

TEST_F(GpuKernels, AlphaOnlyEpilogueOnAlignedAndUnalignedRowsOfD) {
  // D = alpha * AB with no C, bias or activation: tiles of a row-major D whose rows are 16-byte
  // aligned take the vector-store epilogues (warptile: fp32 D on interior tiles; sm80: every type
  // of D, edge tiles too); ldc = 261 (odd) and a column-major D take the general one. N = 250
  // with the rows of B and D padded to 256 ends each row of D in a run of two that sm80 stores
  // element by element. A batch of two checks the batch offset of D.
  for (const KernelCase& kc : every_kernel_config())
    for (DType out : {DType::fp32, DType::fp16, DType::bf16})
      for (Layout lc : {Layout::row_major, Layout::col_major})
        for (int64_t ldc : {int64_t(0), int64_t(261), int64_t(256)}) {
          WorkloadSpec s = spec_of(264, ldc == 256 ? 250 : 256, 48, kc.dtypes.front());
          s.output_dtype = out;
          s.layout_c = lc;
          s.ldc = ldc == 0 ? 0 : (lc == Layout::row_major ? ldc : ldc + 8);
          if (ldc == 256) s.ldb = 256;
          s.alpha = -0.75f;
          s.batch_count = 2;
          s.seed = 2000 + ldc + int(lc) + 10 * int(out);
          expect_matches_reference(suited(s, kc), kc.options);
        }
}

TEST_F(GpuKernels, RowMajorDThatTmaCannotDescribeIsWrittenFromTheStoreBuffers) {
  // Rows of D that are not 16-byte multiples while A and B are aligned: sm90 writes D from its
  // store buffers with thread stores (the staged route), plain or with the whole epilogue. ldc 251
  // (odd) starts every other row off a 4-byte boundary, where lanes store value by value; ldc 254
  // gives 4-byte aligned rows, where a plain 16-bit D takes the pair stores from registers
  // instead. M = 200 and N = 250 leave partial tiles at both edges; a batch of two checks its
  // offset.
  for (const KernelCase& kc : every_kernel_config())
    for (DType out : {DType::fp32, DType::fp16, DType::bf16})
      for (int64_t ldc : {int64_t(251), int64_t(254)})
        for (bool whole_epilogue : {false, true}) {
          WorkloadSpec s = spec_of(200, 250, 72, kc.half_type());
          s.layout_b = Layout::col_major;
          s.ldb = 80;
          s.lda = 80;
          s.output_dtype = out;
          s.ldc = ldc;
          s.batch_count = 2;
          if (whole_epilogue) {
            s.beta = 0.5f;
            s.bias = true;
            s.activation = Activation::gelu;
          }
          s.seed = 2500 + ldc + 10 * int(out) + whole_epilogue;
          expect_matches_reference(suited(s, kc), kc.options);
        }
}

TEST_F(GpuKernels, MixedOutputTypes) {
  for (const KernelCase& kc : every_kernel_config())
    for (DType in : kc.dtypes)
      for (DType out : {DType::fp32, DType::fp16, DType::bf16})
        for (Layout lc : {Layout::row_major, Layout::col_major}) {
          WorkloadSpec s = spec_of(96, 80, 48, in);
          s.output_dtype = out;
          s.layout_c = lc;
          s.beta = 1.0f;
          s.bias = true;
          expect_matches_reference(suited(s, kc), kc.options);
        }
}

TEST_F(GpuKernels, StridedBatchInPlaceAndKZero) {
  for (const KernelCase& kc : every_kernel_config()) {
    WorkloadSpec batch = spec_of(70, 88, 40, kc.half_type());
    batch.batch_count = 3;
    batch.beta = 1.0f;
    expect_matches_reference(suited(batch, kc), kc.options);

    WorkloadSpec in_place = spec_of(64, 64, 64, kc.half_type());
    in_place.beta = 0.5f;
    in_place.in_place = true;
    expect_matches_reference(suited(in_place, kc), kc.options);

    WorkloadSpec k_zero = spec_of(33, 65, 0, kc.half_type());
    k_zero.beta = 2.0f;
    k_zero.bias = true;
    expect_matches_reference(suited(k_zero, kc), kc.options);
  }
}

// The general epilogue (beta * C in place, bias, an activation) over batches of 8 of 520 x 1032:
// more tiles than programs for the persistent kernels, partial tiles at the bottom and right.
WorkloadSpec general_epilogue_over_tiles(int64_t k, DType dtype, Activation activation,
                                         uint64_t seed) {
  WorkloadSpec s = spec_of(520, 1032, k, dtype);
  s.batch_count = 8;
  s.beta = 0.5f;
  s.in_place = true;
  s.bias = true;
  s.activation = activation;
  s.seed = seed;
  return s;
}

// The persistent sm90 kernel walks several tiles per program when there are more tiles than
// SMs, and its epilogue carries part of one tile's D into the next tile's K loop (128x256,
// 256x128, and 128x128 with an fp32 D). Batches of 8 give every config more tiles than an H100
// has SMs (128x256: 200); the K values put the carried chunks' store on a middle, the last and
// the only K step; partial tiles at the bottom and right edges. D = alpha * AB goes through TMA
// in the input's default output type and in fp32 (twice the chunks: ping-pong stores them in
// two rounds), and so does the general epilogue (beta*C in place, bias, gelu), through the same
// store buffers, each tile waiting for the last one's stores to read them.
TEST_F(GpuKernels, PersistentProgramsWithSeveralTilesEach) {
  if (!hopper()) GTEST_SKIP() << "sm90 runs only on compute capability 9.0";
  uint64_t seed = 700;
  for (const KernelCase& kc : every_kernel_config()) {
    if (kc.options.kernel != "sm90") continue;
    for (DType dtype : kc.dtypes) {
      std::vector<DType> outputs = {harness::default_output_dtype(dtype)};
      if (outputs.front() != DType::fp32) outputs.push_back(DType::fp32);
      for (DType out : outputs) {
        for (int64_t k : {320, 136, 64}) {
          WorkloadSpec s = spec_of(520, 1032, k, dtype);  // 16-byte rows: D goes through TMA
          s.output_dtype = out;
          s.alpha = 1.5f;
          s.batch_count = 8;
          s.seed = seed++;
          testing::expect_matches_reference(suited(s, kc), kc.options);  // no refusal here
        }
        WorkloadSpec general = general_epilogue_over_tiles(136, dtype, Activation::gelu, seed++);
        general.output_dtype = out;
        testing::expect_matches_reference(suited(general, kc), kc.options);
      }
    }
  }
}

// The cases of a split (D = alpha * AB, the routes through the store buffers) from `plain`: D in
// its default type and in fp32, into rows TMA cannot describe (staged), and with column-major A
// and B (tf32: A through registers; row-major A and B, the plain case, run the transposed product
// into D^T, tma_transposed).
std::vector<WorkloadSpec> split_cases(const WorkloadSpec& plain) {
  std::vector<WorkloadSpec> cases{plain};
  if (plain.output_dtype != DType::fp32) {
    cases.push_back(plain);
    cases.back().output_dtype = DType::fp32;
  }
  cases.push_back(plain);
  cases.back().ldc = plain.n + 1;
  cases.push_back(plain);
  cases.back().layout_a = Layout::col_major;
  cases.back().layout_b = Layout::col_major;
  return cases;
}

// The last round's split (schedule/tail_split.hpp): where the tiles leave the last round of
// programs partly idle, each of that round's tiles is computed in two pieces, a head on one
// program and a tail on a helper, which hands its fp32 partial sums over through a workspace.
// For every sm90 config that splits (no cluster, no ping-pong), 520 x 1032 (partial edge tiles)
// with 24 or 32 K steps, the last one partial (K = 1512 or 2024 for BLOCK_SIZE_K 64; the tails
// take it), in the least work (batch x K steps) for which the model splits with at least two
// tails per helper on this GPU, so that helpers also run a tail after a tail (asserted first: the
// test cannot pass without that split): D = alpha * AB (the routes that split: through the store
// buffers) in the default output type and in fp32, into rows TMA cannot describe (staged), and
// with column-major A and B.
TEST_F(GpuKernels, LastRoundSplitIntoHeadsAndTails) {
  if (!hopper()) GTEST_SKIP() << "sm90 runs only on compute capability 9.0";
  const int sms = devices().front().sm_count;
  constexpr int64_t kM = 520, kN = 1032;
  uint64_t seed = 1100;
  for (const KernelCase& kc : every_kernel_config()) {
    const KernelConfig& c = *kc.options.config;
    if (kc.options.kernel != "sm90" || c.cluster_m * c.cluster_n > 1 ||
        c.schedule == KernelSchedule::ping_pong) {
      continue;
    }
    const int64_t tiles = num_tiles(kM, kN, c.block_m, c.block_n);
    int64_t batch = 0, steps = 0;  // the least work (batch x K steps) that splits so
    for (const int64_t k_steps : {24, 32})
      for (int64_t b = 1; b < 64; ++b) {
        if (plan_tail_split(tiles * b, sms, k_steps).tails_per_helper >= 2 &&
            (steps == 0 || b * k_steps < batch * steps)) {
          batch = b, steps = k_steps;
        }
      }
    ASSERT_GT(steps, 0) << to_string(c) << ": no batch up to 63 splits with two tails per helper";
    const int64_t k = steps * c.block_k - 24;
    for (DType dtype : kc.dtypes) {
      WorkloadSpec plain = spec_of(kM, kN, k, dtype);
      plain.alpha = 1.5f;
      plain.batch_count = batch;
      for (WorkloadSpec& s : split_cases(plain)) {
        s.seed = seed++;
        testing::expect_matches_reference(suited(s, kc), kc.options);  // no refusal here
      }
    }
  }
}

// Runs `spec` with `options` from a NaN-poisoned D, checks it against the float64 reference, and
// returns D's bytes (one row-major D, of leading dimension ldc or N).
std::vector<uint8_t> run_and_keep_d(const WorkloadSpec& spec, const GemmOptions& options) {
  std::unique_ptr<harness::Workload> w;
  EXPECT_TRUE(harness::Workload::create(spec, true, &w).ok());
  if (w == nullptr) return {};
  const GemmProblem p = w->problem();
  const Status s = gemm(p, options);
  EXPECT_TRUE(s.ok()) << s.message << " | " << testing::describe(spec);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(w->fetch_output().ok());
  EXPECT_LE(w->check(1e12), harness::tolerance_for(spec.input_dtype, spec.output_dtype))
      << testing::describe(spec) << " config=" << to_string(*options.config);
  const int64_t ld = spec.ldc != 0 ? spec.ldc : spec.n;
  std::vector<uint8_t> d(size_t((spec.m - 1) * ld + spec.n) *
                         size_t(dtype_size(spec.output_dtype)));
  EXPECT_EQ(cudaMemcpy(d.data(), p.d.data, d.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  return d;
}

// Split-K under one round (schedule/tail_split.hpp): where the tiles fill less than a third of
// the SMs, each is computed by a head and two or more tails on the idle programs, and the head
// adds their sums in a fixed order. For every sm90 config that splits, 3 tiles with partial edges
// (M = BM - 24, N = 3 BN - 8) over 40 K steps, the last one partial; D = alpha * AB in the
// default output type and fp32, into rows TMA cannot describe (staged), with column-major
// operands: each against the float64 reference, and run twice from fresh memory, the same bit
// for bit (the seed, and so the inputs, the same).
TEST_F(GpuKernels, SplitKUnderOneRoundMatchesTheReferenceBitForBitInEveryRun) {
  if (!hopper()) GTEST_SKIP() << "sm90 runs only on compute capability 9.0";
  const int sms = devices().front().sm_count;
  uint64_t seed = 1300;
  for (const KernelCase& kc : every_kernel_config()) {
    const KernelConfig& c = *kc.options.config;
    if (kc.options.kernel != "sm90" || c.cluster_m * c.cluster_n > 1 ||
        c.schedule == KernelSchedule::ping_pong) {
      continue;
    }
    const int64_t m = c.block_m - 24, n = 3 * c.block_n - 8, k = 40 * c.block_k - 24;
    const TailSplit plan = plan_tail_split(3, sms, 40);
    ASSERT_EQ(plan.whole_items, 0);
    ASSERT_GE(plan.tails_per_item, 2) << "the test needs several tails per tile";
    for (DType dtype : kc.dtypes) {
      WorkloadSpec plain = spec_of(m, n, k, dtype);
      plain.alpha = 1.5f;
      for (WorkloadSpec& s : split_cases(plain)) {
        s.seed = seed++;
        const WorkloadSpec run = suited(s, kc);
        const std::vector<uint8_t> first = run_and_keep_d(run, kc.options);
        const std::vector<uint8_t> second = run_and_keep_d(run, kc.options);
        EXPECT_TRUE(first == second) << "split-K not deterministic: " << testing::describe(run)
                                     << " config=" << to_string(c);
      }
    }
  }
}

// The decode kernel (kernels/decode): few rows, each tile's K range split between a head and
// its tails where the tiles along N leave SMs idle. For each config: M of one row and of the
// tile's rows but 3 against N of 5 tiles (the last partial), and the same with M and N swapped
// (the transposed product), K ending in a partial slice, the split that plan_tail_split gives 5
// tiles on this GPU asserted first; every layout of A and B, an fp32 D, the general epilogue
// (beta * C, gelu, and a bias where M is the small side) and a batch of 3. The cp.async config
// gets rows of A and B on 16-byte boundaries, the staged one rows off them. Each against the
// float64 reference, and run twice from fresh memory, the same bit for bit.
TEST_F(GpuKernels, DecodeSplitsKAndMatchesTheReferenceBitForBitInEveryRun) {
  const int sms = devices().front().sm_count;
  uint64_t seed = 2700;
  for (const KernelCase& kc : every_kernel_config()) {
    if (kc.options.kernel != "decode") continue;
    const KernelConfig& c = *kc.options.config;
    const int64_t wide = 5 * c.block_n - 8, k = 37 * c.block_k - 24;
    ASSERT_GE(plan_tail_split(5, sms, 37).tails_per_item, 2) << "the test needs a split of K";
    const bool async = decode::takes_async_path(c.num_stages);
    // Leading dimensions that put rows on 16-byte boundaries for the cp.async config, and one
    // element past them (off every boundary) for the staged one.
    const auto on_the_path = [&](WorkloadSpec s) {
      s.lda = padded_ld(s.layout_a, s.m, s.k) + (async ? 0 : 1);
      s.ldb = padded_ld(s.layout_b, s.k, s.n) + (async ? 0 : 1);
      return s;
    };
    for (DType dtype : kc.dtypes) {
      std::vector<WorkloadSpec> cases;
      const int64_t few = c.block_m - 3;
      for (auto [m, n] : {std::pair{int64_t(1), wide}, std::pair{few, wide},
                          std::pair{wide, int64_t(1)}, std::pair{wide, few}}) {
        for (Layout a : {Layout::row_major, Layout::col_major})
          for (Layout b : {Layout::row_major, Layout::col_major}) {
            WorkloadSpec s = spec_of(m, n, k, dtype);
            s.layout_a = a, s.layout_b = b, s.alpha = 1.5f;
            cases.push_back(on_the_path(s));
          }
      }
      for (auto [m, n] : {std::pair{few, wide}, std::pair{wide, few}}) {
        WorkloadSpec s = spec_of(m, n, k, dtype);
        s.output_dtype = DType::fp32;
        cases.push_back(on_the_path(s));
        s = spec_of(m, n, k, dtype);
        s.beta = 0.5f, s.bias = m < n, s.activation = Activation::gelu;
        cases.push_back(on_the_path(s));
        s = spec_of(m, n, k, dtype);
        s.batch_count = 3;
        cases.push_back(on_the_path(s));
      }
      for (WorkloadSpec& run : cases) {
        run.seed = seed++;
        const std::vector<uint8_t> first = run_and_keep_d(run, kc.options);
        const std::vector<uint8_t> second = run_and_keep_d(run, kc.options);
        EXPECT_TRUE(first == second)
            << "decode's split-K not deterministic: " << testing::describe(run)
            << " config=" << to_string(c);
      }
    }
  }
}

// "auto" gives few rows against a large B to the decode kernel (dispatch/kernel_choice.hpp:
// suits_decode), which must then run them: 1, 7 and 16 rows against 4096 x 4096 (B both ways),
// and 16 x 14336 x 4096 in fp16; 8 columns against 4096 x 4096 (the transposed product); and
// problems of a few million values whose rows are not 16-byte aligned (the staged path, no
// copies). Each against the float64 reference; 17 rows and 16 columns go to sm90.
TEST_F(GpuKernels, AutoRunsFewRowsOnTheDecodeKernel) {
  uint64_t seed = 2800;
  std::vector<WorkloadSpec> cases;
  for (int64_t m : {1, 7, 16, 17}) {
    for (Layout b : {Layout::row_major, Layout::col_major}) {
      WorkloadSpec s = spec_of(m, m == 16 && b == Layout::col_major ? 14336 : 4096, 4096,
                               b == Layout::col_major ? DType::fp16 : DType::bf16);
      s.layout_b = b;
      cases.push_back(s);
    }
  }
  cases.push_back(spec_of(4096, 8, 4096, DType::bf16));
  cases.push_back(spec_of(4096, 16, 4096, DType::bf16));
  cases.push_back(spec_of(5, 1342, 3157, DType::bf16));
  cases.push_back(spec_of(2, 335, 13713, DType::fp16));
  for (WorkloadSpec& s : cases) {
    s.seed = seed++;
    std::unique_ptr<harness::Workload> w;
    GemmReport report;
    const Status status = run_on_gpu(s, &w, &report);
    ASSERT_TRUE(status.ok()) << status.message << " | " << testing::describe(s);
    const bool decode = s.m <= 16 || s.n <= 8;
    EXPECT_EQ(report.kernel, decode     ? "decode"
                             : hopper() ? "sm90"
                                        : "sm80")
        << testing::describe(s);
    if (decode) EXPECT_EQ(report.aligned_copies, "") << testing::describe(s);
    ASSERT_TRUE(w->fetch_output().ok());
    EXPECT_LE(w->check(1e12), harness::tolerance_for(s.input_dtype, s.output_dtype))
        << testing::describe(s) << " kernel=" << report.kernel;
  }
}

// The sm80 grid is persistent too: no more programs than fit on the GPU, each walking work items
// p, p + G, ... Batches of 20 of 512 x 512 give each config more tiles than programs on an H100
// (128x256: 160 tiles, 132 programs). Interior tiles of D = alpha * AB store straight from the
// accumulators while the next tile's copies fly (16-bit D only when there is a next tile; fp32 D
// always; tf32 with row-major B, as with bf16 D here, from its interleaved columns); K = 40 ends
// in a partial slice.
// The general epilogue (beta * C in place, bias, relu) on 520 x 1032, with partial edge tiles,
// goes through shared memory and starts the next tile's copies after it.
TEST_F(GpuKernels, Sm80ProgramsWithSeveralTilesEach) {
  uint64_t seed = 900;
  for (const KernelCase& kc : every_kernel_config()) {
    if (kc.options.kernel != "sm80") continue;
    for (DType dtype : kc.dtypes) {
      if (!sm80_compiled_for(*kc.options.config, dtype)) continue;
      const DType half = dtype == DType::tf32 ? DType::bf16 : dtype;
      for (DType out : {DType::fp32, half}) {
        WorkloadSpec s = spec_of(512, 512, 40, dtype);
        s.output_dtype = out;
        s.layout_b = out == DType::fp32 ? Layout::col_major : Layout::row_major;
        s.alpha = 1.5f;
        s.batch_count = 20;
        s.seed = seed++;
        testing::expect_matches_reference(s, kc.options);  // no refusal allowed here
      }
      testing::expect_matches_reference(
          general_epilogue_over_tiles(40, dtype, Activation::relu, seed++), kc.options);
    }
  }
}

TEST_F(GpuKernels, AutoPicksAKernelThatIsRight) {
  GemmOptions o;
  o.backend = Backend::gpu;
  for (DType dtype : {DType::fp32, DType::fp16, DType::bf16, DType::tf32})
    for (int64_t size : {int64_t(64), int64_t(1000), int64_t(2048)}) {
      expect_matches_reference(spec_of(size, size, size, dtype), o);
    }
}

TEST_F(GpuKernels, TensorCoreKernelIsTheAutoChoiceForHalfAndTf32) {
  // On a Hopper, sm90 for every 16-bit problem TMA can describe, and for tf32 in every layout but
  // a column-major A beside a row-major B, which, too small to copy, goes to sm80.
  for (DType dtype : {DType::fp16, DType::bf16, DType::tf32})
    for (Layout la : {Layout::row_major, Layout::col_major})
      for (Layout lb : {Layout::row_major, Layout::col_major}) {
        WorkloadSpec s = spec_of(256, 256, 256, dtype);
        s.layout_a = la;
        s.layout_b = lb;
        std::unique_ptr<harness::Workload> w;
        GemmReport report;
        ASSERT_TRUE(run_on_gpu(s, &w, &report).ok());
        const bool copied_tf32 = la == Layout::col_major && lb == Layout::row_major;
        const bool wgmma = hopper() && (dtype != DType::tf32 || !copied_tf32);
        EXPECT_EQ(report.kernel, wgmma ? "sm90" : "sm80")
            << to_string(dtype) << " " << to_string(la) << " " << to_string(lb);
        EXPECT_EQ(report.aligned_copies, "");
      }
}

TEST_F(GpuKernels, LargeTf32ProblemsWithABiasAndRowMajorBAreTransposedForSm90) {
  // 1000^3 is past the copy threshold: on a Hopper B (row-major, 4000-byte rows) with a bias,
  // which the transposed product does not take, is copied column-major for wgmma, which reads tf32
  // K-major only from shared memory, and the result matches the reference.
  if (!hopper()) GTEST_SKIP() << "sm90 runs only on compute capability 9.0";
  for (int64_t batch : {1, 3}) {
    WorkloadSpec s = spec_of(1000, 1000, 1000, DType::tf32);
    s.batch_count = batch;
    s.beta = 0.5f;
    s.bias = true;
    s.seed = 4000 + batch;
    std::unique_ptr<harness::Workload> w;
    GemmReport report;
    const Status status = run_on_gpu(s, &w, &report);
    ASSERT_TRUE(status.ok()) << status.message;
    ASSERT_TRUE(w->fetch_output().ok());
    EXPECT_LE(w->check(1e12), harness::tolerance_for(s.input_dtype, s.output_dtype));
    EXPECT_EQ(report.kernel, "sm90");
    EXPECT_EQ(report.aligned_copies,
              "operands copied to 128-byte aligned lines first: b ld 1000 -> column-major ld 1024");
  }
}

// Rows TMA cannot describe are copied onto aligned lines for sm90 at any size (CopyGoals::
// any_size); with the copies switched off they go to sm80, and the report says why.
TEST_F(GpuKernels, RowsTmaCannotDescribeGoToSm80AndTheReportSaysWhy) {
  if (!hopper()) GTEST_SKIP() << "sm90 runs only on compute capability 9.0";
  WorkloadSpec s = spec_of(96, 96, 96, DType::bf16);
  s.ldb = 97;  // 194-byte rows of B; A's are 192 bytes
  for (bool copies : {true, false}) {
    std::unique_ptr<harness::Workload> w;
    GemmReport report;
    GemmOptions o;
    o.aligned_copies = copies;
    ASSERT_TRUE(run_on_gpu(s, &w, &report, o).ok());
    ASSERT_TRUE(w->fetch_output().ok());
    EXPECT_LE(w->check(1e12), harness::tolerance_for(s.input_dtype, s.output_dtype));
    if (copies) {
      EXPECT_EQ(report.kernel, "sm90");
      EXPECT_TRUE(contains(report.aligned_copies, "b ld 97 -> ")) << report.aligned_copies;
      continue;
    }
    EXPECT_EQ(report.kernel, "sm80");
    EXPECT_TRUE(contains(report.kernel_note, "sm90 not used")) << report.kernel_note;
    EXPECT_TRUE(contains(report.kernel_note, "operand b")) << report.kernel_note;
    o.backend = Backend::gpu;
    o.kernel = "sm90";
    EXPECT_TRUE(contains(gemm(w->problem(), o).message, "TMA needs a 16-byte aligned"));
  }
}

// gemm() remembers the choice of a call for the calls of the same signature (sizes, types,
// strides, each address modulo 256: dispatch/call_signature.hpp), and skips the kernel's checks
// for them. A call whose A lies 2 bytes off a 16-byte boundary has another signature: TMA cannot
// read it, so however often the aligned call ran before, it runs sm90 on a copy of A or, with the
// copies switched off, another kernel, and the other way round.
TEST_F(GpuKernels, ARememberedChoiceIsOnlyForCallsOfItsOwnAlignment) {
  if (!hopper()) GTEST_SKIP() << "sm90 runs only on compute capability 9.0";
  WorkloadSpec s = spec_of(96, 96, 96, DType::bf16);
  s.seed = 9601;
  std::unique_ptr<harness::Workload> w;
  ASSERT_TRUE(harness::Workload::create(s, true, &w).ok());
  const GemmProblem aligned = w->problem();
  // The same A (row-major, packed), 2 bytes past a 256-byte boundary.
  const size_t a_bytes = size_t(s.m * s.k) * 2;
  char* shifted_a = nullptr;
  ASSERT_EQ(cudaMalloc(&shifted_a, a_bytes + 256), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(shifted_a + 2, aligned.a.data, a_bytes, cudaMemcpyDeviceToDevice),
            cudaSuccess);
  GemmProblem unaligned = aligned;
  unaligned.a.data = shifted_a + 2;
  const std::initializer_list<const GemmProblem*> calls = {&aligned,   &unaligned, &aligned,
                                                           &unaligned, &unaligned, &aligned};
  for (bool copies : {true, false}) {
    GemmOptions o;
    o.backend = Backend::gpu;
    o.aligned_copies = copies;
    for (const GemmProblem* problem : calls) {
      ASSERT_TRUE(w->poison_output().ok());
      GemmReport report;
      const Status status = gemm(*problem, o, &report);
      ASSERT_TRUE(status.ok()) << status.message;
      if (problem == &aligned) {
        EXPECT_EQ(report.kernel, "sm90");
        EXPECT_TRUE(report.aligned_copies.empty()) << report.aligned_copies;
      } else if (copies) {
        EXPECT_EQ(report.kernel, "sm90");
        EXPECT_TRUE(contains(report.aligned_copies, "a ld 96 -> ")) << report.aligned_copies;
      } else {
        EXPECT_NE(report.kernel, "sm90");
        EXPECT_TRUE(contains(report.kernel_note, "operand a")) << report.kernel_note;
      }
      ASSERT_TRUE(w->fetch_output().ok());
      EXPECT_LE(w->check(1e12), harness::tolerance_for(s.input_dtype, s.output_dtype))
          << report.kernel << " copies=" << copies;
    }
  }
  cudaFree(shifted_a);
}

// tf32 inputs are rounded to nearest, ties away from zero, before the tensor cores (which would
// truncate them). A's rows hold 1 + 0.75u, 1 + 0.5u, 1 + 0.25u and -(1 + 0.5u), with u = 2^-10 the
// tf32 unit in the last place at 1; B is ones. Rounded, the rows are 1 + u, 1 + u, 1 and -(1 + u),
// so D's rows are exactly K times those (truncation would give K, fp32 math K(1 + 0.75u), ...).
// Every sm80 config that takes tf32, with B row-major (padded tile, 16-byte fragment loads) and
// column-major (ldmatrix). The sm90 kernel has no instruction of its own in the way (TMA loads
// the operands as tf32 and wgmma reads them): on the H100 that rounds to nearest, ties to even,
// so its rows are 1 + u, 1, 1 and -1. Every sm90 tf32 config on a Hopper, B column-major.
TEST_F(GpuKernels, Tf32InputsAreRoundedToNearest) {
  constexpr int64_t kM = 4, kN = 8, kK = 64;
  const float u = 1.0f / 1024;
  const float rows[kM] = {1 + 0.75f * u, 1 + 0.5f * u, 1 + 0.25f * u, -(1 + 0.5f * u)};
  const float expected[kM] = {kK * (1 + u), kK * (1 + u), float(kK), -kK * (1 + u)};
  const float expected_even[kM] = {kK * (1 + u), float(kK), float(kK), -float(kK)};
  std::vector<float> a(kM * kK), b(kK * kN, 1.0f);
  for (int64_t i = 0; i < kM * kK; ++i) a[i] = rows[i / kK];
  float *dev_a = nullptr, *dev_b = nullptr, *dev_d = nullptr;
  ASSERT_EQ(cudaMalloc(&dev_a, a.size() * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dev_b, b.size() * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dev_d, kM * kN * 4), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dev_a, a.data(), a.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dev_b, b.data(), b.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  GemmProblem p;
  p.m = kM, p.n = kN, p.k = kK;
  p.a = {dev_a, DType::tf32, Layout::row_major};
  p.d = {dev_d, DType::fp32, Layout::row_major};
  int configs_run = 0;
  for (const KernelCase& kc : every_kernel_config()) {
    const bool sm80 =
        kc.options.kernel == "sm80" && sm80_compiled_for(*kc.options.config, DType::tf32);
    const bool sm90 = kc.options.kernel == "sm90" && hopper() && kc.takes(DType::tf32);
    if (!sm80 && !sm90) continue;
    for (Layout lb : {Layout::row_major, Layout::col_major}) {
      if (sm90 && lb == Layout::row_major) continue;  // K-major B only, and too small to copy
      p.b = {dev_b, DType::tf32, lb};                 // all ones: the same matrix in either layout
      ASSERT_EQ(cudaMemset(dev_d, 0xff, kM * kN * 4), cudaSuccess);  // NaN
      const Status s = gemm(p, kc.options);
      ASSERT_TRUE(s.ok()) << s.message;
      std::vector<float> d(kM * kN);
      ASSERT_EQ(cudaMemcpy(d.data(), dev_d, d.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
      for (int64_t i = 0; i < kM * kN; ++i)
        EXPECT_EQ(d[i], (sm90 ? expected_even : expected)[i / kN])
            << kc.options.kernel << " " << to_string(*kc.options.config) << " row " << i / kN
            << (lb == Layout::row_major ? ", B row-major" : "");
      ++configs_run;
    }
  }
  EXPECT_GT(configs_run, 0);
  cudaFree(dev_a), cudaFree(dev_b), cudaFree(dev_d);
}

// fp8 on sm90: every compiled config, with promoted sums (the default) where compiled and with
// fast accumulation, each scale mode, the three input pairs, both layouts of each operand
// (MN-major ones are copied K-major first), every output type (an fp8 D with its scale and amax)
// and both layouts of D, epilogues, and shapes with
// partial tiles and a K that is no multiple of 16 (copied onto aligned lines) or 128 (a partial
// scale block). Each config that splits its last round also runs a split case: the tail's and the
// head's K ranges read their own block scales.
TEST_F(GpuKernels, Fp8EveryConfigScaleModeAndAccumulation) {
  if (!hopper()) GTEST_SKIP() << "fp8 runs on sm90 alone";
  const int sms = devices().front().sm_count;
  const std::pair<DType, DType> pairs[] = {{DType::fp8_e4m3, DType::fp8_e4m3},
                                           {DType::fp8_e4m3, DType::fp8_e5m2},
                                           {DType::fp8_e5m2, DType::fp8_e4m3}};
  // K steps of 128: 5, 4, 2 and 1 (a promoting consumer that looks a step ahead takes steps in
  // pairs, and ends with one step or two).
  const int64_t shapes[][3] = {{300, 257, 513}, {256, 384, 400}, {72, 136, 200}, {130, 264, 96}};
  uint64_t seed = 2000;
  const std::vector<KernelInfo> kernels = available_kernels();
  const auto sm90 = std::find_if(kernels.begin(), kernels.end(),
                                 [](const KernelInfo& k) { return k.name == "sm90"; });
  ASSERT_NE(sm90, kernels.end());
  int ran = 0;
  for (const KernelConfig& c : sm90->configs) {
    if (!sm90_compiled_for(c, DType::fp8_e4m3)) continue;
    GemmOptions o;
    o.backend = Backend::gpu;
    o.kernel = "sm90";
    o.config = c;
    for (bool fast : {false, true})
      for (ScaleMode mode :
           {ScaleMode::none, ScaleMode::tensor, ScaleMode::channel, ScaleMode::block})
        for (const auto& shape : shapes) {
          WorkloadSpec s;
          s.m = shape[0], s.n = shape[1], s.k = shape[2];
          std::tie(s.input_dtype, s.input_dtype_b) = pairs[seed % 3];
          constexpr DType kOutputs[] = {DType::fp32, DType::fp16, DType::bf16, DType::fp8_e4m3,
                                        DType::fp8_e5m2};
          s.output_dtype = kOutputs[seed % 5];
          s.layout_c = seed % 9 == 4 ? Layout::col_major : Layout::row_major;
          s.layout_a = seed % 5 == 0 ? Layout::col_major : Layout::row_major;
          s.layout_b = seed % 7 < 5 ? Layout::col_major : Layout::row_major;
          s.scale_mode = mode;
          s.fast_accumulation = fast;
          s.alpha = seed % 2 ? 1.0f : 0.75f;
          s.beta = seed % 6 == 0 ? 0.5f : 0.0f;
          s.bias = seed % 4 == 3;
          s.activation = seed % 5 == 2 ? Activation::silu : Activation::none;
          s.seed = seed++;
          std::unique_ptr<harness::Workload> w;
          ASSERT_TRUE(harness::Workload::create(s, true, &w).ok());
          if (const Status st = plan(w->problem(), o, nullptr); !st.ok()) {
            // Promoted sums are compiled for the tiles whose sums fit a consumer's registers.
            EXPECT_TRUE(contains(st.message, "with promoted sums has no compiled config"))
                << st.message << " | " << testing::describe(s);
            continue;
          }
          testing::expect_matches_reference(s, o);
          ++ran;
        }
    // The last round split into heads and tails (kernels of one program, not in clusters).
    if (c.cluster_m * c.cluster_n > 1) continue;
    constexpr int64_t kM = 520, kN = 1032;
    const int64_t tiles = num_tiles(kM, kN, c.block_m, c.block_n);
    for (int64_t batch = 1; batch < 64; ++batch) {
      if (plan_tail_split(tiles * batch, sms, 24).tails_per_helper < 2) continue;
      WorkloadSpec s;
      s.m = kM, s.n = kN, s.k = 24 * c.block_k - 100, s.batch_count = batch;
      s.input_dtype = DType::fp8_e4m3;
      s.output_dtype = DType::bf16;
      s.scale_mode = ScaleMode::block;
      s.alpha = 1.5f;
      s.layout_b = Layout::col_major;
      s.seed = seed++;
      std::unique_ptr<harness::Workload> w;
      ASSERT_TRUE(harness::Workload::create(s, true, &w).ok());
      if (plan(w->problem(), o, nullptr).ok()) {
        testing::expect_matches_reference(s, o);
        ++ran;
      }
      break;
    }
  }
  EXPECT_GT(ran, 100);
}

TEST_F(GpuKernels, Fp8E5m2TimesE5m2IsRefusedOnTheGpuWithAReason) {
  if (!hopper()) GTEST_SKIP() << "fp8 runs on sm90 alone";
  WorkloadSpec s;
  s.m = s.n = s.k = 128;
  s.input_dtype = DType::fp8_e5m2;
  s.output_dtype = DType::bf16;
  s.layout_b = Layout::col_major;
  std::unique_ptr<harness::Workload> w;
  GemmReport report;
  const Status st = run_on_gpu(s, &w, &report);
  EXPECT_NE(st.message.find("fp8_e5m2 x fp8_e5m2 is not compiled"), std::string::npos)
      << st.message;
}

// An fp8 D is the same call's fp32 D times the scale, rounded to nearest even and saturated, bit
// for bit, and its amax is that fp32 D's largest magnitude, exactly: the same kernel and config
// compute both, and only the store differs. D = alpha * AB and the general epilogue, row-major (by
// TMA: 272-byte rows) and column-major (from registers), partial tiles in M and N, a scale that
// saturates e4m3; the amax starts as NaN and D as NaN bytes.
TEST_F(GpuKernels, Fp8OutputIsTheScaledFp32OutputAndItsAmax) {
  if (!hopper()) GTEST_SKIP() << "fp8 runs on sm90 alone";
  const int64_t m = 300, n = 272, k = 513;
  WorkloadSpec s;
  s.m = m, s.n = n, s.k = k;
  s.input_dtype = DType::fp8_e4m3;
  s.output_dtype = DType::fp32;
  s.layout_b = Layout::col_major;
  s.scale_mode = ScaleMode::channel;
  s.alpha = 1.5f;
  s.bias = true;
  s.activation = Activation::gelu;
  s.seed = 91;
  std::unique_ptr<harness::Workload> w;
  ASSERT_TRUE(harness::Workload::create(s, true, &w).ok());
  GemmOptions o;
  o.backend = Backend::gpu;
  o.kernel = "sm90";
  o.config = parse_kernel_config("128x128x128/g8/s6/w12/wt64x128");
  ASSERT_TRUE(o.config.has_value());
  const size_t count = size_t(m * n);
  float *dev_fp32 = nullptr, *dev_scalars = nullptr;  // scalars: the scale, the amax
  uint8_t* dev_fp8 = nullptr;
  ASSERT_EQ(cudaMalloc(&dev_fp32, count * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dev_fp8, count), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dev_scalars, 2 * sizeof(float)), cudaSuccess);
  for (bool plain : {true, false}) {
    GemmProblem p = w->problem();
    if (plain) p.epilogue.bias = nullptr, p.epilogue.activation = Activation::none;
    p.d = {dev_fp32, DType::fp32, Layout::row_major, n, 0};
    ASSERT_TRUE(gemm(p, o).ok());
    std::vector<float> reference(count);
    ASSERT_EQ(cudaMemcpy(reference.data(), dev_fp32, count * 4, cudaMemcpyDeviceToHost),
              cudaSuccess);
    float largest = 0.0f;
    for (float x : reference) largest = std::max(largest, std::fabs(x));
    ASSERT_GT(largest, 1.0f);
    for (DType d : {DType::fp8_e4m3, DType::fp8_e5m2})
      for (Layout layout : {Layout::row_major, Layout::col_major})
        for (float scale : {0.25f, 3.0f, 448.0f * 4.0f / largest}) {  // the last saturates e4m3
          const std::string what = std::string(plain ? "alpha * AB" : "bias, gelu") + ", " +
                                   std::string(to_string(d)) +
                                   (layout == Layout::row_major ? " row-major" : " column-major") +
                                   ", scale " + std::to_string(scale);
          const float scalars[2] = {scale, std::numeric_limits<float>::quiet_NaN()};
          ASSERT_EQ(cudaMemcpy(dev_scalars, scalars, sizeof(scalars), cudaMemcpyHostToDevice),
                    cudaSuccess);
          ASSERT_EQ(cudaMemset(dev_fp8, 0x7f, count), cudaSuccess);  // NaN in both types
          GemmProblem q = p;
          q.d = {dev_fp8, d, layout, layout == Layout::row_major ? n : m, 0};
          q.d.scale = &dev_scalars[0];
          q.d.amax = &dev_scalars[1];
          GemmReport report;
          const Status st = gemm(q, o, &report);
          ASSERT_TRUE(st.ok()) << st.message;
          EXPECT_EQ(report.kernel, "sm90");
          std::vector<uint8_t> out(count);
          float amax = 0.0f;
          ASSERT_EQ(cudaMemcpy(out.data(), dev_fp8, count, cudaMemcpyDeviceToHost), cudaSuccess);
          ASSERT_EQ(cudaMemcpy(&amax, &dev_scalars[1], 4, cudaMemcpyDeviceToHost), cudaSuccess);
          EXPECT_EQ(amax, largest) << what;
          const Fp8Format format = d == DType::fp8_e4m3 ? e4m3_format() : e5m2_format();
          int saturated = 0, wrong = 0;
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              const uint8_t got = out[size_t(layout == Layout::row_major ? i * n + j : j * m + i)];
              const uint8_t want = float_to_fp8_bits(scale * reference[size_t(i * n + j)], format);
              if (got != want && wrong++ < 3) {
                ADD_FAILURE() << what << ": D[" << i << ", " << j << "] = " << int(got)
                              << ", expected " << int(want);
              }
              saturated += std::fabs(fp8_bits_to_float(got, format)) == 448.0f;
            }
          EXPECT_EQ(wrong, 0) << what;
          if (d == DType::fp8_e4m3 && scale > 100.0f) EXPECT_GT(saturated, 0) << what;
        }
  }
  cudaFree(dev_fp32), cudaFree(dev_fp8), cudaFree(dev_scalars);
}

// An empty fp8 D still sets the amax on the GPU: the largest of no values is 0.
TEST_F(GpuKernels, Fp8OutputOfNoElementsHasAmaxZero) {
  if (!hopper()) GTEST_SKIP() << "fp8 runs on sm90 alone";
  void *dev_a = nullptr, *dev_b = nullptr;
  float* dev_scalars = nullptr;  // the scale, the amax
  ASSERT_EQ(cudaMalloc(&dev_a, 256), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dev_b, 256), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dev_scalars, 2 * sizeof(float)), cudaSuccess);
  const float scalars[2] = {2.0f, -1.0f};
  ASSERT_EQ(cudaMemcpy(dev_scalars, scalars, sizeof(scalars), cudaMemcpyHostToDevice), cudaSuccess);
  GemmProblem p;
  p.m = 0, p.n = 16, p.k = 16;
  p.a = {dev_a, DType::fp8_e4m3, Layout::row_major, 16, 0};
  p.b = {dev_b, DType::fp8_e4m3, Layout::col_major, 16, 0};
  p.d = {nullptr, DType::fp8_e4m3, Layout::row_major, 16, 0};
  p.d.scale = &dev_scalars[0];
  p.d.amax = &dev_scalars[1];
  GemmOptions o;
  o.backend = Backend::gpu;
  const Status st = gemm(p, o);
  ASSERT_TRUE(st.ok()) << st.message;
  float amax = -1.0f;
  ASSERT_EQ(cudaMemcpy(&amax, &dev_scalars[1], 4, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(amax, 0.0f);
  cudaFree(dev_a), cudaFree(dev_b), cudaFree(dev_scalars);
}

TEST_F(GpuKernels, KernelsRefuseDtypesTheyDoNotTake) {
  std::unique_ptr<harness::Workload> w;
  ASSERT_TRUE(harness::Workload::create(spec_of(32, 32, 32, DType::fp32), true, &w).ok());
  GemmOptions o;
  o.backend = Backend::gpu;
  o.kernel = "sm80";
  EXPECT_NE(gemm(w->problem(), o).message.find("kernel sm80 does not take a.dtype fp32"),
            std::string::npos);
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
