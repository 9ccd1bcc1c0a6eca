// The grouped kernel's per-group tensor maps, made on the device (group_maps.hpp).
#include <algorithm>
#include <cstring>

#include "common/host_device.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/sm90/group_maps.hpp"
#include "ptx/sm90.cuh"

namespace tilegemm::sm90 {
namespace {

constexpr int kThreads = 256;

#ifdef TILEGEMM_SM90A_DEVICE_CODE
// A copy of `from` at `to`, 16 bytes at a time.
__device__ __forceinline__ void copy_map(const CUtensorMap& from, CUtensorMap* to) {
  const uint4* src = reinterpret_cast<const uint4*>(&from);
  uint4* dst = reinterpret_cast<uint4*>(to);
  for (int i = 0; i < int(sizeof(CUtensorMap) / sizeof(uint4)); ++i) dst[i] = src[i];
}

// `map`'s extent along dimension 0 (`inner`) or 1 set to `extent`.
__device__ __forceinline__ void cut(CUtensorMap* map, bool inner, uint32_t extent) {
  if (inner) {
    cuda::ptx::tensormap_replace_global_dim(cuda::ptx::space_global, map, cuda::ptx::n32_t<0>{},
                                            extent);
  } else {
    cuda::ptx::tensormap_replace_global_dim(cuda::ptx::space_global, map, cuda::ptx::n32_t<1>{},
                                            extent);
  }
}
#endif

// One block walks the groups kThreads at a time. Group g of a cumulative form ends at min(extent,
// max(0, sizes[0], ..., sizes[g])) (what clamping each offset to [the previous end, extent]
// gives): a running maximum, scanned within each chunk and carried to the next. Group g of the
// counts form ends at min(extent, max(0, sizes[g])).
__global__ void __launch_bounds__(kThreads, 1)
    group_maps_kernel(GroupForm form, const __grid_constant__ WholeMaps whole, const int32_t* sizes,
                      int64_t groups, int64_t extent, GroupMaps* out) {
#ifdef TILEGEMM_SM90A_DEVICE_CODE
  __shared__ int64_t running[kThreads];
  const int t = int(threadIdx.x);
  const bool counts = form == GroupForm::counts;
  int64_t carry = 0;  // where the groups before this chunk end
  for (int64_t first = 0; first < groups; first += kThreads) {
    const int64_t g = first + t;
    running[t] = g < groups ? int64_t(sizes[g]) : 0;
    __syncthreads();
    for (int d = 1; d < kThreads && !counts; d *= 2) {  // inclusive prefix maximum
      const int64_t before = t >= d ? running[t - d] : running[t];
      __syncthreads();
      running[t] = running[t] > before ? running[t] : before;
      __syncthreads();
    }
    const int64_t upto = running[t] > carry ? running[t] : carry;
    const int64_t end = upto < extent ? upto : extent;
    const int64_t last = running[kThreads - 1];
    __syncthreads();  // every thread has read the chunk's maximum before the next chunk writes
    if (!counts) carry = last > carry ? (last < extent ? last : extent) : carry;
    if (g < groups) {
      GroupMaps& m = out[g];
      // An empty group loads and stores nothing; its maps only need to be valid.
      const uint32_t cut_at = uint32_t(end > 0 ? end : 1);
      if (form == GroupForm::k_offsets) {
        copy_map(whole.a, &m.a);
        copy_map(whole.b, &m.b);
        cut(&m.a, whole.a_k_inner, cut_at);
        cut(&m.b, whole.b_k_inner, cut_at);
      } else {
        copy_map(whole.d, &m.d);
        cut(&m.d, false, cut_at);
      }
      // The grouped kernel acquires each map before its first use.
      cuda::ptx::fence_proxy_tensormap_generic(cuda::ptx::sem_release, cuda::ptx::scope_gpu);
    }
  }
#endif  // TILEGEMM_SM90A_DEVICE_CODE
}

// One launch's share of copy_through_parameters: kernel parameters take up to 32764 bytes.
struct ParameterChunk {
  static constexpr int kBytes = 32 * 1024 - 256;
  uint4 values[kBytes / sizeof(uint4)];
};

__global__ void __launch_bounds__(kThreads)
    copy_chunk_kernel(const __grid_constant__ ParameterChunk chunk, int count, uint4* to) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) to[i] = chunk.values[i];
#ifdef TILEGEMM_SM90A_DEVICE_CODE
  // The grouped kernel acquires the tensor maps among these values before it uses them.
  cuda::ptx::fence_proxy_tensormap_generic(cuda::ptx::sem_release, cuda::ptx::scope_gpu);
#endif
}

}  // namespace

Status copy_through_parameters(const void* from, size_t bytes, void* to, cudaStream_t stream) {
  ParameterChunk chunk;
  for (size_t done = 0; done < bytes; done += ParameterChunk::kBytes) {
    const size_t part = std::min<size_t>(ParameterChunk::kBytes, bytes - done);
    std::memset(&chunk, 0, sizeof(chunk));
    std::memcpy(&chunk, static_cast<const char*>(from) + done, part);
    const int count = int(cdiv(int64_t(part), int64_t(sizeof(uint4))));
    copy_chunk_kernel<<<int(cdiv(count, kThreads)), kThreads, 0, stream>>>(
        chunk, count, reinterpret_cast<uint4*>(static_cast<char*>(to) + done));
    if (Status s = check_launch("sm90 copy_chunk_kernel"); !s.ok()) return s;
  }
  return Status::success();
}

Status make_group_maps(GroupForm form, const WholeMaps& whole, const int32_t* sizes, int64_t groups,
                       int64_t extent, GroupMaps* out, cudaStream_t stream) {
  if (groups == 0) return Status::success();
  group_maps_kernel<<<1, kThreads, 0, stream>>>(form, whole, sizes, groups, extent, out);
  return check_launch("sm90 group_maps_kernel");
}

}  // namespace tilegemm::sm90
