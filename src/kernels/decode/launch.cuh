// The decode kernel's host launcher: the orientation (compiled_shapes.hpp: runs_transposed), the
// split of K that fills the GPU, its workspace, and the launch of the instantiation a config and
// a problem's layouts name.
#pragma once

#include "kernels/cuda_check.hpp"
#include "kernels/decode/compiled_shapes.hpp"
#include "kernels/decode/decode_kernel.cuh"
#include "kernels/element_traits.cuh"
#include "kernels/kernel_common.cuh"
#include "kernels/sm80/launch.cuh"

namespace tilegemm::decode {

// The split of a launch of shape S over `items` tiles on a grid of at most `programs`: the tail
// split's plan, whose model counts K slices (schedule/tail_split.hpp). Under one round it is
// split-K: each tile's slices shared between a head and its tails on the idle programs. A tail's
// hand-over is cheap beside a slice here (4 KB of sums, their flags taken at once and loaded
// four tails at a time: split_handover.cuh), so the model counts it a slice each way, where
// sm90's 128x256 tiles count 2 and 6: with those, 2 x 335 x 13713 on the staged path ran in
// 36.8 us, with 1 and 1 in 32.2 (H200, bf16); the aligned shapes measured were unchanged.
inline constexpr int kHeadFixupSlices = 1;
inline constexpr int kTailStoreSlices = 1;
template <class S>
TailSplit split_of(const GemmArgs& args, int64_t items, int64_t programs) {
  return plan_tail_split(items, programs, cdiv(args.k, int64_t(S::BK)), kHeadFixupSlices,
                         kTailStoreSlices);
}

// Calls f(kernel) with the instantiation of shape S for E that the layouts of `args` (the
// launch's orientation) name, on the copy path S is compiled for.
template <class S, class E, class F>
Status with_instantiation(const GemmArgs& args, F&& f) {
  constexpr bool kAsync = takes_async_path(S::kStages);
  const bool a_contig_k = args.a.stride.col == 1;  // row-major A
  const bool b_contig_k = args.b.stride.row == 1;  // column-major B
  auto go = [&](auto a_k, auto b_k) {
    return f(decode_gemm<E, S, decltype(a_k)::value, decltype(b_k)::value, kAsync>);
  };
  using Yes = std::true_type;
  using No = std::false_type;
  auto with_b = [&](auto a_k) { return b_contig_k ? go(a_k, Yes{}) : go(a_k, No{}); };
  return a_contig_k ? with_b(Yes{}) : with_b(No{});
}

// Programs of `kernel` that fit on the GPU at once, the dynamic shared memory it may take asked
// for first.
template <class S, class E, class Kernel>
Status resident_programs(Kernel* kernel, int* resident) {
  constexpr int kSmem = sm80::shared_bytes<S, E>();
  if (Status s = allow_dynamic_shared_bytes(
          reinterpret_cast<const void*>(kernel), kSmem,
          "decode_gemm: cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
      !s.ok()) {
    return s;
  }
  return sm80::resident_programs(kernel, S::kThreads, kSmem, resident);
}

// Launches shape S for element kind E; the caller matched the config and checked the problem
// (can_implement). Persistent: at most as many programs as fit at once, none without an item,
// and the split of K where the model gains (split_of); under one round its heads and tails alone.
template <class S, class E>
Status launch_shape(const GemmArgs& problem_args, bool d_aligned, gpu::Workspace& workspace) {
  constexpr int kTileValues = S::BM * S::BN;
  const GemmArgs args = oriented(problem_args, S::BM);
  return with_instantiation<S, E>(args, [&](auto* kernel) -> Status {
    int resident = 0;
    if (Status s = resident_programs<S, E>(kernel, &resident); !s.ok()) return s;
    const int64_t items = num_tiles(args.m, args.n, S::BM, S::BN) * args.batch_count;
    TailSplitWork split;
    split.plan = split_of<S>(args, items, resident);
    if (split.plan.on()) {
      const size_t bytes = gpu::tail_split_bytes(split.plan, kTileValues, 1);
      if (Status s = gpu::take_tail_split_memory(workspace, bytes, kTileValues, &split); !s.ok()) {
        return s;
      }
    }
    const auto grid = static_cast<unsigned>(split_programs(split.plan, items, resident));
    kernel<<<grid, S::kThreads, sm80::shared_bytes<S, E>(),
             static_cast<cudaStream_t>(workspace.stream())>>>(args, split, d_aligned);
    return check_launch("decode_gemm");
  });
}

// The most workspace a launch of shape S for E takes: its split's slots.
template <class S, class E>
Status launch_workspace_bytes(const GemmArgs& problem_args, size_t* bytes) {
  const GemmArgs args = oriented(problem_args, S::BM);
  return with_instantiation<S, E>(args, [&](auto* kernel) -> Status {
    int resident = 0;
    if (Status s = resident_programs<S, E>(kernel, &resident); !s.ok()) return s;
    const int64_t items = num_tiles(args.m, args.n, S::BM, S::BN) * args.batch_count;
    *bytes = gpu::tail_split_bytes(split_of<S>(args, items, resident), S::BM * S::BN, 1);
    return Status::success();
  });
}

// Every compiled shape for element kind E: launches the one equal to `config`, or (bytes not
// null) says how much workspace it takes. Compiled in one translation unit per E
// (decode_<type>.cu).
template <class E>
Status launch_for_element(const GemmArgs& args, const KernelConfig& config, bool d_aligned,
                          gpu::Workspace* workspace, size_t* bytes) {
  return with_compiled_shape<Shapes>("decode", config, [&](auto shape) -> Status {
    using S = decltype(shape);
    return bytes != nullptr ? launch_workspace_bytes<S, E>(args, bytes)
                            : launch_shape<S, E>(args, d_aligned, *workspace);
  });
}

extern template Status launch_for_element<Fp16>(const GemmArgs&, const KernelConfig&, bool,
                                                gpu::Workspace*, size_t*);
extern template Status launch_for_element<Bf16>(const GemmArgs&, const KernelConfig&, bool,
                                                gpu::Workspace*, size_t*);

}  // namespace tilegemm::decode
