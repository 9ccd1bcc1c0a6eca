// The k_offsets form's tensor maps, made on the device (group_maps.hpp).
#include "kernels/cuda_check.hpp"
#include "kernels/sm90/group_maps.hpp"
#include "ptx/sm90.cuh"

namespace tilegemm::sm90 {
namespace {

constexpr int kThreads = 256;

#ifdef TILEGEMM_SM90A_DEVICE_CODE
// `map`'s K extent set to `extent` (dimension 0 where K is innermost, else 1).
__device__ __forceinline__ void cut_k(CUtensorMap* map, bool k_inner, uint32_t extent) {
  if (k_inner) {
    cuda::ptx::tensormap_replace_global_dim(cuda::ptx::space_global, map, cuda::ptx::n32_t<0>{},
                                            extent);
  } else {
    cuda::ptx::tensormap_replace_global_dim(cuda::ptx::space_global, map, cuda::ptx::n32_t<1>{},
                                            extent);
  }
}
#endif

// One block walks the groups kThreads at a time. Group g's K values end at min(K, max(0,
// offsets[0], ..., offsets[g])) (what clamping each offset to [the previous end, K] gives): a
// running maximum, scanned within each chunk and carried to the next.
__global__ void __launch_bounds__(kThreads, 1)
    group_maps_kernel(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b,
                      bool a_k_inner, bool b_k_inner, const int32_t* offsets, int64_t groups,
                      int64_t k, GroupMaps* out) {
#ifdef TILEGEMM_SM90A_DEVICE_CODE
  __shared__ int64_t running[kThreads];
  const int t = int(threadIdx.x);
  int64_t carry = 0;  // where the groups before this chunk end
  for (int64_t first = 0; first < groups; first += kThreads) {
    const int64_t g = first + t;
    running[t] = g < groups ? int64_t(offsets[g]) : 0;
    __syncthreads();
    for (int d = 1; d < kThreads; d *= 2) {  // inclusive prefix maximum
      const int64_t before = t >= d ? running[t - d] : running[t];
      __syncthreads();
      running[t] = running[t] > before ? running[t] : before;
      __syncthreads();
    }
    const int64_t upto = running[t] > carry ? running[t] : carry;
    const int64_t end = upto < k ? upto : k;
    const int64_t last = running[kThreads - 1];
    __syncthreads();  // every thread has read the chunk's maximum before the next chunk writes
    carry = last > carry ? (last < k ? last : k) : carry;
    if (g < groups) {
      GroupMaps& m = out[g];
      const uint4* from_a = reinterpret_cast<const uint4*>(&a);
      const uint4* from_b = reinterpret_cast<const uint4*>(&b);
      uint4* to_a = reinterpret_cast<uint4*>(&m.a);
      uint4* to_b = reinterpret_cast<uint4*>(&m.b);
      for (int i = 0; i < int(sizeof(CUtensorMap) / sizeof(uint4)); ++i) {
        to_a[i] = from_a[i];
        to_b[i] = from_b[i];
      }
      // An empty group loads nothing; its maps only need to be valid.
      const uint32_t extent = uint32_t(end > 0 ? end : 1);
      cut_k(&m.a, a_k_inner, extent);
      cut_k(&m.b, b_k_inner, extent);
      // The grouped kernel's producer acquires each map before its first load through it.
      cuda::ptx::fence_proxy_tensormap_generic(cuda::ptx::sem_release, cuda::ptx::scope_gpu);
    }
  }
#endif  // TILEGEMM_SM90A_DEVICE_CODE
}

}  // namespace

Status make_group_maps(const CUtensorMap& a, const CUtensorMap& b, bool a_k_inner, bool b_k_inner,
                       const int32_t* offsets, int64_t groups, int64_t k, GroupMaps* out,
                       cudaStream_t stream) {
  if (groups == 0) return Status::success();
  group_maps_kernel<<<1, kThreads, 0, stream>>>(a, b, a_k_inner, b_k_inner, offsets, groups, k,
                                                out);
  return check_launch("sm90 group_maps_kernel");
}

}  // namespace tilegemm::sm90
