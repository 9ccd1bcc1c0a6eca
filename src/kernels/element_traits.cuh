// The input element types of the tensor-core kernels, as types that say what a mainloop needs:
// how the values lie in memory, how many bytes each takes, how much K one mma instruction
// consumes, and which operand majors the tensor cores read. A kernel is a template on one of
// these; a new input type (fp8 e4m3/e5m2, with its scales) is a new one.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <utility>

#include "tilegemm/tilegemm.hpp"

namespace tilegemm {

// Every mma instruction (mma.sync m16n8kK, wgmma m64nNkK) takes 32 bytes of K per row.
constexpr int kMmaKBytesPerRow = 32;

template <class Storage_, DType kDType_, bool kMnMajorOperands_, bool kRoundsToTf32_>
struct ElementKind {
  using Storage = Storage_;  // one value in memory
  static constexpr DType kDType = kDType_;
  static constexpr int kBytes = int(sizeof(Storage));
  static constexpr int kMmaK = kMmaKBytesPerRow / kBytes;  // K of one mma: 16, or 8 for tf32
  // Whether the tensor cores read the operand MN-major: wgmma's transpose bits and ldmatrix.trans
  // exist for 16-bit values only, so 32-bit ones are read K-major (wgmma) or by plain loads.
  static constexpr bool kMnMajorOperands = kMnMajorOperands_;
  // tf32 arrives as fp32 bits that the mma.sync path rounds itself (wgmma reads the top 19 bits).
  static constexpr bool kRoundsToTf32 = kRoundsToTf32_;
};

using Fp16 = ElementKind<__half, DType::fp16, true, false>;
using Bf16 = ElementKind<__nv_bfloat16, DType::bf16, true, false>;
using Tf32 = ElementKind<float, DType::tf32, false, true>;  // fp32 in memory, TF32 math

// Calls f(E{}) with E the element kind of a tensor-core input dtype (fp16, bf16, tf32).
template <class F>
decltype(auto) with_element(DType dtype, F&& f) {
  switch (dtype) {
    case DType::fp16:
      return std::forward<F>(f)(Fp16{});
    case DType::bf16:
      return std::forward<F>(f)(Bf16{});
    default:  // tf32: the kernels' can_implement refuses the rest
      return std::forward<F>(f)(Tf32{});
  }
}

}  // namespace tilegemm
