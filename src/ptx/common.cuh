// What every inline-PTX wrapper needs: shared-memory addresses in the .shared state space.
#pragma once

#include <cstdint>

namespace tilegemm {

// Shared-memory address as the 32-bit value the .shared state space takes.
__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

}  // namespace tilegemm
