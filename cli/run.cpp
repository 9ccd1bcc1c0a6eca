// tilegemm run M N K [options]: one GEMM on random inputs, timed, optionally checked.

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "problem/dtype.hpp"
#include "timing.hpp"

namespace tilegemm::cli {
namespace {

struct RunOptions {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  std::string dtype = "fp32", dtype_b, out_dtype, scale_mode = "none", layout_a = "row",
              layout_b = "row", layout_c = "row";
  int64_t lda = 0, ldb = 0, ldc = 0;
  float alpha = 1.0f, beta = 0.0f;
  std::string activation = "none", backend = "auto", kernel = "auto", config, autotune;
  bool bias = false, fast_accum = false, check = false, json = false, in_place = false,
       no_aligned_copies = false, host_time = false;
  int reps = 0;
  uint64_t seed = 1;
  std::string grouped = "none", group_rows;
  int64_t groups = 0;
};

constexpr int kHostTimeCalls = 100;  // far fewer than CUDA's launch queue holds

// The host's time per gemm() call, in microseconds: bursts of kHostTimeCalls calls enqueued back to
// back after a synchronisation, so that the device's pace never holds the host back; median of 21
// bursts. This is the library's own cost per call: the validation, the choice of kernel and
// config, and the launch.
double host_us_per_call(const GemmProblem& problem, const GemmOptions& options) {
  std::vector<double> rounds;
  for (int round = 0; round < 21; ++round) {
    if (Status s = harness::device_synchronize(); !s.ok()) fail(s.message);
    const auto t0 = std::chrono::steady_clock::now();
    for (int call = 0; call < kHostTimeCalls; ++call) {
      if (Status s = gemm(problem, options); !s.ok()) fail(s.message);
    }
    const auto t1 = std::chrono::steady_clock::now();
    rounds.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / kHostTimeCalls);
  }
  if (Status s = harness::device_synchronize(); !s.ok()) fail(s.message);
  return median(rounds);
}

void run_command(const RunOptions& o) {
  harness::WorkloadSpec spec;
  spec.m = o.m;
  spec.n = o.n;
  spec.k = o.k;
  spec.batch_count = o.batch;
  spec.input_dtype = dtype_option("--dtype", o.dtype);
  if (!o.dtype_b.empty()) spec.input_dtype_b = dtype_option("--dtype-b", o.dtype_b);
  const std::optional<ScaleMode> scale_mode = parse_scale_mode(o.scale_mode);
  if (!scale_mode) {
    fail("--scale-mode '" + o.scale_mode + "' is not a scale mode (none, tensor, channel, block)");
  }
  if (*scale_mode != ScaleMode::none && !is_fp8(spec.input_dtype)) {
    fail("--scale-mode " + o.scale_mode + " needs fp8 inputs (--dtype fp8_e4m3 or fp8_e5m2)");
  }
  spec.scale_mode = *scale_mode;
  spec.fast_accumulation = o.fast_accum;
  spec.output_dtype = o.out_dtype.empty() ? harness::default_output_dtype(spec.input_dtype)
                                          : dtype_option("--out-dtype", o.out_dtype);
  spec.layout_a = layout_option("--layout-a", o.layout_a);
  spec.layout_b = layout_option("--layout-b", o.layout_b);
  spec.layout_c = layout_option("--layout-c", o.layout_c);
  spec.lda = o.lda;
  spec.ldb = o.ldb;
  spec.ldc = o.ldc;
  spec.alpha = o.alpha;
  spec.beta = o.beta;
  spec.bias = o.bias;
  spec.in_place = o.in_place;
  spec.seed = o.seed;
  activation_option(o.activation, &spec.activation, &spec.leaky_relu_slope);
  GemmOptions options;
  options.backend = backend_option(o.backend);
  options.kernel = o.kernel;
  options.config = config_option(o.config);
  options.autotune = autotune_option(o.autotune);
  options.aligned_copies = !o.no_aligned_copies;
  if (spec.m < 0 || spec.n < 0 || spec.k < 0) fail("M, N and K must be >= 0");
  if (spec.batch_count < 1) fail("--batch must be >= 1");
  const std::optional<GroupForm> grouped = parse_group_form(o.grouped);
  if (!grouped || *grouped == GroupForm::ptr_array)
    fail("--grouped '" + o.grouped +
         "' is not a form of groups of one problem (none, offsets, counts, k_offsets; problems "
         "of their own, the ptr_array form, are gemm_grouped()'s, timed by bench --suite moe)");
  spec.groups = *grouped;
  if (spec.groups != GroupForm::none) {
    if (o.batch != 1) fail("--batch: a grouped GEMM's batch entries are its groups (--groups)");
    if (!o.group_rows.empty()) {
      spec.group_rows = group_rows_option("--group-rows", o.group_rows);
      if (o.groups != 0 && o.groups != int64_t(spec.group_rows.size())) {
        fail("--groups " + std::to_string(o.groups) + " but --group-rows has " +
             std::to_string(spec.group_rows.size()) + " values");
      }
    } else if (o.groups > 0) {
      if (o.groups > (int64_t(1) << 24)) fail("--groups must be at most 2^24");
      const int64_t extent = spec.groups == GroupForm::k_offsets ? spec.k : spec.m;
      spec.group_rows = harness::random_group_rows(spec.groups, o.groups, extent, o.seed);
    } else {
      fail("--grouped " + o.grouped + " needs --groups G (random rows) or --group-rows LIST");
    }
    spec.batch_count = int64_t(spec.group_rows.size());
  } else if (o.groups != 0 || !o.group_rows.empty()) {
    fail("--groups and --group-rows need --grouped offsets, counts or k_offsets");
  }
  if (o.reps < 0) fail("--reps must be >= 1 (or 0: the default)");

  // The problem, the options and the memory it needs are checked before any data is drawn
  // (Workload::create checks them again, and allocates nothing when they fail).
  const bool gpu = use_gpu(options.backend);
  options.backend = gpu ? Backend::gpu : Backend::cpu;
  check_types(spec.input_dtype, spec.input_dtype_b.value_or(spec.input_dtype), spec.output_dtype);
  if (Status s = harness::Workload::check_spec(spec); !s.ok()) fail(with_option_names(s.message));
  if (!gpu) {
    GemmProblem empty;  // the options' checks alone (a problem without sizes is valid)
    if (Status s = plan(empty, options, nullptr); !s.ok()) fail(with_option_names(s.message));
    const KernelConfig& c = options.config ? *options.config : KernelConfig{};
    if (options.config && (c.num_stages != 1 || c.warp_m != 0 || c.cluster_m * c.cluster_n != 1 ||
                           c.schedule != KernelSchedule::cooperative)) {
      std::fprintf(stderr,
                   "note: the CPU backend reads BLOCK_SIZE_M, _N, _K and GROUP_SIZE_M of --config; "
                   "num_stages, num_warps, the warp tile, cluster and schedule are the GPU "
                   "kernels'\n");
    }
    if (o.host_time) {
      std::fprintf(stderr,
                   "note: --host-time times GPU calls; on the CPU backend the time "
                   "below is the host's\n");
    }
    if (options.autotune && *options.autotune != AutotunePolicy::off) {
      std::fprintf(stderr, "note: --autotune: the CPU backend does not tune\n");
    }
  }
  std::unique_ptr<harness::Workload> workload;
  if (Status s = harness::Workload::create(spec, gpu, &workload); !s.ok()) {
    fail(with_option_names(s.message));
  }
  const GemmProblem problem = workload->problem();

  // First call: validates, picks the kernel (tuning, if asked), warms up.
  GemmReport report;
  if (Status s = gemm(problem, options, &report); !s.ok()) fail(with_option_names(s.message));
  if (Status s = workload->fetch_output(); !s.ok()) fail(s.message);
  options = timed_options(options);

  const int reps = o.reps > 0 ? o.reps : (gpu ? 20 : 3);
  double ms = 0.0, host_us = 0.0;
  if (gpu) {
    GpuTimer timer;
    ms = timer.median_ms({[&] { return gemm(problem, options); }}, reps, 2)[0];
    if (Status s = harness::device_synchronize(); !s.ok()) fail(s.message);
    if (o.host_time) host_us = host_us_per_call(problem, options);
  } else {
    std::vector<double> times;
    for (int r = 0; r < reps; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      gemm(problem, options);
      times.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    ms = median(times);
  }
  const double flops = harness::flops(spec);
  const double tflops = ms > 0 ? flops / (ms * 1e-3) / 1e12 : 0.0;

  double error = 0.0;
  int64_t rows_checked = 0;
  double amax_error = 0.0;  // an fp8 D's
  bool passed = true;
  const double tolerance =
      harness::tolerance_for(spec.input_dtype, spec.output_dtype, spec.fast_accumulation);
  if (o.check) {
    // A fresh, poisoned D and one more run: every element must be written and right.
    if (Status s = workload->poison_output(); !s.ok()) fail(s.message);
    if (Status s = gemm(problem, options); !s.ok()) fail(s.message);
    if (Status s = workload->fetch_output(); !s.ok()) fail(s.message);
    error = workload->check(gpu ? 4e11 : 2e10, &rows_checked, &amax_error);
    passed = error <= tolerance;
  }

  if (o.json) {
    nlohmann::json j = {{"m", spec.m},
                        {"n", spec.n},
                        {"k", spec.k},
                        {"batch", spec.batch_count},
                        {"dtype", to_string(spec.input_dtype)},
                        {"dtype_b", to_string(spec.input_dtype_b.value_or(spec.input_dtype))},
                        {"scale_mode", to_string(spec.scale_mode)},
                        {"fast_accumulation", spec.fast_accumulation},
                        {"out_dtype", to_string(spec.output_dtype)},
                        {"layout_a", to_string(spec.layout_a)},
                        {"layout_b", to_string(spec.layout_b)},
                        {"layout_c", to_string(spec.layout_c)},
                        {"alpha", spec.alpha},
                        {"beta", spec.beta},
                        {"bias", spec.bias},
                        {"activation", to_string(spec.activation)},
                        {"grouped", to_string(spec.groups)},
                        {"group_rows", spec.group_rows},
                        {"backend", to_string(report.backend)},
                        {"kernel", report.kernel},
                        {"config", to_string(report.config)},
                        {"config_source", report.config_source},
                        {"tuning_key", report.tuning_key},
                        {"kernel_note", report.kernel_note},
                        {"aligned_copies", report.aligned_copies},
                        {"reps", reps},
                        {"median_ms", ms},
                        {"tflops", tflops}};
    if (o.host_time && gpu) j["host_us_per_call"] = host_us;
    if (o.check) {
      j["check"] = {{"relative_error", error},
                    {"tolerance", tolerance},
                    {"rows_checked", rows_checked},
                    {"passed", passed}};
      if (is_fp8(spec.output_dtype)) {
        j["check"]["amax"] = workload->amax();
        j["check"]["amax_error"] = amax_error;
        j["check"]["amax_tolerance"] = harness::amax_tolerance(spec.fast_accumulation);
      }
    }
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::string inputs(to_string(spec.input_dtype));
    if (spec.input_dtype_b && *spec.input_dtype_b != spec.input_dtype) {
      inputs += "x" + std::string(to_string(*spec.input_dtype_b));
    }
    if (spec.scale_mode != ScaleMode::none) {
      inputs += " (" + std::string(to_string(spec.scale_mode)) + " scales)";
    }
    if (spec.fast_accumulation && is_fp8(spec.input_dtype)) inputs += " (fast accumulation)";
    std::printf("problem: M=%lld N=%lld K=%lld batch=%lld %s->%s layouts A=%s B=%s C/D=%s\n",
                (long long)spec.m, (long long)spec.n, (long long)spec.k,
                (long long)spec.batch_count, inputs.c_str(),
                std::string(to_string(spec.output_dtype)).c_str(),
                std::string(to_string(spec.layout_a)).c_str(),
                std::string(to_string(spec.layout_b)).c_str(),
                std::string(to_string(spec.layout_c)).c_str());
    if (spec.groups != GroupForm::none) {
      std::string rows;
      for (size_t g = 0; g < spec.group_rows.size() && g < 16; ++g) {
        rows += (g ? "," : "") + std::to_string(spec.group_rows[g]);
      }
      if (spec.group_rows.size() > 16) rows += ",...";
      const bool k_form = spec.groups == GroupForm::k_offsets;
      std::printf("groups: %s, %lld groups of %s %s (%lld rows taken)\n",
                  std::string(to_string(spec.groups)).c_str(), (long long)spec.batch_count,
                  rows.c_str(), k_form ? "K values" : "rows", (long long)harness::taken_rows(spec));
    }
    std::printf("backend: %s  kernel: %s  config: %s%s%s\n",
                std::string(to_string(report.backend)).c_str(), report.kernel.c_str(),
                to_string(report.config).c_str(),
                report.config_source.empty() ? "" : "  from: ", report.config_source.c_str());
    if (!report.kernel_note.empty()) std::printf("note: %s\n", report.kernel_note.c_str());
    if (!report.aligned_copies.empty()) std::printf("note: %s\n", report.aligned_copies.c_str());
    if (gpu) {
      std::printf("time: %.4f ms (median of %d)  %.2f TFLOP/s\n", ms, reps, tflops);
      if (o.host_time) {
        std::printf("host: %.2f us per call (gemm() returning, bursts of %d calls)\n", host_us,
                    kHostTimeCalls);
      }
    } else {
      std::printf("time: %.4f ms (median of %d)  %.2f GFLOP/s\n", ms, reps, tflops * 1e3);
    }
    if (o.check) {
      std::printf(
          "check: relative error %.3e vs float64 reference (%lld of %lld rows), "
          "tolerance %.0e: %s\n",
          error, (long long)rows_checked,
          (long long)(spec.groups == GroupForm::none ? spec.m : harness::taken_rows(spec)),
          tolerance, passed ? "PASS" : "FAIL");
      if (is_fp8(spec.output_dtype)) {
        std::printf(
            "amax: %.6g (D's scale %g; its error against the reference %.3e, tolerance "
            "%.0e)\n",
            double(workload->amax()), double(harness::fp8_d_scale(spec.k)), amax_error,
            harness::amax_tolerance(spec.fast_accumulation));
      }
    }
  }
  if (!passed) exit_with(kExitCheckFailed);
}

}  // namespace

void add_run_command(CLI::App& app) {
  static RunOptions o;
  auto* cmd = app.add_subcommand("run", "Run one GEMM on random inputs; time it; --check it");
  cmd->add_option("M", o.m, "rows of A and D")->required();
  cmd->add_option("N", o.n, "columns of B and D")->required();
  cmd->add_option("K", o.k, "columns of A, rows of B")->required();
  cmd->add_option(
         "--dtype", o.dtype,
         "A/B element type: fp32, fp16, bf16, tf32, tf32x3 (or 3xtf32), fp8_e4m3 (or fp8), "
         "fp8_e5m2")
      ->capture_default_str();
  cmd->add_option("--dtype-b", o.dtype_b, "B's element type where it differs (fp8 only)");
  cmd->add_option("--scale-mode", o.scale_mode,
                  "fp8: random scales per tensor, channel (row of A, column of B) or block "
                  "(1x128 of A, 128x128 of B), or none")
      ->capture_default_str();
  cmd->add_flag("--fast-accum", o.fast_accum,
                "fp8 and tf32x3: keep the tensor cores' own sums over all of K (faster, less "
                "accurate)");
  cmd->add_option("--out-dtype", o.out_dtype,
                  "D's element type, and C's (default: --dtype; fp32 for tf32, bf16 for fp8). "
                  "fp8_e4m3 or fp8_e5m2 from fp8 inputs: C and bias in bf16, D scaled by a "
                  "power of two near 2/sqrt(K+1), its amax checked");
  cmd->add_option("--layout-a", o.layout_a, "row or col")->capture_default_str();
  cmd->add_option("--layout-b", o.layout_b, "row or col")->capture_default_str();
  cmd->add_option("--layout-c", o.layout_c, "row or col (C and D)")->capture_default_str();
  cmd->add_option("--lda", o.lda, "leading dimension of A (0 = packed)");
  cmd->add_option("--ldb", o.ldb, "leading dimension of B (0 = packed)");
  cmd->add_option("--ldc", o.ldc, "leading dimension of C and D (0 = packed)");
  cmd->add_option("--alpha", o.alpha, "scale of A*B")->capture_default_str();
  cmd->add_option("--beta", o.beta, "scale of C")->capture_default_str();
  cmd->add_option("--activation", o.activation, "none|relu|leaky_relu[:slope]|gelu|silu")
      ->capture_default_str();
  cmd->add_flag("--bias", o.bias, "add a random bias vector (one value per column of D)");
  cmd->add_flag("--in-place", o.in_place, "D is C (needs --beta to matter)");
  cmd->add_option("--batch", o.batch, "strided batch count")->capture_default_str();
  cmd->add_option("--grouped", o.grouped,
                  "grouped GEMM (mixture of experts): offsets (M rows shared by the groups in "
                  "turn), counts (each group a batch entry of up to M rows), k_offsets (K "
                  "shared by the groups in turn, a D per group: weight gradients), or none")
      ->capture_default_str();
  cmd->add_option("--groups", o.groups, "--grouped: the number of groups, with random rows");
  cmd->add_option("--group-rows", o.group_rows,
                  "--grouped: each group's rows (k_offsets: K values), comma-separated (e.g. "
                  "512,0,1,4096)");
  cmd->add_option("--backend", o.backend, "auto, gpu or cpu")->capture_default_str();
  cmd->add_option("--kernel", o.kernel, "GPU kernel (see `tilegemm info`) or auto")
      ->capture_default_str();
  cmd->add_option("--config", o.config, "kernel config, e.g. 128x128x16/g8/s3/w8/wt64x32");
  cmd->add_option("--autotune", o.autotune,
                  "off, on-miss or always (default: $TILEGEMM_AUTOTUNE, else off)");
  cmd->add_flag("--no-aligned-copies", o.no_aligned_copies,
                "GPU: never copy A or B to aligned lines first (see docs/design.md)");
  cmd->add_flag("--check", o.check, "compare with the float64 reference; exit 1 on failure");
  cmd->add_option("--reps", o.reps, "timed repetitions (default 20 on GPU, 3 on CPU)");
  cmd->add_option("--seed", o.seed, "random seed of the inputs")->capture_default_str();
  cmd->add_flag("--json", o.json, "print one JSON object");
  cmd->add_flag("--host-time", o.host_time,
                "GPU: also time gemm()'s host cost per call (bursts of 100 calls back to back)");
  cmd->callback([] { run_command(o); });
}

}  // namespace tilegemm::cli
