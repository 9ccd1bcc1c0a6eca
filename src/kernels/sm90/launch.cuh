// The sm90 kernel's host launcher: tensor maps, the grid, the tail split and its memory, the
// launch. The checks that decide whether the kernel takes a problem at all are in sm90.cu
// (can_implement); this assumes them.
#pragma once

#include <cuda.h>

#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "kernels/cuda_check.hpp"
#include "kernels/element_traits.cuh"
#include "kernels/kernel_common.cuh"
#include "kernels/sm90/compiled_shapes.hpp"
#include "kernels/sm90/sm90_kernel.cuh"
#include "kernels/sm90/tensor_map.hpp"

namespace tilegemm::sm90 {

// A compiled shape for element kind E, as the generic config matching (kernel_common.cuh) takes
// it: a type with a static config().
template <class E, Sm90Shape kShape>
struct CompiledShape {
  static constexpr Sm90Shape shape = kShape;
  static KernelConfig config() { return kShape.config(E::kBytes); }
};
template <class E, size_t... I>
auto compiled_shape_tuple(std::index_sequence<I...>)
    -> std::tuple<CompiledShape<E, compiled_shapes<E::kBytes, E::kPromotes>()[I]>...>;
template <class E>
using CompiledShapes = decltype(compiled_shape_tuple<E>(
    std::make_index_sequence<compiled_shapes<E::kBytes, E::kPromotes>().size()>{}));

// A launch of `programs` programs of `threads` threads, in clusters of `cluster_size` along x
// (plain, with no cluster attribute, when it is 1). `cluster` is the attribute's storage, which
// the returned config points to. Shared by the occupancy query and the launch.
inline cudaLaunchConfig_t launch_config(int programs, int cluster_size, int threads,
                                        int shared_bytes, cudaStream_t stream,
                                        cudaLaunchAttribute* cluster) {
  *cluster = {};
  cluster->id = cudaLaunchAttributeClusterDimension;
  cluster->val.clusterDim = {unsigned(cluster_size), 1, 1};
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(unsigned(programs));
  config.blockDim = dim3(unsigned(threads));
  config.dynamicSmemBytes = size_t(shared_bytes);
  config.stream = stream;
  config.attrs = cluster;
  config.numAttrs = cluster_size > 1 ? 1 : 0;
  return config;
}

// The current device and its SM count: a persistent grid's size. A device's SM count is asked
// once (0: not asked yet), as it is on every launch.
inline Status current_device_sms(int* device, int* sms) {
  static std::array<std::atomic<int>, 64> known{};
  if (Status s = cuda_status(cudaGetDevice(device), "sm90: cudaGetDevice"); !s.ok()) return s;
  const bool kept = *device >= 0 && size_t(*device) < known.size();
  if (kept && (*sms = known[size_t(*device)].load(std::memory_order_relaxed)) > 0) {
    return Status::success();
  }
  if (Status s = cuda_status(cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, *device),
                             "sm90: cudaDeviceGetAttribute(MultiProcessorCount)");
      !s.ok()) {
    return s;
  }
  if (kept) known[size_t(*device)].store(*sms, std::memory_order_relaxed);
  return Status::success();
}

// The most clusters of `cluster_size` programs of `kernel` that fit on the device at once. Asked
// once per device and cluster size, and the answer reused for every sm90 kernel: each takes a
// whole SM, 384 threads and ~225 KB of shared memory, whatever its config, so the answer is the
// same for all of them.
template <class Kernel>
Status max_active_clusters(Kernel* kernel, int device, int cluster_size, int shared_bytes,
                           int threads, int* clusters) {
  static std::mutex mutex;
  static std::map<std::pair<int, int>, int> known;  // (device, cluster size) -> clusters
  std::lock_guard lock(mutex);
  if (auto it = known.find({device, cluster_size}); it != known.end()) {
    *clusters = it->second;
    return Status::success();
  }
  cudaLaunchAttribute cluster;
  const cudaLaunchConfig_t config =
      launch_config(cluster_size, cluster_size, threads, shared_bytes, nullptr, &cluster);
  if (Status s = cuda_status(cudaOccupancyMaxActiveClusters(clusters, kernel, &config),
                             "sm90: cudaOccupancyMaxActiveClusters");
      !s.ok()) {
    return s;
  }
  if (*clusters < 1) {
    return {StatusCode::cuda_error, "sm90: no cluster of " + std::to_string(cluster_size) +
                                        " programs fits on this device"};
  }
  known[{device, cluster_size}] = *clusters;
  return Status::success();
}

// The problem a launch of kShape for E runs: tf32 with a row-major B as the transposed product,
// which reads B as it lies (runs_transposed); any other as it is.
template <class E, Sm90Shape kShape>
GemmArgs as_launched(const GemmArgs& args) {
  return runs_transposed(args, E::kPromotes) ? transposed_product(args, kShape.block_m) : args;
}

// The tail split of one launch of kShape for E over `items` work items on a grid of at most
// `programs` programs: the split's hand-over goes through the plain kernel (kTailSplits), on its
// routes (plain_route).
template <class E, Sm90Shape kShape>
TailSplit tail_split_of(const GemmArgs& args, int64_t items, int64_t programs) {
  const StoreRoute route = store_route(args, kShape.block_n);
  return kTailSplits<kShape, true> && plain_route(route)
             ? plan_tail_split(items, programs, cdiv(args.k, kShape.block_k(E::kBytes)))
             : no_tail_split(items);
}

// The most memory a launch of kShape for E takes from its workspace: the tail split's, on a grid
// of one program per SM (a shape that splits has no clusters).
template <class E, Sm90Shape kShape>
size_t launch_workspace_bytes(const GemmArgs& given, int sms) {
  const GemmArgs args = as_launched<E, kShape>(given);
  const int64_t items = cluster_items(args.m, args.n, kShape.block_m, kShape.block_n,
                                      args.batch_count, kShape.cluster_m, kShape.cluster_n);
  return gpu::tail_split_bytes(tail_split_of<E, kShape>(args, items, sms),
                               kShape.block_m * kShape.block_n, kShape.consumers());
}

// Launches shape kShape for element kind E; the caller matched the config and checked the
// problem (can_implement). The operands' majors pick one of four instantiations, and the store
// route the plain or the whole-epilogue form of that one (sm90_gemm's PLAIN). Persistent: as many
// programs as SMs (clusters: as many as fit), none with nothing to do, and the last round split
// where the model gains (kTailSplits, schedule/tail_split.hpp); under one round, the split's heads
// and helpers alone.
template <class E, Sm90Shape kShape>
Status launch_shape(const GemmArgs& given, gpu::Workspace& workspace) {
  const auto stream = static_cast<cudaStream_t>(workspace.stream());
  const GemmArgs args = as_launched<E, kShape>(given);
  const OperandShape a = operand_a(args), b = operand_b(args);
  Sm90TensorMaps maps{};
  Sm90Launch launch{};
  // The boxes the kernel's load_tile issues: the same OperandTile geometry (A or B in parts when
  // the programs of a cluster share it). An MN-major box is square: its extent along MN is also
  // its K rows.
  const OperandTile tile_a{kShape.block_m, a.mn_major, kShape.cluster_n, E::kBytes},
      tile_b{kShape.block_n, b.mn_major, kShape.cluster_m, E::kBytes};
  if (Status s = encode_operand_map(a, tile_a.box_mn(), &maps.a); !s.ok()) return s;
  if (Status s = encode_operand_map(b, tile_b.box_mn(), &maps.b); !s.ok()) return s;
  launch.pairs = aligned_pairs(args.epilogue.d);
  launch.route = store_route(args, kShape.block_n);
  if (launch.route == StoreRoute::tma || launch.route == StoreRoute::tma_general) {
    if (Status s = encode_operand_map(output_d(args), kStoreRows, &maps.d); !s.ok()) return s;
  }
  if (launch.route == StoreRoute::tma_transposed) {
    if (Status s = encode_operand_map(output_d_transposed(args), kStoreRows, &maps.d); !s.ok()) {
      return s;
    }
  }
  launch.c_tma = c_by_tma(args, kShape.block_n);
  if (launch.c_tma) {
    if (Status s = encode_operand_map(source_c(args), kStoreRows, &maps.c); !s.ok()) return s;
  }

  int device = 0, sms = 0;
  if (Status s = current_device_sms(&device, &sms); !s.ok()) return s;
  const int64_t items = cluster_items(args.m, args.n, kShape.block_m, kShape.block_n,
                                      args.batch_count, kShape.cluster_m, kShape.cluster_n);
  constexpr int kSmem = int(shared_bytes<kShape>());
  constexpr int kCluster = kShape.cluster_size();

  Status status;
  auto launch_kernel = [&](auto* kernel) {
    status =
        allow_dynamic_shared_bytes(reinterpret_cast<const void*>(kernel), kSmem,
                                   "sm90_gemm: cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
    if (!status.ok()) return;
    int slots = sms / kCluster;  // clusters the grid may have
    if (kCluster > 1) {
      status = max_active_clusters(kernel, device, kCluster, kSmem, kShape.threads(), &slots);
      if (!status.ok()) return;
    }
    launch.split.plan = tail_split_of<E, kShape>(args, items, slots);
    if (launch.split.plan.on()) {
      constexpr int kTileValues = kShape.block_m * kShape.block_n;
      status = gpu::take_tail_split_memory(
          workspace, gpu::tail_split_bytes(launch.split.plan, kTileValues, kShape.consumers()),
          kTileValues, &launch.split);
      if (!status.ok()) return;
    }
    const int64_t clusters = split_programs(launch.split.plan, items, slots);
    cudaLaunchAttribute cluster;
    const cudaLaunchConfig_t config = launch_config(int(clusters * kCluster), kCluster,
                                                    kShape.threads(), kSmem, stream, &cluster);
    status = cuda_status(cudaLaunchKernelEx(&config, kernel, maps, args, launch),
                         "sm90_gemm: cudaLaunchKernelEx");
    if (status.ok()) status = check_launch("sm90_gemm");
  };
  // MN-major operands only where the tensor cores read them (tf32: K-major B, and A K-major or
  // through registers, plain tf32 only; problem_check refuses the others).
  auto go = [&](auto a_mn, auto b_mn) {
    constexpr bool kAMn = decltype(a_mn)::value, kBMn = decltype(b_mn)::value;
    constexpr bool kRegisterA = E::kDType == DType::tf32 && !E::kPromotes;
    if constexpr (!E::kMnMajorOperands && (kBMn || (kAMn && !kRegisterA))) {
      status = {StatusCode::not_supported,
                "kernel sm90: " + std::string(to_string(E::kDType)) + " needs K-major A and B"};
    } else if (plain_route(launch.route)) {
      launch_kernel(sm90_gemm<E, ShapeTag<kShape>, kAMn, kBMn, true>);
    } else {
      launch_kernel(sm90_gemm<E, ShapeTag<kShape>, kAMn, kBMn, false>);
    }
  };
  using Yes = std::true_type;
  using No = std::false_type;
  auto with_b = [&](auto a_mn) { b.mn_major ? go(a_mn, Yes{}) : go(a_mn, No{}); };
  a.mn_major ? with_b(Yes{}) : with_b(No{});
  return status;
}

// Launches the compiled shape of element kind E equal to `config`. One translation unit per
// kind (sm90_<type>.cu).
template <class E>
Status launch_for_element(const GemmArgs& args, const KernelConfig& config,
                          gpu::Workspace& workspace) {
  return with_compiled_shape<CompiledShapes<E>>("sm90", config, [&](auto shape) {
    return launch_shape<E, decltype(shape)::shape>(args, workspace);
  });
}

// The most memory a launch of `config` for E takes from its workspace (launch_workspace_bytes).
template <class E>
size_t workspace_for_element(const GemmArgs& args, const KernelConfig& config, int sms) {
  size_t bytes = 0;
  with_compiled_shape<CompiledShapes<E>>("sm90", config, [&](auto shape) {
    bytes = launch_workspace_bytes<E, decltype(shape)::shape>(args, sms);
    return Status::success();
  });
  return bytes;
}

// The dynamic shared memory of the compiled shape equal to `config`, for inputs of E (0 if none
// is).
template <class E>
int64_t compiled_shared_bytes(const KernelConfig& config) {
  int64_t bytes = 0;
  with_compiled_shape<CompiledShapes<E>>("sm90", config, [&](auto shape) {
    bytes = shared_bytes<decltype(shape)::shape>();
    return Status::success();
  });
  return bytes;
}

// The machine-code version this build compiled the kernel for (90 when sm_90a is in the build);
// defined with the bf16 instantiations.
int compiled_binary_version();

extern template Status launch_for_element<Fp16>(const GemmArgs&, const KernelConfig&,
                                                gpu::Workspace&);
extern template Status launch_for_element<Bf16>(const GemmArgs&, const KernelConfig&,
                                                gpu::Workspace&);
extern template Status launch_for_element<Tf32>(const GemmArgs&, const KernelConfig&,
                                                gpu::Workspace&);
extern template Status launch_for_element<Tf32Promoted>(const GemmArgs&, const KernelConfig&,
                                                        gpu::Workspace&);
#define TILEGEMM_SM90_FP8_EXTERN(KIND)                                                         \
  extern template Status launch_for_element<KIND<true>>(const GemmArgs&, const KernelConfig&,  \
                                                        gpu::Workspace&);                      \
  extern template Status launch_for_element<KIND<false>>(const GemmArgs&, const KernelConfig&, \
                                                         gpu::Workspace&);
TILEGEMM_SM90_FP8_EXTERN(Fp8E4m3E4m3)
TILEGEMM_SM90_FP8_EXTERN(Fp8E4m3E5m2)
TILEGEMM_SM90_FP8_EXTERN(Fp8E5m2E4m3)
#undef TILEGEMM_SM90_FP8_EXTERN

}  // namespace tilegemm::sm90
