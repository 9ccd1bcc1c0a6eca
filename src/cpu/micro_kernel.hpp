// The CPU backend's inner product: a program's K block of A times its K block of B, added into its
// accumulators. BLIS's idea: the tile's operands are already packed (contiguous rows), and a
// register block of accumulators stays in registers over the whole depth, so each loaded value
// of B feeds several fused multiply-adds and each of A several more. On an x86-64 CPU (asked at
// run time) the block is 8 rows x 32 columns with AVX-512, 4 x 32 with AVX2 and FMA, 16
// registers either way; elsewhere, and for a tile's edge rows and columns, a plain loop does the
// same sums.
#pragma once

namespace tilegemm::cpu {

// The instruction sets the products can run with; best_isa(): the widest this CPU has.
enum class Isa { plain, avx2, avx512 };
Isa best_isa();
bool has_isa(Isa isa);

// acc[i * ldc + j] += sum over kk < depth of a[i * lda + kk] * b[kk * ldb + j], for i < rows and
// j < cols (fp32; the sums of one element in order of kk), with `isa` (has_isa(isa) must hold).
void multiply_add(Isa isa, const float* a, int lda, const float* b, int ldb, float* acc, int ldc,
                  int rows, int cols, int depth);

}  // namespace tilegemm::cpu
