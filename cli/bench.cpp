// tilegemm bench: tilegemm and cuBLAS side by side on shape suites, same inputs, one process.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

#include "bench_suites.hpp"
#include "commands.hpp"
#include "cpu/reference.hpp"
#include "cublas_gemm.hpp"
#include "problem/dtype.hpp"
#include "problem/groups.hpp"
#include "problem/matrix_view.hpp"
#include "problem/scales.hpp"
#include "timing.hpp"

namespace tilegemm::cli {
namespace {

struct BenchOptions {
  std::string suite = "square", shapes_file, dtype = "bf16", dtype_b, layouts, kernel = "auto";
  std::string config, autotune, csv, json, plot, scale_mode = "none", out_dtype;
  std::vector<std::string> moe_cases;  // --case: the moe suite's cases to run (empty: all)
  bool fast_accum = false, warm = false;
  int reps = 20;
};

// The driver's version as nvidia-smi prints it, from NVML, opened at run time (the command starts
// without it); else the CUDA version the driver supports.
std::string driver_version() {
  std::string text;
  if (void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    using Call = int (*)();
    using Version = int (*)(char*, unsigned);
    const auto init = reinterpret_cast<Call>(dlsym(nvml, "nvmlInit_v2"));
    const auto shutdown = reinterpret_cast<Call>(dlsym(nvml, "nvmlShutdown"));
    const auto version = reinterpret_cast<Version>(dlsym(nvml, "nvmlSystemGetDriverVersion"));
    if (init && shutdown && version && init() == 0) {  // 0: NVML_SUCCESS
      char buffer[96] = {};
      if (version(buffer, sizeof buffer) == 0) text = buffer;
      shutdown();
    }
    dlclose(nvml);
  }
  int cuda = 0;
  if (text.empty() && cudaDriverGetVersion(&cuda) == cudaSuccess && cuda > 0) {
    text = "CUDA " + std::to_string(cuda / 1000) + "." + std::to_string(cuda % 1000 / 10);
  }
  return text.empty() ? "unknown" : text;
}

// The reps' spread of tilegemm's and (where it ran) cuBLAS's milliseconds, into a row.
void set_times(const std::vector<TimeSpread>& ms, L2State l2, BenchRow* r) {
  r->timing = l2 == L2State::warm ? "warm" : "cold";
  r->tilegemm_ms = ms[0].median;
  r->tilegemm_ms_min = ms[0].min;
  r->tilegemm_ms_max = ms[0].max;
  if (ms.size() > 1) {
    r->cublas_ms = ms[1].median;
    r->cublas_ms_min = ms[1].min;
    r->cublas_ms_max = ms[1].max;
  }
}

// "NN" = A row-major (not transposed), B row-major; "T" = that operand column-major, i.e. the
// transpose of a row-major matrix is what is stored. D and C are row-major.
void layouts_option(const std::string& v, Layout* a, Layout* b) {
  if (v.size() != 2 || (v[0] != 'N' && v[0] != 'T') || (v[1] != 'N' && v[1] != 'T')) {
    fail("--layouts '" + v + "' must be NN, NT, TN or TT");
  }
  *a = v[0] == 'N' ? Layout::row_major : Layout::col_major;
  *b = v[1] == 'N' ? Layout::row_major : Layout::col_major;
}

std::vector<double> to_host_doubles(const void* device, int64_t count, DType dtype);

// NN, except for fp8: NT, the one layout cuBLASLt's fp8 takes (K-major A and B).
std::string default_layouts(DType dtype) { return is_fp8(dtype) ? "NT" : "NN"; }

BenchRow bench_shape(const BenchShape& shape, const BenchOptions& o,
                     const harness::WorkloadSpec& types, const GemmOptions& first_options,
                     GpuTimer& timer, double ceiling) {
  harness::WorkloadSpec spec = types;
  spec.m = shape.m;
  spec.n = shape.n;
  spec.k = shape.k;
  const DType dtype = spec.input_dtype;
  std::unique_ptr<harness::Workload> w;
  if (Status s = harness::Workload::create(spec, true, &w); !s.ok()) fail(s.message);
  const GemmProblem p = w->problem();
  const size_t d_bytes = size_t(p.m) * p.n * dtype_size(p.d.dtype);
  void* cublas_d = nullptr;
  if (cudaMalloc(&cublas_d, d_bytes) != cudaSuccess) fail("cudaMalloc of cuBLAS's output failed");

  GemmReport report;
  if (Status s = gemm(p, first_options, &report); !s.ok()) fail(s.message);
  // cuBLASLt refuses some fp8 problems (dimensions off multiples of 16, say): then the row has
  // tilegemm's figures alone.
  const Status theirs_ran = cublas_gemm(p, cublas_d);
  if (!theirs_ran.ok() && theirs_ran.code != StatusCode::not_supported) fail(theirs_ran.message);
  const bool compared = theirs_ran.ok();
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) fail(cudaGetErrorString(e));
  const GemmOptions options = timed_options(first_options);

  const double flops = 2.0 * double(p.m) * p.n * p.k;
  const int reps = flops > 2e12 ? std::max(3, o.reps / 4) : o.reps;
  std::vector<std::function<Status()>> calls = {[&] { return gemm(p, options); }};
  if (compared) calls.push_back([&] { return cublas_gemm(p, cublas_d); });
  const std::vector<TimeSpread> spread = timer.spread_ms(calls, reps);
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) fail(cudaGetErrorString(e));

  // Accuracy against cuBLAS on the same inputs, from a poisoned output (where cuBLAS ran; else
  // against the float64 reference, on a sample of rows).
  if (Status s = w->poison_output(); !s.ok()) fail(s.message);
  if (Status s = gemm(p, options); !s.ok()) fail(s.message);
  if (compared) {
    if (Status s = cublas_gemm(p, cublas_d); !s.ok()) fail(s.message);
  }
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) fail(cudaGetErrorString(e));
  const auto ours = to_host_doubles(p.d.data, p.m * p.n, p.d.dtype);
  const auto theirs = compared ? to_host_doubles(cublas_d, p.m * p.n, p.d.dtype) : ours;
  // tf32x3 offers SGEMM's accuracy, and fp8 into an fp32 D shows each accumulation's error past
  // D's rounding: each one's error against the float64 reference, on the same rows (cuBLAS's
  // output checked from the workload's D).
  std::string reference_note;
  const bool fp8_into_fp32 = is_fp8(dtype) && p.d.dtype == DType::fp32;
  if ((dtype == DType::tf32x3 || fp8_into_fp32) && compared) {
    const auto reference_error_of = [&] {
      if (Status s = w->fetch_output(); !s.ok()) fail(s.message);
      return w->check(2e10);
    };
    const double our_error = reference_error_of();
    if (cudaMemcpy(p.d.data, cublas_d, d_bytes, cudaMemcpyDeviceToDevice) != cudaSuccess) {
      fail("copying cuBLAS's output failed");
    }
    char text[128];
    std::snprintf(text, sizeof text,
                  "rel.err against the float64 reference: tilegemm %.2e, %s %.2e", our_error,
                  dtype == DType::tf32x3 ? "cuBLAS SGEMM" : "cuBLASLt", reference_error_of());
    reference_note = text;
  }
  cudaFree(cublas_d);
  double reference_error = 0.0;
  if (!compared) {
    if (Status s = w->fetch_output(); !s.ok()) fail(s.message);
    reference_error = w->check(2e11);
  }

  BenchRow r;
  r.suite = shape.suite;
  r.m = shape.m;
  r.n = shape.n;
  r.k = shape.k;
  r.dtype = std::string(to_string(dtype));
  if (spec.input_dtype_b && *spec.input_dtype_b != dtype) {
    r.dtype += "x" + std::string(to_string(*spec.input_dtype_b));
  }
  if (spec.scale_mode != ScaleMode::none) r.dtype += "/" + std::string(to_string(spec.scale_mode));
  if ((is_fp8(dtype) || dtype == DType::tf32x3) && spec.fast_accumulation) r.dtype += "/fast";
  if (p.d.dtype != harness::default_output_dtype(dtype)) {
    r.dtype += "->" + std::string(to_string(p.d.dtype));  // D's type, where --out-dtype set it
  }
  r.layouts = o.layouts.empty() ? default_layouts(dtype) : o.layouts;
  r.kernel = report.kernel;
  r.config = to_string(report.config);
  set_times(spread, timer.l2_state(), &r);
  r.tilegemm_tflops = flops / (r.tilegemm_ms * 1e-3) / 1e12;
  if (compared) {
    r.cublas_tflops = flops / (r.cublas_ms * 1e-3) / 1e12;
    r.ratio = r.tilegemm_tflops / r.cublas_tflops;
  }
  r.percent_of_ceiling = ceiling > 0 ? 100.0 * r.tilegemm_tflops / ceiling : 0.0;
  r.tilegemm_gbs = w->min_bytes() / (r.tilegemm_ms * 1e-3) / 1e9;
  // Same measure as `run --check`; NaN or inf in our output reads as +inf.
  r.relative_error = compared ? reference::relative_error(ours, theirs) : reference_error;
  r.note = report.aligned_copies;
  if (!reference_note.empty()) r.note += std::string(r.note.empty() ? "" : "; ") + reference_note;
  if (!compared) {
    r.note += std::string(r.note.empty() ? "" : "; ") + theirs_ran.message +
              " (rel.err against the float64 reference)";
  }
  return r;
}

std::vector<double> to_host_doubles(const void* device, int64_t count, DType dtype) {
  std::vector<uint8_t> bytes(size_t(count) * dtype_size(dtype));
  if (cudaMemcpy(bytes.data(), device, bytes.size(), cudaMemcpyDeviceToHost) != cudaSuccess) {
    fail("cudaMemcpy of a benchmark output failed");
  }
  std::vector<double> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[size_t(i)] = load_as_float(bytes.data(), dtype, i);
  return out;
}

// Group g's part of a grouped problem as a dense problem of its own over the same memory (what
// one call of the cuBLAS loop takes): rows first_row .. first_row + rows - 1 of batch entry
// `entry` of A and D, K values first_k .. first_k + ks - 1 of A and B (B's batch entry g); and
// the offset of its first element of D.
GemmProblem group_slice(const GemmProblem& p, int64_t g, int64_t entry, int64_t first_row,
                        int64_t rows, int64_t first_k, int64_t ks, int64_t* d_offset) {
  const auto at = [](const void* data, DType dtype, int64_t elements) {
    return static_cast<const char*>(data) + elements * dtype_size(dtype);
  };
  const MatrixView a = view_of(p.a, p.m, p.k), b = view_of(p.b, p.k, p.n),
                   d = view_of(p.d, p.m, p.n);
  GemmProblem q = p;
  q.groups = {};
  q.batch_count = 1;
  q.m = rows;
  q.k = ks;
  q.a.ld = a.stride.row == 1 ? a.stride.col : a.stride.row;
  q.b.ld = b.stride.row == 1 ? b.stride.col : b.stride.row;
  q.d.ld = d.stride.row == 1 ? d.stride.col : d.stride.row;
  q.c.ld = q.d.ld;
  q.a.data = at(p.a.data, p.a.dtype, a.offset(entry, first_row, first_k));
  q.b.data = at(p.b.data, p.b.dtype, b.offset(g, first_k, 0));
  *d_offset = d.offset(entry, first_row, 0);
  q.d.data = const_cast<char*>(at(p.d.data, p.d.dtype, *d_offset));
  q.a.batch_stride = q.b.batch_stride = q.c.batch_stride = q.d.batch_stride = 0;
  return q;
}

// Group g's fp8 scales for its slice `q` (rows first_row .. of its batch entry), in the layout a
// dense problem of q's size reads (tilegemm.hpp: Scales), from the grouped problem's
// (ScaleView::group). cuBLASLt reads scales from 16-byte boundaries, and a block-scaled A's K
// blocks lie M apart in the grouped problem and q.m apart in q's: those are copied into memory of
// their own, added to `copies` (device memory, freed by the caller).
Status group_slice_scales(const GemmProblem& p, int64_t g, int64_t first_row, GemmProblem* q,
                          std::vector<void*>* copies) {
  if (p.scales.mode == ScaleMode::none) return Status::success();
  // `height` lines of `width` floats, `pitch` floats apart at `from`, into a copy of their own
  // (lines `width` apart), unless they lie as the copy would, on a 16-byte boundary.
  const auto placed = [&](const float* from, int64_t width, int64_t pitch, int64_t height,
                          const float** to) {
    *to = from;
    if ((pitch == width || height == 1) && reinterpret_cast<uintptr_t>(from) % 16 == 0) {
      return Status::success();
    }
    void* copy = nullptr;
    const size_t line = size_t(width) * sizeof(float);
    if (cudaMalloc(&copy, line * size_t(height)) != cudaSuccess) {
      return Status{StatusCode::cuda_error, "cudaMalloc of a group's scales failed"};
    }
    copies->push_back(copy);
    if (cudaMemcpy2D(copy, line, from, size_t(pitch) * sizeof(float), line, size_t(height),
                     cudaMemcpyDeviceToDevice) != cudaSuccess) {
      return Status{StatusCode::cuda_error, "cudaMemcpy2D of a group's scales failed"};
    }
    *to = static_cast<const float*>(copy);
    return Status::success();
  };
  const ScaleView v = scale_view(p).group(p.groups.form, g);
  const int64_t b_count = scale_view(*q).b_count();  // as a dense problem of q's size reads
  if (Status s = placed(v.b, b_count, b_count, 1, &q->scales.b); !s.ok()) return s;
  switch (p.scales.mode) {
    case ScaleMode::tensor:
      return placed(v.a, 1, 1, 1, &q->scales.a);
    case ScaleMode::channel:
      return placed(v.a + first_row, q->m, q->m, 1, &q->scales.a);
    default:  // block: q.m rows of each K block, M apart
      return placed(v.a + first_row, q->m, v.m, v.k_blocks, &q->scales.a);
  }
}

// One case of the moe suite: tilegemm's grouped call against a loop of cuBLAS calls, one per
// group, on the same inputs; checked against the float64 reference on a sample of rows. fp8: the
// loop calls cuBLASLt with each group's scales (where it refuses a group, the row has tilegemm's
// figures alone), and gemm_grouped() (no fp8 scales) is not timed.
BenchRow bench_moe_case(const MoeCase& c, const BenchOptions& o, const harness::WorkloadSpec& types,
                        const GemmOptions& first_options, GpuTimer& timer, double ceiling) {
  harness::WorkloadSpec spec = types;
  spec.m = c.m;
  spec.n = c.n;
  spec.k = c.k;
  spec.batch_count = int64_t(c.rows.size());
  spec.groups = c.form;
  spec.group_rows = c.rows;
  if (c.form == GroupForm::k_offsets) {  // a weight gradient: X^T (column-major) and dY
    spec.layout_a = Layout::col_major;
    spec.layout_b = Layout::row_major;
  }
  const bool fp8 = is_fp8(spec.input_dtype);
  std::unique_ptr<harness::Workload> w;
  if (Status s = harness::Workload::create(spec, true, &w); !s.ok()) fail(s.message);
  const GemmProblem p = w->problem();
  const int64_t entries = entries_in_memory(c.form, spec.batch_count).c_d;  // of D
  const size_t d_bytes = size_t(entries * p.m * p.n) * dtype_size(p.d.dtype);
  void* cublas_d = nullptr;
  if (cudaMalloc(&cublas_d, d_bytes) != cudaSuccess) fail("cudaMalloc of cuBLAS's output failed");
  std::vector<std::pair<GemmProblem, void*>> loop;  // the groups with rows, and their D
  std::vector<void*> scale_copies;                  // the groups' scales, where copied
  const bool k_form = c.form == GroupForm::k_offsets;
  int64_t begin = 0;  // where group g's rows (k_offsets: K values) begin
  for (size_t g = 0; g < c.rows.size(); ++g) {
    const int64_t entry = c.form == GroupForm::offsets ? 0 : int64_t(g);
    const int64_t first = c.form == GroupForm::offsets ? begin : 0;
    int64_t offset = 0;
    if (c.rows[g] > 0) {
      GemmProblem q = group_slice(p, int64_t(g), entry, first, k_form ? p.m : c.rows[g],
                                  k_form ? begin : 0, k_form ? c.rows[g] : p.k, &offset);
      if (Status s = group_slice_scales(p, int64_t(g), first, &q, &scale_copies); !s.ok()) {
        fail(s.message);
      }
      loop.push_back({q, static_cast<char*>(cublas_d) + offset * dtype_size(p.d.dtype)});
    }
    begin += c.rows[g];
  }
  const auto cublas_loop = [&] {
    for (const auto& [q, d] : loop) {
      if (Status s = cublas_gemm(q, d); !s.ok()) return s;
    }
    return Status::success();
  };
  // The same groups as problems of their own (gemm_grouped: the ptr_array form), into tilegemm's D.
  std::vector<GemmProblem> problems;
  if (!fp8) {
    for (const auto& [q, d] : loop) problems.push_back(q);
  }

  GemmReport report;
  if (Status s = gemm(p, first_options, &report); !s.ok()) fail(s.message);
  // cuBLASLt refuses fp8 groups whose rows are off multiples of 16.
  const Status theirs_ran = cublas_loop();
  if (!theirs_ran.ok() && !(fp8 && theirs_ran.code == StatusCode::not_supported)) {
    fail(theirs_ran.message);
  }
  const bool compared = theirs_ran.ok();
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) fail(cudaGetErrorString(e));
  GemmReport problems_report;
  if (!problems.empty()) {
    if (Status s = gemm_grouped(problems, first_options, &problems_report); !s.ok()) {
      fail(s.message);
    }
  }
  const GemmOptions options = timed_options(first_options);
  std::vector<std::function<Status()>> calls = {[&] { return gemm(p, options); }};
  if (compared) calls.push_back(cublas_loop);
  if (!problems.empty()) calls.push_back([&] { return gemm_grouped(problems, options); });
  const std::vector<TimeSpread> spread = timer.spread_ms(calls, o.reps);
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) fail(cudaGetErrorString(e));
  cudaFree(cublas_d);
  for (void* copy : scale_copies) cudaFree(copy);
  // gemm_grouped's D first, then the grouped call's, each from NaN.
  double ptr_array_error = 0.0;
  if (!problems.empty()) {
    if (Status s = w->poison_output(); !s.ok()) fail(s.message);
    if (Status s = gemm_grouped(problems, options); !s.ok()) fail(s.message);
    if (Status s = w->fetch_output(); !s.ok()) fail(s.message);
    ptr_array_error = w->check(2e10);
  }
  if (Status s = w->poison_output(); !s.ok()) fail(s.message);
  if (Status s = gemm(p, options); !s.ok()) fail(s.message);
  if (Status s = w->fetch_output(); !s.ok()) fail(s.message);

  BenchRow r;
  r.suite = "moe";
  r.m = c.form == GroupForm::k_offsets ? c.m : harness::taken_rows(spec);
  r.n = c.n;
  r.k = c.k;
  r.dtype = std::string(to_string(spec.input_dtype));
  if (spec.scale_mode != ScaleMode::none) r.dtype += "/" + std::string(to_string(spec.scale_mode));
  if (fp8 && spec.fast_accumulation) r.dtype += "/fast";
  r.layouts = c.form == GroupForm::k_offsets ? "TN"
              : o.layouts.empty()            ? default_layouts(spec.input_dtype)
                                             : o.layouts;
  r.kernel = report.kernel;
  r.config = to_string(report.config);
  const double flops = harness::flops(spec);
  set_times(spread, timer.l2_state(), &r);
  r.tilegemm_tflops = flops / (r.tilegemm_ms * 1e-3) / 1e12;
  if (compared) {
    r.cublas_tflops = flops / (r.cublas_ms * 1e-3) / 1e12;
    r.ratio = r.tilegemm_tflops / r.cublas_tflops;
  } else {
    r.cublas_ms = r.cublas_ms_min = r.cublas_ms_max = 0.0;
  }
  r.percent_of_ceiling = ceiling > 0 ? 100.0 * r.tilegemm_tflops / ceiling : 0.0;
  r.tilegemm_gbs = w->min_bytes() / (r.tilegemm_ms * 1e-3) / 1e9;
  // A sample of rows: the groups' reference runs group by group on the host.
  r.relative_error = w->check(2e10);
  std::string ptr_array;
  if (!problems.empty()) {
    r.ptr_array_tflops = flops / (spread.back().median * 1e-3) / 1e12;
    r.ptr_array_error = ptr_array_error;
    char text[224];
    std::snprintf(text, sizeof(text),
                  "; as %zu problems of their own (gemm_grouped, %s %s): %.1f TFLOP/s, %.2fx the "
                  "loop, rel.err %.1e",
                  problems.size(),
                  problems_report.kernel_note.empty() ? "one launch" : "one call per problem",
                  to_string(problems_report.config).c_str(), r.ptr_array_tflops,
                  r.ptr_array_tflops / r.cublas_tflops, ptr_array_error);
    ptr_array = text;
  }
  r.note = c.name + ": " + std::to_string(c.rows.size()) + " groups (" +
           std::string(to_string(c.form)) + "); " + (fp8 ? "cuBLASLt" : "cuBLAS") + ": a loop of " +
           std::to_string(loop.size()) + " calls" +
           (compared ? "" : " (refused: " + theirs_ran.message + ")") +
           "; rel.err against the float64 reference" + ptr_array;
  r.groups = std::string(to_string(c.form)) + " ";
  for (size_t g = 0; g < c.rows.size(); ++g) r.groups += (g ? "," : "") + std::to_string(c.rows[g]);
  return r;
}

void print_row(const BenchRow& r) {
  std::printf(
      "%-9s %6lld %6lld %6lld  %-4s %-2s  %-8s %-27s %8.1f %8.1f %6.2fx %5.0f%% %8.0f  %.1e\n",
      r.suite.c_str(), (long long)r.m, (long long)r.n, (long long)r.k, r.dtype.c_str(),
      r.layouts.c_str(), r.kernel.c_str(), r.config.c_str(), r.tilegemm_tflops, r.cublas_tflops,
      r.ratio, r.percent_of_ceiling, r.tilegemm_gbs, r.relative_error);
  if (!r.note.empty()) std::printf("          note: %s\n", r.note.c_str());
  std::fflush(stdout);
}

void bench_command(const BenchOptions& o) {
  harness::WorkloadSpec types;
  const DType dtype = types.input_dtype = dtype_option("--dtype", o.dtype);
  if (!o.dtype_b.empty()) types.input_dtype_b = dtype_option("--dtype-b", o.dtype_b);
  types.output_dtype = o.out_dtype.empty() ? harness::default_output_dtype(dtype)
                                           : dtype_option("--out-dtype", o.out_dtype);
  const std::optional<ScaleMode> scale_mode = parse_scale_mode(o.scale_mode);
  if (!scale_mode) {
    fail("--scale-mode '" + o.scale_mode + "' is not a scale mode (none, tensor, channel, block)");
  }
  if (*scale_mode != ScaleMode::none && !is_fp8(dtype)) {
    fail("--scale-mode " + o.scale_mode + " needs fp8 inputs (--dtype fp8_e4m3 or fp8_e5m2)");
  }
  types.scale_mode = *scale_mode;
  types.fast_accumulation = o.fast_accum;
  check_types(dtype, types.input_dtype_b.value_or(dtype), types.output_dtype);
  layouts_option(o.layouts.empty() ? default_layouts(dtype) : o.layouts, &types.layout_a,
                 &types.layout_b);
  if (o.reps < 1) fail("--reps must be >= 1");
  const bool moe = o.suite == "moe" && o.shapes_file.empty();
  if (moe && !(dtype == DType::bf16 || dtype == DType::fp16 || is_fp8(dtype))) {
    fail("--suite moe runs fp16, bf16 or fp8 (grouped GEMMs take no other type on the GPU)");
  }
  if (!o.moe_cases.empty() && !moe) fail("--case names cases of --suite moe");
  std::vector<MoeCase> cases = moe_cases();
  for (const std::string& name : o.moe_cases) {
    if (std::none_of(cases.begin(), cases.end(), [&](const MoeCase& c) { return c.name == name; }))
      fail("--case '" + name + "' is not a case of the moe suite");
  }
  if (!o.moe_cases.empty()) {
    std::erase_if(cases, [&](const MoeCase& c) {
      return std::find(o.moe_cases.begin(), o.moe_cases.end(), c.name) == o.moe_cases.end();
    });
  }
  // fp8 groups run in the rows forms (K-major operands; no scales along K): the weight gradient's
  // case is left out.
  if (moe && is_fp8(dtype)) {
    if (std::any_of(cases.begin(), cases.end(),
                    [](const MoeCase& c) { return c.form == GroupForm::k_offsets; }) &&
        !o.moe_cases.empty()) {
      fail("--suite moe with fp8 runs the rows forms' cases (offsets, counts), not k_offsets");
    }
    std::erase_if(cases, [](const MoeCase& c) { return c.form == GroupForm::k_offsets; });
  }
  std::vector<BenchShape> shapes =
      moe ? std::vector<BenchShape>{} : shapes_option(o.suite, o.shapes_file);
  // fp32 at 16384^3 takes minutes per shape on CUDA cores, as in the anchors: left out.
  if (dtype == DType::fp32) std::erase_if(shapes, [](const BenchShape& s) { return s.m == 16384; });
  GemmOptions options;
  options.backend = Backend::gpu;
  options.kernel = o.kernel;
  options.config = config_option(o.config);
  options.autotune = autotune_option(o.autotune);
  if (devices().empty()) fail("bench needs a CUDA device (it compares with cuBLAS)");

  double ceiling = 0.0;
  {
    GpuTimer cold;
    ceiling = measure_cublas_tflops(cold, dtype);
  }
  GpuTimer timer(nullptr, o.warm ? L2State::warm : L2State::cold);
  const auto dev = devices()[0];
  const std::string driver = driver_version(), commit = source_commit();
  std::printf(
      "device: %s (%d SMs), driver %s; source %s; ceiling: cuBLAS %s 8192^3 = %.1f "
      "TFLOP/s (measured now)\n",
      dev.name.c_str(), dev.sm_count, driver.c_str(), commit.c_str(), o.dtype.c_str(), ceiling);
  if (o.warm) {
    std::printf("timing: warm (no L2 flush; %d calls back to back between two events)\n",
                kWarmCalls);
  } else {
    std::printf("timing: cold (L2 flushed before each call)\n");
  }
  std::printf("%-9s %6s %6s %6s  %-4s %-2s  %-8s %-27s %8s %8s %7s %6s %8s  %s\n", "suite", "M",
              "N", "K", "type", "ly", "kernel", "config", "tilegemm", "cuBLAS", "ratio", "%ceil",
              "GB/s", "rel.err");
  std::vector<BenchRow> rows;
  for (const auto& shape : shapes) {
    rows.push_back(bench_shape(shape, o, types, options, timer, ceiling));
    print_row(rows.back());
  }
  if (moe) {
    for (const MoeCase& c : cases) {
      rows.push_back(bench_moe_case(c, o, types, options, timer, ceiling));
      print_row(rows.back());
    }
  }

  for (BenchRow& r : rows) {
    r.gpu = dev.name;
    r.driver = driver;
    r.commit = commit;
  }
  std::printf("geometric means (TFLOP/s tilegemm / cuBLAS, ratio):\n");
  std::vector<std::string> suites = suite_names();
  suites.push_back("moe");
  for (const auto& suite : suites) {
    const double ours = geomean(rows, suite, &BenchRow::tilegemm_tflops);
    if (ours == 0) continue;
    std::printf("  %-9s %8.1f %8.1f %6.2fx\n", suite.c_str(), ours,
                geomean(rows, suite, &BenchRow::cublas_tflops),
                geomean(rows, suite, &BenchRow::ratio));
  }
  if (!o.csv.empty() || !o.plot.empty()) {
    const std::string csv = o.csv.empty() ? o.plot + ".csv" : o.csv;
    std::ofstream out(csv);
    if (!out) fail("--csv '" + csv + "' cannot be written");
    write_csv(out, rows);
  }
  if (!o.json.empty()) {
    std::ofstream out(o.json);
    if (!out) fail("--json '" + o.json + "' cannot be written");
    write_json(out, rows);
  }
  if (!o.plot.empty()) {
    const std::string csv = o.csv.empty() ? o.plot + ".csv" : o.csv;
    const std::string script = std::string(TILEGEMM_SOURCE_DIR) + "/bench/plot.py";
    const std::string cmd = "python3 '" + script + "' '" + csv + "' '" + o.plot + "'";
    if (std::system(cmd.c_str()) != 0) {
      std::fprintf(stderr,
                   "note: the plot needs Python 3 with matplotlib "
                   "(apt-get install python3-matplotlib, or pip install matplotlib); "
                   "the CSV is in %s: run %s by hand\n",
                   csv.c_str(), cmd.c_str());
    }
  }
}

}  // namespace

void add_bench_command(CLI::App& app) {
  static BenchOptions o;
  auto* cmd = app.add_subcommand("bench", "Time tilegemm and cuBLAS side by side on shape suites");
  cmd->add_option("--suite", o.suite,
                  "square, unaligned, skinny, llm, longk, fp8, all, or moe (grouped GEMMs of "
                  "mixture-of-experts layers against a loop of cuBLAS calls; fp8: cuBLASLt)")
      ->capture_default_str();
  cmd->add_option("--case", o.moe_cases,
                  "--suite moe: only these cases (e.g. dsv3-gate-up,dsv3-gate-up-wgrad)")
      ->delimiter(',');
  cmd->add_option("--shapes", o.shapes_file, "file of 'M N K' lines (replaces --suite)");
  cmd->add_option(
         "--dtype", o.dtype,
         "fp32, fp16, bf16, tf32, tf32x3, fp8_e4m3 or fp8_e5m2 (A and B; C and D the same, "
         "fp32 for tf32 and tf32x3, bf16 for fp8; fp8 is compared with cuBLASLt, tf32x3 with "
         "SGEMM)")
      ->capture_default_str();
  cmd->add_option("--dtype-b", o.dtype_b, "B's element type where it differs (fp8 only)");
  cmd->add_option("--scale-mode", o.scale_mode, "fp8: none, tensor, channel or block scales")
      ->capture_default_str();
  cmd->add_flag("--fast-accum", o.fast_accum,
                "fp8: fast accumulation (both libraries); tf32x3: tilegemm's");
  cmd->add_option("--out-dtype", o.out_dtype,
                  "D's type where it differs from --dtype's default, e.g. fp8_e4m3 (with D's "
                  "scale and amax, both libraries)");
  cmd->add_option("--layouts", o.layouts,
                  "NN, NT, TN or TT (T = column-major operand; default NN, NT for fp8)");
  cmd->add_option("--kernel", o.kernel, "tilegemm kernel or auto")->capture_default_str();
  cmd->add_option("--config", o.config, "kernel config (default: the kernel's choice)");
  cmd->add_option("--autotune", o.autotune,
                  "off, on-miss or always (default: $TILEGEMM_AUTOTUNE, else off)");
  cmd->add_option("--reps", o.reps, "timed repetitions per implementation")->capture_default_str();
  cmd->add_flag("--warm", o.warm,
                "time with the operands in L2: no flush, 10 calls back to back per rep "
                "(default: cold, L2 flushed before each call)");
  cmd->add_option("--csv", o.csv, "write the table as CSV");
  cmd->add_option("--json", o.json, "write the table as JSON");
  cmd->add_option("--plot", o.plot, "draw TFLOP/s against size (.png or .svg; needs matplotlib)");
  cmd->callback([] { bench_command(o); });
}

}  // namespace tilegemm::cli
