// tilegemm._tilegemm: the Python module's native half. It reads arrays through DLPack (nanobind's
// ndarray: torch, NumPy, CuPy and JAX alike), maps them onto a GemmProblem (array_problem.hpp),
// and calls gemm(), plan() or tune() with the GIL released. Allocation of the output and of the
// workspace stays with the array library, in Python (tilegemm/__init__.py).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "array_problem.hpp"
#include "schedule/tile_order.hpp"
#include "tilegemm/tilegemm.hpp"

#if TILEGEMM_PY_WITH_CUDA
#include <cuda_runtime.h>

#include "kernels/workspace.hpp"
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace tilegemm::python {
namespace {

using Array = nb::ndarray<nb::ro>;

nb::dict dict_of(std::initializer_list<std::pair<const char*, nb::object>> items) {
  nb::dict d;
  for (const auto& [key, value] : items) d[key] = value;
  return d;
}

// DLPack's codes of the fp8 types (DLPack 1.1's kDLFloat8_e4m3fn and kDLFloat8_e5m2), which
// nanobind's dtype_code does not name: tilegemm's fp8_e4m3 is OCP's E4M3 ("fn": finite, NaN at
// 0x7f), as torch.float8_e4m3fn.
constexpr uint8_t kDLPackFloat8E4M3Fn = 10, kDLPackFloat8E5M2 = 12;

DType dtype_of(const Array& array, const char* name) {
  const nb::dlpack::dtype t = array.dtype();
  if (t.lanes == 1) {
    if (t.code == uint8_t(nb::dlpack::dtype_code::Float) && t.bits == 32) return DType::fp32;
    if (t.code == uint8_t(nb::dlpack::dtype_code::Float) && t.bits == 16) return DType::fp16;
    if (t.code == uint8_t(nb::dlpack::dtype_code::Bfloat) && t.bits == 16) return DType::bf16;
    if (t.code == kDLPackFloat8E4M3Fn && t.bits == 8) return DType::fp8_e4m3;
    if (t.code == kDLPackFloat8E5M2 && t.bits == 8) return DType::fp8_e5m2;
  }
  throw nb::type_error((std::string(name) + ": its dtype (DLPack code " + std::to_string(t.code) +
                        ", " + std::to_string(t.bits) +
                        " bits) is not taken; tilegemm takes float32, float16, bfloat16, and "
                        "float8_e4m3fn and float8_e5m2 in scaled_mm")
                           .c_str());
}

// Where an array lies, its shape and strides; its dtype is the caller's to read.
ArrayRef place_of(const Array& array, const char* name) {
  ArrayRef ref;
  ref.name = name;
  const int device = array.device_type();
  if (device == nb::device::cuda::value) {
    ref.on_gpu = true;
  } else if (device != nb::device::cpu::value) {
    throw nb::value_error((std::string(name) + ": its memory (DLPack device type " +
                           std::to_string(device) + ") is neither host nor CUDA device memory")
                              .c_str());
  }
  ref.device_id = array.device_id();
  ref.data = const_cast<void*>(array.data());
  for (size_t i = 0; i < array.ndim(); ++i) {
    ref.shape.push_back(int64_t(array.shape(i)));
    ref.strides.push_back(int64_t(array.stride(i)));
  }
  return ref;
}

ArrayRef array_ref(const Array& array, const char* name) {
  ArrayRef ref = place_of(array, name);
  ref.dtype = dtype_of(array, name);
  return ref;
}

// A grouped GEMM's sizes (offs or counts): int32 values.
ArrayRef sizes_ref(const Array& array, const char* name) {
  const nb::dlpack::dtype t = array.dtype();
  if (t.lanes != 1 || t.code != uint8_t(nb::dlpack::dtype_code::Int) || t.bits != 32) {
    throw nb::type_error((std::string(name) + ": its dtype (DLPack code " + std::to_string(t.code) +
                          ", " + std::to_string(t.bits) + " bits) is not int32")
                             .c_str());
  }
  return place_of(array, name);
}

// A Status that is not ok, as the Python exception a user of torch would expect.
[[noreturn]] void raise(const Status& s) {
  switch (s.code) {
    case StatusCode::invalid_argument:
      throw nb::value_error(s.message.c_str());
    case StatusCode::not_supported:
      throw nb::value_error(("not supported: " + s.message).c_str());
    case StatusCode::out_of_memory:
      throw std::bad_alloc();
    default:
      throw std::runtime_error(s.message);
  }
}

Activation parse_activation(const std::string& text) {
  if (text == "none") return Activation::none;
  if (text == "relu") return Activation::relu;
  if (text == "leaky_relu") return Activation::leaky_relu;
  if (text == "gelu") return Activation::gelu;
  if (text == "silu") return Activation::silu;
  throw nb::value_error(
      ("activation: '" + text + "' is not one of None, 'relu', 'leaky_relu', 'gelu' (tanh), 'silu'")
          .c_str());
}

// scaled_mm's arrays beyond matmul's (array_problem.hpp: MatmulArgs).
struct Fp8Arrays {
  std::optional<Array> scale_a, scale_b, scale_result, amax;
  bool fast_accumulation = false;
};

// Everything a call needs, read from its Python arguments.
struct Call {
  GemmProblem problem;
  GemmOptions options;
  int device = -1;     // the arrays' CUDA device (-1: host memory)
  bool empty = false;  // no batch entry: nothing to compute
};

Call make_call(const Array& a, const Array& b, const Array& out, const std::optional<Array>& c,
               const std::optional<Array>& bias, double alpha, double beta,
               const std::string& activation, double slope, const std::string& precision,
               const std::string& config, const std::string& kernel, const std::string& backend,
               const std::string& autotune, uintptr_t stream, GroupForm groups = GroupForm::none,
               const Array* sizes = nullptr, const Fp8Arrays* fp8 = nullptr) {
  MatmulArgs args;
  args.a = array_ref(a, "a");
  args.b = array_ref(b, "b");
  args.out = array_ref(out, "out");
  if (c) args.c = array_ref(*c, "c");
  if (bias) args.bias = array_ref(*bias, "bias");
  args.alpha = float(alpha);
  args.beta = float(beta);
  args.activation = parse_activation(activation);
  args.leaky_relu_slope = float(slope);
  args.precision = precision;
  args.groups = groups;
  if (sizes) args.sizes = sizes_ref(*sizes, groups == GroupForm::offsets ? "offs" : "counts");
  if (fp8) {
    if (fp8->scale_a) args.scale_a = array_ref(*fp8->scale_a, "scale_a");
    if (fp8->scale_b) args.scale_b = array_ref(*fp8->scale_b, "scale_b");
    if (fp8->scale_result) args.scale_result = array_ref(*fp8->scale_result, "scale_result");
    if (fp8->amax) args.amax = array_ref(*fp8->amax, "amax");
    args.fast_accumulation = fp8->fast_accumulation;
  }
  Call call;
  if (Status s = make_problem(args, &call.problem); !s.ok()) raise(s);
  call.empty = call.problem.batch_count == 0;
  call.problem.stream = reinterpret_cast<void*>(stream);
  const std::optional<Backend> chosen = parse_backend(backend);
  if (!chosen) {
    throw nb::value_error(("backend: '" + backend + "' is not 'auto', 'gpu' or 'cpu'").c_str());
  }
  call.options.backend = *chosen;
  if (args.a.on_gpu && *chosen == Backend::cpu) {
    throw nb::value_error("backend: 'cpu' runs on host arrays; a is in CUDA device memory");
  }
  if (!args.a.on_gpu && *chosen == Backend::gpu) {
    throw nb::value_error("backend: 'gpu' runs on CUDA device arrays; a is in host memory");
  }
  if (call.options.backend == Backend::automatic) {
    call.options.backend = args.a.on_gpu ? Backend::gpu : Backend::cpu;
  }
  call.device = args.a.on_gpu ? args.a.device_id : -1;
  call.options.kernel = kernel;
  if (!config.empty()) {
    std::string error;
    call.options.config = parse_kernel_config(config, &error);
    if (!call.options.config) throw nb::value_error(("config: " + error).c_str());
  }
  if (!autotune.empty()) {
    call.options.autotune = parse_autotune_policy(autotune);
    if (!call.options.autotune) {
      throw nb::value_error(
          ("autotune: '" + autotune + "' is not None, 'off', 'on-miss' or 'always'").c_str());
    }
  }
  return call;
}

// Makes the arrays' device current for the call, and restores the caller's after it.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
#if TILEGEMM_PY_WITH_CUDA
    if (device >= 0 && cudaGetDevice(&previous_) == cudaSuccess && previous_ != device) {
      if (cudaSetDevice(device) != cudaSuccess) {
        cudaGetLastError();
        throw std::runtime_error("cudaSetDevice(" + std::to_string(device) + ") failed");
      }
      restore_ = true;
    }
#else
    (void)device;
#endif
  }
  ~DeviceScope() {
#if TILEGEMM_PY_WITH_CUDA
    if (restore_) cudaSetDevice(previous_);
#endif
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
  bool restore_ = false;
};

// Whether work enqueued on `stream` is being captured into a CUDA graph (the library's own
// answer, kernels/workspace.hpp; a build without CUDA has no graphs).
bool capturing(void* stream) {
#if TILEGEMM_PY_WITH_CUDA
  return gpu::stream_is_capturing(stream);
#else
  (void)stream;
  return false;
#endif
}

nb::dict report_dict(const GemmReport& r) {
  nb::dict d;
  d["backend"] = std::string(to_string(r.backend));
  d["kernel"] = r.kernel;
  d["config"] = to_string(r.config);
  d["config_source"] = r.config_source;
  d["tuning_key"] = r.tuning_key;
  d["kernel_note"] = r.kernel_note;
  d["aligned_copies"] = r.aligned_copies;
  d["workspace_note"] = r.workspace_note;
  return d;
}

// While `call`'s stream captures a CUDA graph: a workspace of the size `size_of` gives, from the
// caller's allocator, set in call.options. Returns the allocation (None when there is none),
// which must live until the call is enqueued.
template <class SizeOf>
nb::object capture_workspace(Call& call, nb::object workspace_alloc, SizeOf&& size_of) {
  if (call.device < 0 || workspace_alloc.is_none() || !capturing(call.problem.stream)) {
    return nb::none();
  }
  size_t bytes = 0;
  if (Status s = size_of(&bytes); !s.ok()) raise(s);
  if (bytes == 0) return nb::none();
  nb::object workspace = workspace_alloc(bytes);
  const Array buffer = nb::cast<Array>(workspace);
  call.options.workspace = const_cast<void*>(buffer.data());
  call.options.workspace_bytes = bytes;
  return workspace;
}

// Runs a call: gemm() with the GIL released, a workspace from `workspace_alloc` while the stream
// captures. Returns the report as a dict when asked for.
nb::object execute(Call& call, nb::object workspace_alloc, bool want_report) {
  if (call.empty) return nb::none();
  DeviceScope scope(call.device);
  // While the stream captures a CUDA graph, the workspace comes from the caller's allocator
  // (torch's caching allocator, CuPy's pool): the call may allocate nothing of its own then, and
  // the allocator keeps the memory for the graph's replays. Outside a capture the library's pool
  // serves, which costs no query per call.
  const nb::object workspace = capture_workspace(call, workspace_alloc, [&](size_t* bytes) {
    return workspace_size(call.problem, call.options, bytes);
  });
  GemmReport report;
  Status status;
  {
    nb::gil_scoped_release release;
    status = gemm(call.problem, call.options, want_report ? &report : nullptr);
  }
  if (!status.ok()) raise(status);
  return want_report ? nb::object(report_dict(report)) : nb::none();
}

nb::object run(const Array& a, const Array& b, const Array& out, const std::optional<Array>& c,
               const std::optional<Array>& bias, double alpha, double beta,
               const std::string& activation, double slope, const std::string& precision,
               const std::string& config, const std::string& kernel, const std::string& backend,
               const std::string& autotune, uintptr_t stream, nb::object workspace_alloc,
               bool want_report) {
  Call call = make_call(a, b, out, c, bias, alpha, beta, activation, slope, precision, config,
                        kernel, backend, autotune, stream);
  return execute(call, workspace_alloc, want_report);
}

// An fp8 product with scales (tilegemm.scaled_mm, as torch._scaled_mm): the mode from the scales'
// shapes, None for both scales being no scales.
void scaled(const Array& a, const Array& b, const Array& out, const std::optional<Array>& scale_a,
            const std::optional<Array>& scale_b, const std::optional<Array>& bias,
            const std::optional<Array>& scale_result, const std::optional<Array>& amax,
            bool fast_accumulation, const std::string& config, const std::string& kernel,
            const std::string& backend, uintptr_t stream, nb::object workspace_alloc) {
  const Fp8Arrays fp8{scale_a, scale_b, scale_result, amax, fast_accumulation};
  Call call = make_call(a, b, out, std::nullopt, bias, 1.0, 0.0, "none", 0.01, "ieee", config,
                        kernel, backend, "", stream, GroupForm::none, nullptr, &fp8);
  execute(call, workspace_alloc, false);
}

// A grouped GEMM (tilegemm.grouped_mm): `form` is "offsets", "counts" or "k_offsets", `sizes` its
// int32 values.
nb::object grouped(const Array& a, const Array& b, const Array& out, const Array& sizes,
                   const std::string& form, const std::optional<Array>& bias, double alpha,
                   const std::string& activation, double slope, const std::string& config,
                   const std::string& kernel, const std::string& backend, uintptr_t stream,
                   nb::object workspace_alloc) {
  const std::optional<GroupForm> groups = parse_group_form(form);
  if (!groups || *groups == GroupForm::none || *groups == GroupForm::ptr_array) {
    throw nb::value_error(
        ("form: '" + form + "' is not 'offsets', 'counts' or 'k_offsets'").c_str());
  }
  Call call = make_call(a, b, out, std::nullopt, bias, alpha, 0.0, activation, slope, "ieee",
                        config, kernel, backend, "", stream, *groups, &sizes);
  return execute(call, workspace_alloc, false);
}

// Problems of their own (tilegemm.gemm_grouped): each a call of its own, read as matmul's are,
// run together by gemm_grouped() with the first one's options; a workspace from
// `workspace_alloc` while the stream captures, as execute() takes one.
void run_grouped(const std::vector<Array>& a, const std::vector<Array>& b,
                 const std::vector<Array>& out, const std::vector<std::optional<Array>>& c,
                 const std::vector<std::optional<Array>>& bias, const std::vector<double>& alpha,
                 const std::vector<double>& beta, const std::string& activation, double slope,
                 const std::string& config, const std::string& kernel, const std::string& backend,
                 uintptr_t stream, nb::object workspace_alloc) {
  std::vector<GemmProblem> problems;
  Call first;
  for (size_t i = 0; i < a.size(); ++i) {
    try {
      Call call = make_call(a[i], b[i], out[i], c[i], bias[i], alpha[i], beta[i], activation, slope,
                            "ieee", config, kernel, backend, "", stream);
      if (i == 0) first = call;
      problems.push_back(call.problem);
    } catch (const nb::builtin_exception& e) {
      throw nb::builtin_exception(e.type(),
                                  ("problems[" + std::to_string(i) + "]: " + e.what()).c_str());
    }
  }
  if (problems.empty()) return;
  DeviceScope scope(first.device);
  const nb::object workspace = capture_workspace(first, workspace_alloc, [&](size_t* bytes) {
    return grouped_workspace_size(problems, first.options, bytes);
  });
  Status status;
  {
    nb::gil_scoped_release release;
    status = gemm_grouped(problems, first.options);
  }
  if (!status.ok()) raise(status);
}

nb::dict plan_call(const Array& a, const Array& b, const Array& out, const std::optional<Array>& c,
                   const std::optional<Array>& bias, double alpha, double beta,
                   const std::string& activation, double slope, const std::string& precision,
                   const std::string& config, const std::string& kernel, const std::string& backend,
                   const std::string& autotune, uintptr_t stream) {
  Call call = make_call(a, b, out, c, bias, alpha, beta, activation, slope, precision, config,
                        kernel, backend, autotune, stream);
  if (call.empty) throw nb::value_error("out: no batch entry; there is nothing to plan");
  DeviceScope scope(call.device);
  GemmReport report;
  if (Status s = plan(call.problem, call.options, &report); !s.ok()) raise(s);
  size_t bytes = 0;
  if (Status s = workspace_size(call.problem, call.options, &bytes); !s.ok()) raise(s);
  nb::dict d = report_dict(report);
  d["workspace_bytes"] = bytes;
  d["problem"] = dict_of({{"m", nb::cast(call.problem.m)},
                          {"n", nb::cast(call.problem.n)},
                          {"k", nb::cast(call.problem.k)},
                          {"batch_count", nb::cast(call.problem.batch_count)},
                          {"a", nb::cast(std::string(to_string(call.problem.a.layout)))},
                          {"b", nb::cast(std::string(to_string(call.problem.b.layout)))},
                          {"lda", nb::cast(call.problem.a.ld)},
                          {"ldb", nb::cast(call.problem.b.ld)},
                          {"ldd", nb::cast(call.problem.d.ld)},
                          {"dtype", nb::cast(std::string(to_string(call.problem.a.dtype)))}});
  return d;
}

nb::dict tune_call(const Array& a, const Array& b, const Array& out, const std::optional<Array>& c,
                   const std::optional<Array>& bias, double alpha, double beta,
                   const std::string& activation, double slope, const std::string& precision,
                   const std::string& kernel, uintptr_t stream) {
  Call call = make_call(a, b, out, c, bias, alpha, beta, activation, slope, precision, "", kernel,
                        "gpu", "", stream);
  if (call.empty) throw nb::value_error("out: no batch entry; there is nothing to tune");
  DeviceScope scope(call.device);
  TuneResult result;
  Status status;
  {
    nb::gil_scoped_release release;
    status = tune(call.problem, call.options, &result);
  }
  if (!status.ok()) raise(status);
  nb::list candidates;
  for (const TuneCandidate& t : result.candidates) {
    candidates.append(dict_of({{"kernel", nb::cast(t.kernel)},
                               {"config", nb::cast(to_string(t.config))},
                               {"ms", nb::cast(t.ms)},
                               {"tflops", nb::cast(t.tflops)},
                               {"dropped", nb::cast(t.dropped)},
                               {"heuristic", nb::cast(t.heuristic)}}));
  }
  nb::list pruned;
  for (const std::string& p : result.pruned) pruned.append(p);
  return dict_of({{"tuning_key", nb::cast(result.tuning_key)},
                  {"candidates", nb::cast(candidates)},
                  {"pruned", nb::cast(pruned)},
                  {"seconds", nb::cast(result.seconds)},
                  {"cache_file", nb::cast(result.cache_file)}});
}

// The seeds' walkthrough of the pid -> tile mapping for one program (schedule/tile_order.hpp),
// and the launch order of every tile when there are few enough to show.
nb::dict explain(int64_t m, int64_t n, int64_t k, const std::string& config_text,
                 std::optional<int64_t> pid) {
  std::string error;
  const std::optional<KernelConfig> config = parse_kernel_config(config_text, &error);
  if (!config) throw nb::value_error(("config: " + error).c_str());
  if (m < 1 || n < 1 || k < 0) {
    throw nb::value_error("m, n, k: M and N must be >= 1 and K >= 0");
  }
  const int64_t bm = config->block_m, bn = config->block_n;
  const int64_t num_pid_m = cdiv(m, bm), num_pid_n = cdiv(n, bn);
  if (num_pid_m > (int64_t(1) << 40) / num_pid_n) throw nb::value_error("m, n: too many tiles");
  const int64_t programs = num_pid_m * num_pid_n;
  const int64_t group = std::max<int64_t>(1, std::min<int64_t>(config->group_size_m, num_pid_m));
  nb::dict d = dict_of({{"config", nb::cast(to_string(*config))},
                        {"BLOCK_SIZE_M", nb::cast(bm)},
                        {"BLOCK_SIZE_N", nb::cast(bn)},
                        {"BLOCK_SIZE_K", nb::cast(config->block_k)},
                        {"GROUP_SIZE_M", nb::cast(config->group_size_m)},
                        {"num_pid_m", nb::cast(num_pid_m)},
                        {"num_pid_n", nb::cast(num_pid_n)},
                        {"num_pid_in_group", nb::cast(group * num_pid_n)},
                        {"programs", nb::cast(programs)},
                        {"k_iterations", nb::cast(cdiv(k, int64_t(config->block_k)))}});
  if (pid) {
    if (*pid < 0 || *pid >= programs) {
      throw nb::value_error(("pid: " + std::to_string(*pid) + " is outside the grid's " +
                             std::to_string(programs) + " programs")
                                .c_str());
    }
    const GroupedOrderSteps s = grouped_tile_order_steps(*pid, m, n, bm, bn, group);
    const int64_t row_end = std::min(m, (s.pid_m + 1) * bm),
                  col_end = std::min(n, (s.pid_n + 1) * bn);
    d["program"] =
        dict_of({{"pid", nb::cast(*pid)},
                 {"group_id", nb::cast(s.group_id)},
                 {"first_pid_m", nb::cast(s.first_pid_m)},
                 {"group_size_m", nb::cast(s.group_size_m)},
                 {"pid_m", nb::cast(s.pid_m)},
                 {"pid_n", nb::cast(s.pid_n)},
                 {"rows", nb::cast(nb::make_tuple(s.pid_m * bm, row_end))},
                 {"cols", nb::cast(nb::make_tuple(s.pid_n * bn, col_end))},
                 {"masked", nb::cast(row_end - s.pid_m * bm < bm || col_end - s.pid_n * bn < bn)}});
  }
  if (programs <= 4096) {
    // order[pid_m][pid_n]: the pid that computes that tile (the seeds' drawing).
    std::vector<int64_t> order(static_cast<size_t>(programs));
    for (int64_t p = 0; p < programs; ++p) {
      const TileCoord t = grouped_tile_order(p, m, n, bm, bn, group);
      order[size_t(t.pid_m * num_pid_n + t.pid_n)] = p;
    }
    nb::list rows;
    for (int64_t i = 0; i < num_pid_m; ++i) {
      nb::list row;
      for (int64_t j = 0; j < num_pid_n; ++j) row.append(order[size_t(i * num_pid_n + j)]);
      rows.append(row);
    }
    d["order"] = rows;
  }
  return d;
}

nb::list kernels() {
  nb::list list;
  for (const KernelInfo& k : available_kernels()) {
    nb::list configs, dtypes;
    for (const KernelConfig& c : k.configs) configs.append(to_string(c));
    for (DType t : k.input_dtypes) dtypes.append(std::string(to_string(t)));
    list.append(dict_of({{"name", nb::cast(k.name)},
                         {"description", nb::cast(k.description)},
                         {"default_config", nb::cast(to_string(k.default_config))},
                         {"configs", nb::cast(configs)},
                         {"input_dtypes", nb::cast(dtypes)}}));
  }
  return list;
}

nb::list device_list() {
  nb::list list;
  for (const DeviceInfo& d : devices()) {
    list.append(
        dict_of({{"index", nb::cast(d.index)},
                 {"name", nb::cast(d.name)},
                 {"sm_count", nb::cast(d.sm_count)},
                 {"compute_capability",
                  nb::cast(nb::make_tuple(d.compute_capability_major, d.compute_capability_minor))},
                 {"l2_bytes", nb::cast(d.l2_bytes)},
                 {"global_memory_bytes", nb::cast(d.global_memory_bytes)}}));
  }
  return list;
}

void synchronize(uintptr_t stream) {
#if TILEGEMM_PY_WITH_CUDA
  nb::gil_scoped_release release;
  if (cudaError_t e = cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream));
      e != cudaSuccess) {
    throw std::runtime_error(std::string("cudaStreamSynchronize: ") + cudaGetErrorString(e));
  }
#else
  (void)stream;
#endif
}

}  // namespace
}  // namespace tilegemm::python

NB_MODULE(_tilegemm, m) {
  using namespace tilegemm::python;
  m.doc() = "tilegemm's native module; use the tilegemm package's functions";
  m.def("run", &run, "a"_a, "b"_a, "out"_a, "c"_a.none(), "bias"_a.none(), "alpha"_a, "beta"_a,
        "activation"_a, "leaky_relu_slope"_a, "input_precision"_a, "config"_a, "kernel"_a,
        "backend"_a, "autotune"_a, "stream"_a, "workspace_alloc"_a.none(), "report"_a);
  m.def("scaled", &scaled, "a"_a, "b"_a, "out"_a, "scale_a"_a.none(), "scale_b"_a.none(),
        "bias"_a.none(), "scale_result"_a.none(), "amax"_a.none(), "fast_accumulation"_a,
        "config"_a, "kernel"_a, "backend"_a, "stream"_a, "workspace_alloc"_a.none());
  m.def("grouped", &grouped, "a"_a, "b"_a, "out"_a, "sizes"_a, "form"_a, "bias"_a.none(), "alpha"_a,
        "activation"_a, "leaky_relu_slope"_a, "config"_a, "kernel"_a, "backend"_a, "stream"_a,
        "workspace_alloc"_a.none());
  m.def("run_grouped", &run_grouped, "a"_a, "b"_a, "out"_a, "c"_a, "bias"_a, "alpha"_a, "beta"_a,
        "activation"_a, "leaky_relu_slope"_a, "config"_a, "kernel"_a, "backend"_a, "stream"_a,
        "workspace_alloc"_a.none());
  m.def("plan", &plan_call, "a"_a, "b"_a, "out"_a, "c"_a.none(), "bias"_a.none(), "alpha"_a,
        "beta"_a, "activation"_a, "leaky_relu_slope"_a, "input_precision"_a, "config"_a, "kernel"_a,
        "backend"_a, "autotune"_a, "stream"_a);
  m.def("tune", &tune_call, "a"_a, "b"_a, "out"_a, "c"_a.none(), "bias"_a.none(), "alpha"_a,
        "beta"_a, "activation"_a, "leaky_relu_slope"_a, "input_precision"_a, "kernel"_a,
        "stream"_a);
  m.def("explain", &explain, "m"_a, "n"_a, "k"_a, "config"_a, "pid"_a.none());
  m.def("available_kernels", &kernels);
  m.def("devices", &device_list);
  m.def("synchronize", &synchronize, "stream"_a);
  m.def("version", [] { return std::string(tilegemm::version()); });
  m.def("output_shape", [](std::vector<int64_t> a, std::vector<int64_t> b) {
    std::string error;
    std::vector<int64_t> shape = tilegemm::python::output_shape(a, b, &error);
    if (shape.empty()) throw nb::value_error(error.c_str());
    return shape;
  });
}
