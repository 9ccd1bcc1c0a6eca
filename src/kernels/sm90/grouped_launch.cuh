// The sm90 grouped kernel's host launcher (sm90_grouped_kernel.cuh): tensor maps, the route, the
// grid, the launch. The checks that decide whether it takes a problem are in sm90.cu.
#pragma once

#include <iterator>

#include "kernels/sm90/group_maps.hpp"
#include "kernels/sm90/launch.cuh"
#include "kernels/sm90/sm90_grouped_kernel.cuh"

namespace tilegemm::sm90 {

template <class E, size_t... I>
auto grouped_shape_tuple(std::index_sequence<I...>)
    -> std::tuple<CompiledShape<E, kGroupedShapes[I]>...>;
template <class E>
using GroupedShapes =
    decltype(grouped_shape_tuple<E>(std::make_index_sequence<std::size(kGroupedShapes)>{}));

// The memory the k_offsets form's tensor maps take from the call's workspace (group_maps.hpp).
inline size_t grouped_workspace_bytes(const GemmArgs& args) {
  return args.groups.form == GroupForm::k_offsets ? size_t(args.batch_count) * sizeof(GroupMaps)
                                                  : 0;
}

// The k_offsets form's maps, made on the device in stream order from the whole matrices' `maps`,
// in memory from the call's workspace. Without that memory the form cannot run (not_supported).
inline Status group_maps_from(const GemmArgs& args, const Sm90TensorMaps& maps, bool a_mn,
                              bool b_mn, gpu::Workspace& workspace, const GroupMaps** out) {
  void* memory = nullptr;
  const size_t bytes = grouped_workspace_bytes(args);
  if (Status s = workspace.take(bytes, "the groups' tensor maps", &memory); !s.ok()) return s;
  if (memory == nullptr) {
    return {StatusCode::not_supported,
            "kernel sm90: groups.form k_offsets needs " + std::to_string(bytes) +
                " bytes of workspace for its groups' tensor maps, and has none (" +
                workspace.shortfall() + "); give one (GemmOptions::workspace)"};
  }
  *out = static_cast<const GroupMaps*>(memory);
  return make_group_maps(maps.a, maps.b, !a_mn, !b_mn, args.groups.sizes, args.batch_count, args.k,
                         static_cast<GroupMaps*>(memory),
                         static_cast<cudaStream_t>(workspace.stream()));
}

// Launches the grouped kernel of shape kShape for element kind E on a problem sm90.cu's checks
// passed. One program per SM, or one per work item where the grouping cannot have as many (the
// groups' sizes are on the device: the grid is sized by the most items they allow).
template <class E, Sm90Shape kShape>
Status launch_grouped_shape(const GemmArgs& args, gpu::Workspace& workspace) {
  const auto stream = static_cast<cudaStream_t>(workspace.stream());
  const OperandShape a = operand_a(args), b = operand_b(args);
  Sm90TensorMaps maps{};
  const OperandTile tile_a{kShape.block_m, a.mn_major}, tile_b{kShape.block_n, b.mn_major};
  if (Status s = encode_operand_map(a, tile_a.box_mn(), &maps.a); !s.ok()) return s;
  if (Status s = encode_operand_map(b, tile_b.box_mn(), &maps.b); !s.ok()) return s;
  Sm90Launch launch{};
  launch.pairs = aligned_pairs(args.epilogue.d);
  const EpilogueParams& e = args.epilogue;
  launch.route =
      scales_only(e) && (e.d.dtype == DType::fp16 || e.d.dtype == DType::bf16) && launch.pairs
          ? StoreRoute::scaled
          : StoreRoute::general;
  // k_offsets: each group's D is a whole batch entry, as a dense batch's is, so its tiles can leave
  // through the store buffers and TMA stores, which run beside the next tile's K loop (the
  // tma_general route; C, where there is one, each thread loads).
  if (args.groups.form == GroupForm::k_offsets) {
    const StoreRoute dense = store_route(args, kShape.block_n);
    if (dense == StoreRoute::tma || dense == StoreRoute::tma_general) {
      if (Status s = encode_operand_map(output_d(args), kStoreRows, &maps.d); !s.ok()) return s;
      launch.route = StoreRoute::tma_general;
    }
  }

  int device = 0, sms = 0;
  if (Status s = current_device_sms(&device, &sms); !s.ok()) return s;
  const int64_t items = grouped_items_bound(args.groups.form, args.batch_count, args.m, args.n,
                                            kShape.block_m, kShape.block_n);
  if (items == 0) return Status::success();
  const int programs = int(items < sms ? items : sms);
  const GroupMaps* group_maps = nullptr;
  if (args.groups.form == GroupForm::k_offsets) {
    if (Status s = group_maps_from(args, maps, a.mn_major, b.mn_major, workspace, &group_maps);
        !s.ok()) {
      return s;
    }
  }
  constexpr int kSmem = int(shared_bytes<kShape>());
  using Tag = ShapeTag<kShape>;
  auto* kernel = a.mn_major ? (b.mn_major ? sm90_grouped_gemm<E, Tag, true, true>
                                          : sm90_grouped_gemm<E, Tag, true, false>)
                            : (b.mn_major ? sm90_grouped_gemm<E, Tag, false, true>
                                          : sm90_grouped_gemm<E, Tag, false, false>);
  if (Status s = allow_dynamic_shared_bytes(
          reinterpret_cast<const void*>(kernel), kSmem,
          "sm90_grouped_gemm: cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
      !s.ok()) {
    return s;
  }
  cudaLaunchAttribute cluster;
  const cudaLaunchConfig_t config =
      launch_config(programs, 1, kShape.threads(), kSmem, stream, &cluster);
  if (Status s = cuda_status(cudaLaunchKernelEx(&config, kernel, maps, args, launch, group_maps),
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
                                  gpu::Workspace& workspace) {
  return with_compiled_shape<GroupedShapes<E>>("sm90 grouped", config, [&](auto shape) {
    return launch_grouped_shape<E, decltype(shape)::shape>(args, workspace);
  });
}

extern template Status launch_grouped_for_element<Fp16>(const GemmArgs&, const KernelConfig&,
                                                        gpu::Workspace&);
extern template Status launch_grouped_for_element<Bf16>(const GemmArgs&, const KernelConfig&,
                                                        gpu::Workspace&);

}  // namespace tilegemm::sm90
