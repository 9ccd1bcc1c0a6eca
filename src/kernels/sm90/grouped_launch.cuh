// The sm90 grouped kernel's host launcher (sm90_grouped_kernel.cuh): tensor maps, the route, the
// grid, the launch. The checks that decide whether it takes a problem are in sm90.cu.
#pragma once

#include <iterator>

#include "kernels/sm90/launch.cuh"
#include "kernels/sm90/sm90_grouped_kernel.cuh"

namespace tilegemm::sm90 {

template <class E, size_t... I>
auto grouped_shape_tuple(std::index_sequence<I...>)
    -> std::tuple<CompiledShape<E, kGroupedShapes[I]>...>;
template <class E>
using GroupedShapes =
    decltype(grouped_shape_tuple<E>(std::make_index_sequence<std::size(kGroupedShapes)>{}));

// Launches the grouped kernel of shape kShape for element kind E on a problem sm90.cu's checks
// passed. One program per SM, or one per work item where the grouping cannot have as many (the
// groups' sizes are on the device: the grid is sized by the most items they allow).
template <class E, Sm90Shape kShape>
Status launch_grouped_shape(const GemmArgs& args, cudaStream_t stream) {
  const OperandShape a = operand_a(args), b = operand_b(args);
  Sm90TensorMaps maps{};
  const OperandTile tile_a{kShape.block_m, false}, tile_b{kShape.block_n, b.mn_major};
  if (Status s = encode_operand_map(a, tile_a.box_mn(), &maps.a); !s.ok()) return s;
  if (Status s = encode_operand_map(b, tile_b.box_mn(), &maps.b); !s.ok()) return s;
  Sm90Launch launch{};
  launch.pairs = aligned_pairs(args.epilogue.d);
  const EpilogueParams& e = args.epilogue;
  launch.route =
      scales_only(e) && (e.d.dtype == DType::fp16 || e.d.dtype == DType::bf16) && launch.pairs
          ? StoreRoute::scaled
          : StoreRoute::general;

  int device = 0, sms = 0;
  if (Status s = current_device_sms(&device, &sms); !s.ok()) return s;
  const int64_t items = grouped_items_bound(args.groups.rows, args.batch_count, args.m, args.n,
                                            kShape.block_m, kShape.block_n);
  if (items == 0) return Status::success();
  const int programs = int(items < sms ? items : sms);
  constexpr int kSmem = int(shared_bytes<kShape>());
  auto* kernel = b.mn_major ? sm90_grouped_gemm<E, ShapeTag<kShape>, true>
                            : sm90_grouped_gemm<E, ShapeTag<kShape>, false>;
  if (Status s = allow_dynamic_shared_bytes(
          reinterpret_cast<const void*>(kernel), kSmem,
          "sm90_grouped_gemm: cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
      !s.ok()) {
    return s;
  }
  cudaLaunchAttribute cluster;
  const cudaLaunchConfig_t config =
      launch_config(programs, 1, kShape.threads(), kSmem, stream, &cluster);
  if (Status s = cuda_status(cudaLaunchKernelEx(&config, kernel, maps, args, launch),
                             "sm90_grouped_gemm: cudaLaunchKernelEx");
      !s.ok()) {
    return s;
  }
  return check_launch("sm90_grouped_gemm");
}

// Launches the grouped shape of element kind E (fp16 or bf16) equal to `config`. One translation
// unit per kind (sm90_grouped_<type>.cu).
template <class E>
Status launch_grouped_for_element(const GemmArgs& args, const KernelConfig& config,
                                  cudaStream_t stream) {
  return with_compiled_shape<GroupedShapes<E>>("sm90 grouped", config, [&](auto shape) {
    return launch_grouped_shape<E, decltype(shape)::shape>(args, stream);
  });
}

extern template Status launch_grouped_for_element<Fp16>(const GemmArgs&, const KernelConfig&,
                                                        cudaStream_t);
extern template Status launch_grouped_for_element<Bf16>(const GemmArgs&, const KernelConfig&,
                                                        cudaStream_t);

}  // namespace tilegemm::sm90
