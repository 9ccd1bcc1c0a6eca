#include "harness/workload.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <new>
#include <numeric>
#include <random>

#include "cpu/reference.hpp"
#include "problem/dtype.hpp"
#include "problem/groups.hpp"
#include "problem/matrix_view.hpp"
#include "problem/scales.hpp"

namespace tilegemm::harness {
namespace {

// Standard normal values from a counter-based generator (splitmix64 + Box-Muller): fast enough
// for 10^8 values, and the same for a seed on every machine.
class NormalGenerator {
 public:
  explicit NormalGenerator(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  float next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = (double(next_u64() >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]
    const double u2 = double(next_u64() >> 11) * 0x1.0p-53;
    const double r = std::sqrt(-2.0 * std::log(u1)), theta = 2.0 * M_PI * u2;
    spare_ = float(r * std::sin(theta));
    has_spare_ = true;
    return float(r * std::cos(theta));
  }

 private:
  uint64_t next_u64() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t state_;
  float spare_ = 0.0f;
  bool has_spare_ = false;
};

std::vector<uint8_t> random_buffer(int64_t elements, DType dtype, uint64_t seed) {
  std::vector<uint8_t> bytes(size_t(elements) * dtype_size(dtype));
  NormalGenerator gen(seed);
  for (int64_t i = 0; i < elements; ++i) store_from_float(bytes.data(), dtype, i, gen.next());
  return bytes;
}

// fp32 scales between 1/4 and 4 (2 to the power of a normal value / 2, clamped): far enough
// from 1 that a scale applied to the wrong row, column or block shows in the check.
std::vector<uint8_t> random_scales(int64_t count, uint64_t seed) {
  std::vector<uint8_t> bytes(size_t(count) * sizeof(float));
  NormalGenerator gen(seed);
  for (int64_t i = 0; i < count; ++i) {
    const float scale = std::exp2(std::clamp(0.5f * gen.next(), -2.0f, 2.0f));
    std::memcpy(bytes.data() + i * sizeof(float), &scale, sizeof(float));
  }
  return bytes;
}

// The host memory this process may use: the machine's, or its cgroup's limit where lower; 0 when
// neither can be read.
double host_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  double bytes = pages > 0 && page > 0 ? double(pages) * double(page) : 0.0;
  for (const char* path :
       {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(path);
    double limit = 0;
    if (in >> limit && limit > 0 && (bytes == 0 || limit < bytes)) bytes = limit;
  }
  return bytes;
}

const void* scale_or_null(const std::vector<uint8_t>& scales) {
  return scales.empty() ? nullptr : scales.data();
}

Status to_device(const std::vector<uint8_t>& host, DeviceBuffer* out) {
  return host.empty() ? Status::success() : upload(host.data(), host.size(), out);
}

// The int32 sizes a grouped problem reads: for offsets (k_offsets), where each group's rows (K
// values) end; for counts, the rows themselves.
std::vector<uint8_t> group_sizes(GroupForm form, std::vector<int32_t> rows) {
  if (form == GroupForm::offsets || form == GroupForm::k_offsets) {
    std::partial_sum(rows.begin(), rows.end(), rows.begin());
  }
  std::vector<uint8_t> bytes(rows.size() * sizeof(int32_t));
  std::memcpy(bytes.data(), rows.data(), bytes.size());
  return bytes;
}

// Batch entries of A, B, C and D in memory (some shared by the groups).
GroupEntries entries_of(const WorkloadSpec& s) {
  return entries_in_memory(s.groups, s.batch_count);
}

// 0 for a negative leading dimension, or one whose stride overflows: validate() refuses both
// (create() has refused a problem larger than memory before this is reached).
int64_t packed_stride(Layout layout, int64_t rows, int64_t cols, int64_t ld) {
  const int64_t eff = effective_ld(ld, layout, rows, cols);
  int64_t stride = 0;
  if (eff < 0 || __builtin_mul_overflow(eff, layout == Layout::row_major ? rows : cols, &stride)) {
    return 0;
  }
  return stride;
}

}  // namespace

int64_t storage_elements(Layout layout, int64_t rows, int64_t cols, int64_t ld, int64_t batch_count,
                         int64_t batch_stride) {
  if (rows == 0 || cols == 0) return 0;
  const int64_t one = packed_stride(layout, rows, cols, ld);
  return (batch_count - 1) * batch_stride + one;
}

std::vector<int32_t> random_group_rows(GroupForm form, int64_t groups, int64_t m, uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 7);
  std::vector<int32_t> rows(size_t(std::max<int64_t>(groups, 0)));
  if (form == GroupForm::counts) {
    std::uniform_int_distribution<int64_t> count(0, m);
    for (int32_t& r : rows) r = int32_t(count(rng));
    return rows;
  }
  // offsets and k_offsets: groups - 1 cuts of [0, m], sorted; equal cuts leave empty groups
  std::uniform_int_distribution<int64_t> cut(0, m);
  std::vector<int64_t> cuts(rows.size() > 0 ? rows.size() - 1 : 0);
  for (int64_t& c : cuts) c = cut(rng);
  std::sort(cuts.begin(), cuts.end());
  cuts.push_back(m);
  int64_t previous = 0;
  for (size_t g = 0; g < rows.size(); ++g) {
    rows[g] = int32_t(cuts[g] - previous);
    previous = cuts[g];
  }
  return rows;
}

int64_t taken_rows(const WorkloadSpec& s) {
  if (s.groups == GroupForm::none || s.groups == GroupForm::k_offsets) return s.m * s.batch_count;
  int64_t rows = 0;
  for (int32_t r : s.group_rows) rows += r;
  return rows;
}

int64_t taken_k(const WorkloadSpec& s) {
  if (s.groups != GroupForm::k_offsets) return s.k;
  int64_t k = 0;
  for (int32_t r : s.group_rows) k += r;
  return k;
}

double flops(const WorkloadSpec& s) {
  const double rows = s.groups == GroupForm::k_offsets ? double(s.m) : double(taken_rows(s));
  return 2.0 * rows * double(s.n) * double(taken_k(s));
}

DType default_output_dtype(DType input_dtype) {
  if (is_fp8(input_dtype)) return DType::bf16;
  return input_dtype == DType::tf32 || input_dtype == DType::tf32x3 ? DType::fp32 : input_dtype;
}

DType c_dtype(const WorkloadSpec& spec) {
  return is_fp8(spec.output_dtype) ? DType::bf16 : spec.output_dtype;
}

float fp8_d_scale(int64_t k) {
  return std::exp2(std::round(std::log2(2.0 / std::sqrt(double(std::max<int64_t>(k, 0)) + 1.0))));
}

Workload::Workload(const WorkloadSpec& spec, bool on_gpu) : spec_(spec), on_gpu_(on_gpu) {}

double Workload::host_bytes(const WorkloadSpec& s) {
  // A matrix's batch entries are packed: ld * lines each (negative values count as nothing).
  const double entries = std::max(double(s.batch_count), 1.0);
  const GroupEntries in_memory = entries_of(s);
  const double c_d = std::max(double(in_memory.c_d), 1.0);
  const auto matrix = [&](Layout layout, double rows, double cols, double ld, DType dtype,
                          double count) {
    const double lines = layout == Layout::row_major ? rows : cols;
    const double length = layout == Layout::row_major ? cols : rows;
    const double stride = (ld > 0 ? ld : std::max(length, 1.0)) * lines;
    return std::max(stride, 0.0) * count * dtype_size(dtype);
  };
  const double m = double(s.m), n = double(s.n), k = double(s.k);
  const Layout c_layout =
      s.c_transposed ? (s.layout_c == Layout::row_major ? Layout::col_major : Layout::row_major)
                     : s.layout_c;
  double bytes =
      matrix(s.layout_a, m, k, double(s.lda), s.input_dtype, std::max(double(in_memory.a), 1.0)) +
      matrix(s.layout_b, k, n, double(s.ldb), s.input_dtype_b.value_or(s.input_dtype),
             std::max(double(in_memory.b), 1.0)) +
      matrix(c_layout, m, n, s.c_transposed ? 0.0 : double(s.ldc), c_dtype(s), c_d) +
      matrix(s.layout_c, m, n, double(s.ldc), s.output_dtype, c_d);
  if (s.bias) bytes += n * dtype_size(c_dtype(s)) * (s.groups == GroupForm::none ? 1 : entries);
  // Scales (scales.hpp: scale_count_a/b): B's per group, A's per group of the counts form.
  const bool grouped_rows = s.groups == GroupForm::offsets || s.groups == GroupForm::counts;
  const double scale_lines =
      m * (s.groups == GroupForm::counts ? entries : 1.0) + n * (grouped_rows ? entries : 1.0);
  if (s.scale_mode == ScaleMode::block) bytes += 4.0 * scale_lines * std::ceil(k / kScaleBlock);
  if (s.scale_mode == ScaleMode::channel) bytes += 4.0 * scale_lines;
  return bytes;
}

Status Workload::check_spec(const WorkloadSpec& s) {
  if (s.groups != GroupForm::none) {
    const std::string form(to_string(s.groups));
    if (int64_t(s.group_rows.size()) != s.batch_count) {
      return {StatusCode::invalid_argument, "group_rows: " + std::to_string(s.group_rows.size()) +
                                                " values for " + std::to_string(s.batch_count) +
                                                " groups"};
    }
    int64_t sum = 0;
    for (int32_t r : s.group_rows) {
      if (r < 0) return {StatusCode::invalid_argument, "group_rows: a group has fewer than 0 rows"};
      if (s.groups == GroupForm::counts && r > s.m) {
        return {StatusCode::invalid_argument, "group_rows: a group of " + std::to_string(r) +
                                                  " rows in batch entries of m = " +
                                                  std::to_string(s.m) + " (groups " + form + ")"};
      }
      sum += r;
    }
    if (s.groups == GroupForm::offsets && sum > s.m) {
      return {StatusCode::invalid_argument, "group_rows: the groups take " + std::to_string(sum) +
                                                " rows, more than m = " + std::to_string(s.m) +
                                                " (groups offsets)"};
    }
    if (s.groups == GroupForm::k_offsets && sum > s.k) {
      return {StatusCode::invalid_argument, "group_rows: the groups take " + std::to_string(sum) +
                                                " K values, more than k = " + std::to_string(s.k) +
                                                " (groups k_offsets)"};
    }
  }
  const double bytes = host_bytes(s), available = host_memory_bytes();
  if (available > 0 && bytes > 0.9 * available) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "the problem's A, B, C and D take %.3g GB of host memory; this machine has "
                  "%.3g GB",
                  bytes / 1e9, available / 1e9);
    return {StatusCode::out_of_memory, text};
  }
  const bool fp8_d = is_fp8(s.output_dtype);
  if (s.in_place && fp8_d) {
    return {StatusCode::invalid_argument,
            "workload: in_place needs C of D's type, and an fp8 D takes a bf16 C"};
  }
  // The problem over stand-in addresses 2^56 bytes apart (farther than any buffer that passed the
  // check above reaches), never read.
  const auto at = [](uintptr_t i) { return reinterpret_cast<void*>(i << 56); };
  Workload stand_in(s, false);
  const GemmProblem p = stand_in.problem_over(at(1), at(2), s.in_place ? at(4) : at(3), at(4),
                                              s.bias ? at(5) : nullptr,
                                              s.scale_mode != ScaleMode::none ? at(6) : nullptr,
                                              s.scale_mode != ScaleMode::none ? at(7) : nullptr,
                                              s.groups != GroupForm::none ? at(8) : nullptr,
                                              fp8_d ? at(9) : nullptr, fp8_d ? at(10) : nullptr);
  return validate(p);
}

Status Workload::create(const WorkloadSpec& spec, bool on_gpu, std::unique_ptr<Workload>* out) {
  if (Status st = check_spec(spec); !st.ok()) return st;
  try {
    return create_checked(spec, on_gpu, out);
  } catch (const std::bad_alloc&) {
    return {StatusCode::out_of_memory, "out of host memory for the problem's buffers"};
  }
}

Status Workload::create_checked(const WorkloadSpec& spec, bool on_gpu,
                                std::unique_ptr<Workload>* out) {
  std::unique_ptr<Workload> w(new Workload(spec, on_gpu));
  const WorkloadSpec& s = spec;
  auto elements = [&](Layout layout, int64_t rows, int64_t cols, int64_t ld, int64_t batches) {
    return storage_elements(layout, rows, cols, ld, batches, packed_stride(layout, rows, cols, ld));
  };
  const int64_t entries = w->entries();
  w->host_a_ = random_buffer(elements(s.layout_a, s.m, s.k, s.lda, entries_of(s).a), s.input_dtype,
                             s.seed * 4 + 0);
  w->host_b_ = random_buffer(elements(s.layout_b, s.k, s.n, s.ldb, entries_of(s).b), w->dtype_b(),
                             s.seed * 4 + 1);
  if (s.groups != GroupForm::none) w->host_sizes_ = group_sizes(s.groups, s.group_rows);
  if (s.scale_mode != ScaleMode::none) {
    // The counts the problem needs (scales.hpp), drawn from their own streams.
    GemmProblem shape;
    shape.m = s.m;
    shape.n = s.n;
    shape.k = s.k;
    shape.scales.mode = s.scale_mode;
    shape.batch_count = s.batch_count;
    shape.groups.form = s.groups;
    w->host_scale_a_ = random_scales(scale_count_a(shape), s.seed * 4 + 5);
    w->host_scale_b_ = random_scales(scale_count_b(shape), s.seed * 4 + 6);
  }
  if (s.c_transposed && s.in_place) {
    return {StatusCode::invalid_argument, "workload: in_place needs C in D's layout"};
  }
  w->host_c_ = random_buffer(elements(w->layout_of_c(), s.m, s.n, w->ld_of_c(), entries),
                             c_dtype(s), s.seed * 4 + 2);
  if (s.bias) {
    const int64_t biases = s.groups == GroupForm::none ? 1 : s.batch_count;
    w->host_bias_ = random_buffer(s.n * biases, c_dtype(s), s.seed * 4 + 3);
  }
  if (w->fp8_d()) {
    const float scale = fp8_d_scale(s.k);
    w->host_d_scale_.resize(sizeof(float));
    std::memcpy(w->host_d_scale_.data(), &scale, sizeof(float));
    w->host_amax_.resize(sizeof(float));  // poison_output fills it
  }
  // In place, D is a copy of C that the run overwrites; host_c_ keeps C for the reference.
  w->host_d_ = w->host_c_;
  w->host_d_.resize(elements(s.layout_c, s.m, s.n, s.ldc, entries) * dtype_size(s.output_dtype));
  if (on_gpu) {
    for (auto [host, dev] : {std::pair{&w->host_a_, &w->dev_a_},
                             {&w->host_b_, &w->dev_b_},
                             {&w->host_c_, &w->dev_c_},
                             {&w->host_d_, &w->dev_d_},
                             {&w->host_bias_, &w->dev_bias_},
                             {&w->host_scale_a_, &w->dev_scale_a_},
                             {&w->host_scale_b_, &w->dev_scale_b_},
                             {&w->host_sizes_, &w->dev_sizes_},
                             {&w->host_d_scale_, &w->dev_d_scale_},
                             {&w->host_amax_, &w->dev_amax_}}) {
      if (Status st = to_device(*host, dev); !st.ok()) return st;
    }
  }
  if (Status st = w->poison_output(); !st.ok()) return st;
  *out = std::move(w);
  return Status::success();
}

GemmProblem Workload::problem_over(const void* a, const void* b, const void* c, void* d,
                                   const void* bias, const void* scale_a, const void* scale_b,
                                   const void* sizes, const void* d_scale, void* amax) const {
  const WorkloadSpec& s = spec_;
  GemmProblem p;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.batch_count = s.batch_count;
  p.a = {a, s.input_dtype, s.layout_a, s.lda, packed_stride(s.layout_a, s.m, s.k, s.lda)};
  p.b = {b, dtype_b(), s.layout_b, s.ldb, packed_stride(s.layout_b, s.k, s.n, s.ldb)};
  p.scales = {s.scale_mode, static_cast<const float*>(scale_a), static_cast<const float*>(scale_b)};
  p.fast_accumulation = s.fast_accumulation;
  const Layout layout_c = layout_of_c();
  const int64_t ldc = ld_of_c();
  p.c = {c, c_dtype(s), layout_c, ldc, packed_stride(layout_c, s.m, s.n, ldc)};
  p.d = {d, s.output_dtype, s.layout_c, s.ldc, packed_stride(s.layout_c, s.m, s.n, s.ldc)};
  p.d.scale = static_cast<const float*>(d_scale);
  p.d.amax = static_cast<float*>(amax);
  // One entry in memory (one batch entry, or a matrix the groups share): no batch stride.
  const GroupEntries in_memory = entries_of(s);
  if (in_memory.a == 1) p.a.batch_stride = 0;
  if (in_memory.b == 1) p.b.batch_stride = 0;
  if (in_memory.c_d == 1) p.c.batch_stride = p.d.batch_stride = 0;
  if (s.groups != GroupForm::none) p.groups = {s.groups, static_cast<const int32_t*>(sizes)};
  p.epilogue.alpha = s.alpha;
  p.epilogue.beta = s.beta;
  p.epilogue.bias = bias;
  p.epilogue.bias_dtype = c_dtype(s);
  if (s.groups != GroupForm::none) p.epilogue.bias_batch_stride = s.n;  // a bias per group
  p.epilogue.activation = s.activation;
  p.epilogue.leaky_relu_slope = s.leaky_relu_slope;
  return p;
}

GemmProblem Workload::problem() const {
  const bool in_place = spec_.in_place;
  if (!on_gpu_) {
    auto* d = const_cast<uint8_t*>(host_d_.data());
    return problem_over(host_a_.data(), host_b_.data(), in_place ? d : host_c_.data(), d,
                        spec_.bias ? host_bias_.data() : nullptr, scale_or_null(host_scale_a_),
                        scale_or_null(host_scale_b_), scale_or_null(host_sizes_),
                        scale_or_null(host_d_scale_), const_cast<void*>(scale_or_null(host_amax_)));
  }
  void* d = dev_d_.get();
  return problem_over(dev_a_.get(), dev_b_.get(), in_place ? d : dev_c_.get(), d,
                      spec_.bias ? dev_bias_.get() : nullptr, dev_scale_a_.get(),
                      dev_scale_b_.get(), dev_sizes_.get(), dev_d_scale_.get(), dev_amax_.get());
}

Layout Workload::layout_of_c() const {
  const Layout d = spec_.layout_c;
  if (!spec_.c_transposed) return d;
  return d == Layout::row_major ? Layout::col_major : Layout::row_major;
}

Status Workload::set_group_rows(const std::vector<int32_t>& rows) {
  WorkloadSpec changed = spec_;
  changed.group_rows = rows;
  if (spec_.groups == GroupForm::none) {
    return {StatusCode::invalid_argument, "set_group_rows: the workload has no groups"};
  }
  if (Status s = check_spec(changed); !s.ok()) return s;
  spec_ = changed;
  std::vector<uint8_t> sizes = group_sizes(spec_.groups, rows);
  std::copy(sizes.begin(), sizes.end(), host_sizes_.begin());
  if (!on_gpu_) return Status::success();
  return copy_to_device(dev_sizes_.get(), host_sizes_.data(), host_sizes_.size());
}

Status Workload::poison_output() {
  // Out of place: NaN everywhere, so unwritten elements fail the check. In place D is also an
  // input, so it is restored to C instead.
  std::vector<uint8_t> fill = spec_.in_place ? host_c_ : host_d_;
  if (!spec_.in_place) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const int64_t count = int64_t(fill.size()) / dtype_size(spec_.output_dtype);
    for (int64_t i = 0; i < count; ++i) store_from_float(fill.data(), spec_.output_dtype, i, nan);
  }
  if (fp8_d()) {  // and the amax
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(host_amax_.data(), &nan, sizeof(float));
  }
  if (!on_gpu_) {
    // Copy into the existing buffer: problem() handed out its address.
    std::copy(fill.begin(), fill.end(), host_d_.begin());
    return Status::success();
  }
  if (fp8_d()) {
    if (Status st = copy_to_device(dev_amax_.get(), host_amax_.data(), host_amax_.size());
        !st.ok()) {
      return st;
    }
  }
  return copy_to_device(dev_d_.get(), fill.data(), fill.size());
}

float Workload::amax() const {
  float amax = std::numeric_limits<float>::quiet_NaN();
  if (fp8_d()) std::memcpy(&amax, host_amax_.data(), sizeof(float));
  return amax;
}

Status Workload::fetch_output() {
  if (!on_gpu_) return Status::success();
  if (fp8_d()) {
    if (Status st = copy_to_host(host_amax_.data(), dev_amax_.get(), host_amax_.size()); !st.ok())
      return st;
  }
  return copy_to_host(host_d_.data(), dev_d_.get(), host_d_.size());
}

double Workload::check(double max_reference_flops, int64_t* rows_checked,
                       double* amax_error) const {
  if (spec_.groups != GroupForm::none) return check_grouped(max_reference_flops, rows_checked);
  // The reference reads the inputs as drawn (host_c_ is never written) and D as fetched.
  GemmProblem host = problem_over(
      host_a_.data(), host_b_.data(), host_c_.data(), const_cast<uint8_t*>(host_d_.data()),
      spec_.bias ? host_bias_.data() : nullptr, scale_or_null(host_scale_a_),
      scale_or_null(host_scale_b_), nullptr, scale_or_null(host_d_scale_), nullptr);
  // Every element must have been written: scan all of D for NaN/inf first.
  const std::vector<double> all = reference::read_output(host);
  for (double v : all)
    if (!std::isfinite(v)) {
      if (rows_checked) *rows_checked = 0;
      return std::numeric_limits<double>::infinity();
    }
  std::vector<int64_t> rows;
  const double flops =
      2.0 * double(spec_.m) * double(spec_.n) * double(spec_.k) * double(spec_.batch_count);
  if (flops > max_reference_flops && spec_.m > 1) {
    const int64_t want =
        std::max<int64_t>(1, int64_t(double(spec_.m) * max_reference_flops / flops));
    std::vector<int64_t> all_rows(spec_.m);
    std::iota(all_rows.begin(), all_rows.end(), 0);
    std::mt19937_64 rng(spec_.seed + 99);
    std::shuffle(all_rows.begin(), all_rows.end(), rng);
    rows.assign(all_rows.begin(), all_rows.begin() + std::min(want, spec_.m));
    std::sort(rows.begin(), rows.end());
  }
  if (rows_checked) *rows_checked = rows.empty() ? spec_.m : int64_t(rows.size());
  const std::vector<double> ref = reference::gemm(host, rows);
  const std::vector<double> got = rows.empty() ? all : reference::read_output(host, rows);
  const double error = reference::relative_error(got, ref);
  if (!fp8_d()) return error;
  // The amax against the reference's largest |value| before D's scale: equal up to fp32
  // accumulation with every row checked; with a sample of rows, no smaller than its largest.
  double largest = 0.0;
  for (double v : ref) largest = std::max(largest, std::fabs(v));
  largest /= double(*host.d.scale);
  const double amax = this->amax();
  double off =
      largest == 0.0
          ? std::fabs(amax)
          : (rows.empty() ? std::fabs(amax - largest) : std::max(0.0, largest - amax)) / largest;
  if (std::isnan(off)) off = std::numeric_limits<double>::infinity();
  if (amax_error) *amax_error = off;
  return off <= amax_tolerance(spec_.fast_accumulation) ? error
                                                        : std::numeric_limits<double>::infinity();
}

// Every taken row of D must hold a finite value and every other row its NaN poison; the taken
// rows (a random sample of them, where the reference would take more than max_reference_flops)
// must match the float64 reference.
double Workload::check_grouped(double max_reference_flops, int64_t* rows_checked) const {
  const WorkloadSpec& s = spec_;
  std::vector<int32_t> sizes(s.group_rows.size());
  std::memcpy(sizes.data(), host_sizes_.data(), host_sizes_.size());
  GemmProblem host =
      problem_over(host_a_.data(), host_b_.data(), host_c_.data(),
                   const_cast<uint8_t*>(host_d_.data()), s.bias ? host_bias_.data() : nullptr,
                   scale_or_null(host_scale_a_), scale_or_null(host_scale_b_), sizes.data());
  const std::vector<double> got = reference::read_output(host);
  // (entry, row) of every taken row, and the check that the others were left alone
  std::vector<std::pair<int64_t, int64_t>> taken;
  int64_t begin = 0;
  for (size_t g = 0; g < s.group_rows.size(); ++g) {
    const int64_t entry = s.groups == GroupForm::offsets ? 0 : int64_t(g);
    const int64_t first = s.groups == GroupForm::offsets ? begin : 0;
    const int64_t rows = s.groups == GroupForm::k_offsets ? s.m : s.group_rows[g];
    for (int64_t r = first; r < first + rows; ++r) taken.push_back({entry, r});
    begin += s.group_rows[g];
  }
  std::vector<char> is_taken(size_t(entries() * s.m), 0);
  for (auto [entry, row] : taken) is_taken[size_t(entry * s.m + row)] = 1;
  for (size_t r = 0; r < is_taken.size(); ++r)
    for (int64_t j = 0; j < s.n; ++j) {
      const double v = got[r * size_t(s.n) + size_t(j)];
      if (is_taken[r] ? !std::isfinite(v) : !std::isnan(v)) {
        if (rows_checked) *rows_checked = 0;
        return std::numeric_limits<double>::infinity();
      }
    }
  const double flops = 2.0 * double(taken.size()) * double(s.n) * double(s.k);
  std::vector<int64_t> rows;  // the reference's rows of every entry (all if empty)
  if (flops > max_reference_flops && s.m > 1) {
    std::vector<int64_t> all(s.m);
    std::iota(all.begin(), all.end(), 0);
    std::mt19937_64 rng(s.seed + 99);
    std::shuffle(all.begin(), all.end(), rng);
    rows.assign(all.begin(),
                all.begin() + std::clamp<int64_t>(
                                  int64_t(double(s.m) * max_reference_flops / flops), 1, s.m));
  }
  const std::vector<double> ref = reference::grouped_gemm(host, sizes, rows);
  std::vector<double> x, y;
  for (auto [entry, row] : taken) {
    const size_t at = size_t(entry * s.m + row) * size_t(s.n);
    if (std::isnan(ref[at])) continue;  // not sampled
    x.insert(x.end(), got.begin() + int64_t(at), got.begin() + int64_t(at) + s.n);
    y.insert(y.end(), ref.begin() + int64_t(at), ref.begin() + int64_t(at) + s.n);
  }
  if (rows_checked) *rows_checked = int64_t(x.size()) / std::max<int64_t>(s.n, 1);
  return reference::relative_error(x, y);
}

double Workload::min_bytes() const {
  const WorkloadSpec& s = spec_;
  const double in_a = dtype_size(s.input_dtype), in_b = dtype_size(dtype_b()),
               out = dtype_size(s.output_dtype), c = dtype_size(c_dtype(s));
  if (s.groups == GroupForm::k_offsets) {  // A and B read once, a D per group
    const double k = double(taken_k(s));
    return double(s.m) * k * in_a + k * s.n * in_b +
           double(s.batch_count) * s.m * s.n * (out + (s.beta != 0.0f ? c : 0.0));
  }
  if (s.groups != GroupForm::none) {
    const double rows = double(taken_rows(s));
    return rows * s.k * in_a + double(s.batch_count) * s.k * s.n * in_b +
           rows * s.n * (out + (s.beta != 0.0f ? c : 0.0));
  }
  double bytes = double(s.batch_count) *
                 (double(s.m) * s.k * in_a + double(s.k) * s.n * in_b + double(s.m) * s.n * out);
  if (s.beta != 0.0f) bytes += double(s.batch_count) * double(s.m) * s.n * c;
  return bytes;
}

}  // namespace tilegemm::harness
