// The sm90 kernel's named barriers (bar.sync ids; 0 is __syncthreads), and what each guards.
#pragma once

#include "ptx/sm90.cuh"

namespace tilegemm::sm90 {

enum class NamedBarrier : int {
  // One consumer warpgroup's 128 threads (consumer c: kConsumer0 + c): its store buffers between
  // the threads' writes and the TMA store that reads them, and the tail split's flag between the
  // warpgroup's sums and the one thread that raises or takes it.
  kConsumer0 = 1,
  kConsumer1 = 2,
  // Both consumers (256 threads; kTurn0 + c). Ping-pong: consumer c may start its next tile's K
  // loop, the other having issued every K step of the tile before. Without it a consumer could
  // wait on a stage's `full` more than one phase ahead, which a parity wait cannot tell from an
  // earlier phase; with it the two mainloops also follow each other on the tensor cores.
  // Promotion (cooperative): consumer c may issue its next unit of sums, the other having issued
  // its unit before (mainloop.cuh).
  kTurn0 = 3,
  kTurn1 = 4,
  // Cooperative, both consumers (256 threads): the second consumer's last stagger_steps K steps
  // wait until the first has issued the tile's last one (kernel_shape.hpp).
  kStagger = 5,
};

#ifdef TILEGEMM_SM90A_DEVICE_CODE

// Consumer c's own barrier, as the epilogue takes it.
__device__ __forceinline__ WarpgroupBarrier consumer_barrier(int consumer) {
  return {int(NamedBarrier::kConsumer0) + consumer};
}

// The turns: a consumer waits for its own turn, and passes the next to the other without
// waiting.
__device__ __forceinline__ void await_turn(int consumer) {
  named_barrier_sync<256>(int(NamedBarrier::kTurn0) + consumer);
}
__device__ __forceinline__ void pass_turn(int consumer) {
  named_barrier_arrive<256>(int(NamedBarrier::kTurn0) + (1 - consumer));
}

// The staggered end: the second consumer waits, the first arrives and goes on.
__device__ __forceinline__ void await_stagger() {
  named_barrier_sync<256>(int(NamedBarrier::kStagger));
}
__device__ __forceinline__ void pass_stagger() {
  named_barrier_arrive<256>(int(NamedBarrier::kStagger));
}

#endif  // TILEGEMM_SM90A_DEVICE_CODE

}  // namespace tilegemm::sm90
