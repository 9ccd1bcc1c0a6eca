// The sm90 grouped kernel's host launcher (sm90_grouped_kernel.cuh): tensor maps, the route, the
// grid, the launch. The checks that decide whether it takes a problem are in sm90.cu.
#pragma once

#include <cstring>
#include <iterator>
#include <span>
#include <vector>

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

// The memory the groups' tensor maps take from the call's workspace (group_maps.hpp).
inline size_t grouped_workspace_bytes(const GemmArgs& args) {
  return size_t(args.batch_count) * sizeof(GroupMaps);
}

// The groups' tensor maps, made on the device in stream order from the whole matrices' `whole`,
// in memory from the call's workspace; *out stays null where there is none to have (the k_offsets
// form cannot run without them; the rows forms store D from registers instead).
inline Status group_maps_from(const GemmArgs& args, const WholeMaps& whole,
                              gpu::Workspace& workspace, const GroupMaps** out) {
  void* memory = nullptr;
  if (Status s = workspace.take(grouped_workspace_bytes(args), "the groups' tensor maps", &memory);
      !s.ok() || memory == nullptr) {
    return s;
  }
  *out = static_cast<const GroupMaps*>(memory);
  const int64_t extent = args.groups.form == GroupForm::k_offsets ? args.k : args.m;
  return make_group_maps(args.groups.form, whole, args.groups.sizes, args.batch_count, extent,
                         static_cast<GroupMaps*>(memory),
                         static_cast<cudaStream_t>(workspace.stream()));
}

// The grouped kernel for shape kShape, element kind E, operand majors, PLAIN and PTR_ARRAY. fp8
// is compiled for K-major operands alone (the launcher refuses the others).
template <class E, Sm90Shape kShape, bool PLAIN, bool PTR_ARRAY = false>
auto* grouped_kernel(bool a_mn, bool b_mn) {
  using Tag = ShapeTag<kShape>;
  if constexpr (!E::kMnMajorOperands)
    return sm90_grouped_gemm<E, Tag, false, false, PLAIN, PTR_ARRAY>;
  else
    return a_mn ? (b_mn ? sm90_grouped_gemm<E, Tag, true, true, PLAIN, PTR_ARRAY>
                        : sm90_grouped_gemm<E, Tag, true, false, PLAIN, PTR_ARRAY>)
                : (b_mn ? sm90_grouped_gemm<E, Tag, false, true, PLAIN, PTR_ARRAY>
                        : sm90_grouped_gemm<E, Tag, false, false, PLAIN, PTR_ARRAY>);
}

// Launches `kernel` (a grouped kernel of shape kShape) over `programs` programs.
template <Sm90Shape kShape, class Kernel>
Status launch_grouped_kernel(Kernel* kernel, int programs, const Sm90TensorMaps& maps,
                             const GemmArgs& args, const Sm90Launch& launch,
                             const GroupTable& table, cudaStream_t stream) {
  constexpr int kSmem = int(shared_bytes<kShape>());
  if (Status s = allow_dynamic_shared_bytes(
          reinterpret_cast<const void*>(kernel), kSmem,
          "sm90_grouped_gemm: cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
      !s.ok()) {
    return s;
  }
  cudaLaunchAttribute cluster;
  const cudaLaunchConfig_t config =
      launch_config(programs, 1, kShape.threads(), kSmem, stream, &cluster);
  if (Status s = cuda_status(cudaLaunchKernelEx(&config, kernel, maps, args, launch, table),
                             "sm90_grouped_gemm: cudaLaunchKernelEx");
      !s.ok()) {
    return s;
  }
  return check_launch("sm90_grouped_gemm");
}

// Launches the grouped kernel of shape kShape for element kind E on a problem sm90.cu's checks
// passed. One program per SM, or one per work item where the grouping cannot have as many (the
// groups' sizes are on the device: the grid is sized by the most items they allow).
//
// D's route: where D = alpha * AB and a tensor map describes D, through the store buffers and TMA
// stores, the last chunks of each tile held into the next tile's K loop (the dense kernel's `tma`
// route, in the PLAIN kernel): each group's D map ends with its rows (group_maps.hpp), or, in the
// k_offsets form, its D is a whole batch entry. Otherwise from registers (scaled, general), or
// in the k_offsets form through the store buffers (tma_general; C, where there is one, each
// thread loads).
template <class E, Sm90Shape kShape>
Status launch_grouped_shape(const GemmArgs& args, gpu::Workspace& workspace) {
  const auto stream = static_cast<cudaStream_t>(workspace.stream());
  const OperandShape a = operand_a(args), b = operand_b(args);
  if (!E::kMnMajorOperands && (a.mn_major || b.mn_major)) {
    return {StatusCode::not_supported,
            "kernel sm90: grouped " + std::string(to_string(E::kDType)) + " needs K-major A and B"};
  }
  WholeMaps whole{};
  whole.a_k_inner = !a.mn_major;
  whole.b_k_inner = !b.mn_major;
  const OperandTile tile_a{kShape.block_m, a.mn_major, 1, E::kBytes},
      tile_b{kShape.block_n, b.mn_major, 1, E::kBytes};
  if (Status s = encode_operand_map(a, tile_a.box_mn(), &whole.a); !s.ok()) return s;
  if (Status s = encode_operand_map(b, tile_b.box_mn(), &whole.b); !s.ok()) return s;
  const bool k_form = args.groups.form == GroupForm::k_offsets;
  const EpilogueParams& e = args.epilogue;
  Sm90Launch launch{};
  launch.pairs = aligned_pairs(e.d);
  launch.route = register_route(e);
  const StoreRoute dense = store_route(args, kShape.block_n);
  const bool tma_d = dense == StoreRoute::tma || (k_form && dense == StoreRoute::tma_general);
  if (tma_d) {
    if (Status s = encode_operand_map(output_d(args), kStoreRows, &whole.d); !s.ok()) return s;
  }

  int device = 0, sms = 0;
  if (Status s = current_device_sms(&device, &sms); !s.ok()) return s;
  const int64_t items = grouped_items_bound(args.groups.form, args.batch_count, args.m, args.n,
                                            kShape.block_m, kShape.block_n);
  if (items == 0) return Status::success();
  const int programs = int(items < sms ? items : sms);
  const GroupMaps* group_maps = nullptr;
  if (k_form || tma_d) {
    if (Status s = group_maps_from(args, whole, workspace, &group_maps); !s.ok()) return s;
    if (k_form && group_maps == nullptr) {
      return {StatusCode::not_supported,
              "kernel sm90: groups.form k_offsets needs " +
                  std::to_string(grouped_workspace_bytes(args)) +
                  " bytes of workspace for its groups' tensor maps, and has none (" +
                  workspace.shortfall() + "); give one (GemmOptions::workspace)"};
    }
    if (group_maps != nullptr && tma_d) launch.route = dense;
  }
  const bool plain = launch.route == StoreRoute::tma;
  auto* kernel = plain ? grouped_kernel<E, kShape, true>(a.mn_major, b.mn_major)
                       : grouped_kernel<E, kShape, false>(a.mn_major, b.mn_major);
  return launch_grouped_kernel<kShape>(kernel, programs, {whole.a, whole.b, whole.d}, args, launch,
                                       {group_maps, nullptr}, stream);
}

// The memory gemm_grouped()'s problems (the ptr_array form) take from the call's workspace: for
// each, its tensor maps, its epilogue and its sizes (PtrArrayTable).
struct PtrArrayTable {
  size_t epilogues = 0, sizes = 0, bytes = 0;  // where each part starts, and the whole
  explicit PtrArrayTable(size_t problems)
      : epilogues(problems * sizeof(GroupMaps)),
        sizes(epilogues + padded(problems * sizeof(EpilogueParams))),
        bytes(sizes + padded(problems * kPtrArraySizes * sizeof(int32_t))) {}
  static size_t padded(size_t bytes) { return (bytes + 15) / 16 * 16; }
};

// Launches the grouped kernel of shape kShape for element kind E on gemm_grouped()'s problems
// (can_implement_problems passed): each problem's tensor maps (those of A and B where it has
// K values, D's on the tma route), epilogue and sizes are made on the host, and copied into the
// workspace in kernel parameters (copy_through_parameters), so the launch is graph-capturable.
// D's route: `tma` (the store buffers, the last chunks of each tile held into the next tile's K
// loop) where every problem's D takes it (D = alpha * AB, row-major, described by TMA); else
// from registers. Without workspace: not_supported (the caller runs the problems one by one).
template <class E, Sm90Shape kShape>
Status launch_ptr_array_shape(std::span<const GemmArgs> problems, gpu::Workspace& workspace) {
  const auto stream = static_cast<cudaStream_t>(workspace.stream());
  const PtrArrayTable layout(problems.size());
  Sm90Launch launch{};
  bool all_tma = true, all_scaled = true;
  launch.pairs = true;
  int64_t items = 0;
  for (const GemmArgs& p : problems) {
    if (p.m == 0 || p.n == 0) continue;  // no tiles: its D takes no route
    items += cdiv(p.m, kShape.block_m) * cdiv(p.n, kShape.block_n);
    all_tma = all_tma && store_route(p, kShape.block_n) == StoreRoute::tma;
    all_scaled = all_scaled && register_route(p.epilogue) == StoreRoute::scaled;
    launch.pairs = launch.pairs && aligned_pairs(p.epilogue.d);
  }
  if (items == 0) return Status::success();
  launch.route = all_tma ? StoreRoute::tma : all_scaled ? StoreRoute::scaled : StoreRoute::general;
  std::vector<unsigned char> host(layout.bytes, 0);
  for (size_t g = 0; g < problems.size(); ++g) {
    const GemmArgs& p = problems[g];
    if (p.m > 0 && p.n > 0) {  // an empty problem has no tiles: its maps are never read
      GroupMaps maps{};
      if (p.k > 0) {
        const OperandShape a = operand_a(p), b = operand_b(p);
        const OperandTile tile_a{kShape.block_m, a.mn_major}, tile_b{kShape.block_n, b.mn_major};
        if (Status s = encode_operand_map(a, tile_a.box_mn(), &maps.a); !s.ok()) return s;
        if (Status s = encode_operand_map(b, tile_b.box_mn(), &maps.b); !s.ok()) return s;
      }
      if (all_tma) {
        if (Status s = encode_operand_map(output_d(p), kStoreRows, &maps.d); !s.ok()) return s;
      }
      std::memcpy(host.data() + g * sizeof(GroupMaps), &maps, sizeof(GroupMaps));
    }
    std::memcpy(host.data() + layout.epilogues + g * sizeof(EpilogueParams), &p.epilogue,
                sizeof(EpilogueParams));
    const int32_t sizes[kPtrArraySizes] = {int32_t(p.m), int32_t(p.n), int32_t(p.k)};
    std::memcpy(host.data() + layout.sizes + g * sizeof(sizes), sizes, sizeof(sizes));
  }
  void* memory = nullptr;
  if (Status s = workspace.take(layout.bytes, "the problems' tensor maps", &memory); !s.ok()) {
    return s;
  }
  if (memory == nullptr) {
    return {StatusCode::not_supported,
            "kernel sm90: the problems' tensor maps need " + std::to_string(layout.bytes) +
                " bytes of workspace, and have none (" + workspace.shortfall() + ")"};
  }
  if (Status s = copy_through_parameters(host.data(), host.size(), memory, stream); !s.ok()) {
    return s;
  }
  const auto* base = static_cast<const unsigned char*>(memory);
  GemmArgs args = problems[0];
  args.batch_count = int64_t(problems.size());
  args.groups = {GroupForm::ptr_array, reinterpret_cast<const int32_t*>(base + layout.sizes)};
  const GroupTable table{reinterpret_cast<const GroupMaps*>(base),
                         reinterpret_cast<const EpilogueParams*>(base + layout.epilogues)};
  int device = 0, sms = 0;
  if (Status s = current_device_sms(&device, &sms); !s.ok()) return s;
  const int programs = int(items < sms ? items : sms);
  // The operands' storage orders: those of every problem with tiles and K values (sm90.cu's
  // problems_check).
  bool a_mn = false, b_mn = false;
  for (const GemmArgs& p : problems) {
    if (p.m > 0 && p.n > 0 && p.k > 0) {
      a_mn = operand_a(p).mn_major, b_mn = operand_b(p).mn_major;
      break;
    }
  }
  auto* kernel = all_tma ? grouped_kernel<E, kShape, true, true>(a_mn, b_mn)
                         : grouped_kernel<E, kShape, false, true>(a_mn, b_mn);
  return launch_grouped_kernel<kShape>(kernel, programs, Sm90TensorMaps{}, args, launch, table,
                                       stream);
}

// Launches the grouped shape of element kind E (fp16, bf16, or an fp8 kind: the rows forms) equal
// to `config`. One translation unit per kind (sm90_grouped_<type>.cu).
template <class E>
Status launch_grouped_for_element(const GemmArgs& args, const KernelConfig& config,
                                  gpu::Workspace& workspace) {
  return with_compiled_shape<GroupedShapes<E>>("sm90 grouped", config, [&](auto shape) {
    return launch_grouped_shape<E, decltype(shape)::shape>(args, workspace);
  });
}

// Launches the grouped shape of element kind E (fp16 or bf16) equal to `config` on
// gemm_grouped()'s problems. One translation unit per kind (sm90_ptr_array_<type>.cu).
template <class E>
Status launch_ptr_array_for_element(std::span<const GemmArgs> problems, const KernelConfig& config,
                                    gpu::Workspace& workspace) {
  return with_compiled_shape<GroupedShapes<E>>("sm90 grouped", config, [&](auto shape) {
    return launch_ptr_array_shape<E, decltype(shape)::shape>(problems, workspace);
  });
}

extern template Status launch_ptr_array_for_element<Fp16>(std::span<const GemmArgs>,
                                                          const KernelConfig&, gpu::Workspace&);
extern template Status launch_ptr_array_for_element<Bf16>(std::span<const GemmArgs>,
                                                          const KernelConfig&, gpu::Workspace&);
extern template Status launch_grouped_for_element<Fp16>(const GemmArgs&, const KernelConfig&,
                                                        gpu::Workspace&);
extern template Status launch_grouped_for_element<Bf16>(const GemmArgs&, const KernelConfig&,
                                                        gpu::Workspace&);
#define TILEGEMM_SM90_GROUPED_FP8_EXTERN(KIND)                                                  \
  extern template Status launch_grouped_for_element<KIND>(const GemmArgs&, const KernelConfig&, \
                                                          gpu::Workspace&);
TILEGEMM_SM90_GROUPED_FP8_EXTERN(Fp8E4m3E4m3<true>)
TILEGEMM_SM90_GROUPED_FP8_EXTERN(Fp8E4m3E4m3<false>)
TILEGEMM_SM90_GROUPED_FP8_EXTERN(Fp8E4m3E5m2<true>)
TILEGEMM_SM90_GROUPED_FP8_EXTERN(Fp8E4m3E5m2<false>)
TILEGEMM_SM90_GROUPED_FP8_EXTERN(Fp8E5m2E4m3<true>)
TILEGEMM_SM90_GROUPED_FP8_EXTERN(Fp8E5m2E4m3<false>)
#undef TILEGEMM_SM90_GROUPED_FP8_EXTERN

}  // namespace tilegemm::sm90
