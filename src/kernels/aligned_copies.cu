// Aligned copies of A and B (the plan is problem/aligned_copies.hpp): which operands to transpose,
// the call's workspace (workspace.hpp), and the copy kernels.
#include <algorithm>
#include <cstdint>

#include "kernels/aligned_copies.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/gemm_args.hpp"
#include "kernels/kernel_registry.hpp"
#include "kernels/sm90/tensor_map.hpp"
#include "problem/dtype.hpp"

namespace tilegemm::gpu {
namespace {

// tf32x3's parts (problem/aligned_copies.hpp): a copy's line holds `parts` parts `span` elements
// apart, part p the small halves of the values where bit p of small_parts is set, else the big
// ones (split_tf32). One part: the values themselves.
struct Parts {
  int parts = 1;
  int64_t span = 0;
  uint32_t small_parts = 0;
};

// tf32x3: four fp32 values (one 16-byte vector of the copy) split and written to each part of a
// line at `to`.
__device__ __forceinline__ void store_split(uint32_t* to, const uint32_t (&values)[4],
                                            const Parts& parts) {
  alignas(16) uint32_t big[4], small[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const Tf32Split s = split_tf32(bits_to_float(values[j]));
    big[j] = float_bits(s.big), small[j] = float_bits(s.small);
  }
  for (int p = 0; p < parts.parts; ++p) {
    *reinterpret_cast<uint4*>(to + p * parts.span) =
        *reinterpret_cast<const uint4*>(parts.small_parts >> p & 1u ? small : big);
  }
}

// One operand's copy of whole lines (not transposed): `lines` lines of `length` elements in each of
// `entries` batch entries, `source_ld` and `source_batch` apart in the source, `ld` and `batch`
// in the copy.
struct LineCopy {
  const void* source = nullptr;
  int64_t source_ld = 0, source_batch = 0;
  void* copy = nullptr;
  int64_t ld = 0, batch = 0, lines = 0, length = 0, entries = 0;
  Parts parts;
};

// The line copies of one launch: A's and B's where both need one, so that a small problem pays
// one launch for its copies, not two.
struct LineCopies {
  LineCopy copy[2];
  int count = 0;
};

// Elements move as bits (uint8/16/32_t). One 16-byte vector of a copy per thread: the lines of
// every copy of the launch (entry by entry) one after the other along grid y, vectors of a line
// (of each part's span) along x. The source is read element by element (its lines are not
// 16-byte aligned, which is why it is copied; consecutive threads still read consecutive bytes),
// the copy written in 16-byte stores. The padding past `length` is written with zeros.
template <typename T>
__global__ void copy_lines(LineCopies copies) {
  constexpr int V = 16 / sizeof(T);
  const int64_t first = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * V;
  const int64_t lines_0 = copies.copy[0].lines * copies.copy[0].entries;
  const int64_t all_lines =
      lines_0 + (copies.count > 1 ? copies.copy[1].lines * copies.copy[1].entries : 0);
  for (int64_t g = blockIdx.y; g < all_lines; g += gridDim.y) {
    const LineCopy c = g < lines_0 ? copies.copy[0] : copies.copy[1];
    if (first >= c.parts.span) continue;
    const int64_t index = g < lines_0 ? g : g - lines_0;
    const int64_t e = index / c.lines, line = index % c.lines;
    const T* from =
        static_cast<const T*>(c.source) + e * c.source_batch + line * c.source_ld + first;
    alignas(16) T values[V];
#pragma unroll
    for (int j = 0; j < V; ++j) values[j] = first + j < c.length ? from[j] : T(0);
    T* to = static_cast<T*>(c.copy) + e * c.batch + line * c.ld + first;
    if constexpr (sizeof(T) == 4) {
      if (c.parts.parts > 1) {
        store_split(to, values, c.parts);
        continue;
      }
    }
    *reinterpret_cast<uint4*>(to) = *reinterpret_cast<const uint4*>(values);
  }
}

// The transposing copy (4-byte elements: tf32; 1-byte: fp8): element j of the copy's line `line` is
// element `line` of the source's line j. A 64 x 64 block goes through shared memory (a column of
// padding spreads the reads of its columns over the banks), so that both the reads of the source's
// lines and the writes of the copy's are vectors of 4 consecutive elements (16 bytes of tf32, 4 of
// fp8): 16 threads per line, 16 lines per pass of 256 threads, four passes. (On the H100 a 32 x 32
// block of single tf32 elements moved 2.1 TB/s, this one 2.5; the plain copy moves 2.9.) The
// source's reads are vectors when its lines are aligned to 4 elements, else single elements. The
// padding past `length` is written with zeros.
constexpr int kTransposeTile = 64, kTransposeThreads = 256;

// Four elements as one load or store.
template <typename T>
struct Quad;
template <>
struct Quad<uint32_t> {
  using Vector = uint4;
  __device__ static Vector pack(const uint32_t (&v)[4]) {
    return make_uint4(v[0], v[1], v[2], v[3]);
  }
  __device__ static void unpack(Vector x, uint32_t (&v)[4]) {
    v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
  }
};
template <>
struct Quad<uint8_t> {
  using Vector = uint32_t;
  __device__ static Vector pack(const uint8_t (&v)[4]) {
    return uint32_t(v[0]) | uint32_t(v[1]) << 8 | uint32_t(v[2]) << 16 | uint32_t(v[3]) << 24;
  }
  __device__ static void unpack(Vector x, uint8_t (&v)[4]) {
    for (int i = 0; i < 4; ++i) v[i] = uint8_t(x >> (8 * i));
  }
};

template <typename T, bool kVectorReads>
__global__ void __launch_bounds__(kTransposeThreads)
    copy_transposed(const T* __restrict__ source, int64_t source_ld, int64_t source_batch,
                    T* __restrict__ copy, int64_t ld, int64_t batch, int64_t lines, int64_t length,
                    int64_t entries, Parts parts) {
  using Vector = typename Quad<T>::Vector;
  constexpr int kPasses = kTransposeTile * kTransposeTile / 4 / kTransposeThreads;  // 4
  constexpr int kRowsPerPass = kTransposeThreads / (kTransposeTile / 4);            // 16
  __shared__ T tile[kTransposeTile][kTransposeTile + 1];
  const int quad = threadIdx.x % (kTransposeTile / 4), row = threadIdx.x / (kTransposeTile / 4);
  const int64_t j0 = int64_t(blockIdx.x) * kTransposeTile;  // the copy's elements: source lines
  for (int64_t e = blockIdx.z; e < entries; e += gridDim.z) {
    for (int64_t line0 = int64_t(blockIdx.y) * kTransposeTile; line0 < lines;
         line0 += int64_t(gridDim.y) * kTransposeTile) {
      // Read: source line j0 + r, its elements line0 + 4 * quad ...
#pragma unroll
      for (int pass = 0; pass < kPasses; ++pass) {
        const int r = row + pass * kRowsPerPass;
        const int64_t j = j0 + r, first = line0 + 4 * quad;
        const T* from = source + e * source_batch + j * source_ld + first;
        T v[4];
        if (kVectorReads && j < length && first + 3 < lines) {
          Quad<T>::unpack(*reinterpret_cast<const Vector*>(from), v);
        } else {
#pragma unroll
          for (int i = 0; i < 4; ++i) v[i] = j < length && first + i < lines ? from[i] : T(0);
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) tile[r][4 * quad + i] = v[i];
      }
      __syncthreads();
      // Write: the copy's line line0 + r, its elements j0 + 4 * quad ... (ld is a multiple of 4).
#pragma unroll
      for (int pass = 0; pass < kPasses; ++pass) {
        const int r = row + pass * kRowsPerPass;
        const int64_t line = line0 + r, j = j0 + 4 * quad;
        if (line < lines && j < parts.span) {
          alignas(16) const T v[4] = {tile[4 * quad][r], tile[4 * quad + 1][r],
                                      tile[4 * quad + 2][r], tile[4 * quad + 3][r]};
          T* to = copy + e * batch + line * ld + j;
          if constexpr (sizeof(T) == 4) {
            if (parts.parts > 1) {
              store_split(to, v, parts);
              continue;
            }
          }
          *reinterpret_cast<Vector*>(to) = Quad<T>::pack(v);
        }
      }
      __syncthreads();
    }
  }
}

Parts parts_of(const OperandCopy& c) { return {c.parts, c.part_span(), c.small_parts}; }

template <typename T>
Status launch_transposed_copy(const void* source, void* workspace, const OperandCopy& c,
                              cudaStream_t stream) {
  const int64_t line_tiles = (c.lines + kTransposeTile - 1) / kTransposeTile;
  const dim3 grid(unsigned((c.part_span() + kTransposeTile - 1) / kTransposeTile),
                  unsigned(line_tiles < 65535 ? line_tiles : 65535),
                  unsigned(c.entries < 65535 ? c.entries : 65535));
  const auto* from = static_cast<const T*>(source);
  auto* to = reinterpret_cast<T*>(static_cast<char*>(workspace) + c.offset);
  const bool vectors = reinterpret_cast<uintptr_t>(source) % (4 * sizeof(T)) == 0 &&
                       c.source_ld % 4 == 0 && (c.entries == 1 || c.source_batch_stride % 4 == 0);
  const auto kernel = vectors ? copy_transposed<T, true> : copy_transposed<T, false>;
  kernel<<<grid, kTransposeThreads, 0, stream>>>(from, c.source_ld, c.source_batch_stride, to, c.ld,
                                                 c.batch_stride, c.lines, c.length, c.entries,
                                                 parts_of(c));
  return check_launch("transposed copy (copy_transposed)");
}

constexpr int kLineCopyThreads = 128;

// Blocks of copy_lines along x for a copy: one 16-byte vector of each line's part span a thread.
template <typename T>
int64_t line_blocks(const LineCopy& c) {
  return cdiv(c.parts.span / int64_t(16 / sizeof(T)), int64_t(kLineCopyThreads));
}

template <typename T>
Status launch_line_copies(const LineCopies& copies, cudaStream_t stream) {
  int64_t x = 0, lines = 0;
  for (int i = 0; i < copies.count; ++i) {
    x = std::max(x, line_blocks<T>(copies.copy[i]));
    lines += copies.copy[i].lines * copies.copy[i].entries;
  }
  const dim3 grid(unsigned(x), unsigned(lines < 65535 ? lines : 65535));
  copy_lines<T><<<grid, kLineCopyThreads, 0, stream>>>(copies);
  return check_launch("aligned copy (copy_lines)");
}

// The copies of `plan` that `operands` (A's, B's) get, made in `workspace`: transposed ones each
// by its own launch, the others in one launch of copy_lines where their lines take as many
// blocks, else one each. (On the H200, one launch for both took 1 x 229 x 171 from 12.5 to 9.3
// us; for 2 x 335 x 13713, where A's lines take 14 blocks and B's one, B's 13713 lines each left
// 13 of them idle: 136 us against 31.8 in two launches.)
template <typename T>
Status launch_copies(const MatrixInput* const (&operands)[2], const AlignedCopyPlan& plan,
                     void* workspace, cudaStream_t stream) {
  LineCopies lines;
  for (int i = 0; i < 2; ++i) {
    const OperandCopy& c = i == 0 ? plan.a : plan.b;
    if (!c.needed) continue;
    if (c.transposed) {  // planned for tf32 and fp8 only
      if constexpr (sizeof(T) == 4 || sizeof(T) == 1) {
        if (Status s = launch_transposed_copy<T>(operands[i]->data, workspace, c, stream); !s.ok())
          return s;
        continue;
      } else {
        return {StatusCode::not_supported, "aligned copy: transposes 4- and 1-byte elements only"};
      }
    }
    lines.copy[lines.count++] = {.source = operands[i]->data,
                                 .source_ld = c.source_ld,
                                 .source_batch = c.source_batch_stride,
                                 .copy = static_cast<char*>(workspace) + c.offset,
                                 .ld = c.ld,
                                 .batch = c.batch_stride,
                                 .lines = c.lines,
                                 .length = c.length,
                                 .entries = c.entries,
                                 .parts = parts_of(c)};
  }
  if (lines.count == 2 && line_blocks<T>(lines.copy[0]) != line_blocks<T>(lines.copy[1])) {
    for (const LineCopy& c : lines.copy) {
      if (Status s = launch_line_copies<T>(LineCopies{{c}, 1}, stream); !s.ok()) return s;
    }
    return Status::success();
  }
  return lines.count == 0 ? Status::success() : launch_line_copies<T>(lines, stream);
}

Status make_copies(const GemmProblem& p, const AlignedCopyPlan& plan, void* workspace,
                   cudaStream_t stream) {
  const MatrixInput* const operands[2] = {&p.a, &p.b};
  switch (dtype_size(p.a.dtype)) {  // A's and B's elements have the same size (fp8 mixes 1 and 1)
    case 1:
      return launch_copies<uint8_t>(operands, plan, workspace, stream);
    case 2:
      return launch_copies<uint16_t>(operands, plan, workspace, stream);
    default:
      return launch_copies<uint32_t>(operands, plan, workspace, stream);
  }
}

}  // namespace

AlignedCopyPlan copy_plan(const GemmProblem& p, const GemmOptions& options) {
  // A grouped problem's operands are taken as they are (the copies know no groups).
  if (p.groups.form != GroupForm::none) return {};
  // tf32x3 is the tf32 kernels' product of the split copies, for any kernel and size.
  if (p.a.dtype == DType::tf32x3) return plan_tf32x3_copies(p);
  const bool automatic = options.kernel.empty() || options.kernel == "auto";
  const Kernel* sm90 = find_kernel("sm90");
  if (sm90 != nullptr && (automatic || options.kernel == "sm90")) {
    // fp8 runs on sm90 alone, so its copies are made whatever the problem's size; the others'
    // alignment copies too, where sm90 then takes the problem (CopyGoals::any_size).
    // Plain tf32: a column-major A as it lies beside a column-major B (through registers); a
    // row-major B where the kernel runs the transposed product (sm90::runs_transposed).
    const bool tf32 = p.a.dtype == DType::tf32;
    const CopyGoals goals{
        .k_major = tf32 || is_fp8(p.a.dtype),
        .a_as_it_lies = tf32 && p.b.layout == Layout::col_major,
        .b_as_it_lies = tf32 && sm90::runs_transposed(make_gemm_args(p, 8), false),
        .l2_lines = true,
        .required = is_fp8(p.a.dtype),
        .any_size = true};
    const AlignedCopyPlan for_sm90 = plan_aligned_copies(p, options.aligned_copies, goals);
    // The copies' addresses only need to be aligned stand-ins to ask whether sm90 takes them.
    const GemmProblem q =
        with_aligned_copies(p, for_sm90, reinterpret_cast<void*>(kWorkspaceAlignment));
    if (for_sm90.any() && sm90->can_implement(q, sm90->default_for(p.a.dtype)).empty()) {
      return for_sm90;
    }
  }
  return plan_aligned_copies(p, options.aligned_copies);
}

Status AlignedCopies::make(const GemmProblem& p, const AlignedCopyPlan& plan,
                           Workspace& workspace) {
  problem_ = with_aligned_copies(p, AlignedCopyPlan{}, nullptr);  // the kernels' view, uncopied
  if (!plan.any()) return Status::success();
  void* memory = nullptr;
  if (Status s = workspace.take(size_t(plan.workspace_bytes), "the aligned copies", &memory);
      !s.ok() || memory == nullptr) {
    if (s.ok() && plan.splits()) {  // no kernel takes tf32x3 unsplit
      return {StatusCode::invalid_argument, "tf32x3 needs " + std::to_string(plan.workspace_bytes) +
                                                " bytes of workspace for its split operands; " +
                                                workspace.shortfall()};
    }
    return s;
  }
  if (Status s = make_copies(p, plan, memory, static_cast<cudaStream_t>(p.stream)); !s.ok()) {
    return s;
  }
  problem_ = with_aligned_copies(p, plan, memory);
  plan_ = plan;
  return Status::success();
}

}  // namespace tilegemm::gpu
