// A GEMM workload for the CLI, the benchmark and the tests: random inputs in host memory and,
// for the GPU backend, device copies; the problem description over them; and the check of D
// against the float64 reference.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/device_memory.hpp"
#include "problem/dtype.hpp"
#include "problem/groups.hpp"
#include "problem/tolerance.hpp"
#include "tilegemm/tilegemm.hpp"

namespace tilegemm::harness {

struct WorkloadSpec {
  int64_t m = 0, n = 0, k = 0, batch_count = 1;
  DType input_dtype = DType::fp32;         // A and B
  DType output_dtype = DType::fp32;        // D, and C and bias (bf16 for an fp8 D: c_dtype())
  std::optional<DType> input_dtype_b;      // B's, where it differs from A's (fp8 only)
  ScaleMode scale_mode = ScaleMode::none;  // fp8: random scales of this mode
  bool fast_accumulation = false;
  Layout layout_a = Layout::row_major, layout_b = Layout::row_major, layout_c = Layout::row_major;
  int64_t lda = 0, ldb = 0, ldc = 0;  // 0 = packed
  float alpha = 1.0f, beta = 0.0f;
  bool bias = false;
  Activation activation = Activation::none;
  float leaky_relu_slope = 0.01f;
  bool in_place = false;  // D is C
  // C in the other layout than D (layout_c says D's), packed: e.g. a column-major C added into a
  // row-major D. Not with in_place.
  bool c_transposed = false;
  // A grouped GEMM (tilegemm.hpp: Groups) of batch_count groups with group_rows[g] rows each: in
  // the offsets form they follow each other in M rows (M >= their sum; rows past it belong to no
  // group), in the counts form each is a batch entry of M rows. In the k_offsets form group_rows[g]
  // counts group g's K values instead, following each other in K (K >= their sum), and each
  // group's D is a batch entry of M rows. With `bias`, a bias per group.
  GroupForm groups = GroupForm::none;
  std::vector<int32_t> group_rows;
  uint64_t seed = 1;
};

// Sizes for `groups` groups drawn from `seed`: for offsets and k_offsets, a random split of m rows
// or K values (empty groups included); for counts, each from 0 to m.
std::vector<int32_t> random_group_rows(GroupForm form, int64_t groups, int64_t m, uint64_t seed);

// The rows of D the groups take in all (M x batch_count for a dense problem or k_offsets).
int64_t taken_rows(const WorkloadSpec& spec);
// The K values the groups take in all (K but for k_offsets).
int64_t taken_k(const WorkloadSpec& spec);
// The FLOPs the problem counts: 2 x taken_rows x N x taken_k (k_offsets: 2 x M x N x taken_k).
double flops(const WorkloadSpec& spec);

class Workload {
 public:
  // Draws the inputs (standard normal, rounded to their dtype) and, when `on_gpu`, copies them
  // to the device. D starts poisoned with NaN. Before any buffer exists, the problem is validated
  // (over stand-in addresses) and its host memory checked against the machine's: a bad spec, or
  // one larger than memory, comes back as a Status and allocates nothing.
  static Status create(const WorkloadSpec& spec, bool on_gpu, std::unique_ptr<Workload>* out);
  // The checks create() makes first.
  static Status check_spec(const WorkloadSpec& spec);
  // Bytes of host memory the workload's buffers take (A, B, C, D, the bias, the scales), counted
  // in double so that no size overflows it.
  static double host_bytes(const WorkloadSpec& spec);

  const WorkloadSpec& spec() const { return spec_; }
  bool on_gpu() const { return on_gpu_; }
  // The problem over the buffers gemm() should use (device memory on the GPU backend).
  GemmProblem problem() const;
  // New rows for the groups (as many as before), written over the sizes' memory in place: a
  // call captured in a graph reads them at its next replay. Checked as create() checks them.
  Status set_group_rows(const std::vector<int32_t>& rows);
  // Fills D with NaN so that elements a kernel fails to write show up in the check.
  Status poison_output();
  // Copies D (and an fp8 D's amax) back to host memory (no-op on the CPU backend).
  Status fetch_output();
  // An fp8 D's amax as the run left it (after fetch_output; NaN if the run did not write it).
  float amax() const;
  // Relative Frobenius error of D (after fetch_output) against the float64 reference. When the
  // reference would take more than `max_reference_flops`, a random sample of rows is checked
  // (*rows_checked says how many; all rows are still scanned for NaN). An fp8 D's amax is checked
  // too (*amax_error: relative to the reference's largest magnitude, or by how much it falls short
  // of a sample's): past amax_tolerance the result is infinite, whatever D's error.
  double check(double max_reference_flops, int64_t* rows_checked = nullptr,
               double* amax_error = nullptr) const;
  // Bytes the problem must move at the least: each input read once, D written once.
  double min_bytes() const;

 private:
  explicit Workload(const WorkloadSpec& spec, bool on_gpu);
  static Status create_checked(const WorkloadSpec& spec, bool on_gpu,
                               std::unique_ptr<Workload>* out);
  GemmProblem problem_over(const void* a, const void* b, const void* c, void* d, const void* bias,
                           const void* scale_a, const void* scale_b, const void* sizes = nullptr,
                           const void* d_scale = nullptr, void* amax = nullptr) const;
  // Batch entries of C and D in memory: one shared by the groups of the offsets form.
  int64_t entries() const { return entries_in_memory(spec_.groups, spec_.batch_count).c_d; }
  double check_grouped(double max_reference_flops, int64_t* rows_checked) const;
  // C's layout and leading dimension (c_transposed: the other layout, packed).
  Layout layout_of_c() const;
  int64_t ld_of_c() const { return spec_.c_transposed ? 0 : spec_.ldc; }

  DType dtype_b() const { return spec_.input_dtype_b.value_or(spec_.input_dtype); }
  bool fp8_d() const { return is_fp8(spec_.output_dtype); }

  WorkloadSpec spec_;
  bool on_gpu_;
  std::vector<uint8_t> host_a_, host_b_, host_c_, host_d_, host_bias_, host_scale_a_, host_scale_b_;
  std::vector<uint8_t> host_sizes_;                // the groups' offsets or counts (int32)
  std::vector<uint8_t> host_d_scale_, host_amax_;  // an fp8 D's scale and amax (one fp32 each)
  DeviceBuffer dev_a_{nullptr, nullptr}, dev_b_{nullptr, nullptr}, dev_c_{nullptr, nullptr},
      dev_d_{nullptr, nullptr}, dev_bias_{nullptr, nullptr}, dev_scale_a_{nullptr, nullptr},
      dev_scale_b_{nullptr, nullptr}, dev_sizes_{nullptr, nullptr}, dev_d_scale_{nullptr, nullptr},
      dev_amax_{nullptr, nullptr};
};

// C's and the bias's type in a workload: D's, or bf16 for an fp8 D (which takes no fp8 C).
DType c_dtype(const WorkloadSpec& spec);
// The scale a workload gives an fp8 D: a power of two near 2 / sqrt(K + 1), which keeps D's
// values (sums of K products of standard-normal inputs) well inside e4m3's range.
float fp8_d_scale(int64_t k);

// Relative-error limit of a result (src/problem/tolerance.hpp).
using tilegemm::amax_tolerance;
using tilegemm::tolerance_for;

// D's dtype when the caller names none: the input type, fp32 for tf32 inputs, bf16 for fp8.
DType default_output_dtype(DType input_dtype);

// Elements of a matrix of `rows x cols` in `layout` with leading dimension `ld` (0 = packed)
// and `batch_count` entries of `batch_stride`.
int64_t storage_elements(Layout layout, int64_t rows, int64_t cols, int64_t ld, int64_t batch_count,
                         int64_t batch_stride);

}  // namespace tilegemm::harness
