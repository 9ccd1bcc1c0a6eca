// How far a result may be from the exact product: the relative Frobenius error a correct kernel
// stays under, given the types (fp32 accumulation throughout). Used by the checks of the CLI and
// the tests, and by the autotuner to drop a config that computes something else.
#pragma once

#include "tilegemm/tilegemm.hpp"

namespace tilegemm {

// fp8 inputs are exact in fp32, so the error comes from the accumulation and D's rounding. With
// fast_accumulation the tensor cores' own sums (fewer bits than fp32) run over the whole K.
inline double tolerance_for(DType input_dtype, DType output_dtype, bool fast_accumulation = false) {
  // An fp8 D rounds to 3 (e4m3) or 2 (e5m2) mantissa bits: relative errors up to 2^-4 and 2^-3
  // per element, about 0.03 and 0.06 over a matrix of normal values.
  if (output_dtype == DType::fp8_e4m3) return 6e-2;
  if (output_dtype == DType::fp8_e5m2) return 1.2e-1;
  const bool fp8 = input_dtype == DType::fp8_e4m3 || input_dtype == DType::fp8_e5m2;
  if (fp8 && fast_accumulation) return output_dtype == DType::fp16 ? 1e-2 : 2e-2;
  if (fp8 && output_dtype == DType::fp32) return 1e-3;
  // tf32x3's fast accumulation: the tensor cores' truncated sums, whose error grows with K
  // (about 2.3e-9 x K on normal values).
  if (input_dtype == DType::tf32x3 && fast_accumulation) return 1e-3;
  // tf32 rounds every input to 10 mantissa bits, as fp16 does.
  if (input_dtype == DType::tf32 && output_dtype == DType::fp32) return 2e-3;
  switch (output_dtype) {
    case DType::fp16:
      return 2e-3;  // unit roundoff 2^-11
    case DType::bf16:
      return 1e-2;  // unit roundoff 2^-8
    default:
      return 1e-4;  // fp32 accumulation over long K
  }
}

// How far an fp8 D's amax may be from the reference's largest magnitude: it is taken before D's
// rounding, so only the accumulation separates them.
inline double amax_tolerance(bool fast_accumulation = false) {
  return fast_accumulation ? 2e-2 : 1e-3;
}

}  // namespace tilegemm
