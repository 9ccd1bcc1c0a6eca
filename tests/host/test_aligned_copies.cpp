// The aligned-copy plan (problem/aligned_copies.hpp): which operands gemm() copies before a GPU
// run, with what leading dimension, batch stride and place in the workspace.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>

#include "problem/aligned_copies.hpp"

namespace tilegemm {
namespace {

// What gpu::copy_plan asks for on behalf of sm90: tf32 operands K-major, operands on L2 lines.
constexpr CopyGoals kKMajor{.k_major = true};
constexpr CopyGoals kL2Lines{.l2_lines = true};

// A stand-in device address: 256-byte aligned unless `offset` says otherwise (never read).
const void* address(uintptr_t offset = 0) {
  return reinterpret_cast<const void*>((uintptr_t(1) << 40) + offset);
}

GemmProblem problem(int64_t m, int64_t n, int64_t k, DType dtype) {
  GemmProblem p;
  p.m = m, p.n = n, p.k = k;
  p.a = {address(), dtype};
  p.b = {address(uintptr_t(1) << 32), dtype};
  return p;
}

TEST(AlignedCopyPlan, AlignedOperandsAreNotCopied) {
  const GemmProblem p = problem(4096, 4096, 4096, DType::bf16);
  EXPECT_FALSE(plan_aligned_copies(p).any());
  EXPECT_EQ(describe(plan_aligned_copies(p)), "");
}

TEST(AlignedCopyPlan, OddLeadingDimsAreRoundedUpTo128Bytes) {
  // The unaligned suite's 4095 x 4097 x 4093: row-major A (4095 rows of 4093), B (4093 of 4097).
  const GemmProblem p = problem(4095, 4097, 4093, DType::bf16);
  const AlignedCopyPlan plan = plan_aligned_copies(p);
  ASSERT_TRUE(plan.a.needed && plan.b.needed);
  EXPECT_EQ(plan.a.lines, 4095);
  EXPECT_EQ(plan.a.length, 4093);
  EXPECT_EQ(plan.a.source_ld, 4093);
  EXPECT_EQ(plan.a.ld, 4096);  // 64 bf16 = 128 bytes
  EXPECT_EQ(plan.b.lines, 4093);
  EXPECT_EQ(plan.b.ld, 4160);
  EXPECT_EQ(plan.a.offset, 0);
  EXPECT_EQ(plan.a.bytes, 4095 * 4096 * 2);
  EXPECT_EQ(plan.b.offset % kWorkspaceAlignment, 0);
  EXPECT_GE(plan.b.offset, plan.a.bytes);
  EXPECT_EQ(plan.workspace_bytes, plan.b.offset + 4093 * 4160 * 2);
  EXPECT_EQ(
      describe(plan),
      "operands copied to 128-byte aligned lines first: a ld 4093 -> 4096, b ld 4097 -> 4160");
}

TEST(AlignedCopyPlan, TheCopyIsWhatTheKernelsNeed) {
  // Whatever the misalignment (leading dim, base pointer, batch stride), layout and element size,
  // the copied operand passes the 16-byte test the fast paths make, its lines start on L2 lines,
  // and they hold the operand's.
  for (DType dtype : {DType::fp32, DType::fp16, DType::bf16, DType::tf32})
    for (Layout layout : {Layout::row_major, Layout::col_major})
      for (int variant = 0; variant < 3; ++variant) {
        GemmProblem p = problem(1000, 600, 700, dtype);
        p.batch_count = 3;
        p.a.layout = layout;
        const int64_t lines = layout == Layout::row_major ? 1000 : 700;
        const int64_t length = layout == Layout::row_major ? 700 : 1000;
        p.a.ld = variant == 0 ? length + 1 : length;
        p.a.data = variant == 1 ? address(dtype_size(dtype)) : address();
        p.a.batch_stride = lines * p.a.ld + (variant == 2 ? 1 : 0);
        const AlignedCopyPlan plan = plan_aligned_copies(p);
        ASSERT_TRUE(plan.a.needed) << variant;
        EXPECT_FALSE(plan.b.needed);
        EXPECT_EQ(plan.a.lines, lines);
        EXPECT_EQ(plan.a.length, length);
        EXPECT_GE(plan.a.ld, length);
        EXPECT_EQ(plan.a.ld * dtype_size(dtype) % kCopyLineBytes, 0);  // whole L2 lines
        EXPECT_EQ(plan.a.entries, 3);
        const GemmProblem q = with_aligned_copies(p, plan, const_cast<void*>(address()));
        EXPECT_TRUE(vector_aligned(view_of(q.a, q.m, q.k), dtype_size(dtype))) << variant;
        EXPECT_EQ(q.a.batch_stride, lines * plan.a.ld);
        EXPECT_EQ(q.b.data, p.b.data);
      }
}

TEST(AlignedCopyPlan, KMajorPlansTransposeColumnMajorAAndRowMajorB) {
  // tf32 bound for wgmma, which reads it K-major only: row-major B (K x N, N contiguous) becomes a
  // column-major copy, N lines of K; column-major A a row-major copy, M lines of K. Lines on
  // 128-byte boundaries as for any copy. (1000 x 1000 x 700: 500 flops per byte of either.)
  GemmProblem p = problem(1000, 1000, 700, DType::tf32);
  p.a.layout = Layout::col_major;  // lda 1000
  p.batch_count = 2;
  p.a.batch_stride = 1000 * 700;
  p.b.batch_stride = 700 * 1000;
  const AlignedCopyPlan plan = plan_aligned_copies(p, true, kKMajor);
  ASSERT_TRUE(plan.a.needed && plan.b.needed);
  EXPECT_TRUE(plan.a.transposed && plan.b.transposed);
  EXPECT_EQ(plan.a.layout, Layout::row_major);
  EXPECT_EQ(plan.a.lines, 1000);
  EXPECT_EQ(plan.a.length, 700);
  EXPECT_EQ(plan.a.source_ld, 1000);
  EXPECT_EQ(plan.a.ld, 704);  // 32 fp32 = 128 bytes
  EXPECT_EQ(plan.a.batch_stride, 1000 * 704);
  EXPECT_EQ(plan.b.layout, Layout::col_major);
  EXPECT_EQ(plan.b.lines, 1000);
  EXPECT_EQ(plan.b.length, 700);
  EXPECT_EQ(plan.b.source_ld, 1000);
  EXPECT_EQ(plan.b.ld, 704);
  EXPECT_EQ(plan.b.bytes, 2 * 1000 * 704 * 4);
  const GemmProblem q = with_aligned_copies(p, plan, const_cast<void*>(address()));
  EXPECT_EQ(q.a.layout, Layout::row_major);
  EXPECT_EQ(q.b.layout, Layout::col_major);
  EXPECT_EQ(q.a.ld, 704);
  EXPECT_EQ(q.b.ld, 704);
  EXPECT_TRUE(vector_aligned(view_of(q.a, q.m, q.k), 4));
  EXPECT_TRUE(vector_aligned(view_of(q.b, q.k, q.n), 4));
  EXPECT_EQ(describe(plan),
            "operands copied to 128-byte aligned lines first: a ld 1000 -> row-major ld 704, b ld "
            "1000 -> column-major ld 704");

  // Already K-major and aligned: nothing to copy. K-major but unaligned: a plain copy.
  p.a.layout = Layout::row_major;
  p.a.ld = 700;
  p.b.layout = Layout::col_major;
  p.b.ld = 700;
  EXPECT_FALSE(plan_aligned_copies(p, true, kKMajor).any());
  p.b.ld = 701;
  p.b.batch_stride = 1000 * 701;
  const AlignedCopyPlan plain = plan_aligned_copies(p, true, kKMajor);
  EXPECT_FALSE(plain.a.needed);
  ASSERT_TRUE(plain.b.needed);
  EXPECT_FALSE(plain.b.transposed);
  EXPECT_EQ(plain.b.layout, Layout::col_major);
  // Without k_major a row-major B with aligned rows stays where it is.
  p.b.layout = Layout::row_major;
  p.b.ld = 1000;
  p.b.batch_stride = 700 * 1000;
  EXPECT_FALSE(plan_aligned_copies(p).any());
  EXPECT_TRUE(plan_aligned_copies(p, true, kKMajor).b.transposed);
  // Nor does a small problem get one.
  p.m = p.n = p.k = 256;
  p.a.ld = p.b.ld = 0;
  p.a.batch_stride = p.b.batch_stride = 256 * 256;
  EXPECT_FALSE(plan_aligned_copies(p, true, kKMajor).any());
}

TEST(AlignedCopyPlan, AnOperandReadAsItLiesKeepsItsLayout) {
  // sm90's plain tf32 reads a column-major A and a row-major B as they lie
  // (kernels/aligned_copies.cu says when): at any size neither is transposed, and a copy made for
  // alignment keeps the layout.
  constexpr CopyGoals kAsTheyLie{.k_major = true, .a_as_it_lies = true, .b_as_it_lies = true};
  GemmProblem p = problem(4096, 4096, 4096, DType::tf32);
  p.a.layout = Layout::col_major;
  EXPECT_TRUE(plan_aligned_copies(p, true, kKMajor).a.transposed);
  EXPECT_TRUE(plan_aligned_copies(p, true, kKMajor).b.transposed);
  EXPECT_FALSE(plan_aligned_copies(p, true, kAsTheyLie).any());
  p.b.ld = 4097;
  const AlignedCopyPlan plan = plan_aligned_copies(p, true, kAsTheyLie);
  EXPECT_FALSE(plan.a.needed);
  EXPECT_TRUE(plan.b.needed);
  EXPECT_FALSE(plan.b.transposed);
  EXPECT_EQ(plan.b.layout, Layout::row_major);
  // Only the operand named: B as it lies, A still transposed.
  constexpr CopyGoals kBAsItLies{.k_major = true, .b_as_it_lies = true};
  p.b.ld = 0;
  EXPECT_TRUE(plan_aligned_copies(p, true, kBAsItLies).a.transposed);
  EXPECT_FALSE(plan_aligned_copies(p, true, kBAsItLies).b.needed);
}

TEST(AlignedCopyPlan, AnAlignedOperandIsTransposedOnlyWhereTheGemmOutweighsTheCopy) {
  // B's bytes against the flops: 2MNK / (4KN) = M/2 per byte; transposed from M = 768 (384).
  GemmProblem p = problem(1000, 1000, 1000, DType::tf32);
  EXPECT_TRUE(plan_aligned_copies(p, true, kKMajor).b.transposed);  // 500 per byte
  p = problem(512, 512, 512, DType::tf32);                          // 256
  EXPECT_FALSE(plan_aligned_copies(p, true, kKMajor).any());
  p = problem(128, 4096, 4096, DType::tf32);  // 64
  EXPECT_FALSE(plan_aligned_copies(p, true, kKMajor).any());
  p = problem(768, 4096, 4096, DType::tf32);  // 384
  EXPECT_TRUE(plan_aligned_copies(p, true, kKMajor).b.transposed);
  // A batch multiplies the flops and the bytes alike, unless B is shared by every entry.
  p = problem(512, 512, 512, DType::tf32);
  p.batch_count = 4;
  p.a.batch_stride = p.b.batch_stride = 512 * 512;
  EXPECT_FALSE(plan_aligned_copies(p, true, kKMajor).any());
  p.b.batch_stride = 0;
  EXPECT_TRUE(plan_aligned_copies(p, true, kKMajor).b.transposed);
  // An operand copied for alignment anyway is transposed whatever the ratio.
  p = problem(512, 512, 512, DType::tf32);
  p.b.ld = 513;
  EXPECT_TRUE(plan_aligned_copies(p, true, kKMajor).b.transposed);
  // Column-major A: N/2 flops per byte (B column-major: nothing to do for it).
  p = problem(4096, 128, 4096, DType::tf32);
  p.a.layout = Layout::col_major;
  p.b.layout = Layout::col_major;
  EXPECT_FALSE(plan_aligned_copies(p, true, kKMajor).any());
  p.n = 1024;
  EXPECT_TRUE(plan_aligned_copies(p, true, kKMajor).a.transposed);
}

TEST(AlignedCopyPlan, SixteenBitOperandsGoOntoL2LinesWhereTheGemmOutweighsTheCopy) {
  // 16400 x 16400 x 712 in bf16: A's lines are 1424 bytes, B's 32800, both 16-byte aligned but
  // not on L2 lines; the GEMM does 16400 flops per byte of each, so for sm90 both are copied onto
  // 128-byte lines.
  GemmProblem p = problem(16400, 16400, 712, DType::bf16);
  AlignedCopyPlan plan = plan_aligned_copies(p, true, kL2Lines);
  ASSERT_TRUE(plan.a.needed && plan.b.needed);
  EXPECT_FALSE(plan.a.transposed || plan.b.transposed);
  EXPECT_EQ(plan.a.ld, 768);
  EXPECT_EQ(plan.b.ld, 16448);
  EXPECT_EQ(
      describe(plan),
      "operands copied to 128-byte aligned lines first: a ld 712 -> 768, b ld 16400 -> 16448");
  // Not asked for: nothing to copy.
  EXPECT_FALSE(plan_aligned_copies(p).any());
  // 3000 x 16400 x 712: 16400 flops per byte of A, 3000 of B. B stays off its lines (the rules
  // run it in a cluster, which costs less there than the copy).
  plan = plan_aligned_copies(problem(3000, 16400, 712, DType::bf16), true, kL2Lines);
  EXPECT_TRUE(plan.a.needed);
  EXPECT_FALSE(plan.b.needed);
  // 1000^3 and 3000 x 5000 x 712: below the threshold for both operands.
  EXPECT_FALSE(plan_aligned_copies(problem(1000, 1000, 1000, DType::bf16), true, kL2Lines).any());
  EXPECT_FALSE(plan_aligned_copies(problem(3000, 5000, 712, DType::bf16), true, kL2Lines).any());
  // tf32 operands go in pairs (the next test).
  // Lines already on 128 bytes stay.
  EXPECT_FALSE(plan_aligned_copies(problem(3072, 5120, 768, DType::bf16), true, kL2Lines).any());
}

TEST(AlignedCopyPlan, Tf32OperandsGoOntoL2LinesInPairs) {
  // 3000 x 5000 x 700 with B column-major: both operands' lines are 2800 bytes, and the GEMM does
  // 2500 flops per byte of A and 1500 of B, so both are copied.
  GemmProblem p = problem(3000, 5000, 700, DType::tf32);
  p.b.layout = Layout::col_major;
  AlignedCopyPlan plan = plan_aligned_copies(p, true, kL2Lines);
  ASSERT_TRUE(plan.a.needed && plan.b.needed);
  EXPECT_EQ(plan.a.ld, 704);
  EXPECT_EQ(plan.b.ld, 704);
  EXPECT_EQ(plan.b.layout, Layout::col_major);
  // With B row-major its transposed copy (K-major for sm90) lands on 128-byte lines: A's lines
  // alone stay where they are.
  p.b.layout = Layout::row_major;
  CopyGoals both = kL2Lines;
  both.k_major = true;
  plan = plan_aligned_copies(p, true, both);
  EXPECT_FALSE(plan.a.needed);
  ASSERT_TRUE(plan.b.needed);
  EXPECT_TRUE(plan.b.transposed);
  // One of the pair on its lines already (B's 20480 bytes): A's stay off theirs.
  p = problem(3000, 5120, 700, DType::tf32);
  EXPECT_FALSE(plan_aligned_copies(p, true, kL2Lines).any());
  // Both off (B's 20000 bytes) without the K-major goal: both copied, B still row-major.
  p.n = 5000;
  plan = plan_aligned_copies(p, true, kL2Lines);
  ASSERT_TRUE(plan.a.needed && plan.b.needed);
  EXPECT_FALSE(plan.b.transposed);
  EXPECT_EQ(plan.b.ld, 5024);
  // Both off their lines, but one below 1024 flops per byte: 3000 x 500 x 700 does 1500 per
  // byte of A and 300 of B, so neither is copied.
  p = problem(3000, 500, 700, DType::tf32);
  p.b.layout = Layout::col_major;
  EXPECT_FALSE(plan_aligned_copies(p, true, kL2Lines).any());
  // 1000^3, 500 flops per byte of each: the copies would cost more than they save.
  p = problem(1000, 1000, 1000, DType::tf32);
  p.b.layout = Layout::col_major;
  EXPECT_FALSE(plan_aligned_copies(p, true, kL2Lines).any());
}

TEST(AlignedCopyPlan, AnOperandSharedByTheBatchIsCopiedOnce) {
  GemmProblem p = problem(1024, 1024, 1023, DType::fp16);
  p.batch_count = 4;
  p.a.batch_stride = 0;  // one A for every batch entry
  p.b.batch_stride = 1023 * 1024;
  const AlignedCopyPlan plan = plan_aligned_copies(p);
  ASSERT_TRUE(plan.a.needed);
  EXPECT_EQ(plan.a.entries, 1);
  EXPECT_EQ(plan.a.batch_stride, 0);
  EXPECT_EQ(plan.a.bytes, 1024 * 1024 * 2);
  EXPECT_FALSE(plan.b.needed);  // B's rows are 2048 bytes, its batch stride a multiple of 16
}

TEST(AlignedCopyPlan, SmallEmptyOrDisabledProblemsAreNotCopied) {
  GemmProblem p = problem(4095, 4097, 4093, DType::bf16);
  EXPECT_FALSE(plan_aligned_copies(p, /*enabled=*/false).any());
  p.k = 0;
  EXPECT_FALSE(plan_aligned_copies(p).any());
  p = problem(300, 300, 301, DType::bf16);  // 27 M multiply-adds: element loads stay
  EXPECT_FALSE(plan_aligned_copies(p).any());
  // but not for the sm90 kernel, whose goals copy at any size (A's 602-byte rows, B's 600), and
  // leave aligned operands as they are (A's 608-byte rows of 304 values).
  const CopyGoals any_size{.any_size = true};
  EXPECT_TRUE(plan_aligned_copies(p, true, any_size).a.needed);
  EXPECT_TRUE(plan_aligned_copies(p, true, any_size).b.needed);
  p = problem(300, 304, 304, DType::bf16);
  EXPECT_FALSE(plan_aligned_copies(p, true, any_size).any());
  p = problem(2, 335, 13713, DType::bf16);  // 9 M multiply-adds over 429 K steps of 32
  EXPECT_FALSE(plan_aligned_copies(p).any());
  EXPECT_TRUE(plan_aligned_copies(p, true, any_size).b.needed);
  p = problem(520, 300, 451, DType::bf16);  // 70 M: copied
  EXPECT_TRUE(plan_aligned_copies(p).a.needed);
  // A product of extents past 2^63 neither overflows nor wraps below the threshold.
  p = problem(int64_t(1) << 31, int64_t(1) << 31, (int64_t(1) << 31) + 1, DType::bf16);
  EXPECT_TRUE(plan_aligned_copies(p).a.needed);
}

}  // namespace
}  // namespace tilegemm

namespace tilegemm {
namespace {

// fp8 runs on sm90 alone, K-major and on 16-byte aligned lines: at any size its copies are made.
TEST(AlignedCopyPlan, Fp8OperandsAreCopiedKMajorAtAnySize) {
  constexpr CopyGoals kFp8{.k_major = true, .l2_lines = true, .required = true};
  GemmProblem p;
  p.m = 70, p.n = 50, p.k = 45;  // far below the size where copies pay
  p.a = {reinterpret_cast<const void*>(uintptr_t(1) << 40), DType::fp8_e4m3};  // row-major
  p.b = {reinterpret_cast<const void*>(uintptr_t(1) << 41), DType::fp8_e5m2};  // row-major
  const AlignedCopyPlan plan = plan_aligned_copies(p, true, kFp8);
  ASSERT_TRUE(plan.a.needed);  // lines of 45 bytes
  EXPECT_FALSE(plan.a.transposed);
  EXPECT_EQ(plan.a.ld, 128);
  ASSERT_TRUE(plan.b.needed);  // row-major B: transposed to column-major
  EXPECT_TRUE(plan.b.transposed);
  EXPECT_EQ(plan.b.layout, Layout::col_major);
  EXPECT_EQ(plan.b.lines, 50);
  EXPECT_EQ(plan.b.length, 45);
  EXPECT_EQ(plan.b.ld, 128);
  // Without `required` the same problem is left alone; with copies turned off, too.
  EXPECT_FALSE(plan_aligned_copies(p, true, CopyGoals{.k_major = true}).any());
  EXPECT_FALSE(plan_aligned_copies(p, false, kFp8).any());
}

TEST(AlignedCopyPlan, Tf32x3SplitsBothOperandsKMajorInThreePartsAtAnySize) {
  // Column-major A (transposed to row-major), column-major B (already K-major), a batch of 2 with
  // B shared: small, aligned or not, both are split, A as [small | big | big] and B as
  // [big | small | big], each part K rounded up to 32 values.
  GemmProblem p = problem(70, 50, 45, DType::tf32x3);
  p.a.layout = Layout::col_major;
  p.b.layout = Layout::col_major;
  p.batch_count = 2;
  p.a.batch_stride = 70 * 45;
  const AlignedCopyPlan plan = plan_tf32x3_copies(p);
  ASSERT_TRUE(plan.a.needed && plan.b.needed && plan.splits());
  EXPECT_TRUE(plan.a.transposed);
  EXPECT_EQ(plan.a.layout, Layout::row_major);
  EXPECT_EQ(plan.a.lines, 70);
  EXPECT_EQ(plan.a.length, 45);
  EXPECT_EQ(plan.a.source_ld, 70);
  EXPECT_EQ(plan.a.parts, 3);
  EXPECT_EQ(plan.a.part_length, 64);
  EXPECT_EQ(plan.a.part_span(), 64);
  EXPECT_EQ(plan.a.ld, 192);
  EXPECT_EQ(plan.a.small_parts, kTf32x3SmallPartsA);
  EXPECT_EQ(plan.a.entries, 2);
  EXPECT_EQ(plan.a.batch_stride, 70 * 192);
  EXPECT_FALSE(plan.b.transposed);
  EXPECT_EQ(plan.b.layout, Layout::col_major);
  EXPECT_EQ(plan.b.lines, 50);
  EXPECT_EQ(plan.b.ld, 192);
  EXPECT_EQ(plan.b.small_parts, kTf32x3SmallPartsB);
  EXPECT_EQ(plan.b.entries, 1);
  EXPECT_EQ(plan.b.batch_stride, 0);
  EXPECT_EQ(plan.a.bytes, 2 * 70 * 192 * 4);
  EXPECT_EQ(plan.b.offset % kWorkspaceAlignment, 0);
  EXPECT_EQ(plan.workspace_bytes, plan.b.offset + 50 * 192 * 4);
  // Exactly one of A's and B's parts holds small halves at each place along K, and the last
  // part of each holds big ones: small x big + big x small + big x big.
  for (int part = 0; part < kTf32x3Parts; ++part) {
    const bool small_a = kTf32x3SmallPartsA >> part & 1u, small_b = kTf32x3SmallPartsB >> part & 1u;
    EXPECT_FALSE(small_a && small_b) << part;
  }
  EXPECT_EQ(std::popcount(kTf32x3SmallPartsA) + std::popcount(kTf32x3SmallPartsB), 2);
  // The kernels see a tf32 problem over the three parts.
  const GemmProblem q = with_aligned_copies(p, plan, const_cast<void*>(address()));
  EXPECT_EQ(q.k, 192);
  EXPECT_EQ(q.a.dtype, DType::tf32);
  EXPECT_EQ(q.b.dtype, DType::tf32);
  EXPECT_EQ(q.a.ld, 192);
  EXPECT_EQ(q.b.layout, Layout::col_major);
  // Its sums promoted (the sm90 kernel's Tf32Promoted) unless fast accumulation is asked for;
  // plain tf32's never.
  EXPECT_FALSE(q.fast_accumulation);
  p.fast_accumulation = true;
  EXPECT_TRUE(with_aligned_copies(p, plan, const_cast<void*>(address())).fast_accumulation);
  p.fast_accumulation = false;
  const GemmProblem tf32 = problem(70, 50, 45, DType::tf32);
  EXPECT_TRUE(with_aligned_copies(tf32, AlignedCopyPlan{}, nullptr).fast_accumulation);
  EXPECT_EQ(describe(plan),
            "tf32x3: A and B split into tf32 parts first (A row-major [small | big | big], B "
            "column-major [big | small | big]; K 45 -> 192)");
  // An empty problem has nothing to split.
  p.k = 0;
  EXPECT_FALSE(plan_tf32x3_copies(p).any());
}

}  // namespace
}  // namespace tilegemm
