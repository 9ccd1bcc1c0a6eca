// How far a result may be from the exact product: the relative Frobenius error a correct kernel
// stays under, given the types (fp32 accumulation throughout). Used by the checks of the CLI and
// the tests, and by the autotuner to drop a config that computes something else.
#pragma once

#include "tilegemm/tilegemm.hpp"

namespace tilegemm {

// fp8 inputs are exact in fp32, so the error comes from the accumulation and D's rounding. With
// fast_accumulation the tensor cores' own sums (fewer bits than fp32) run over the whole K.
inline double tolerance_for(DType input_dtype, DType output_dtype, bool fast_accumulation = false) {
  const bool fp8 = input_dtype == DType::fp8_e4m3 || input_dtype == DType::fp8_e5m2;
  if (fp8 && fast_accumulation) return output_dtype == DType::fp16 ? 1e-2 : 2e-2;
  if (fp8 && output_dtype == DType::fp32) return 1e-3;
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

}  // namespace tilegemm
