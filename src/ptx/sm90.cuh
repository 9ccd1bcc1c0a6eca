// The Hopper instructions of the sm90 kernel and its epilogue that CCCL's cuda::ptx does not
// wrap the way they need, one small function each: mbarrier waits, wgmma's ordering, setmaxnreg,
// named barriers, cluster barriers and remote arrives, tensor-map prefetch and acquire (the tail
// split's flags are in ptx/flags.cuh). TMA copies themselves go through
// cuda::ptx::cp_async_bulk_tensor. Everything here exists only in sm_90a machine code
// (TILEGEMM_SM90A_DEVICE_CODE); the host pass and other architectures see none of it.
#pragma once

#include <cuda.h>

#include <cstdint>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#include <cuda/ptx>
#define TILEGEMM_SM90A_DEVICE_CODE 1
#endif

#include "ptx/common.cuh"

namespace tilegemm::sm90 {

#ifdef TILEGEMM_SM90A_DEVICE_CODE

// Until the mbarrier's phase of parity `parity` has completed. A fresh barrier counts as having
// completed the phase before its first (parity 1).
__device__ __forceinline__ void wait_barrier(uint64_t* barrier, uint32_t parity) {
  while (!cuda::ptx::mbarrier_try_wait_parity(barrier, parity)) {
  }
}

// wgmma ordering (PTX ISA 9.7.15.6-8): fence before the first wgmma that touches registers other
// instructions wrote; commit closes a group; wait_group N returns when at most N groups fly.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// The accumulators are written asynchronously; this keeps the compiler from reading them
// before the wait above it.
template <int N>
__device__ __forceinline__ void fence_registers(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

// setmaxnreg: a warpgroup gives registers back to the SM's pool, or takes them from it. Takes
// effect only under a register cap at entry (__launch_bounds__(threads, 1)).
template <int kRegisters>
__device__ __forceinline__ void registers_increase() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}
template <int kRegisters>
__device__ __forceinline__ void registers_decrease() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

// A named barrier of kThreads threads (bar.sync waits for them all; bar.arrive counts this
// thread and goes on). Barrier 0 is __syncthreads'.
template <int kThreads>
__device__ __forceinline__ void named_barrier_sync(int id) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "n"(kThreads) : "memory");
}
template <int kThreads>
__device__ __forceinline__ void named_barrier_arrive(int id) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "n"(kThreads) : "memory");
}

// One warpgroup's named barrier: what the epilogue synchronises its 128 threads with, whichever
// id the kernel gave that warpgroup.
struct WarpgroupBarrier {
  int id;
  __device__ __forceinline__ void sync() const { named_barrier_sync<128>(id); }
};

// Arrives on the mbarrier at `barrier`'s offset in the shared memory of the cluster's program
// `rank`, with CTA-scope release (the arriving warp's reads of the stage were its own wgmma,
// finished before). mapa on the 32-bit shared-memory address, then mbarrier.arrive.shared::
// cluster: cuda::ptx offers the remote arrive with cluster-scope release only, which ptxas makes
// a MEMBAR.GPU per arrive, and a generic pointer (__cluster_map_shared_rank) reads the shared
// window's base from a special register at every arrive.
__device__ __forceinline__ void arrive_remote(uint64_t* barrier, int rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
               : "=r"(remote)
               : "r"(shared_address(barrier)), "r"(rank));
  asm volatile("mbarrier.arrive.release.cta.shared::cluster.b64 _, [%0];\n" ::"r"(remote)
               : "memory");
}

// Every thread of every program of the cluster, at the end: no program leaves while another may
// still signal it (the release orders this thread's remote arrives before its arrival here). Only
// for real clusters: the release of barrier.cluster is a MEMBAR.GPU, which a program on its own
// does not need.
__device__ __forceinline__ void cluster_sync() {
  cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_release);
  cuda::ptx::barrier_cluster_wait(cuda::ptx::sem_acquire);
}

// The same at the start: after it the cluster's barriers are initialised. The release that
// publishes them is thread 0's fence.mbarrier_init, so the arrival can be relaxed and skip
// cluster_sync's MEMBAR.GPU, which would hold up every program's first load.
__device__ __forceinline__ void cluster_start_sync() {
  cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_relaxed);
  cuda::ptx::barrier_cluster_wait(cuda::ptx::sem_acquire);
}

// Starts fetching a tensor map (a kernel parameter) into the cache that TMA reads descriptors
// from, so that the first copy through it does not wait for that fetch (PTX prefetch.tensormap).
__device__ __forceinline__ void prefetch_tensormap(const CUtensorMap& map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map)) : "memory");
}

// Orders a tensor map that an earlier kernel wrote in global memory (and released with
// fence.proxy.tensormap::generic) before this thread's copies through it.
__device__ __forceinline__ void acquire_tensormap(const CUtensorMap& map) {
  cuda::ptx::fence_proxy_tensormap_generic(cuda::ptx::sem_acquire, cuda::ptx::scope_gpu, &map,
                                           cuda::ptx::n32_t<128>{});
}

#endif  // TILEGEMM_SM90A_DEVICE_CODE

}  // namespace tilegemm::sm90
