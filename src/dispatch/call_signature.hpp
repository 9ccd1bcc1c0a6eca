// A call's signature: everything of a problem and its options that the GPU backend's choice reads
// -- the aligned copies' plan, the kernel and its config, and the kernel's can_implement -- so
// that two calls with one signature get the same choice. gemm() keeps its choices under it
// (dispatch/gpu_gemm.cpp), as torch keeps its cuBLASLt plans per shape: a layer called again and
// again pays for the choice once, and each call after that for its launch.
//
// The signature holds the sizes, element types, layouts, leading dimensions and batch strides,
// the epilogue (alpha, beta, the bias's type and stride, the activation and its slope), the scale
// mode and group form, fast_accumulation, the options (backend, kernel, config, policy, aligned
// copies) and the device. Of each pointer it holds only its address modulo 256 and whether it is
// null: every rule the choice applies to an address (TMA's 16 bytes, a vector's, a pair of
// values') asks for an alignment that divides 256. What lies at the addresses never enters it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "tilegemm/tilegemm.hpp"

namespace tilegemm::dispatch {

struct CallSignature {
  static constexpr int kWords = 43;
  std::array<int64_t, kWords> words{};
  std::string kernel;
  std::optional<KernelConfig> config;

  friend bool operator==(const CallSignature&, const CallSignature&) = default;
};

// `policy`: the autotune policy the call runs under (options.autotune or the environment's),
// `device`: the CUDA device it runs on.
CallSignature call_signature(const GemmProblem& problem, const GemmOptions& options,
                             AutotunePolicy policy, int device);

struct CallSignatureHash {
  size_t operator()(const CallSignature& signature) const;
};

}  // namespace tilegemm::dispatch
