// tilegemm public API.
//
//   D = activation(alpha * op(A) op(B) + beta * C + bias)      (per batch entry)
//
// A is M x K, B is K x N, C and D are M x N. Each matrix carries its own element type, storage
// order (row- or column-major) and leading dimension, as in cuBLASLt's matrix layouts. The
// accumulation is always fp32. On the GPU backend every pointer is device memory; on the CPU
// backend every pointer is host memory.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tilegemm/config.hpp"
#include "tilegemm/version.hpp"

namespace tilegemm {

// fp8_e4m3 and fp8_e5m2 are OCP FP8 (E4M3 "fn": no infinities, max 448; E5M2: IEEE-like, max
// 57344): inputs, with optional scales (Scales below), and D of fp8 inputs (MatrixOutput below:
// an output scale and amax). Otherwise D is fp32, fp16 or bf16.
// tf32 and tf32x3 are math modes of fp32 inputs (fp32 in memory): tf32 multiplies on the tensor
// cores with each input rounded to 10 mantissa bits (cuBLAS's FAST_TF32); tf32x3 splits each input
// x into big = tf32(x) and small = tf32(x - big) and sums three tensor-core products, small x big
// + big x small + big x big, about fp32's accuracy (CUTLASS's 3xTF32; big x small's terms lose
// 2^-22 relative, small x small's are dropped).
enum class DType { fp32, fp16, bf16, tf32, fp8_e4m3, fp8_e5m2, tf32x3 };
enum class Layout { row_major, col_major };
enum class Activation { none, relu, leaky_relu, gelu, silu };
enum class Backend { automatic, gpu, cpu };

std::string_view to_string(DType dtype);
std::string_view to_string(Layout layout);
std::string_view to_string(Activation activation);
std::string_view to_string(Backend backend);
std::optional<DType> parse_dtype(std::string_view text);
std::optional<Layout> parse_layout(std::string_view text);
std::optional<Backend> parse_backend(std::string_view text);

// When gemm() times configs to choose one (the autotuner; docs/autotuning.md):
//   off      the heuristic only (a committed table of tuned results, then simple rules)
//   on_miss  tune the first time a tuning key is seen, then use the cached winner
//   always   tune on every call (and refresh the cache)
enum class AutotunePolicy { off, on_miss, always };
std::string_view to_string(AutotunePolicy policy);
std::optional<AutotunePolicy> parse_autotune_policy(std::string_view text);  // off|on-miss|always
// Size in bytes of one element of `dtype` as stored in memory (tf32 and tf32x3 are stored as fp32).
int dtype_size(DType dtype);

// An input matrix: `rows x cols` is implied by the problem (A: M x K, B: K x N, C: M x N).
struct MatrixInput {
  const void* data = nullptr;
  DType dtype = DType::fp32;
  Layout layout = Layout::row_major;
  int64_t ld = 0;            // leading dimension, in elements; 0 = packed (cols or rows)
  int64_t batch_stride = 0;  // elements between consecutive batch entries (0 = shared by all)
};

// The output matrix D (M x N).
struct MatrixOutput {
  void* data = nullptr;
  DType dtype = DType::fp32;
  Layout layout = Layout::row_major;
  int64_t ld = 0;
  int64_t batch_stride = 0;
  // An fp8 D only (fp8 inputs), as cuBLASLt's D scale and amax, for training recipes that scale
  // each tensor from its last amax. With x an element's finished value (the epilogue's
  // activation(alpha * AB + beta * C + bias)):
  //   scale  one fp32 value s: D = fp8(s * x), rounded to nearest even and saturated to the
  //          type's largest finite value (NaN stays NaN). Null: s = 1.
  //   amax   if not null, set to max |x| over every element of D (every batch entry), before
  //          the scale; NaNs do not count, and an empty D gives 0.
  // Device pointers (host pointers on the CPU backend), read and written when the call runs.
  const float* scale = nullptr;
  float* amax = nullptr;
};

struct EpilogueDesc {
  float alpha = 1.0f;
  float beta = 0.0f;
  // Optional bias: a vector of N values, one per output column (as in a Linear layer). Its
  // element type is fp32 or D's type. Batch entry (group) b reads bias + b * bias_batch_stride:
  // 0 shares one vector among all of them, N gives each its own (a bias per expert).
  const void* bias = nullptr;
  DType bias_dtype = DType::fp32;
  int64_t bias_batch_stride = 0;
  Activation activation = Activation::none;
  float leaky_relu_slope = 0.01f;
};

// How fp8 inputs are scaled: the product uses a(m, k) = A[m, k] * scale_a(m, k) and
// b(k, n) = B[k, n] * scale_b(k, n), accumulated in fp32 (cuBLASLt's scale modes, DeepSeek-V3's
// block recipe). The scales are fp32 device pointers (host pointers on the CPU backend), read when
// the call runs, so a captured graph picks up new values; every batch entry of a dense problem
// shares them. In a grouped GEMM (Groups below; forms offsets and counts) each group has its
// own B and so its own B scales, one set after the other (group g's set starts g times one set's
// count in: b[g] per tensor, b[g * N + n] per channel, b[g * ceil(N/128) * ceil(K/128) + ...] per
// block, as DeepGEMM's grouped weight scales lie); in the counts form each group has its own A
// too, and so its own A scales (a[g], a[g * M + m], a[g * M * ceil(K/128) + kb * M + m]), where the
// offsets form's groups share A's M rows and the scales of those rows (a[0], a[m], a[kb * M + m]).
//   none     no scales (1.0); the pointers must be null
//   tensor   one scale for A, a[0], and one for B, b[0] (cuBLASLt's SCALAR_32F)
//   channel  one per row of A, a[m] (M values), and one per column of B, b[n] (N values)
//            ("row-wise" scales; cuBLASLt's OUTER_VEC_32F)
//   block    A: one per row and 128 values of K, a[kb * M + m] for kb = k / 128 (the M rows of a K
//            block contiguous: M x ceil(K/128), column-major); B: one per 128 x 128 block,
//            b[nb * ceil(K/128) + kb] for nb = n / 128 (ceil(N/128) x ceil(K/128), row-major, as
//            DeepSeek-V3's weight scales are stored)
enum class ScaleMode { none, tensor, channel, block };
std::string_view to_string(ScaleMode mode);
std::optional<ScaleMode> parse_scale_mode(std::string_view text);  // none|tensor|channel|block

struct Scales {
  ScaleMode mode = ScaleMode::none;
  const float* a = nullptr;
  const float* b = nullptr;
};

// Grouped GEMM (mixture of experts): the batch_count batch entries are G groups whose sizes are
// int32 values in device memory (host memory on the CPU backend), read when the call runs, so a
// captured graph picks up new sizes with no host round trip. K and N are shared by every group
// (and, in the k_offsets form, M too).
//   none       a dense (batched) GEMM
//   offsets    contiguous, for MoE prefill and training (torch._grouped_mm's `offs` of a 2-D A and
//              a 3-D B): A is M x K, C and D are M x N, holding the groups' rows one after the
//              other (their batch_stride is 0); group g takes rows offsets[g-1] .. offsets[g]-1,
//              with offsets[-1] = 0, and its own B (b.batch_stride apart). No padding to a tile is
//              needed. D's rows from offsets[G-1] on are not written.
//   counts     masked, for MoE decode under CUDA graphs (DeepGEMM's masked layout): batch entry g
//              of A, B, C and D is group g's, A, C and D of M rows (M: the most rows a group may
//              have), of which group g takes rows 0 .. counts[g]-1. Its other rows are neither
//              read nor written.
//   k_offsets  along K, for the weight gradients of an MoE layer (torch._grouped_mm's `offs` of a
//              2-D A and a 2-D B): A is M x K and B is K x N, holding the groups' K slices one
//              after the other (their batch_stride is 0); group g takes K values offsets[g-1] ..
//              offsets[g]-1, and batch entry g of C and D is its M x N result. A group with no K
//              values gets the epilogue alone (activation(beta * C + bias)). K values from
//              offsets[G-1] on are not read.
//   ptr_array  the form of gemm_grouped() (below): problems of their own, each with its own sizes,
//              matrices and epilogue. A GemmProblem's groups never take it.
// With bias_batch_stride, each group has its own bias. The sizes are clamped when read (an offset
// to [the previous offset, M or K], a count to [0, M]), so no value makes a call read or write
// outside the matrices.
enum class GroupForm { none, offsets, counts, k_offsets, ptr_array };
std::string_view to_string(GroupForm form);
// none|offsets|counts|k_offsets|ptr_array
std::optional<GroupForm> parse_group_form(std::string_view text);

struct Groups {
  GroupForm form = GroupForm::none;
  const int32_t* sizes = nullptr;  // batch_count values: offsets or counts
};

struct GemmProblem {
  int64_t m = 0, n = 0, k = 0;
  int64_t batch_count = 1;
  MatrixInput a, b, c;  // c may be left empty (data == nullptr) when beta == 0
  MatrixOutput d;
  EpilogueDesc epilogue;
  Scales scales;  // fp8 inputs only
  Groups groups;  // a grouped GEMM (Groups above)
  // fp8 inputs: Hopper's fp8 tensor cores keep fewer bits in their sums than fp32. By default the
  // sums are moved into fp32 registers every 128 values of K (as DeepGEMM does), so the result
  // matches an fp32-accumulated one; true skips that, faster and less accurate (as
  // torch._scaled_mm's use_fast_accum). Block scales are applied at those moves, so they always
  // take them, whatever this says. tf32x3 inputs likewise, every 32 values of K: the tensor
  // cores truncate their fp32 sums, an error that grows with K (true: about 2.3e-9 x K relative,
  // 1e-5 at K = 4096). Plain tf32 ignores it (its inputs' rounding outweighs the sums').
  bool fast_accumulation = false;
  void* stream = nullptr;  // cudaStream_t on the GPU backend; ignored on the CPU backend
};

// out_of_memory: the host (or, for the library's workspaces, the device) had no memory for the
// call; internal_error: anything else that went wrong inside the library. No call throws.
enum class StatusCode {
  ok,
  invalid_argument,
  not_supported,
  no_device,
  cuda_error,
  out_of_memory,
  internal_error
};

struct Status {
  StatusCode code = StatusCode::ok;
  std::string message;
  bool ok() const { return code == StatusCode::ok; }
  static Status success() { return {}; }
};

struct GemmOptions {
  Backend backend = Backend::automatic;
  std::string kernel = "auto";         // a kernel name from available_kernels(), or "auto"
  std::optional<KernelConfig> config;  // nullopt: chosen by the autotune policy
  // nullopt: $TILEGEMM_AUTOTUNE (off | on-miss | always), else off.
  std::optional<AutotunePolicy> autotune;
  // GPU backend: when A's or B's lines (rows, or columns if column-major) are not 16-byte aligned
  // and the problem is large (M*N*K >= 2^26), copy them first into a workspace with aligned
  // leading dimensions, so the kernels' fast copy paths (TMA, cp.async) can read them. The
  // workspace comes from a memory pool the library keeps per device and keeps reserved between
  // calls (without device memory for it, nothing is copied). false: run on the operands as they
  // are (element loads).
  bool aligned_copies = true;
  // GPU backend: a workspace the caller owns, as cuBLASLt and CUTLASS take one: `workspace_bytes`
  // of device memory, any alignment, used by the call's work on problem.stream alone (stream
  // order: a later call on that stream may reuse it at once). workspace_size() says how much a
  // call takes. Given one, gemm() allocates nothing for the aligned copies and the sm90 kernel's
  // tail split; a part it has no room for goes without (slower, never wrong; the report's
  // workspace_note says so). Not given (null), they come from a memory pool the library keeps
  // per device, except while problem.stream is capturing a CUDA graph, when nothing is allocated
  // and they go without. (Tuning, when the autotune policy asks for it outside a capture,
  // allocates its own scratch memory.) The CPU backend takes no workspace.
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

// What a call ran (filled by gemm() when `report` is given).
struct GemmReport {
  Backend backend = Backend::cpu;
  std::string kernel;
  KernelConfig config;
  std::string config_source;  // "given", "heuristic", "cache" or "tuned"
  std::string tuning_key;     // the autotuner's key for this call (GPU backend)
  // With kernel "auto": why faster kernels were passed over, e.g. "sm90: kernel sm90: operand b:
  // TMA needs a 16-byte aligned ...". Empty when the first choice ran.
  std::string kernel_note;
  // Which operands were copied to aligned leading dimensions before the kernel ran (see
  // GemmOptions::aligned_copies), e.g. "operands copied to 16-byte aligned lines first: a ld
  // 4093 -> 4096". Empty when none was.
  std::string aligned_copies;
  // What went without device memory it needed, and why (GemmOptions::workspace), e.g. "the tail
  // split went without: the stream is capturing a CUDA graph and no workspace was given". Empty
  // when nothing did.
  std::string workspace_note;
};

// What gemm() would run for `problem` under `options` -- backend, kernel, config, where the
// config comes from, the tuning key -- without running or tuning anything. Where the policy would
// tune (on-miss with no cached winner, or always), the report names the heuristic's config and
// its source says "heuristic (a call would tune)". The problem's pointers are only compared,
// never read, so stand-in addresses will do.
Status plan(const GemmProblem& problem, const GemmOptions& options, GemmReport* report);

// The device memory gemm() takes for `problem` under `options` (GemmOptions::workspace): the
// aligned copies it would make and the chosen kernel's own (the sm90 kernel's tail split), with
// room for alignment; 0 when it takes none (always on the CPU backend). Where the autotune policy
// would tune, the most that any candidate config could take. Reads no memory, as plan().
Status workspace_size(const GemmProblem& problem, const GemmOptions& options, size_t* bytes);

// One config the autotuner timed.
struct TuneCandidate {
  std::string kernel;
  KernelConfig config;
  double ms = 0.0;  // median time; 0 when it was dropped
  double tflops = 0.0;
  std::string dropped;     // why it was not a candidate for the win (empty: it was)
  bool heuristic = false;  // the config the heuristic would have picked
};

struct TuneResult {
  std::string tuning_key;
  std::vector<TuneCandidate> candidates;  // timed ones fastest first, then the dropped ones
  std::vector<std::string> pruned;        // configs not timed, each with the rule that pruned it
  double seconds = 0.0;                   // wall time of the tuning
  std::string cache_file;                 // where the winner was stored ("" if it was not)
};

// Times every candidate config for `problem` (on scratch output: D is not written) on
// problem.stream, stores the winner in the tuning cache, and reports all of them. options.kernel
// narrows the search to one kernel; options.config is ignored. `progress(done, total)` is called
// after each candidate.
Status tune(const GemmProblem& problem, const GemmOptions& options, TuneResult* result,
            const std::function<void(int, int)>& progress = {});

// Checks the problem without running it: the same checks gemm() makes first.
Status validate(const GemmProblem& problem);

// Validates, chooses a backend, kernel and config, and runs. On any error D is not written.
// On the GPU backend the call is asynchronous with respect to the host (stream order).
Status gemm(const GemmProblem& problem, const GemmOptions& options = {},
            GemmReport* report = nullptr);

// Grouped GEMM, the ptr-array form (cuBLAS's cublasGemmGroupedBatchedEx, CUTLASS's ptr-array
// grouped GEMM): G independent problems, each with its own M, N, K, matrices, leading dimensions
// and epilogue (alpha, beta, C, bias, activation), in one launch where a kernel takes them all
// (the sm90 kernel: fp16 and bf16 inputs), else one call after another. As in cuBLAS, the sizes
// are the host's, read when the call is made (a captured graph keeps them). Each problem is a
// single GEMM (batch_count 1, groups none, no fp8 scales), and all share the element types and
// storage orders of A, B, C and D, fast_accumulation and the stream. Their D must not overlap
// each other. G = 0 does nothing. Errors name the problem ("problems[3].b.ld ..."), and are found
// before anything runs: on any error no D is written. Under options as for gemm(), but the config
// is not tuned (the heuristic's, or options.config), and in one launch the problems' tensor maps
// (about 600 bytes each) take workspace memory: from the pool, or options.workspace (under a
// CUDA graph capture, without one, the problems go one call after another).
Status gemm_grouped(std::span<const GemmProblem> problems, const GemmOptions& options = {},
                    GemmReport* report = nullptr);

// The device memory gemm_grouped() takes for `problems` under `options` (as workspace_size()).
Status grouped_workspace_size(std::span<const GemmProblem> problems, const GemmOptions& options,
                              size_t* bytes);

struct KernelInfo {
  std::string name;
  std::string description;
  KernelConfig default_config;
  std::vector<KernelConfig> configs;  // every config this build instantiates
  // Dtypes of A and B it takes. Each config takes them all, with exceptions the kernel names when
  // it refuses a problem: sm80's BLOCK_SIZE_K 64 configs take fp16 and bf16 with 16-byte aligned
  // rows only; sm90's configs are compiled for 128 bytes of K per stage, BLOCK_SIZE_K 64 for fp16
  // and bf16 and 32 for tf32.
  std::vector<DType> input_dtypes;
};

// The GPU kernels compiled into this build (empty list when built without CUDA).
std::vector<KernelInfo> available_kernels();

struct DeviceInfo {
  int index = 0;
  std::string name;
  int sm_count = 0;
  int compute_capability_major = 0, compute_capability_minor = 0;
  int64_t l2_bytes = 0;
  int64_t shared_memory_per_block_optin = 0;
  int64_t global_memory_bytes = 0;
};

// The CUDA devices visible to this process; empty when there are none (or no CUDA build).
std::vector<DeviceInfo> devices();

// What the library says on its own, outside any Status: warnings (a tuning cache file it could
// not read or write, an autotuner candidate it dropped) and, at level info, each autotuner winner.
// By default each message goes to stderr as "tilegemm: LEVEL: message" when its level is at or
// above $TILEGEMM_LOG_LEVEL (off, error, warning or info; warning when unset or unknown;
// TILEGEMM_PRINT_AUTOTUNING=1, an older switch, means info). set_log_callback sends messages to
// the caller instead (as cuBLASLt's logger callback), from whichever thread logs; an empty
// callback restores stderr. Both settings are process-wide and safe to change from any thread.
enum class LogLevel { off, error, warning, info };
std::string_view to_string(LogLevel level);
using LogCallback = std::function<void(LogLevel level, std::string_view message)>;
void set_log_callback(LogCallback callback);
void set_log_level(LogLevel level);
LogLevel log_level();

// The version of the library linked, "MAJOR.MINOR.PATCH" (the headers' is TILEGEMM_VERSION_*).
std::string_view version();

}  // namespace tilegemm
