// The decode kernel's host side: its registry entry (configs, shared memory, what it refuses and
// why), its orientation, and the problems "auto" gives it (dispatch/kernel_choice.hpp:
// suits_decode).
#include <gtest/gtest.h>

#include <string>

#include "dispatch/kernel_choice.hpp"
#include "kernels/decode/compiled_shapes.hpp"
#include "kernels/kernel_registry.hpp"

namespace tilegemm {
namespace {

// A problem over fake device addresses (the checks read pointers, never memory), 16-byte aligned.
GemmProblem problem(int64_t m, int64_t n, int64_t k, DType dtype = DType::bf16) {
  GemmProblem p;
  p.m = m, p.n = n, p.k = k;
  p.a.data = reinterpret_cast<const void*>(uintptr_t(1) << 20);
  p.b.data = reinterpret_cast<const void*>(uintptr_t(1) << 30);
  p.d.data = reinterpret_cast<void*>(uintptr_t(1) << 40);
  p.a.dtype = p.b.dtype = p.d.dtype = dtype;
  return p;
}

bool contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

const KernelConfig* config_of(const gpu::Kernel& kernel, int num_stages) {
  for (const KernelConfig& c : kernel.info.configs) {
    if (c.num_stages == num_stages) return &c;
  }
  return nullptr;
}

TEST(DecodeKernel, ACpAsyncConfigOfTwoProgramsPerSmAndAStagedOne) {
  const gpu::Kernel* decode = gpu::find_kernel("decode");
  ASSERT_NE(decode, nullptr);
  ASSERT_EQ(decode->info.configs.size(), 2u);
  const KernelConfig& c = decode->info.default_config;
  EXPECT_EQ(to_string(c), "16x64x64/g8/s8/w2/wt16x32");
  EXPECT_TRUE(decode::takes_async_path(c.num_stages));
  // Eight stages of a 16 x 64 slice of A and a 64 x 64 slice of B, 2 bytes each: 80 KB, so that
  // two programs fit in an SM's 228 KB.
  EXPECT_EQ(decode->shared_bytes(c, DType::bf16), 8 * (16 + 64) * 64 * 2);
  EXPECT_LT(2 * decode->shared_bytes(c, DType::fp16), 228 * 1024 - 2 * 1024);
  const KernelConfig* staged = config_of(*decode, 2);
  ASSERT_NE(staged, nullptr);
  EXPECT_EQ(to_string(*staged), "16x64x64/g8/s2/w2/wt16x32");
  EXPECT_FALSE(decode::takes_async_path(staged->num_stages));
  EXPECT_EQ(decode->shared_bytes(*staged, DType::bf16), 2 * (16 + 64) * 64 * 2);
}

TEST(DecodeKernel, RefusesWhatCpAsyncCannotReadNamingTheArgument) {
  const gpu::Kernel* decode = gpu::find_kernel("decode");
  ASSERT_NE(decode, nullptr);
  const KernelConfig& c = decode->info.default_config;
  EXPECT_EQ(decode->can_implement_on_its_gpu(problem(1, 4096, 4096), c), "");
  EXPECT_EQ(decode->can_implement_on_its_gpu(problem(64, 1000, 1000, DType::fp16), c), "");

  GemmProblem odd_rows = problem(5, 4095, 4096);  // B's rows of 4095 values: 8190 bytes
  EXPECT_TRUE(contains(decode->can_implement_on_its_gpu(odd_rows, c), "reads A and B by cp.async"))
      << decode->can_implement_on_its_gpu(odd_rows, c);
  // The staged config takes them, and only them.
  const KernelConfig* staged = config_of(*decode, 2);
  ASSERT_NE(staged, nullptr);
  EXPECT_EQ(decode->can_implement_on_its_gpu(odd_rows, *staged), "");
  const std::string aligned = decode->can_implement_on_its_gpu(problem(1, 4096, 4096), *staged);
  EXPECT_TRUE(contains(aligned, "is the staged path's")) << aligned;
  GemmProblem col_a = problem(3, 4096, 4096);  // column-major A of 3 rows: lda 3
  col_a.a.layout = Layout::col_major;
  EXPECT_TRUE(contains(decode->can_implement_on_its_gpu(col_a, c), "multiples of 16 bytes"));
  col_a.a.ld = 8;
  EXPECT_EQ(decode->can_implement_on_its_gpu(col_a, c), "");

  const std::string tf32 = decode->can_implement_on_its_gpu(problem(1, 4096, 4096, DType::tf32), c);
  EXPECT_TRUE(contains(tf32, "does not take a.dtype tf32")) << tf32;
  KernelConfig other = c;
  other.block_n = 128;
  EXPECT_TRUE(contains(decode->can_implement_on_its_gpu(problem(1, 4096, 4096), other),
                       "has no compiled config"));
}

TEST(DecodeKernel, AutoGivesItFewRowsOfSixteenBitInputsAgainstALargeB) {
  EXPECT_TRUE(dispatch::suits_decode(problem(1, 4096, 4096)));
  EXPECT_TRUE(dispatch::suits_decode(problem(16, 14336, 4096, DType::fp16)));
  EXPECT_TRUE(dispatch::suits_decode(problem(8, 2048, 8192)));
  EXPECT_FALSE(dispatch::suits_decode(problem(17, 4096, 4096)));  // sm90 from 17 rows
  EXPECT_FALSE(
      dispatch::suits_decode(problem(16, 4096, 1016)));  // under 4096^2 values, K under 2048
  EXPECT_FALSE(dispatch::suits_decode(problem(1, 4096, 4096, DType::tf32)));
  EXPECT_FALSE(dispatch::suits_decode(problem(1, 4096, 4096, DType::fp8_e4m3)));
  GemmProblem grouped = problem(16, 4096, 4096);
  grouped.groups.form = GroupForm::counts;
  EXPECT_FALSE(dispatch::suits_decode(grouped));
}

TEST(DecodeKernel, AutoGivesItTwoToEightColumnsAsTheTransposedProductWithoutABias) {
  EXPECT_TRUE(dispatch::suits_decode(problem(8192, 8, 4096)));
  EXPECT_TRUE(dispatch::suits_decode(problem(4096, 2, 4096)));
  EXPECT_FALSE(dispatch::suits_decode(problem(4096, 1, 4096)));   // sm90 faster
  EXPECT_FALSE(dispatch::suits_decode(problem(4096, 16, 4096)));  // sm90 faster cold
  EXPECT_FALSE(dispatch::suits_decode(problem(4096, 9, 4096)));
  GemmProblem bias = problem(4096, 8, 4096);
  bias.epilogue.bias = reinterpret_cast<const void*>(uintptr_t(1) << 36);
  EXPECT_FALSE(dispatch::suits_decode(bias));  // the bias would run along the tile's rows
  bias.m = 8, bias.n = 4096;
  EXPECT_TRUE(dispatch::suits_decode(bias));
}

TEST(DecodeKernel, AutoGivesItALongKAndUnalignedRowsFromAMillionValues) {
  // Aligned: a long K suffices.
  EXPECT_TRUE(dispatch::suits_decode(problem(1, 256, 5312)));
  EXPECT_TRUE(dispatch::suits_decode(problem(16, 2048, 2048)));
  EXPECT_FALSE(dispatch::suits_decode(problem(16, 1024, 1024)));
  EXPECT_FALSE(dispatch::suits_decode(problem(4, 4096, 2040)));
  // A's rows of 3157 values (6314 bytes) are not 16-byte aligned: the staged path, no copies.
  EXPECT_TRUE(dispatch::suits_decode(problem(5, 1342, 3157)));
  EXPECT_TRUE(dispatch::suits_decode(problem(2, 335, 13713)));
  EXPECT_TRUE(dispatch::suits_decode(problem(16, 4097, 4097)));
  // Under a million values the copies are made (then asked again, aligned).
  EXPECT_FALSE(dispatch::suits_decode(problem(1, 229, 171)));
  EXPECT_FALSE(dispatch::suits_decode(problem(4, 3446, 156)));
}

TEST(DecodeKernel, RunsTheTransposedProductWhereNIsTheSmallerSide) {
  GemmArgs args = make_gemm_args(problem(4096, 8, 1000), 8);
  ASSERT_TRUE(decode::runs_transposed(args));
  const GemmArgs t = decode::oriented(args, 16);
  EXPECT_EQ(t.m, 8);
  EXPECT_EQ(t.n, 4096);
  EXPECT_EQ(t.k, 1000);
  EXPECT_EQ(t.a.data, args.b.data);
  EXPECT_EQ(t.b.data, args.a.data);
  // The same memory: element (i, j) of each transposed view is element (j, i) of the original.
  EXPECT_EQ(t.a.offset(0, 3, 999), args.b.offset(0, 999, 3));
  EXPECT_EQ(t.b.offset(0, 999, 4000), args.a.offset(0, 4000, 999));
  EXPECT_EQ(t.epilogue.d.offset(0, 5, 4000), args.epilogue.d.offset(0, 4000, 5));
  EXPECT_EQ(t.group_size_m, 1);  // one row of 16-row tiles
  // Neither where M is already the smaller side nor with a bias.
  EXPECT_FALSE(decode::runs_transposed(make_gemm_args(problem(8, 4096, 1000), 8)));
  args.epilogue.bias = args.epilogue.d.data;
  EXPECT_FALSE(decode::runs_transposed(args));
  EXPECT_EQ(decode::oriented(args, 16).m, 4096);
}

}  // namespace
}  // namespace tilegemm
