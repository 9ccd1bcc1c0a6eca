#include "cpu/micro_kernel.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define TILEGEMM_CPU_X86 1
#endif

namespace tilegemm::cpu {
namespace {

// Rows [row0, row1) x columns [col0, col1) of the product, one element's sums at a time along kk.
void multiply_add_plain(const float* a, int lda, const float* b, int ldb, float* acc, int ldc,
                        int row0, int row1, int col0, int col1, int depth) {
  for (int i = row0; i < row1; ++i) {
    float* acc_row = acc + i * ldc;
    for (int kk = 0; kk < depth; ++kk) {
      const float a_ik = a[i * lda + kk];
      const float* b_row = b + kk * ldb;
      for (int j = col0; j < col1; ++j) acc_row[j] += a_ik * b_row[j];
    }
  }
}

#ifdef TILEGEMM_CPU_X86
constexpr int kRows = 4, kVectors = 4, kColumns = 8 * kVectors;  // 16 accumulator registers

__attribute__((target("avx2,fma"))) void multiply_add_avx2(const float* a, int lda, const float* b,
                                                           int ldb, float* acc, int ldc, int rows,
                                                           int cols, int depth) {
  const int full_rows = rows / kRows * kRows, full_cols = cols / kColumns * kColumns;
  for (int i = 0; i < full_rows; i += kRows) {
    for (int j = 0; j < full_cols; j += kColumns) {
      __m256 c[kRows][kVectors];
      for (int r = 0; r < kRows; ++r)
        for (int v = 0; v < kVectors; ++v)
          c[r][v] = _mm256_loadu_ps(acc + (i + r) * ldc + j + 8 * v);
      for (int kk = 0; kk < depth; ++kk) {
        __m256 b_row[kVectors];
        for (int v = 0; v < kVectors; ++v) b_row[v] = _mm256_loadu_ps(b + kk * ldb + j + 8 * v);
        for (int r = 0; r < kRows; ++r) {
          const __m256 a_rk = _mm256_broadcast_ss(a + (i + r) * lda + kk);
          for (int v = 0; v < kVectors; ++v) c[r][v] = _mm256_fmadd_ps(a_rk, b_row[v], c[r][v]);
        }
      }
      for (int r = 0; r < kRows; ++r)
        for (int v = 0; v < kVectors; ++v)
          _mm256_storeu_ps(acc + (i + r) * ldc + j + 8 * v, c[r][v]);
    }
    multiply_add_plain(a, lda, b, ldb, acc, ldc, i, i + kRows, full_cols, cols, depth);
  }
  multiply_add_plain(a, lda, b, ldb, acc, ldc, full_rows, rows, 0, cols, depth);
}

// The same with AVX-512: 8 rows x 32 columns, 16 of the 32 vector registers.
constexpr int kRows512 = 8, kVectors512 = 2, kColumns512 = 16 * kVectors512;

__attribute__((target("avx512f"))) void multiply_add_avx512(const float* a, int lda, const float* b,
                                                            int ldb, float* acc, int ldc, int rows,
                                                            int cols, int depth) {
  const int full_rows = rows / kRows512 * kRows512, full_cols = cols / kColumns512 * kColumns512;
  for (int i = 0; i < full_rows; i += kRows512) {
    for (int j = 0; j < full_cols; j += kColumns512) {
      __m512 c[kRows512][kVectors512];
      for (int r = 0; r < kRows512; ++r)
        for (int v = 0; v < kVectors512; ++v)
          c[r][v] = _mm512_loadu_ps(acc + (i + r) * ldc + j + 16 * v);
      for (int kk = 0; kk < depth; ++kk) {
        __m512 b_row[kVectors512];
        for (int v = 0; v < kVectors512; ++v) b_row[v] = _mm512_loadu_ps(b + kk * ldb + j + 16 * v);
        for (int r = 0; r < kRows512; ++r) {
          const __m512 a_rk = _mm512_set1_ps(a[(i + r) * lda + kk]);
          for (int v = 0; v < kVectors512; ++v) c[r][v] = _mm512_fmadd_ps(a_rk, b_row[v], c[r][v]);
        }
      }
      for (int r = 0; r < kRows512; ++r)
        for (int v = 0; v < kVectors512; ++v)
          _mm512_storeu_ps(acc + (i + r) * ldc + j + 16 * v, c[r][v]);
    }
    multiply_add_avx2(a + i * lda, lda, b + full_cols, ldb, acc + i * ldc + full_cols, ldc,
                      kRows512, cols - full_cols, depth);
  }
  multiply_add_avx2(a + full_rows * lda, lda, b, ldb, acc + full_rows * ldc, ldc, rows - full_rows,
                    cols, depth);
}
#endif

}  // namespace

bool has_isa(Isa isa) {
#ifdef TILEGEMM_CPU_X86
  if (isa == Isa::avx512) return __builtin_cpu_supports("avx512f");
  if (isa == Isa::avx2) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
  return isa == Isa::plain;
}

Isa best_isa() {
  static const Isa best = has_isa(Isa::avx512) ? Isa::avx512
                          : has_isa(Isa::avx2) ? Isa::avx2
                                               : Isa::plain;
  return best;
}

void multiply_add(Isa isa, const float* a, int lda, const float* b, int ldb, float* acc, int ldc,
                  int rows, int cols, int depth) {
#ifdef TILEGEMM_CPU_X86
  if (isa == Isa::avx512) return multiply_add_avx512(a, lda, b, ldb, acc, ldc, rows, cols, depth);
  if (isa == Isa::avx2) return multiply_add_avx2(a, lda, b, ldb, acc, ldc, rows, cols, depth);
#endif
  multiply_add_plain(a, lda, b, ldb, acc, ldc, 0, rows, 0, cols, depth);
}

}  // namespace tilegemm::cpu
