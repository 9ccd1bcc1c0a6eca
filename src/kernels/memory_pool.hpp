// The memory pool the library takes its workspaces from: aligned copies of the operands
// (aligned_copies.cu) and the sm90 kernel's tail-split partial sums (sm90.cu).
#pragma once

#include <cuda_runtime.h>

#include "tilegemm/tilegemm.hpp"

namespace tilegemm::gpu {

// The library's memory pool on `device`, made on first use. Its release threshold is unlimited,
// so memory freed back to it stays reserved for the next call instead of going back to the
// driver at each synchronisation (cudaMallocAsync is then a cheap stream-ordered bookkeeping
// step). Separate from the device's default pool, whose settings belong to the application.
Status library_pool(int device, cudaMemPool_t* pool);

}  // namespace tilegemm::gpu
