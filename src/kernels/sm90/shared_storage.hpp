// The sm90 kernel's shared memory, described once: SharedStorage<shape> *is* the layout. The
// kernel places it at the first 1024-byte boundary of its dynamic shared memory and takes every
// address from its members; the host asks for sizeof + kAtomBytes (the alignment slack) and
// checks it against the device's limit. Host and device; tested on the host.
//
//   a, b      num_stages stages of k_slabs slabs of each operand tile (operand_tile.hpp). Every
//             slab is a multiple of 1024 bytes, so each starts on the swizzle's period.
//   store     each consumer's buffers for the epilogue's chunks of D
//             (epilogue/sm90_store_chunk.hpp), also 1024-byte multiples: the TMA stores' 128-byte
//             swizzle needs that alignment.
//   full      a stage's mbarrier that TMA completes once its bytes have landed;
//   empty     a stage's mbarrier that every consumer warp reading it arrives on once its wgmma
//             are done with it (in a cluster, those of every program that loads into it);
//   c_full    a consumer's mbarrier for C's chunks, loaded by TMA into its store buffers.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "epilogue/sm90_store_chunk.hpp"
#include "kernels/sm90/kernel_shape.hpp"
#include "kernels/sm90/operand_tile.hpp"

namespace tilegemm::sm90 {

constexpr int64_t kSharedBudget = 227 * 1024;  // opt-in shared memory of one program, sm_90

template <Sm90Shape kShape, int kBuffers>
struct SharedStorageOf {
  static_assert(valid(kShape));
  static constexpr int kStages = kShape.num_stages;
  static constexpr int kSlabs = kShape.k_slabs;
  static constexpr int kConsumers = kShape.consumers();
  static constexpr int kStoreBuffers = kBuffers;  // per consumer
  static constexpr OperandTile kTileA{kShape.block_m}, kTileB{kShape.block_n};

  unsigned char a[kStages][kSlabs][kTileA.bytes()];
  unsigned char b[kStages][kSlabs][kTileB.bytes()];
  unsigned char store[kConsumers][kStoreBuffers][kStoreChunkBytes];
  uint64_t full[kStages];
  uint64_t empty[kStages];
  uint64_t c_full[kConsumers];
};

// Chunk buffers per consumer. When what the stages leave of the budget holds a consumer's whole
// part of D, it gets one buffer per chunk: the epilogue writes every chunk, then stores them all,
// one round with no wait (the buffers' last stores, a tile ago, are long done). The whole part of
// an fp32 D is asked for first, then of a 16-bit D. Otherwise two buffers take turns: one fills
// while the store of the other still reads it.
template <Sm90Shape kShape>
constexpr int store_buffers() {
  constexpr int64_t per_buffer = int64_t(kShape.consumers()) * kStoreChunkBytes;
  constexpr int64_t rest =
      kSharedBudget - kAtomBytes - (int64_t(sizeof(SharedStorageOf<kShape, 1>)) - per_buffer);
  constexpr int whole_fp32 = store_chunks(kShape.consumer_rows(), kShape.block_n, 4);
  constexpr int whole_16bit = store_chunks(kShape.consumer_rows(), kShape.block_n, 2);
  if (whole_fp32 * per_buffer <= rest) return whole_fp32;
  if (whole_16bit * per_buffer <= rest) return whole_16bit;
  return 2;
}

template <Sm90Shape kShape>
using SharedStorage = SharedStorageOf<kShape, store_buffers<kShape>()>;

// Dynamic shared memory a launch asks for: the storage and the slack to align its start.
template <Sm90Shape kShape>
constexpr int64_t shared_bytes() {
  return int64_t(sizeof(SharedStorage<kShape>)) + kAtomBytes;
}

// Whether a consumer carries chunks of a tile's D into its next tile (the epilogue's
// store_tma): where its buffers hold less than its part of an fp32 D (a 16-bit D's part is half
// that). Not in ping-pong, whose epilogue runs while the other consumer's mainloop does.
template <Sm90Shape kShape>
constexpr bool holds_chunks() {
  return !kShape.ping_pong() &&
         store_buffers<kShape>() < store_chunks(kShape.consumer_rows(), kShape.block_n, 4);
}

}  // namespace tilegemm::sm90
