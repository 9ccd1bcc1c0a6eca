// Aligned copies: when A's or B's rows (or columns) are not 16-byte aligned, the fast copy paths
// are closed to them -- TMA (sm90) and cp.async 16-byte (sm80, warptile) need 16-byte aligned
// base, leading dimension and batch stride -- and the kernels fall back to element loads, 3-5x
// slower. For a large problem it is cheaper to copy such an operand once into a buffer whose
// lines start on 128-byte boundaries (one read and one write of the operand, at memory speed) and
// run the GEMM on the copy. 128 rather than the 16 the kernels need: a line that starts inside
// an L2 line splits each 128-byte row of a tile (a TMA box row, a cp.async slice) over two L2
// lines, which cost the sm90 kernel 43 % at 4095 x 4097 x 4093, and the copy costs the same
// either way.
// The same copy can also transpose: Hopper's wgmma reads tf32 operands K-major only (row-major A,
// column-major B), so a tf32 problem bound for the sm90 kernel gets its MN-major operands copied
// K-major (one read and one write, as for alignment), where the kernel choice asks for it.
// tf32x3 (three TF32 products for about fp32's accuracy) is made of copies too: each operand is
// copied K-major in three parts along K, A as [small | big | big] and B as [big | small | big],
// where x = big + small splits each value into two tf32 values (problem/dtype.hpp: split_tf32),
// and the tf32 kernels multiply the copies over three times K: small x big + big x small + big x
// big. The small products come first, so that they are summed before the large ones. The
// tensor cores truncate the fp32 sums they keep, so the sm90 kernel moves tf32x3's into fp32
// registers every 32 values of K (unless fast_accumulation says not to), as it does fp8's.
// This header is the plan (which operands, their new layout and leading dimensions, where they go
// in one workspace); kernels/aligned_copies.cu decides on the transposes and makes the copies.
// Host only, unit-tested (tests/host/test_aligned_copies.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "problem/alignment.hpp"
#include "problem/matrix_view.hpp"
#include "tilegemm/tilegemm.hpp"

namespace tilegemm {

// Problems below this many multiply-adds (M x N x K) keep the element-load path (sm80's): for them
// the copy's launch would cost about as much as it saves. Not for the sm90 kernel
// (CopyGoals::any_size), whose path on copies is the faster one at any size.
inline constexpr int64_t kAlignedCopyMinWork = int64_t(1) << 26;

// Where the workspace places each copy: offsets are multiples of this (and of 16).
inline constexpr int64_t kWorkspaceAlignment = 256;

// A copy's lines are this many bytes apart, at least: one L2 line.
inline constexpr int64_t kCopyLineBytes = 128;

// An aligned operand is transposed only where the GEMM does at least this many flops per byte of
// it: the copy reads and writes each byte once, and must cost less than the faster kernel saves.
// On the H100 (tf32, B row-major, sm90 after the copy against sm80 without one, TFLOP/s):
// 512^3 (256 flops per byte of B) 16.8 against 25.8, 128 x 4096 x 4096 (64) 47.5 against 74.4,
// 1024^3 (512) 89.8 against 86.8, 1000^3 (500) 81.0 against 59.4, 2048^3 (1024) 242.8 against
// 168.2. An operand copied for alignment anyway is transposed free.
inline constexpr double kTransposeMinFlopsPerByte = 384;

// For the sm90 kernel, a 16-bit operand whose lines are 16-byte aligned but not whole L2 lines
// apart is copied onto 128-byte lines where the GEMM does at least this many flops per byte of
// it. Off L2 lines, the rules run the tile in a cluster of 2 or 2 x 2 (heuristic.hpp), which
// halves B's reads, or A's and B's; the copies must beat that. On the H100 (bf16, both
// operands' lines 16 bytes past a multiple of 128, TFLOP/s, copies against the cluster):
// 2048^3 357-362 against 512-520, 4096^3 597-598 against 628-640, 6144^3 676.5 against 726.8,
// 8192^3 705-709 against 724-725.
inline constexpr double kRelineMinFlopsPerByte = 16384;

// tf32 operands, at half the 16-bit rate, are moved onto L2 lines only in pairs: when neither A's
// nor B's lines would be on 128 bytes, both are copied where the GEMM does at least this many
// flops per byte of each. One operand off its lines costs the kernel little, two cost a quarter.
// On the H100 (TFLOP/s, the copies included): 3000 x 5000 x 700 with B column-major (both lines
// 2800 bytes; 2500 and 1500 flops per byte) 173.5 -> 215.8 with both copied; with B row-major,
// B's transposed copy on lines anyway, copying A too lost (214.8 -> 209.5); 1000^3 with B
// column-major (500 flops per byte) 122.7 -> 75.9.
inline constexpr double kRelinePairMinFlopsPerByte = 1024;

// One operand's copy. A matrix is stored as `lines` lines (rows when row-major, columns when
// column-major) of `length` contiguous elements, `ld` apart; batch entries `batch_stride` apart.
// `lines` and `length` are the copy's; a transposed copy's lines run across the source's (the
// source has `length` lines of `lines` elements, `source_ld` apart).
struct OperandCopy {
  bool needed = false;
  bool transposed = false;            // the copy has the other layout
  Layout layout = Layout::row_major;  // the copy's
  int64_t lines = 0, length = 0;
  int64_t source_ld = 0, source_batch_stride = 0;
  int64_t ld = 0, batch_stride = 0;  // of the copy: ld is length rounded up to 128 bytes
  int64_t entries = 0;               // batch entries copied (1 when the operand is shared)
  int64_t offset = 0;                // bytes from the workspace's start
  int64_t bytes = 0;
  // tf32x3: each line holds `parts` parts of `part_length` elements (`length` of the source's,
  // then zeros), part p of them the small halves where bit p of `small_parts` is set, else the
  // big ones; ld is parts x part_length. Otherwise one part, the line itself.
  int parts = 1;
  int64_t part_length = 0;
  uint32_t small_parts = 0;
  // The elements of each line the copy kernel writes once per part.
  int64_t part_span() const { return parts > 1 ? part_length : ld; }
};

// tf32x3's parts: three along K, each padded to whole slices of K of the tf32 kernels (32
// values), so that every part starts on a 128-byte line.
inline constexpr int kTf32x3Parts = 3;
inline constexpr int64_t kTf32x3PartAlignment = 32;
inline constexpr uint32_t kTf32x3SmallPartsA = 0b001;  // A: [small | big | big]
inline constexpr uint32_t kTf32x3SmallPartsB = 0b010;  // B: [big | small | big]

struct AlignedCopyPlan {
  OperandCopy a, b;
  int64_t workspace_bytes = 0;
  bool any() const { return a.needed || b.needed; }
  bool splits() const { return a.parts > 1; }  // tf32x3: both operands, in parts
};

// x rounded up to a multiple of `multiple`.
constexpr int64_t round_up(int64_t x, int64_t multiple) { return cdiv(x, multiple) * multiple; }

// What a kernel gains from copies beyond 16-byte alignment (gpu::copy_plan asks for them where
// the sm90 kernel will run the copies).
struct CopyGoals {
  bool k_major = false;  // tf32, fp8: MN-major operands transposed (kTransposeMinFlopsPerByte)
  // k_major but for an operand the kernel reads as it lies (sm90's plain tf32: a column-major A
  // through registers; a row-major B through the transposed product, kernels/sm90/tensor_map.hpp:
  // runs_transposed).
  bool a_as_it_lies = false, b_as_it_lies = false;
  // Lines moved onto 128-byte boundaries: 16-bit operands each on its own
  // (kRelineMinFlopsPerByte), tf32 ones in pairs (kRelinePairMinFlopsPerByte).
  bool l2_lines = false;
  // The kernel runs only on aligned, K-major (where k_major) operands and no other kernel takes
  // the problem (fp8): those copies are made at any size, the flop thresholds aside.
  bool required = false;
  // Operands that are not 16-byte aligned are copied at any size (kAlignedCopyMinWork aside), the
  // flop thresholds kept. For the sm90 kernel: the element-load path it would leave them to
  // (sm80, no split of K, a few programs where M or N is small) takes 1-2 us per K step of 32,
  // so below the threshold it ran 0.05-0.5x cuBLAS on the H200 (2 x 335 x 13713: 459 us against
  // 21), where one copy and the sm90 kernel take about two launches' time
  // (docs/history/perf-notes.md, "Unaligned problems of any size").
  bool any_size = false;
};

// Whether lines `ld` elements of `element_size` bytes apart start on L2 lines (128 bytes).
constexpr bool lines_on_l2(int64_t ld, int element_size) {
  return ld * element_size % kCopyLineBytes == 0;
}

// The copy of `in`, a rows x cols operand of a problem with `batch_count` entries, if it needs one:
// when its lines are not 16-byte aligned; to `layout` when given and different from its own (an
// aligned operand only where the problem does `flops` >= kTransposeMinFlopsPerByte per byte of
// it); or, given `reline_flops_per_byte` > 0, when its lines are not 128 bytes apart and the
// problem does `flops` >= that many flops per byte of it.
inline OperandCopy plan_operand_copy(const MatrixInput& in, int64_t rows, int64_t cols,
                                     int64_t batch_count, std::optional<Layout> layout = {},
                                     double flops = 0, double reline_flops_per_byte = 0,
                                     bool required = false) {
  OperandCopy c;
  const int element_size = dtype_size(in.dtype);
  const int64_t ld = effective_ld(in.ld, in.layout, rows, cols);
  const bool aligned = vector_aligned(in.data, ld, in.batch_stride, element_size);
  const double bytes =
      double(rows) * double(cols) * element_size * double(in.batch_stride == 0 ? 1 : batch_count);
  c.transposed = layout.has_value() && *layout != in.layout &&
                 (!aligned || required || flops >= kTransposeMinFlopsPerByte * bytes);
  const bool reline = reline_flops_per_byte > 0 && !lines_on_l2(ld, element_size) &&
                      flops >= reline_flops_per_byte * bytes;
  if (!c.transposed && !reline && aligned) return c;
  c.needed = true;
  const bool row_major = (in.layout == Layout::row_major) != c.transposed;  // the copy's
  c.layout = row_major ? Layout::row_major : Layout::col_major;
  c.lines = row_major ? rows : cols;
  c.length = row_major ? cols : rows;
  c.source_ld = ld;
  c.source_batch_stride = in.batch_stride;
  c.ld = round_up(c.length, kCopyLineBytes / element_size);
  // An operand shared by every batch entry (batch stride 0) is copied once and stays shared.
  c.entries = in.batch_stride == 0 ? 1 : batch_count;
  c.batch_stride = in.batch_stride == 0 ? 0 : c.lines * c.ld;
  // Past 2^61 bytes no device holds the copy: the size saturates there (so that the workspace's
  // sum of two cannot overflow either) and the workspace request fails.
  constexpr int64_t kMaxCopyBytes = int64_t(1) << 61;
  c.bytes =
      double(c.entries) * double(c.lines) * double(c.ld) * element_size < double(kMaxCopyBytes)
          ? c.entries * c.lines * c.ld * element_size
          : kMaxCopyBytes;
  return c;
}

// Whether the rows x cols operand `in`'s own lines are 128 bytes apart.
inline bool on_l2_lines(const MatrixInput& in, int64_t rows, int64_t cols) {
  return lines_on_l2(effective_ld(in.ld, in.layout, rows, cols), dtype_size(in.dtype));
}

// Whether the operand is read from lines on 128-byte boundaries: its copy's (planned in `c`; a
// copy's ld is rounded up to 128 bytes) or its own.
inline bool on_l2_lines(const MatrixInput& in, int64_t rows, int64_t cols, const OperandCopy& c) {
  return c.needed || on_l2_lines(in, rows, cols);
}

// What gemm() copies before running `p` on the GPU: nothing when `enabled` is false or the
// problem is empty, or small (unless `goals` say at any size); else the operands that are not
// 16-byte aligned, and those that `goals` ask for (K-major: row-major A, column-major B; lines on
// L2 lines) where worth it.
inline AlignedCopyPlan plan_aligned_copies(const GemmProblem& p, bool enabled = true,
                                           CopyGoals goals = {}) {
  AlignedCopyPlan plan;
  if (!enabled || p.m == 0 || p.n == 0 || p.k == 0) return plan;
  if (!goals.required && !goals.any_size &&
      double(p.m) * double(p.n) * double(p.k) < double(kAlignedCopyMinWork)) {
    return plan;
  }
  using Want = std::optional<Layout>;
  const double flops = 2.0 * double(p.m) * double(p.n) * double(p.k) * double(p.batch_count);
  const auto plan_a = [&](double reline_flops_per_byte) {
    return plan_operand_copy(
        p.a, p.m, p.k, p.batch_count,
        goals.k_major && !goals.a_as_it_lies ? Want(Layout::row_major) : Want(), flops,
        reline_flops_per_byte, goals.required);
  };
  const auto plan_b = [&](double reline_flops_per_byte) {
    return plan_operand_copy(
        p.b, p.k, p.n, p.batch_count,
        goals.k_major && !goals.b_as_it_lies ? Want(Layout::col_major) : Want(), flops,
        reline_flops_per_byte, goals.required);
  };
  const bool pairs = dtype_size(p.a.dtype) == 4;  // tf32
  const double each = goals.l2_lines && !pairs ? kRelineMinFlopsPerByte : 0;
  plan.a = plan_a(each);
  plan.b = plan_b(each);
  if (goals.l2_lines && pairs && !on_l2_lines(p.a, p.m, p.k, plan.a) &&
      !on_l2_lines(p.b, p.k, p.n, plan.b)) {
    const OperandCopy a = plan_a(kRelinePairMinFlopsPerByte);
    const OperandCopy b = plan_b(kRelinePairMinFlopsPerByte);
    if (a.needed && b.needed) plan.a = a, plan.b = b;
  }
  plan.b.offset = round_up(plan.a.bytes, kWorkspaceAlignment);
  plan.workspace_bytes = plan.b.offset + plan.b.bytes;
  return plan;
}

// tf32x3's copies of `p` (a.dtype tf32x3): A row-major and B column-major, each line three parts
// along K (kTf32x3SmallPartsA/B), at any size: no kernel multiplies tf32x3 itself.
inline AlignedCopyPlan plan_tf32x3_copies(const GemmProblem& p) {
  AlignedCopyPlan plan;
  if (p.m == 0 || p.n == 0 || p.k == 0) return plan;
  const auto split = [&](const MatrixInput& in, int64_t rows, int64_t cols, Layout layout,
                         uint32_t small_parts) {
    OperandCopy c;
    c.needed = true;  // also where the operand is already K-major and aligned
    c.transposed = layout != in.layout;
    c.layout = layout;
    c.lines = layout == Layout::row_major ? rows : cols;
    c.length = layout == Layout::row_major ? cols : rows;
    c.source_ld = effective_ld(in.ld, in.layout, rows, cols);
    c.source_batch_stride = in.batch_stride;
    c.entries = in.batch_stride == 0 ? 1 : p.batch_count;
    c.parts = kTf32x3Parts;
    c.part_length = round_up(c.length, kTf32x3PartAlignment);
    c.small_parts = small_parts;
    c.ld = c.parts * c.part_length;
    c.batch_stride = in.batch_stride == 0 ? 0 : c.lines * c.ld;
    constexpr int64_t kMaxCopyBytes = int64_t(1) << 61;  // as plan_operand_copy's
    c.bytes = double(c.entries) * double(c.lines) * double(c.ld) * 4 < double(kMaxCopyBytes)
                  ? c.entries * c.lines * c.ld * 4
                  : kMaxCopyBytes;
    return c;
  };
  plan.a = split(p.a, p.m, p.k, Layout::row_major, kTf32x3SmallPartsA);
  plan.b = split(p.b, p.k, p.n, Layout::col_major, kTf32x3SmallPartsB);
  plan.b.offset = round_up(plan.a.bytes, kWorkspaceAlignment);
  plan.workspace_bytes = plan.b.offset + plan.b.bytes;
  return plan;
}

// The problem as the kernels see it once the copies are made in `workspace`.
inline GemmProblem with_aligned_copies(const GemmProblem& p, const AlignedCopyPlan& plan,
                                       void* workspace) {
  GemmProblem q = p;
  const auto use = [&](MatrixInput& in, const OperandCopy& c) {
    if (!c.needed) return;
    in.data = static_cast<char*>(workspace) + c.offset;
    in.layout = c.layout;
    in.ld = c.ld;
    in.batch_stride = c.batch_stride;
  };
  use(q.a, plan.a);
  use(q.b, plan.b);
  if (plan.splits()) {  // tf32x3: a tf32 product over the parts
    q.k = plan.a.ld;
    q.a.dtype = q.b.dtype = DType::tf32;
  } else if (q.a.dtype == DType::tf32) {
    // Plain tf32's sums run over all of K (the sm90 kernel promotes tf32 sums, tf32x3's, unless
    // told this): its inputs' rounding to tf32 outweighs what the tensor cores' sums lose.
    q.fast_accumulation = true;
  }
  return q;
}

// For reports: "operands copied to 128-byte aligned lines first: a ld 4093 -> 4096, b ld 4097 ->
// 4160" ("b ld 4097 -> column-major ld 4096" when transposed), or "" when nothing is copied.
inline std::string describe(const AlignedCopyPlan& plan) {
  std::string out;
  const auto add = [&](const char* name, const OperandCopy& c) {
    if (!c.needed) return;
    if (!out.empty()) out += ", ";
    out += std::string(name) + " ld " + std::to_string(c.source_ld) + " -> ";
    if (c.transposed) out += c.layout == Layout::row_major ? "row-major ld " : "column-major ld ";
    out += std::to_string(c.ld);
  };
  if (plan.splits()) {
    return "tf32x3: A and B split into tf32 parts first (A row-major [small | big | big], B "
           "column-major [big | small | big]; K " +
           std::to_string(plan.a.length) + " -> " + std::to_string(plan.a.ld) + ")";
  }
  add("a", plan.a);
  add("b", plan.b);
  return out.empty() ? out : "operands copied to 128-byte aligned lines first: " + out;
}

}  // namespace tilegemm
