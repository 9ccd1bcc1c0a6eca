// The release/acquire flags of a split of K (schedule/tail_split.hpp): a flag in global memory
// that one program raises and another takes, within one launch. Used by the sm90 kernel's tail
// split and the decode kernel's split-K (ld.acquire / st.release at GPU scope: sm_70 and newer).
#pragma once

namespace tilegemm {

// The raising thread's release at GPU scope orders the stores its group of threads made before
// (after a barrier of the group) ahead of the flag; the taking thread's acquire orders its
// group's loads after it (again after a barrier), and it clears the flag, so that a launch
// replayed with the same key (captured in a CUDA graph) finds it clear.
__device__ __forceinline__ void raise_flag(unsigned long long* flag, unsigned long long key) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;\n" ::"l"(flag), "l"(key) : "memory");
}
__device__ __forceinline__ void take_flag(unsigned long long* flag, unsigned long long key) {
  unsigned long long seen = 0;
  do {
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];\n" : "=l"(seen) : "l"(flag) : "memory");
  } while (seen != key);
  asm volatile("st.relaxed.gpu.global.u64 [%0], 0;\n" ::"l"(flag) : "memory");
}

}  // namespace tilegemm
