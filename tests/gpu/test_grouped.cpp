// Grouped GEMMs (tilegemm.hpp: Groups) on the GPU: the sm90 grouped kernel against the float64
// reference for every compiled config, form, layout, epilogue and fp8 scale mode, with random
// group sizes (empty and one-row groups included; for k_offsets groups of K values that end
// anywhere), and a CUDA graph replayed with new sizes.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gemm_check.hpp"

namespace tilegemm {
namespace {

using harness::WorkloadSpec;

bool contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

class GpuGrouped : public ::testing::Test {
 protected:
  void SetUp() override {
    if (devices().empty()) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
    const DeviceInfo d = devices().front();
    if (d.compute_capability_major != 9 || d.compute_capability_minor != 0) {
      GTEST_SKIP() << "grouped GEMMs run on sm90 alone";
    }
  }
};

// `groups` groups of random rows (one empty, one of a single row), bf16 or fp16.
WorkloadSpec grouped_spec(GroupForm form, int groups, int64_t m, int64_t n, int64_t k, DType dtype,
                          uint64_t seed) {
  WorkloadSpec s = testing::spec_of(m, n, k, dtype);
  s.groups = form;
  s.group_rows = harness::random_group_rows(form, groups, m, seed);
  s.group_rows[seed % groups] = 0;
  if (form == GroupForm::offsets) {
    // move one row of the largest group into a one-row group
    auto largest = std::max_element(s.group_rows.begin(), s.group_rows.end());
    int32_t& one = s.group_rows[(seed + 1) % groups];
    if (&one != &*largest && *largest > 1) *largest += one - 1, one = 1;
  } else {
    s.group_rows[(seed + 1) % groups] = 1;
  }
  s.batch_count = groups;
  s.seed = seed;
  return s;
}

// alpha, beta * C, a bias per group and gelu: the whole epilogue.
void with_whole_epilogue(WorkloadSpec& s) {
  s.alpha = 0.75f;
  s.beta = -0.5f;
  s.bias = true;
  s.activation = Activation::gelu;
}

GemmOptions sm90(const KernelConfig& c) {
  GemmOptions o;
  o.backend = Backend::gpu;
  o.kernel = "sm90";
  o.config = c;
  return o;
}

// What `call` enqueues on `stream`, captured into *graph; returns the call's Status (a capture
// that fails, as a cuda_error).
template <class Call>
Status captured(cudaStream_t stream, cudaGraph_t* graph, Call&& call) {
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) != cudaSuccess) {
    return {StatusCode::cuda_error, "cudaStreamBeginCapture failed"};
  }
  const Status status = call();
  if (cudaStreamEndCapture(stream, graph) != cudaSuccess) {
    return {StatusCode::cuda_error, "cudaStreamEndCapture failed"};
  }
  return status;
}

// The sm90 kernel's entry of available_kernels() (an empty name where there is none).
KernelInfo sm90_info() {
  for (const KernelInfo& k : available_kernels())
    if (k.name == "sm90") return k;
  return {};
}

TEST_F(GpuGrouped, EveryConfigFormLayoutOfBAndEpilogue) {
  const KernelInfo info = sm90_info();
  ASSERT_EQ(info.name, "sm90");
  uint64_t seed = 100;
  int configs = 0, ran = 0;
  for (const KernelConfig& c : info.configs) {
    // The grouped kernel's configs are those plan() takes for a grouped problem.
    {
      std::unique_ptr<harness::Workload> w;
      ASSERT_TRUE(harness::Workload::create(
                      grouped_spec(GroupForm::offsets, 3, 64, 64, 64, DType::bf16, 1), true, &w)
                      .ok());
      if (const Status s = plan(w->problem(), sm90(c), nullptr); !s.ok()) {
        EXPECT_TRUE(contains(s.message, "grouped GEMMs have no compiled config") ||
                    contains(s.message, "has no compiled config"))
            << s.message;
        continue;
      }
    }
    ++configs;
    for (GroupForm form : {GroupForm::offsets, GroupForm::counts})
      for (Layout lb : {Layout::row_major, Layout::col_major})
        for (DType dtype : {DType::bf16, DType::fp16})
          for (int epilogue = 0; epilogue < 3; ++epilogue) {
            const int64_t m = form == GroupForm::offsets ? 900 : 200;
            WorkloadSpec s = grouped_spec(form, 7, m, 264, 200, dtype, seed++);
            s.layout_b = lb;
            if (epilogue == 1) with_whole_epilogue(s);  // the general route
            if (epilogue == 2) {                        // fp32 D, rows of D 8 elements longer
              s.output_dtype = DType::fp32;
              s.alpha = 1.5f;
              s.ldc = s.n + 8;
            }
            testing::expect_matches_reference(s, sm90(c));
            ++ran;
          }
  }
  EXPECT_EQ(configs, 3);
  EXPECT_EQ(ran, configs * 24);
}

// Long K, wide N and many groups: programs walk many tiles of many groups.
TEST_F(GpuGrouped, ManyGroupsOfManyTilesEach) {
  GemmOptions o;
  o.backend = Backend::gpu;
  for (GroupForm form : {GroupForm::offsets, GroupForm::counts}) {
    WorkloadSpec s = grouped_spec(form, 40, form == GroupForm::offsets ? 6000 : 300, 1032, 1104,
                                  DType::bf16, 7 + int(form));
    testing::expect_matches_reference(s, o);
  }
}

// fp8 groups in the rows forms (K-major A and B, as an MoE layer's tokens and weights lie): every
// grouped config with promoted sums and with fast accumulation, every scale mode (each group's
// B, and in the counts form each group's A, scaled by its own set: ScaleView::group), the plain
// and the general epilogue. N is off a multiple of 128 and K = 656 is five scale blocks and a
// part, so that block scales change along K and along N within a group.
TEST_F(GpuGrouped, Fp8EveryConfigFormScaleModeAndEpilogue) {
  uint64_t seed = 700;
  int ran = 0;
  for (const char* config : {"128x256x128/g8/s4/w12/wt64x256", "128x128x128/g8/s6/w12/wt64x128",
                             "64x128x128/g8/s8/w8/wt64x128"})
    for (bool fast : {false, true})
      for (GroupForm form : {GroupForm::offsets, GroupForm::counts})
        for (ScaleMode mode :
             {ScaleMode::none, ScaleMode::tensor, ScaleMode::channel, ScaleMode::block}) {
          const int64_t m = form == GroupForm::offsets ? 700 : 200;
          WorkloadSpec s = grouped_spec(form, 6, m, 392, 656, DType::fp8_e4m3, seed++);
          s.layout_b = Layout::col_major;
          s.scale_mode = mode;
          s.fast_accumulation = fast;
          if (mode == ScaleMode::channel) s.input_dtype_b = DType::fp8_e5m2;  // a mix of types
          if (seed % 2 == 0) with_whole_epilogue(s);                          // the general route
          testing::expect_matches_reference(s, sm90(*parse_kernel_config(config)));
          ++ran;
        }
  EXPECT_EQ(ran, 48);
}

// fp8 with block scales as DeepSeek-V3's MoE layers run it (1 x 128 scales of the tokens, 128 x
// 128 of each expert's weights), many groups of many tiles, the config auto's; a row-major B
// (an MN-major operand) and an fp8 D are refused on the GPU, naming why.
TEST_F(GpuGrouped, Fp8BlockScaledManyGroupsAndWhatIsRefused) {
  GemmOptions o;
  o.backend = Backend::gpu;
  for (GroupForm form : {GroupForm::offsets, GroupForm::counts}) {
    WorkloadSpec s = grouped_spec(form, 24, form == GroupForm::offsets ? 5000 : 300, 1536, 2048,
                                  DType::fp8_e4m3, 40 + int(form));
    s.layout_b = Layout::col_major;
    s.scale_mode = ScaleMode::block;
    testing::expect_matches_reference(s, o);
  }
  o.kernel = "sm90";
  for (int refused_case = 0; refused_case < 2; ++refused_case) {
    WorkloadSpec s = grouped_spec(GroupForm::counts, 4, 128, 256, 256, DType::fp8_e4m3, 9);
    s.scale_mode = ScaleMode::tensor;
    s.layout_b = refused_case == 0 ? Layout::row_major : Layout::col_major;
    if (refused_case == 1) s.output_dtype = DType::fp8_e4m3;
    std::unique_ptr<harness::Workload> w;
    ASSERT_TRUE(harness::Workload::create(s, true, &w).ok());
    const Status refused = gemm(w->problem(), o);
    EXPECT_FALSE(refused.ok());
    EXPECT_TRUE(contains(refused.message, refused_case == 0 ? "grouped fp8 needs K-major operands"
                                                            : "grouped fp8 writes a bf16"))
        << refused.message;
  }
}

TEST_F(GpuGrouped, AutoRunsSm90AndOtherKernelsSayWhyNot) {
  WorkloadSpec s = grouped_spec(GroupForm::offsets, 4, 300, 128, 64, DType::bf16, 3);
  std::unique_ptr<harness::Workload> w;
  ASSERT_TRUE(harness::Workload::create(s, true, &w).ok());
  GemmOptions o;
  o.backend = Backend::gpu;
  GemmReport report;
  ASSERT_TRUE(gemm(w->problem(), o, &report).ok());
  EXPECT_EQ(report.kernel, "sm90");
  o.kernel = "sm80";
  const Status refused = gemm(w->problem(), o);
  EXPECT_FALSE(refused.ok());
  EXPECT_TRUE(contains(refused.message, "kernel sm80 runs no grouped GEMM")) << refused.message;
}

// A column-major A (MN-major in the kernel) in the counts form, where each group's rows start at
// its batch entry's first; the offsets form's start anywhere along A's contiguous dimension,
// which TMA cannot read from, and the call says so.
TEST_F(GpuGrouped, ColumnMajorAInTheCountsFormAndWhyNotOffsets) {
  uint64_t seed = 300;
  for (Layout lb : {Layout::row_major, Layout::col_major}) {
    // M a multiple of 8: A's columns (its leading dimension) on 16-byte boundaries
    WorkloadSpec s = grouped_spec(GroupForm::counts, 5, 152, 200, 136, DType::bf16, seed++);
    s.layout_a = Layout::col_major;
    s.layout_b = lb;
    testing::expect_matches_reference(s,
                                      sm90(*parse_kernel_config("128x128x64/g8/s6/w12/wt64x128")));
  }
  WorkloadSpec s = grouped_spec(GroupForm::offsets, 5, 700, 200, 136, DType::bf16, seed);
  s.layout_a = Layout::col_major;
  std::unique_ptr<harness::Workload> w;
  ASSERT_TRUE(harness::Workload::create(s, true, &w).ok());
  GemmOptions o;
  o.backend = Backend::gpu;
  o.kernel = "sm90";
  const Status refused = gemm(w->problem(), o);
  EXPECT_TRUE(contains(refused.message, "groups.form offsets needs a row-major A"))
      << refused.message;
}

// `groups` groups of random K values (one empty, one of a single value) out of k.
WorkloadSpec k_offsets_spec(int groups, int64_t m, int64_t n, int64_t k, DType dtype,
                            uint64_t seed) {
  WorkloadSpec s = testing::spec_of(m, n, k, dtype);
  s.groups = GroupForm::k_offsets;
  s.group_rows = harness::random_group_rows(GroupForm::k_offsets, groups, k - 5, seed);
  s.group_rows[seed % groups] = 0;
  auto largest = std::max_element(s.group_rows.begin(), s.group_rows.end());
  int32_t& one = s.group_rows[(seed + 1) % groups];
  if (&one != &*largest && *largest > 1) *largest += one - 1, one = 1;
  s.batch_count = groups;
  s.seed = seed;
  return s;
}

// The k_offsets form (weight gradients: a column-major A and a row-major B, X^T and dY): every
// config, type and epilogue. The groups' K values start and end anywhere (not on a K step, nor
// on 8 values), so a group's last K step would read the next group's values but for its own
// tensor maps; the last 5 K values belong to no group. Each group's D is a batch entry of its
// own, stored by TMA where D's rows lie on 16-byte boundaries. The other layouts are refused,
// saying why.
TEST_F(GpuGrouped, KOffsetsEveryConfigAndEpilogue) {
  uint64_t seed = 500;
  int ran = 0;
  for (const char* config : {"128x256x64/g8/s4/w12/wt64x256", "128x128x64/g8/s6/w12/wt64x128",
                             "64x128x64/g8/s8/w8/wt64x128"})
    for (int epilogue = 0; epilogue < 4; ++epilogue)
      for (int64_t m : {200, 64}) {
        const DType dtype = epilogue == 1 ? DType::fp16 : DType::bf16;
        WorkloadSpec s = k_offsets_spec(6, m, 264, 1000, dtype, seed++);
        s.layout_a = Layout::col_major;
        s.layout_b = Layout::row_major;
        if (epilogue == 1) with_whole_epilogue(s);  // C: each thread loads its own
        if (epilogue == 2) {                        // fp32 D, rows of D 8 elements longer
          s.output_dtype = DType::fp32;
          s.ldc = s.n + 8;
        }
        if (epilogue == 3) s.ldc = s.n + 1;  // D's rows off 16-byte lines: stored from registers
        testing::expect_matches_reference(s, sm90(*parse_kernel_config(config)));
        ++ran;
      }
  EXPECT_EQ(ran, 24);
  for (Layout la : {Layout::row_major, Layout::col_major}) {
    WorkloadSpec s = k_offsets_spec(6, 200, 264, 1000, DType::bf16, seed++);
    s.layout_a = la;
    s.layout_b = la == Layout::row_major ? Layout::row_major : Layout::col_major;
    std::unique_ptr<harness::Workload> w;
    ASSERT_TRUE(harness::Workload::create(s, true, &w).ok());
    GemmOptions o;
    o.backend = Backend::gpu;
    o.kernel = "sm90";
    const Status refused = gemm(w->problem(), o);
    EXPECT_TRUE(contains(refused.message,
                         "groups.form k_offsets needs a column-major A and a "
                         "row-major B"))
        << refused.message;
  }
}

// Without a workspace, a captured k_offsets call has no memory for its groups' tensor maps and
// says so; given one, the graph replays with new sizes in device memory.
TEST_F(GpuGrouped, KOffsetsUnderCaptureTakesTheGivenWorkspace) {
  const int64_t k = 3000;
  WorkloadSpec s = k_offsets_spec(8, 256, 320, k, DType::bf16, 21);
  s.layout_a = Layout::col_major;  // X^T and dY, as a weight gradient reads them
  std::unique_ptr<harness::Workload> w;
  ASSERT_TRUE(harness::Workload::create(s, true, &w).ok());
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  GemmProblem p = w->problem();
  p.stream = stream;
  GemmOptions o;
  o.backend = Backend::gpu;
  o.autotune = AutotunePolicy::off;
  cudaGraph_t graph = nullptr;
  const Status refused = captured(stream, &graph, [&] { return gemm(p, o); });
  EXPECT_EQ(refused.code, StatusCode::not_supported);
  EXPECT_TRUE(contains(refused.message, "bytes of workspace for its groups' tensor maps"))
      << refused.message;
  cudaGraphDestroy(graph);

  size_t bytes = 0;
  ASSERT_TRUE(workspace_size(p, o, &bytes).ok());
  EXPECT_GE(bytes, size_t(8 * 256));
  void* workspace = nullptr;
  ASSERT_EQ(cudaMalloc(&workspace, bytes), cudaSuccess);
  o.workspace = workspace;
  o.workspace_bytes = bytes;
  const Status status = captured(stream, &graph, [&] { return gemm(p, o); });
  ASSERT_TRUE(status.ok()) << status.message;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (uint64_t round = 0; round < 3; ++round) {
    if (round > 0) {
      ASSERT_TRUE(
          w->set_group_rows(harness::random_group_rows(GroupForm::k_offsets, 8, k, 60 + round))
              .ok());
    }
    ASSERT_TRUE(w->poison_output().ok());
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    ASSERT_TRUE(w->fetch_output().ok());
    EXPECT_LE(w->check(1e12), harness::tolerance_for(DType::bf16, DType::bf16, false))
        << "round " << round;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaFree(workspace);
  cudaStreamDestroy(stream);
}

// A call captured once into a CUDA graph reads the sizes from device memory at every replay:
// new sizes written there between replays give the new grouping's D.
TEST_F(GpuGrouped, CudaGraphReplaysWithNewSizesInDeviceMemory) {
  for (GroupForm form : {GroupForm::offsets, GroupForm::counts}) {
    const int64_t m = form == GroupForm::offsets ? 1000 : 160;
    WorkloadSpec s = grouped_spec(form, 8, m, 256, 192, DType::bf16, 11);
    std::unique_ptr<harness::Workload> w;
    ASSERT_TRUE(harness::Workload::create(s, true, &w).ok());
    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    GemmProblem p = w->problem();
    p.stream = stream;
    GemmOptions o;
    o.backend = Backend::gpu;
    o.autotune = AutotunePolicy::off;
    ASSERT_TRUE(gemm(p, o).ok());  // first call outside the capture
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    cudaGraph_t graph = nullptr;
    const Status status = captured(stream, &graph, [&] { return gemm(p, o); });
    ASSERT_TRUE(status.ok()) << status.message;
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    for (uint64_t round = 0; round < 3; ++round) {
      if (round > 0) {
        ASSERT_TRUE(w->set_group_rows(harness::random_group_rows(form, 8, m, 50 + round)).ok());
      }
      ASSERT_TRUE(w->poison_output().ok());
      ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      ASSERT_TRUE(w->fetch_output().ok());
      EXPECT_LE(w->check(1e12), harness::tolerance_for(DType::bf16, DType::bf16, false))
          << "form " << to_string(form) << " round " << round;
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
  }
}

// gemm_grouped()'s problems (the ptr_array form): `count` problems of random sizes up to about
// `most` (one with no rows, one with no columns, one with no K, one of one row), each its own
// epilogue where `whole_epilogue` (alpha, beta * C, a bias and an activation of its own), the
// lines of A and B padded to 16 bytes (as TMA reads them), and of C and D where `aligned_d` (else
// packed: D's odd lines leave the tma route).
std::vector<WorkloadSpec> random_problems(int count, int64_t most, Layout la, Layout lb,
                                          DType dtype, bool whole_epilogue, bool aligned_d,
                                          uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto padded = [&](int64_t ld) { return (ld + 7) / 8 * 8; };
  std::vector<WorkloadSpec> specs;
  for (int g = 0; g < count; ++g) {
    int64_t m = 1 + int64_t(rng() % most), n = 1 + int64_t(rng() % most);
    int64_t k = 1 + int64_t(rng() % (2 * most));
    if (g == 1) m = 0;
    if (g == 2) n = 0;
    if (g == 3) k = 0;
    if (g == 4) m = 1;
    WorkloadSpec s = testing::spec_of(m, n, k, dtype);
    s.layout_a = la;
    s.layout_b = lb;
    s.lda = padded(la == Layout::row_major ? k : m);
    s.ldb = padded(lb == Layout::row_major ? n : k);
    s.ldc = aligned_d ? padded(n) : 0;
    s.seed = seed * 1000 + uint64_t(g);
    if (whole_epilogue) {
      s.alpha = 0.5f + 0.25f * float(g % 3);
      s.beta = g % 2 ? -0.75f : 0.0f;
      s.bias = g % 3 != 0;
      s.activation = g % 4 == 0   ? Activation::gelu
                     : g % 4 == 1 ? Activation::silu
                                  : Activation::none;
    } else {
      s.alpha = 1.0f + 0.5f * float(g % 2);
    }
    specs.push_back(s);
  }
  return specs;
}

// One launch of the grouped kernel for every compiled config, layout of A and B and route of D:
// each problem its own sizes (empty ones among them), matrices and epilogue, against the float64
// reference from NaN-poisoned D.
TEST_F(GpuGrouped, ProblemsOfTheirOwnInOneLaunch) {
  const KernelInfo info = sm90_info();
  ASSERT_EQ(info.name, "sm90");
  std::unique_ptr<harness::Workload> grouped;  // the grouped configs: those plan() takes for it
  ASSERT_TRUE(harness::Workload::create(
                  grouped_spec(GroupForm::offsets, 3, 64, 64, 64, DType::bf16, 1), true, &grouped)
                  .ok());
  uint64_t seed = 1;
  int configs = 0;
  for (const KernelConfig& c : info.configs) {
    if (!plan(grouped->problem(), sm90(c), nullptr).ok()) continue;
    ++configs;
    for (Layout la : {Layout::row_major, Layout::col_major})
      for (Layout lb : {Layout::row_major, Layout::col_major})
        for (int route = 0; route < 3; ++route) {
          const GemmOptions o = sm90(c);
          // route 0: D = alpha * AB through TMA stores; 1: the same from registers (D's lines
          // packed, so odd ones among them); 2: the whole epilogue.
          const std::vector<WorkloadSpec> specs = random_problems(
              9, 300, la, lb, seed % 2 ? DType::bf16 : DType::fp16, route == 2, route != 1, seed);
          ++seed;
          GemmReport report;
          testing::expect_problems_match_reference(specs, o, &report);
          EXPECT_EQ(report.kernel, "sm90");
          EXPECT_EQ(report.kernel_note, "") << "expected one launch";
        }
  }
  EXPECT_EQ(configs, 3);
}

// The GPU backend, its kernel and config as the heuristic picks them.
GemmOptions untuned() {
  GemmOptions o;
  o.backend = Backend::gpu;
  o.autotune = AutotunePolicy::off;
  return o;
}

// A few small problems in one launch, each route of D: quick enough for the sanitizers
// (scripts/gpu-check.sh runs it under memcheck and racecheck).
TEST_F(GpuGrouped, SmallProblemsEveryRoute) {
  const GemmOptions o = untuned();
  for (int route = 0; route < 3; ++route) {
    GemmReport report;
    testing::expect_problems_match_reference(
        random_problems(6, 150, Layout::row_major, Layout::col_major, DType::bf16, route == 2,
                        route != 1, 40 + uint64_t(route)),
        o, &report);
    EXPECT_EQ(report.kernel_note, "") << "expected one launch";
  }
}

// Many problems of many tiles each: the walk across them, and the tables past one launch's
// parameters (about 50 problems fit in one).
TEST_F(GpuGrouped, ManyProblemsOfManyTiles) {
  const GemmOptions o = untuned();
  GemmReport report;
  testing::expect_problems_match_reference(
      random_problems(130, 700, Layout::row_major, Layout::col_major, DType::bf16, false, true, 77),
      o, &report);
  EXPECT_EQ(report.kernel, "sm90");
  EXPECT_EQ(report.kernel_note, "");
}

// What one launch does not take goes one call after another, and says why: fp32 inputs, or under
// a capture without a workspace. With one, a captured graph replays the one launch.
TEST_F(GpuGrouped, ProblemsOneByOneAndUnderCapture) {
  GemmOptions o = untuned();
  GemmReport report;
  testing::expect_problems_match_reference(
      random_problems(5, 200, Layout::row_major, Layout::row_major, DType::fp32, true, true, 5), o,
      &report);
  EXPECT_TRUE(contains(report.kernel_note, "one call per problem")) << report.kernel_note;

  const std::vector<WorkloadSpec> specs =
      random_problems(12, 400, Layout::row_major, Layout::col_major, DType::bf16, false, true, 9);
  std::vector<std::unique_ptr<harness::Workload>> w(specs.size());
  std::vector<GemmProblem> problems;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  for (size_t g = 0; g < specs.size(); ++g) {
    ASSERT_TRUE(harness::Workload::create(specs[g], true, &w[g]).ok());
    problems.push_back(w[g]->problem());
    problems.back().stream = stream;
  }
  const auto replay_and_check = [&](cudaGraph_t graph, const char* what) {
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    for (int round = 0; round < 2; ++round) {
      for (auto& x : w) ASSERT_TRUE(x->poison_output().ok());
      ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      for (size_t g = 0; g < w.size(); ++g) {
        ASSERT_TRUE(w[g]->fetch_output().ok());
        EXPECT_LE(w[g]->check(1e12), harness::tolerance_for(DType::bf16, DType::bf16, false))
            << what << " problems[" << g << "] round " << round;
      }
    }
    cudaGraphExecDestroy(exec);
  };
  cudaGraph_t graph = nullptr;
  const Status without =
      captured(stream, &graph, [&] { return gemm_grouped(problems, o, &report); });
  ASSERT_TRUE(without.ok()) << without.message;
  EXPECT_TRUE(contains(report.kernel_note, "one call per problem")) << report.kernel_note;
  replay_and_check(graph, "one by one");
  cudaGraphDestroy(graph);

  size_t bytes = 0;
  ASSERT_TRUE(grouped_workspace_size(problems, o, &bytes).ok());
  EXPECT_GE(bytes, problems.size() * 384);
  void* workspace = nullptr;
  ASSERT_EQ(cudaMalloc(&workspace, bytes), cudaSuccess);
  o.workspace = workspace;
  o.workspace_bytes = bytes;
  const Status with = captured(stream, &graph, [&] { return gemm_grouped(problems, o, &report); });
  ASSERT_TRUE(with.ok()) << with.message;
  EXPECT_EQ(report.kernel_note, "") << "expected one launch";
  replay_and_check(graph, "one launch");
  cudaGraphDestroy(graph);
  cudaFree(workspace);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace tilegemm
