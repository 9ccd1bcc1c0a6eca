// The sm80 kernel's host launcher: the persistent grid's size, and the launch of the
// instantiation a config and a problem's layouts name.
#pragma once

#include <map>
#include <mutex>
#include <utility>

#include "kernels/cuda_check.hpp"
#include "kernels/element_traits.cuh"
#include "kernels/kernel_common.cuh"
#include "kernels/sm80/sm80_kernel.cuh"
#include "problem/alignment.hpp"

namespace tilegemm::sm80 {

// cp.async moves 16 bytes from 16-byte aligned addresses: A's and B's base pointer, leading
// dimension and batch stride must all be multiples of 16 bytes.
inline bool takes_cp_async(const GemmArgs& args) {
  const int element_size = dtype_size(args.a.dtype);
  return vector_aligned(args.a, element_size) && vector_aligned(args.b, element_size);
}

// D's runs of 8 may be written with 16-byte stores.
inline bool d_takes_vector_stores(const GemmArgs& args) {
  return vector_aligned(args.epilogue.d, dtype_size(args.epilogue.d.dtype));
}

// How many programs of `kernel` fit on the current device at once: the persistent grid's size.
// Asked once per kernel and device (the occupancy query costs more than a launch).
template <class Kernel>
Status resident_programs(Kernel* kernel, int threads, int shared_bytes, int* programs) {
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, int> known;  // (kernel, device) -> programs
  int device = 0;
  if (Status s = cuda_status(cudaGetDevice(&device), "sm80: cudaGetDevice"); !s.ok()) return s;
  std::lock_guard lock(mutex);
  const std::pair<const void*, int> key{reinterpret_cast<const void*>(kernel), device};
  if (auto it = known.find(key); it != known.end()) {
    *programs = it->second;
    return Status::success();
  }
  int sms = 0, per_sm = 0;
  if (Status s = cuda_status(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                             "sm80: cudaDeviceGetAttribute(MultiProcessorCount)");
      !s.ok()) {
    return s;
  }
  if (Status s = cuda_status(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared_bytes),
          "sm80: cudaOccupancyMaxActiveBlocksPerMultiprocessor");
      !s.ok()) {
    return s;
  }
  if (per_sm < 1) return {StatusCode::cuda_error, "sm80: the kernel does not fit on an SM"};
  *programs = known[key] = sms * per_sm;
  return Status::success();
}

// Launches the instantiation for element kind E, compiled shape S and copy path ASYNC; the caller
// matched the config. The layouts pick one of four kernels, on a persistent grid.
template <class S, class E, bool ASYNC>
Status launch_shape(const GemmArgs& args, bool d_aligned, cudaStream_t stream) {
  const bool a_contig_k = args.a.stride.col == 1;  // row-major A
  const bool b_contig_k = args.b.stride.row == 1;  // column-major B
  constexpr int kSmem = shared_bytes<S, E>();
  Status status;
  auto go = [&](auto a_k, auto b_k) {
    auto* kernel = sm80_gemm<E, S, decltype(a_k)::value, decltype(b_k)::value, ASYNC>;
    // More than 48 KB of dynamic shared memory must be asked for, per kernel.
    status =
        allow_dynamic_shared_bytes(reinterpret_cast<const void*>(kernel), kSmem,
                                   "sm80_gemm: cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
    if (!status.ok()) return;
    int resident = 0;  // programs that fit on the GPU at once
    status = resident_programs(kernel, S::kThreads, kSmem, &resident);
    if (!status.ok()) return;
    const int64_t work_items = num_tiles(args.m, args.n, S::BM, S::BN) * args.batch_count;
    const auto grid = static_cast<unsigned>(work_items < resident ? work_items : resident);
    kernel<<<grid, S::kThreads, kSmem, stream>>>(args, d_aligned);
    status = check_launch("sm80_gemm");
  };
  using Yes = std::true_type;
  using No = std::false_type;
  auto with_b = [&](auto a_k) { b_contig_k ? go(a_k, Yes{}) : go(a_k, No{}); };
  a_contig_k ? with_b(Yes{}) : with_b(No{});
  return status;
}

// Every compiled shape for element kind E and copy path ASYNC: launches the one equal to
// `config`. Compiled in one translation unit per (E, ASYNC), sm80_<type>_<path>.cu, so the build
// runs them in parallel.
template <class E, bool ASYNC>
Status launch_for_element(const GemmArgs& args, const KernelConfig& config, bool d_aligned,
                          cudaStream_t stream) {
  return with_compiled_shape<Shapes>("sm80", config, [&](auto shape) -> Status {
    using S = decltype(shape);
    if constexpr (compiled_for(S::BM, S::BN, S::BK, S::kStages, E::kBytes, ASYNC)) {
      return launch_shape<S, E, ASYNC>(args, d_aligned, stream);
    } else {
      return {StatusCode::not_supported, "sm80: config not compiled for this input type and path"};
    }
  });
}

extern template Status launch_for_element<Fp16, true>(const GemmArgs&, const KernelConfig&, bool,
                                                      cudaStream_t);
extern template Status launch_for_element<Fp16, false>(const GemmArgs&, const KernelConfig&, bool,
                                                       cudaStream_t);
extern template Status launch_for_element<Bf16, true>(const GemmArgs&, const KernelConfig&, bool,
                                                      cudaStream_t);
extern template Status launch_for_element<Bf16, false>(const GemmArgs&, const KernelConfig&, bool,
                                                       cudaStream_t);
extern template Status launch_for_element<Tf32, true>(const GemmArgs&, const KernelConfig&, bool,
                                                      cudaStream_t);
extern template Status launch_for_element<Tf32, false>(const GemmArgs&, const KernelConfig&, bool,
                                                       cudaStream_t);

}  // namespace tilegemm::sm80
