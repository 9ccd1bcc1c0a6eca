// What every inline-PTX wrapper needs: shared-memory addresses in the .shared state space; and a
// hint that moves a global line into L2 ahead of its loads.
#pragma once

#include <cstdint>

namespace tilegemm {

// Shared-memory address as the 32-bit value the .shared state space takes.
__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Brings the L2 line holding `p` in from memory, without waiting for it or holding a register: a
// later load of it then pays L2's latency, not memory's. `p` must lie inside an allocation.
__device__ __forceinline__ void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];\n" ::"l"(p));
}

}  // namespace tilegemm
