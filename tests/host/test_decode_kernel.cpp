// The decode kernel's host side: its registry entry (config, shared memory, what it refuses and
// why) and the problems "auto" gives it (dispatch/kernel_choice.hpp: suits_decode).
#include <gtest/gtest.h>

#include <string>

#include "dispatch/kernel_choice.hpp"
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

TEST(DecodeKernel, OneConfigOfTwoProgramsPerSm) {
  const gpu::Kernel* decode = gpu::find_kernel("decode");
  ASSERT_NE(decode, nullptr);
  ASSERT_EQ(decode->info.configs.size(), 1u);
  const KernelConfig& c = decode->info.default_config;
  EXPECT_EQ(to_string(c), "16x64x64/g8/s8/w2/wt16x32");
  // Eight stages of a 16 x 64 slice of A and a 64 x 64 slice of B, 2 bytes each: 80 KB, so that
  // two programs fit in an SM's 228 KB.
  EXPECT_EQ(decode->shared_bytes(c, DType::bf16), 8 * (16 + 64) * 64 * 2);
  EXPECT_LT(2 * decode->shared_bytes(c, DType::fp16), 228 * 1024 - 2 * 1024);
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
  EXPECT_FALSE(dispatch::suits_decode(problem(16, 4096, 4095)));  // B under 4096^2 values
  EXPECT_FALSE(dispatch::suits_decode(problem(1, 4096, 4096, DType::tf32)));
  EXPECT_FALSE(dispatch::suits_decode(problem(1, 4096, 4096, DType::fp8_e4m3)));
  GemmProblem grouped = problem(16, 4096, 4096);
  grouped.groups.form = GroupForm::counts;
  EXPECT_FALSE(dispatch::suits_decode(grouped));
}

}  // namespace
}  // namespace tilegemm
