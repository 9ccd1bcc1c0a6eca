// The input element types of the tensor-core kernels, as types that say what a mainloop needs:
// how the values lie in memory, how many bytes each takes, how much K one mma instruction
// consumes, and which operand majors the tensor cores read. A kernel is a template on one of
// these; fp8 (Fp8Kind below) is one that names both operands' types and how it accumulates.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <utility>

#include "ptx/wgmma.cuh"
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
  using Mma = Storage;  // what names the mma instruction's operand types (ptx/wgmma.cuh)
  static constexpr bool kFp8 = false;
  static constexpr bool kPromotes = false;
};

using Fp16 = ElementKind<__half, DType::fp16, true, false>;
using Bf16 = ElementKind<__nv_bfloat16, DType::bf16, true, false>;
using Tf32 = ElementKind<float, DType::tf32, false, true>;  // fp32 in memory, TF32 math
// tf32 whose sums the sm90 consumers move into fp32 registers after every 32 values of K, as
// fp8's (below): the tensor cores truncate the fp32 sums they keep, so over a long K their error
// grows with K, past fp32's. tf32x3 takes it (problem/aligned_copies.hpp), for whom that error
// would be most of its own.
struct Tf32Promoted : Tf32 {
  static constexpr bool kPromotes = true;
};

// fp8 inputs (sm90 only): A and B each e4m3 or e5m2, one byte a value, 32 values of K per wgmma,
// read K-major only (wgmma has no transpose for 8-bit types). The tensor cores' fp8 sums keep
// fewer bits than fp32: with kPromotes the consumers move them into fp32 registers after every
// 128 values of K (where block scales are applied: mainloop.cuh), else they run over all of K
// (fast accumulation).
template <class StorageA, class StorageB, DType kDTypeA, DType kDTypeB_, bool kPromotes_>
struct Fp8Kind : ElementKind<StorageA, kDTypeA, false, false> {
  using Mma = sm90::Fp8Pair<StorageA, StorageB>;
  static constexpr DType kDTypeB = kDTypeB_;
  static constexpr bool kFp8 = true;
  static constexpr bool kPromotes = kPromotes_;
};
template <bool kPromotes>
using Fp8E4m3E4m3 =
    Fp8Kind<__nv_fp8_e4m3, __nv_fp8_e4m3, DType::fp8_e4m3, DType::fp8_e4m3, kPromotes>;
template <bool kPromotes>
using Fp8E4m3E5m2 =
    Fp8Kind<__nv_fp8_e4m3, __nv_fp8_e5m2, DType::fp8_e4m3, DType::fp8_e5m2, kPromotes>;
template <bool kPromotes>
using Fp8E5m2E4m3 =
    Fp8Kind<__nv_fp8_e5m2, __nv_fp8_e4m3, DType::fp8_e5m2, DType::fp8_e4m3, kPromotes>;

// Calls f(E{}) with E the fp8 element kind of A's and B's types and the accumulation: the pairs
// cuBLASLt takes (not e5m2 x e5m2: the kernels' can_implement refuses it).
template <class F>
decltype(auto) with_fp8_element(DType a, DType b, bool promotes, F&& f) {
  const auto pair = [&](auto promote) -> decltype(auto) {
    constexpr bool kPromote = decltype(promote)::value;
    if (a == DType::fp8_e5m2) return std::forward<F>(f)(Fp8E5m2E4m3<kPromote>{});
    if (b == DType::fp8_e5m2) return std::forward<F>(f)(Fp8E4m3E5m2<kPromote>{});
    return std::forward<F>(f)(Fp8E4m3E4m3<kPromote>{});
  };
  return promotes ? pair(std::true_type{}) : pair(std::false_type{});
}

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
