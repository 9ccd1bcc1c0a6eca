// tilegemm tune M N K [options] | --suite S | --shapes FILE: time every candidate config, store
// the winners in the tuning cache, and say how the heuristic's choice compares.
#include <cuda_runtime.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "commands.hpp"
#include "timing.hpp"

namespace tilegemm::cli {
namespace {

struct TuneOptions {
  int64_t m = 0, n = 0, k = 0;
  std::string suite, shapes_file, dtype = "bf16", layout_a = "row", layout_b = "row";
  std::string kernel = "auto";
  bool overhead = false;
};

// A progress bar on a terminal, plain lines otherwise (logs, pipes).
void show_progress(const std::string& what, int done, int total) {
  if (isatty(STDERR_FILENO)) {
    const int width = 30, filled = width * done / total;
    std::fprintf(stderr, "\r%s [%s%s] %d/%d", what.c_str(), std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), done, total);
    if (done == total) std::fprintf(stderr, "\n");
  } else if (done == total) {
    std::fprintf(stderr, "%s: %d candidates timed\n", what.c_str(), total);
  }
}

// Host time one gemm() call costs, in microseconds: the median over blocks of calls. The GPU
// work is the same either way; the difference between two ways of calling is their overhead.
double microseconds_per_call(const GemmProblem& p, const GemmOptions& options) {
  std::vector<double> blocks;
  for (int block = 0; block < 15; ++block) {
    cudaDeviceSynchronize();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 200; ++i) gemm(p, options);
    const auto t1 = std::chrono::steady_clock::now();
    blocks.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 200);
  }
  cudaDeviceSynchronize();
  return median(blocks);
}

void tune_command(const TuneOptions& o) {
  const DType dtype = dtype_option("--dtype", o.dtype);
  const DType out = harness::default_output_dtype(dtype);
  check_types(dtype, dtype, out);
  std::vector<BenchShape> shapes;
  if (o.suite.empty() && o.shapes_file.empty()) {
    if (o.m <= 0 || o.n <= 0 || o.k <= 0) fail("M, N and K must be > 0 (or give --suite/--shapes)");
    shapes.push_back({"", o.m, o.n, o.k});
  } else {
    shapes = shapes_option(o.suite, o.shapes_file);
  }
  if (devices().empty()) fail("tune needs a CUDA device");
  GemmOptions options;
  options.backend = Backend::gpu;
  options.kernel = o.kernel;

  std::vector<double> ratios;  // heuristic's time / tuned time, per shape
  for (const BenchShape& shape : shapes) {
    harness::WorkloadSpec spec;
    spec.m = shape.m;
    spec.n = shape.n;
    spec.k = shape.k;
    spec.input_dtype = dtype;
    spec.output_dtype = out;
    spec.layout_a = layout_option("--layout-a", o.layout_a);
    spec.layout_b = layout_option("--layout-b", o.layout_b);
    std::unique_ptr<harness::Workload> w;
    if (Status s = harness::Workload::create(spec, true, &w); !s.ok()) fail(s.message);
    TuneResult result;
    const std::string what = std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" +
                             std::to_string(shape.k) + " " + o.dtype;
    const Status s = tune(w->problem(), options, &result,
                          [&](int done, int total) { show_progress(what, done, total); });
    if (!s.ok()) fail(s.message);

    std::printf("tuning key: %s   (%.2f s)\n", result.tuning_key.c_str(), result.seconds);
    double heuristic_ms = 0.0;
    for (size_t i = 0; i < result.candidates.size(); ++i) {
      const TuneCandidate& c = result.candidates[i];
      if (c.heuristic) heuristic_ms = c.ms;
      if (!c.dropped.empty()) {
        std::printf("      %-9s %-30s dropped: %s\n", c.kernel.c_str(), to_string(c.config).c_str(),
                    c.dropped.c_str());
        continue;
      }
      std::printf("  %s %-9s %-30s %9.4f ms %8.1f TFLOP/s%s\n", i == 0 ? "->" : "  ",
                  c.kernel.c_str(), to_string(c.config).c_str(), c.ms, c.tflops,
                  c.heuristic ? "   (heuristic's choice)" : "");
    }
    for (const std::string& p : result.pruned) std::printf("      pruned %s\n", p.c_str());
    const double best_ms = result.candidates.front().ms;
    if (heuristic_ms > 0) {
      ratios.push_back(best_ms / heuristic_ms);
      std::printf("heuristic/tuned: %.3f   %s\n", ratios.back(),
                  result.cache_file.empty() ? "(not stored: no cache directory)"
                                            : ("stored in " + result.cache_file).c_str());
    }
    if (o.overhead) {
      GemmOptions cached = options, given = options;
      cached.autotune = AutotunePolicy::on_miss;  // a hit now: the winner was just stored
      given.config = result.candidates.front().config;
      given.kernel = result.candidates.front().kernel;
      const double with_lookup = microseconds_per_call(w->problem(), cached);
      const double without = microseconds_per_call(w->problem(), given);
      std::printf(
          "host time per call: %.2f us with the cache lookup, %.2f us with the config "
          "given: the lookup adds %.2f us\n",
          with_lookup, without, with_lookup - without);
    }
  }
  if (ratios.size() > 1) {
    double log_sum = 0;
    for (double r : ratios) log_sum += std::log(r);
    std::printf("heuristic/tuned geometric mean over %zu shapes: %.3f\n", ratios.size(),
                std::exp(log_sum / double(ratios.size())));
  }
}

}  // namespace

void add_tune_command(CLI::App& app) {
  static TuneOptions o;
  auto* cmd = app.add_subcommand(
      "tune", "Time every candidate config of a problem, store the winner in the tuning cache");
  cmd->add_option("M", o.m, "rows of A and D");
  cmd->add_option("N", o.n, "columns of B and D");
  cmd->add_option("K", o.k, "columns of A, rows of B");
  cmd->add_option("--suite", o.suite, "tune every shape of a bench suite instead");
  cmd->add_option("--shapes", o.shapes_file, "tune every 'M N K' line of a file instead");
  cmd->add_option("--dtype", o.dtype, "fp32, fp16, bf16 or tf32")->capture_default_str();
  cmd->add_option("--layout-a", o.layout_a, "row or col")->capture_default_str();
  cmd->add_option("--layout-b", o.layout_b, "row or col")->capture_default_str();
  cmd->add_option("--kernel", o.kernel, "search one kernel's configs, or auto (every kernel)")
      ->capture_default_str();
  cmd->add_flag("--overhead", o.overhead,
                "also measure the host time a cached lookup adds to a gemm() call");
  cmd->footer(
      "The cache lives in $TILEGEMM_CACHE_DIR, else $XDG_CACHE_HOME/tilegemm, else "
      "~/.cache/tilegemm, one JSON file per GPU type. TILEGEMM_PRINT_AUTOTUNING=1 prints each "
      "new winner.");
  cmd->callback([] { tune_command(o); });
}

}  // namespace tilegemm::cli
