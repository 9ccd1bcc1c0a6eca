// The sm90 kernel's stage ring: num_stages shared-memory stages, each with a `full` and an `empty`
// mbarrier (shared_storage.hpp), and the one protocol the producer and the consumers follow.
//
//   producer   acquire(state): waits until the stage's last readers have freed it (a fresh
//              barrier counts as having completed the phase before its first, so the first pass
//              over the ring does not wait); then arms `full` with the stage's bytes (expect_tx)
//              and issues the TMA loads that complete on it.
//   consumers  wait(state): until TMA's bytes for this use of the stage have landed; release(stage)
//              once the warp's wgmma have finished reading it -- in a cluster on the `empty` of
//              every program whose loads write into this one's stage, so that none of them
//              reloads it before this warp has read it.
//
// Where each role stands on the ring is its PipelineState (pipeline_state.hpp).
#pragma once

#include <cstdint>

#include "kernels/sm90/pipeline_state.hpp"
#include "ptx/sm90.cuh"

namespace tilegemm::sm90 {

#ifdef TILEGEMM_SM90A_DEVICE_CODE

// kClusterMN: the programs that multicast into each other's stages (1: none).
template <int kStages, int kClusterMN>
struct Pipeline {
  uint64_t* full;
  uint64_t* empty;

  // Thread 0, before any other thread touches the ring. `readers`: the warps that free each stage
  // (every consumer warp of every program whose loads write into it).
  __device__ __forceinline__ void init(int readers) const {
    for (int s = 0; s < kStages; ++s) {
      cuda::ptx::mbarrier_init(&full[s], 1);  // the producer's arrive + the bytes
      cuda::ptx::mbarrier_init(&empty[s], readers);
    }
  }

  // The producer: waits until the stage is free (in a cluster this also waits for the other
  // programs' consumers: the multicast writes into their stage too), and arms its `full` with
  // the bytes the loads will bring. Returns the barrier the loads complete on.
  __device__ __forceinline__ uint64_t* acquire(const PipelineState<kStages>& state,
                                               uint32_t bytes) const {
    wait_barrier(&empty[state.stage], state.phase ^ 1);
    return expect(state.stage, bytes);
  }
  // The same without the wait: the ring's first pass, whose stages are free.
  __device__ __forceinline__ uint64_t* expect(int stage, uint32_t bytes) const {
    cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                         cuda::ptx::space_shared, &full[stage], bytes);
    return &full[stage];
  }

  // A consumer: until the stage's bytes have landed.
  __device__ __forceinline__ void wait(const PipelineState<kStages>& state) const {
    wait_barrier(&full[state.stage], state.phase);
  }

  // A consumer warp frees a stage. Lane r signals the program of rank r where `signals` (lane 0
  // alone without a cluster), so a warp's arrives go out at once.
  __device__ __forceinline__ void release(int stage, int lane, bool signals) const {
    if (!signals) return;
    if constexpr (kClusterMN == 1) {
      cuda::ptx::mbarrier_arrive(&empty[stage]);
    } else {
      arrive_remote(&empty[stage], lane);
    }
  }
};

#endif  // TILEGEMM_SM90A_DEVICE_CODE

}  // namespace tilegemm::sm90
