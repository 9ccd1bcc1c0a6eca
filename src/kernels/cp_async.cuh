// cp.async (PTX ISA 9.7.9.25): global -> shared copies that do not pass through registers,
// completed in commit groups. Used by the sm80 kernel and by warptile's fp32 path.
#pragma once

#include <cstdint>

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

}  // namespace tilegemm
