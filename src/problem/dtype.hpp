// Element types in memory <-> float, one implementation for host and device.
//
// fp16 and bf16 are handled as raw 16-bit patterns so that the host code (CPU backend, tests,
// CLI) needs no CUDA headers. On the device the same functions compile to the hardware
// conversions. Rounding is round-to-nearest-even in both directions, NaN stays NaN.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "common/host_device.hpp"
#include "tilegemm/tilegemm.hpp"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace tilegemm {

TILEGEMM_HOST_DEVICE inline uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}

TILEGEMM_HOST_DEVICE inline float bits_to_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

TILEGEMM_HOST_DEVICE inline float bf16_bits_to_float(uint16_t h) {
  return bits_to_float(static_cast<uint32_t>(h) << 16);
}

TILEGEMM_HOST_DEVICE inline uint16_t float_to_bf16_bits(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

TILEGEMM_HOST_DEVICE inline float fp16_bits_to_float(uint16_t h) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(h));
#else
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return bits_to_float(sign | 0x7f800000u | (mantissa << 13));  // inf/NaN
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    float magnitude = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
    return sign ? -magnitude : magnitude;
  }
  return bits_to_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
#endif
}

TILEGEMM_HOST_DEVICE inline uint16_t float_to_fp16_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __half_as_ushort(__float2half_rn(f));
#else
  uint32_t u = float_bits(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65536: inf
  if (abs >= 0x38800000u) {                       // normal half (>= 2^-14)
    uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
    return sign | static_cast<uint16_t>((rounded - 0x38000000u) >> 13);
  }
  if (abs < 0x33000000u) return sign;  // < 2^-25: rounds to zero
  // Subnormal half: shift the full mantissa into place with round-to-nearest-even.
  uint32_t exponent = abs >> 23;
  uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
  uint32_t shift = 126 - exponent;  // 14..24 for this range
  uint32_t result = mantissa >> shift;
  uint32_t remainder = mantissa & ((1u << shift) - 1);
  uint32_t halfway = 1u << (shift - 1);
  if (remainder > halfway || (remainder == halfway && (result & 1u))) ++result;
  return sign | static_cast<uint16_t>(result);
#endif
}

// An fp32 value rounded to TF32's 10 mantissa bits, to nearest with ties to even, as the Hopper
// tensor cores read tf32 inputs (the CPU backend does the same); NaN and infinities pass.
TILEGEMM_HOST_DEVICE inline float round_to_tf32(float x) {
  uint32_t u = float_bits(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return x;  // inf, NaN
  u += 0xfffu + ((u >> 13) & 1u);
  return bits_to_float(u & 0xffffe000u);
}

// tf32x3: x as big + small, two tf32 values: big = tf32(x), small = tf32(x - big) (x - big is
// exact in fp32), so that big + small holds 21 or more of x's 24 bits. Where tf32(x) would round
// past the largest float, big is x cut to tf32 instead; infinities and NaN pass as big, small 0.
struct Tf32Split {
  float big, small;
};
TILEGEMM_HOST_DEVICE inline Tf32Split split_tf32(float x) {
  const uint32_t u = float_bits(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return {x, 0.0f};
  float big = round_to_tf32(x);
  if ((float_bits(big) & 0x7f800000u) == 0x7f800000u) big = bits_to_float(u & 0xffffe000u);
  return {big, round_to_tf32(x - big)};
}

TILEGEMM_HOST_DEVICE constexpr bool is_fp8(DType d) {
  return d == DType::fp8_e4m3 || d == DType::fp8_e5m2;
}

// OCP FP8, as 8-bit patterns: E4M3 ("fn": exponent bias 7, no infinities, S.1111.111 is NaN, max
// 448) and E5M2 (bias 15, IEEE-like infinities and NaNs, max 57344). Each value is exact in float.
struct Fp8Format {
  int exponent_bits, mantissa_bits, bias;
  uint8_t max_finite;  // the pattern of the largest finite value
  bool has_infinity;
};
TILEGEMM_HOST_DEVICE constexpr Fp8Format e4m3_format() { return {4, 3, 7, 0x7e, false}; }
TILEGEMM_HOST_DEVICE constexpr Fp8Format e5m2_format() { return {5, 2, 15, 0x7b, true}; }

TILEGEMM_HOST_DEVICE inline float fp8_bits_to_float(uint8_t bits, const Fp8Format& f) {
  const int mantissa_mask = (1 << f.mantissa_bits) - 1, exponent_max = (1 << f.exponent_bits) - 1;
  const int exponent = (bits >> f.mantissa_bits) & exponent_max, mantissa = bits & mantissa_mask;
  const bool negative = (bits & 0x80) != 0;
  float magnitude;
  if (f.has_infinity && exponent == exponent_max) {
    magnitude = mantissa == 0 ? bits_to_float(0x7f800000u) : bits_to_float(0x7fc00000u);
  } else if (!f.has_infinity && exponent == exponent_max && mantissa == mantissa_mask) {
    magnitude = bits_to_float(0x7fc00000u);
  } else if (exponent == 0) {  // zero or subnormal: mantissa * 2^(1 - bias - mantissa_bits)
    magnitude = ldexpf(float(mantissa), 1 - f.bias - f.mantissa_bits);
  } else {
    magnitude =
        ldexpf(float(mantissa | (1 << f.mantissa_bits)), exponent - f.bias - f.mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

// Rounds to nearest even, saturating to the largest finite value (as cuBLASLt's fp8 outputs and
// __nv_cvt_float_to_fp8(..., __NV_SATFINITE, ...) do); NaN stays NaN.
TILEGEMM_HOST_DEVICE inline uint8_t float_to_fp8_bits(float x, const Fp8Format& f) {
  const uint8_t sign = (float_bits(x) >> 24) & 0x80;
  const float a = fabsf(x);
  if (!(a == a)) return uint8_t(sign | 0x7f);  // NaN (both formats: all exponent and mantissa bits)
  if (a > 1.0e6f) return uint8_t(sign | f.max_finite);  // far past both formats' range, or inf
  const int one = 1 << f.mantissa_bits;
  int exponent;  // a = q * 2^(exponent) with q in [1, 2)
  frexpf(a, &exponent);
  exponent -= 1;
  const int min_exponent = 1 - f.bias;
  if (a == 0.0f || exponent < min_exponent) exponent = min_exponent;  // subnormal quantum
  // Steps of 2^(exponent - mantissa_bits): exact, as the scale is a power of two.
  const float steps = rintf(ldexpf(a, f.mantissa_bits - exponent));
  int biased = exponent + f.bias, mantissa = int(steps);
  if (mantissa >= 2 * one) {  // rounded up into the next binade
    ++biased;
    mantissa = one;
  }
  if (mantissa < one) biased = 0;  // subnormal
  const int code = biased << f.mantissa_bits | (mantissa & (one - 1));
  if (code > f.max_finite || steps != steps) return uint8_t(sign | f.max_finite);
  return uint8_t(sign | code);
}

// Reads element `index` of an array of `dtype` as float (tf32 is stored as fp32).
TILEGEMM_HOST_DEVICE inline float load_as_float(const void* data, DType dtype, int64_t index) {
  switch (dtype) {
    case DType::fp16:
      return fp16_bits_to_float(static_cast<const uint16_t*>(data)[index]);
    case DType::bf16:
      return bf16_bits_to_float(static_cast<const uint16_t*>(data)[index]);
    case DType::fp8_e4m3:
      return fp8_bits_to_float(static_cast<const uint8_t*>(data)[index], e4m3_format());
    case DType::fp8_e5m2:
      return fp8_bits_to_float(static_cast<const uint8_t*>(data)[index], e5m2_format());
    default:
      return static_cast<const float*>(data)[index];
  }
}

// Writes `value` rounded to `dtype` into element `index`.
TILEGEMM_HOST_DEVICE inline void store_from_float(void* data, DType dtype, int64_t index,
                                                  float value) {
  switch (dtype) {
    case DType::fp16:
      static_cast<uint16_t*>(data)[index] = float_to_fp16_bits(value);
      break;
    case DType::bf16:
      static_cast<uint16_t*>(data)[index] = float_to_bf16_bits(value);
      break;
    case DType::fp8_e4m3:
      static_cast<uint8_t*>(data)[index] = float_to_fp8_bits(value, e4m3_format());
      break;
    case DType::fp8_e5m2:
      static_cast<uint8_t*>(data)[index] = float_to_fp8_bits(value, e5m2_format());
      break;
    default:
      static_cast<float*>(data)[index] = value;
      break;
  }
}

}  // namespace tilegemm
