#include <cstdint>
#include <map>
#include <mutex>

#include "kernels/cuda_check.hpp"
#include "kernels/memory_pool.hpp"

namespace tilegemm::gpu {

Status library_pool(int device, cudaMemPool_t* pool) {
  static std::mutex mutex;
  static std::map<int, cudaMemPool_t> pools;
  std::lock_guard lock(mutex);
  if (auto it = pools.find(device); it != pools.end()) {
    *pool = it->second;
    return Status::success();
  }
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  if (Status s = cuda_status(cudaMemPoolCreate(pool, &props), "memory pool: cudaMemPoolCreate");
      !s.ok()) {
    return s;
  }
  uint64_t unlimited = UINT64_MAX;
  if (Status s =
          cuda_status(cudaMemPoolSetAttribute(*pool, cudaMemPoolAttrReleaseThreshold, &unlimited),
                      "memory pool: cudaMemPoolSetAttribute(ReleaseThreshold)");
      !s.ok()) {
    return s;
  }
  pools[device] = *pool;
  return Status::success();
}

}  // namespace tilegemm::gpu
