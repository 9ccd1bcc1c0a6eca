// How far a result may be from the exact product: the relative Frobenius error a correct kernel
// stays under, given the types (fp32 accumulation throughout). Used by the checks of the CLI and
// the tests, and by the autotuner to drop a config that computes something else.
#pragma once

#include "tilegemm/tilegemm.hpp"

namespace tilegemm {

inline double tolerance_for(DType input_dtype, DType output_dtype) {
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
