// Element types in memory <-> float, one implementation for host and device.
//
// fp16 and bf16 are handled as raw 16-bit patterns so that the host code (CPU backend, tests,
// CLI) needs no CUDA headers. On the device the same functions compile to the hardware
// conversions. Rounding is round-to-nearest-even in both directions, NaN stays NaN.
#pragma once

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

// Reads element `index` of an array of `dtype` as float (tf32 is stored as fp32).
TILEGEMM_HOST_DEVICE inline float load_as_float(const void* data, DType dtype, int64_t index) {
  switch (dtype) {
    case DType::fp16:
      return fp16_bits_to_float(static_cast<const uint16_t*>(data)[index]);
    case DType::bf16:
      return bf16_bits_to_float(static_cast<const uint16_t*>(data)[index]);
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
    default:
      static_cast<float*>(data)[index] = value;
      break;
  }
}

}  // namespace tilegemm
