// Device-side stores of the epilogue that kernels share: D's 16-bit and fp8 pairs packed with the
// hardware conversions, D = alpha * AB for a run of eight outputs in 16-byte stores, and for four
// outputs straight from a thread's accumulators. The conversions round to nearest even, as
// store_from_float does; only a NaN's payload may differ.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "epilogue/epilogue.hpp"

namespace tilegemm {

// Two outputs in D's 16-bit type, as one 32-bit word (the lower column first).
__device__ __forceinline__ uint32_t pack_pair(bool fp16, float v0, float v1) {
  if (fp16) {
    const __half2 pair = __floats2half2_rn(v0, v1);
    return *reinterpret_cast<const uint32_t*>(&pair);
  }
  const __nv_bfloat162 pair = __floats2bfloat162_rn(v0, v1);
  return *reinterpret_cast<const uint32_t*>(&pair);
}
// Two outputs of an fp8 D (e4m3 unless e5m2), as one 16-bit word: cvt rounds to nearest even and
// saturates as float_to_fp8_bits does.
__device__ __forceinline__ uint16_t pack_fp8_pair(bool e5m2, float v0, float v1) {
  return __nv_cvt_float2_to_fp8x2(make_float2(v0, v1), __NV_SATFINITE,
                                  e5m2 ? __NV_E5M2 : __NV_E4M3);
}
__device__ __forceinline__ float2 unpack_pair(bool fp16, uint32_t bits) {
  return fp16 ? __half22float2(*reinterpret_cast<const __half2*>(&bits))
              : __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&bits));
}

// D = alpha * AB for eight outputs (lo, hi) consecutive along a row of a row-major D from
// (row, col): one 16-byte store for a 16-bit D, two for fp32. The caller has checked
// scales_only(p) and that the run's first element is 16-byte aligned; no per-element tests, as
// store_scaled4 below.
__device__ __forceinline__ void store_scaled_run8(const EpilogueParams& p, int64_t batch,
                                                  int64_t row, int64_t col, float4 lo, float4 hi) {
  const float a = p.alpha;
  const int64_t first = p.d.offset(batch, row, col);
  if (p.d.dtype == DType::fp32) {
    float4* out = reinterpret_cast<float4*>(static_cast<float*>(p.d.data) + first);
    out[0] = make_float4(a * lo.x, a * lo.y, a * lo.z, a * lo.w);
    out[1] = make_float4(a * hi.x, a * hi.y, a * hi.z, a * hi.w);
    return;
  }
  const bool fp16 = p.d.dtype == DType::fp16;
  *reinterpret_cast<uint4*>(static_cast<uint16_t*>(p.d.data) + first) =
      make_uint4(pack_pair(fp16, a * lo.x, a * lo.y), pack_pair(fp16, a * lo.z, a * lo.w),
                 pack_pair(fp16, a * hi.x, a * hi.y), pack_pair(fp16, a * hi.z, a * hi.w));
}

// D = alpha * AB for four outputs consecutive along a row of D, from element `at` of d.data: one
// 16-byte store for fp32, one 8-byte store for a 16-bit D. The caller has checked scales_only and
// that `at` is a multiple of four. No per-element test of type, activation or mask: the general
// epilogue_store_run inlines all of them per element, which kernels that run it for every output
// pay for in instruction fetch.
__device__ __forceinline__ void store_scaled4(const MatrixView& d, int64_t at, float alpha,
                                              float4 v) {
  if (d.dtype == DType::fp32) {
    *reinterpret_cast<float4*>(static_cast<float*>(d.data) + at) =
        make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
    return;
  }
  const bool fp16 = d.dtype == DType::fp16;
  *reinterpret_cast<uint2*>(static_cast<uint16_t*>(d.data) + at) = make_uint2(
      pack_pair(fp16, alpha * v.x, alpha * v.y), pack_pair(fp16, alpha * v.z, alpha * v.w));
}

}  // namespace tilegemm
