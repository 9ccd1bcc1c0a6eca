// The Ampere-class instructions the sm80 kernel uses, one small inline-PTX function each
// (cp.async, shared with warptile, is in ptx/cp_async.cuh). PTX ISA references: ldmatrix
// (9.7.14.5.15), mma.sync m16n8k16 / m16n8k8 (9.7.14.5).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "ptx/cp_async.cuh"

namespace tilegemm::sm80 {

// Four 8x8 matrices of 16-bit elements; lanes 8i..8i+7 give the row addresses of matrix i.
// Lane l receives, of each matrix, row l/4, elements 2(l%4) and 2(l%4)+1 -- the mma fragment
// layout. TRANSPOSE delivers the transposed matrices (for operands stored MN-contiguous).
template <bool TRANSPOSE>
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t address) {
  if constexpr (TRANSPOSE) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
  }
}

// Rounds the fp32 bits x to tf32 for mma: to nearest, ties away from zero, as cvt.rna.tf32.f32
// does. The tensor core reads the top 19 bits of a tf32 operand and ignores the low 13, so
// adding half a tf32 unit in the last place (bit 12) to the bits is the whole rounding: a carry
// out of the low 13 bits rounds the magnitude up. One integer add, where cvt.rna takes more
// instructions and registers (with cvt, the double-buffered tf32 kernels spilled 140 bytes,
// with the add 36). The one difference: a NaN whose payload lies only in the low 13 bits reads as
// an infinity.
__device__ __forceinline__ uint32_t to_tf32(uint32_t x) { return x + 0x1000u; }

// D(16x8, fp32) += A(16xK) * B(Kx8): K = 16 for 16-bit inputs, 8 for tf32. A is 4 registers,
// B 2 (the fragment layouts of the PTX ISA).
template <typename T>
__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]);

template <>
__device__ __forceinline__ void mma<__half>(float (&d)[4], const uint32_t (&a)[4],
                                            const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <>
__device__ __forceinline__ void mma<__nv_bfloat16>(float (&d)[4], const uint32_t (&a)[4],
                                                   const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <>
__device__ __forceinline__ void mma<float>(float (&d)[4], const uint32_t (&a)[4],
                                           const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace tilegemm::sm80
