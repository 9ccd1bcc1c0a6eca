// gemm() inside a CUDA graph and on a caller's workspace (GemmOptions::workspace). Each path a
// call can take -- aligned copies, a transposed tf32 copy, the tail split, clusters, ping-pong,
// sm80 -- is captured as the first call of its test process (gtest_discover_tests runs each test
// in a process of its own), so that nothing was made beforehand outside the capture: the memory
// pool, the heuristic's memo, the cluster occupancy. Captured without a workspace, the parts that
// need memory go without it; with one, they run inside the graph. Every replay is checked against
// the float64 reference from a poisoned D.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "gemm_check.hpp"
#include "harness/workload.hpp"

namespace tilegemm {
namespace {

using harness::WorkloadSpec;

bool hopper() {
  const std::vector<DeviceInfo> d = devices();
  return !d.empty() && d.front().compute_capability_major == 9 &&
         d.front().compute_capability_minor == 0;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The first config of `kernel` for which `pick` holds (nullopt if none).
std::optional<KernelConfig> first_config(const std::string& kernel,
                                         const std::function<bool(const KernelConfig&)>& pick) {
  for (const KernelInfo& k : available_kernels()) {
    if (k.name != kernel) continue;
    for (const KernelConfig& c : k.configs)
      if (pick(c)) return c;
  }
  return std::nullopt;
}

struct Captured {
  GemmReport report;
  double error = 0.0;
};

// Captures one gemm() of `spec` on a new stream, replays the graph twice from a poisoned D, and
// returns the report and the second replay's relative error.
void capture_and_replay(const WorkloadSpec& spec, GemmOptions options, bool with_workspace,
                        Captured* out) {
  std::unique_ptr<harness::Workload> w;
  ASSERT_TRUE(harness::Workload::create(spec, true, &w).ok());
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  GemmProblem p = w->problem();
  p.stream = stream;
  options.backend = Backend::gpu;
  void* workspace = nullptr;
  if (with_workspace) {
    size_t bytes = 0;
    ASSERT_TRUE(workspace_size(p, options, &bytes).ok());
    ASSERT_GT(bytes, 0u) << "this path takes a workspace";
    ASSERT_EQ(cudaMalloc(&workspace, bytes), cudaSuccess);
    options.workspace = workspace;
    options.workspace_bytes = bytes;
  }
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
  const Status captured = gemm(p, options, &out->report);
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_TRUE(captured.ok()) << captured.message;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (int replay = 0; replay < 2; ++replay) {
    ASSERT_TRUE(w->poison_output().ok());
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    ASSERT_TRUE(w->fetch_output().ok());
    out->error = w->check(1e12);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  cudaFree(workspace);
}

struct CapturePath {
  const char* name;
  int64_t m, n, k;
  DType dtype;
  Layout layout_b;
  const char* kernel;
  std::function<bool(const KernelConfig&)> config;  // empty: the heuristic's
  bool needs_workspace;      // the path takes memory: copies or the tail split
  const char* report_shows;  // a field the with-workspace report must show (copies), or ""
  Layout layout_a = Layout::row_major;
};

const CapturePath kPaths[] = {
    {"AlignedCopies", 4095, 4097, 4093, DType::bf16, Layout::row_major, "auto", {}, true, "copies"},
    // sm90 reads tf32 as it lies but for a column-major A beside a row-major B: without the
    // transposed copy, "auto" runs sm80 instead.
    {"TransposedTf32Copy",
     2048,
     2048,
     2048,
     DType::tf32,
     Layout::row_major,
     "auto",
     {},
     true,
     "copies",
     Layout::col_major},
    // Row-major A and B: the transposed product, with no copy.
    {"Tf32AsItLies", 2048, 2048, 2048, DType::tf32, Layout::row_major, "sm90", {}, false, ""},
    // 8 x 19 tiles of 128 x 256 on 132 SMs: a round of 132 and a tail of 20, split.
    {"TailSplit", 1024, 4864, 8192, DType::bf16, Layout::col_major, "sm90",
     [](const KernelConfig& c) {
       return c.cluster_m * c.cluster_n == 1 && c.schedule == KernelSchedule::cooperative &&
              c.block_k == 64 && c.block_m == 128 && c.block_n == 256;
     },
     true, ""},
    {"Clusters", 2048, 2048, 1024, DType::bf16, Layout::col_major, "sm90",
     [](const KernelConfig& c) { return c.cluster_m * c.cluster_n > 1 && c.block_k == 64; }, false,
     ""},
    {"PingPong", 2048, 2048, 1024, DType::fp16, Layout::col_major, "sm90",
     [](const KernelConfig& c) {
       return c.schedule == KernelSchedule::ping_pong && c.block_k == 64;
     },
     false, ""},
    {"Sm80", 1000, 1000, 1000, DType::fp16, Layout::row_major, "sm80", {}, false, ""},
};

class GpuCapture : public ::testing::TestWithParam<CapturePath> {
 protected:
  void SetUp() override {
    if (!hopper()) GTEST_SKIP() << "these paths are the H100's (sm90): skipped";
  }
};

TEST_P(GpuCapture, CapturedFirstThenReplayedMatchesTheReference) {
  const CapturePath& path = GetParam();
  WorkloadSpec spec = testing::spec_of(path.m, path.n, path.k, path.dtype);
  spec.layout_a = path.layout_a;
  spec.layout_b = path.layout_b;
  GemmOptions options;
  options.kernel = path.kernel;
  options.autotune = AutotunePolicy::off;
  if (path.config) {
    const std::optional<KernelConfig> config = first_config("sm90", path.config);
    ASSERT_TRUE(config) << "no compiled sm90 config of the kind this path needs";
    options.config = config;
  }
  const double tolerance = harness::tolerance_for(spec.input_dtype, spec.output_dtype, false);
  // Without a workspace: nothing may be allocated inside the capture.
  Captured bare;
  ASSERT_NO_FATAL_FAILURE(capture_and_replay(spec, options, false, &bare));
  EXPECT_LE(bare.error, tolerance) << path.name << ", captured with no workspace";
  if (path.needs_workspace) {
    EXPECT_TRUE(contains(bare.report.workspace_note, "the stream is capturing"))
        << bare.report.workspace_note;
  }
  EXPECT_TRUE(bare.report.aligned_copies.empty()) << bare.report.aligned_copies;
  if (!path.needs_workspace) return;
  // With one: the parts run inside the graph, on it.
  Captured given;
  ASSERT_NO_FATAL_FAILURE(capture_and_replay(spec, options, true, &given));
  EXPECT_LE(given.error, tolerance) << path.name << ", captured with a workspace";
  EXPECT_TRUE(given.report.workspace_note.empty()) << given.report.workspace_note;
  if (std::string(path.report_shows) == "copies") {
    EXPECT_FALSE(given.report.aligned_copies.empty()) << "the copies were made in the graph";
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, GpuCapture, ::testing::ValuesIn(kPaths),
                         [](const auto& info) { return std::string(info.param.name); });

// A policy that would tune does not tune while the stream captures: the heuristic's config runs,
// and the report says why.
TEST(GpuCaptureTuning, AlwaysTunePolicyUnderCaptureUsesTheHeuristic) {
  if (devices().empty()) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  WorkloadSpec spec = testing::spec_of(1536, 1280, 768, DType::bf16);
  GemmOptions options;
  options.autotune = AutotunePolicy::always;
  Captured c;
  ASSERT_NO_FATAL_FAILURE(capture_and_replay(spec, options, false, &c));
  EXPECT_LE(c.error, harness::tolerance_for(DType::bf16, DType::bf16, false));
  EXPECT_TRUE(contains(c.report.config_source, "not tuned: the stream is capturing"))
      << c.report.config_source;
}

// Given a workspace, gemm() takes its memory there and allocates none of its own: the device's
// free memory is the same before and after calls that make aligned copies and split the tail
// (each would take tens of MB from the library's pool, which keeps what it takes).
TEST(GpuWorkspace, GivenWorkspaceIsUsedAndNothingElseIsAllocated) {
  if (!hopper()) GTEST_SKIP() << "the copies' and tail split's paths are the H100's: skipped";
  WorkloadSpec copies = testing::spec_of(4095, 4097, 4093, DType::bf16);
  WorkloadSpec split = testing::spec_of(1024, 4864, 8192, DType::bf16);
  split.layout_b = Layout::col_major;
  std::unique_ptr<harness::Workload> w1, w2;
  ASSERT_TRUE(harness::Workload::create(copies, true, &w1).ok());
  ASSERT_TRUE(harness::Workload::create(split, true, &w2).ok());
  GemmOptions options;
  options.backend = Backend::gpu;
  options.autotune = AutotunePolicy::off;
  size_t bytes1 = 0, bytes2 = 0;
  ASSERT_TRUE(workspace_size(w1->problem(), options, &bytes1).ok());
  ASSERT_TRUE(workspace_size(w2->problem(), options, &bytes2).ok());
  ASSERT_GT(bytes1, size_t(32) << 20) << "the copies of A and B";
  ASSERT_GT(bytes2, 0u) << "the tail split";
  void* workspace = nullptr;
  const size_t bytes = std::max(bytes1, bytes2);
  ASSERT_EQ(cudaMalloc(&workspace, bytes), cudaSuccess);
  options.workspace = workspace;
  options.workspace_bytes = bytes;
  const auto run_both = [&](GemmReport* r1, GemmReport* r2) {
    ASSERT_TRUE(w1->poison_output().ok());
    ASSERT_TRUE(w2->poison_output().ok());
    ASSERT_TRUE(gemm(w1->problem(), options, r1).ok());
    ASSERT_TRUE(gemm(w2->problem(), options, r2).ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  };
  size_t free_before = 0, free_after = 0, total = 0;
  // The first calls load the kernels' code (lazy loading takes device memory): not counted.
  GemmReport r1, r2;
  ASSERT_NO_FATAL_FAILURE(run_both(&r1, &r2));
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  ASSERT_NO_FATAL_FAILURE(run_both(&r1, &r2));
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_EQ(free_after, free_before);
  EXPECT_FALSE(r1.aligned_copies.empty());
  EXPECT_TRUE(r1.workspace_note.empty()) << r1.workspace_note;
  EXPECT_TRUE(r2.workspace_note.empty()) << r2.workspace_note;
  ASSERT_TRUE(w1->fetch_output().ok());
  ASSERT_TRUE(w2->fetch_output().ok());
  EXPECT_LE(w1->check(1e12), harness::tolerance_for(DType::bf16, DType::bf16, false));
  EXPECT_LE(w2->check(1e12), harness::tolerance_for(DType::bf16, DType::bf16, false));

  // Too small a workspace: the parts go without it, the results are still right.
  options.workspace_bytes = 4096;
  ASSERT_NO_FATAL_FAILURE(run_both(&r1, &r2));
  EXPECT_TRUE(r1.aligned_copies.empty());
  EXPECT_TRUE(contains(r1.workspace_note, "of the given workspace was left")) << r1.workspace_note;
  ASSERT_TRUE(w1->fetch_output().ok());
  EXPECT_LE(w1->check(1e12), harness::tolerance_for(DType::bf16, DType::bf16, false));
  cudaFree(workspace);
}

}  // namespace
}  // namespace tilegemm
