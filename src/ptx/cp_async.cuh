// cp.async (PTX ISA 9.7.9.25): global -> shared copies that do not pass through registers,
// completed in commit groups or on mbarriers. Used by the sm80 kernel and by warptile's fp32
// path.
#pragma once

#include <cstdint>

#include "ptx/common.cuh"

namespace tilegemm {

// Copies 16 bytes global -> shared. Only the first `src_bytes` (0..16) are read; the rest of the
// 16 are zero-filled, which is how masked edges cost nothing. .cg: cache in L2 only -- each
// element is read once per program, L1 would only add pollution.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes));
}

// Copies one 4-byte element global -> shared (src_bytes 4), or writes a zero (src_bytes 0).
// Single elements are how a copy transposes: each lands wherever the shared layout wants it.
// (.cg exists only for 16-byte copies.)
__device__ __forceinline__ void cp_async_4(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes));
}

// Closes the group of cp.async issued since the last commit.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most `kPending` committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

// ---- mbarriers fed by cp.async (PTX ISA 9.7.13.15), for pipelines without __syncthreads ----

__device__ __forceinline__ void mbarrier_init(uint64_t* barrier, int arrivals) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(shared_address(barrier)), "r"(arrivals)
               : "memory");
}

// Counts as this thread's arrival once every cp.async it issued before has landed (.noinc: the
// arrival is one of those the barrier was initialised to expect).
__device__ __forceinline__ void cp_async_arrive(uint64_t* barrier) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(shared_address(barrier))
               : "memory");
}

// Returns the barrier's phase token, which callers that wait by parity ignore.
__device__ __forceinline__ uint64_t mbarrier_arrive(uint64_t* barrier) {
  uint64_t token;
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];\n"
               : "=l"(token)
               : "r"(shared_address(barrier))
               : "memory");
  return token;
}

// Waits until the phase of parity `parity` has completed. A fresh barrier counts as having
// completed the phase before its first (parity 1), so a first wait on parity 1 passes.
// On sm_90, try_wait suspends the thread in hardware until the phase completes (or a time limit
// passes), so a waiting warp takes no issue slots from the warps that are computing. test_wait
// (sm_80 has no try_wait) returns at once and the loop spins. In warptile's fp32 K loop on the
// H100 the spins were 6.5 % of the instructions executed; try_wait removed them, but the time did
// not change: the spinning warps had only taken slots nobody else could use.
__device__ __forceinline__ void mbarrier_wait(uint64_t* barrier, uint32_t parity) {
  const uint32_t address = shared_address(barrier);
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n .reg .pred complete;\n"
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        " mbarrier.try_wait.parity.shared::cta.b64 complete, [%1], %2;\n"
#else
        " mbarrier.test_wait.parity.shared.b64 complete, [%1], %2;\n"
#endif
        " selp.u32 %0, 1, 0, complete;\n}\n"
        : "=r"(done)
        : "r"(address), "r"(parity)
        : "memory");
  } while (!done);
}

}  // namespace tilegemm
