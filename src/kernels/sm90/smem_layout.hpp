// The sm90 kernel's shared-memory operand tiles, and the wgmma descriptors that read them.
// Host and device: the host tests check that a descriptor finds every element where TMA put it.
//
// A pipeline stage holds one or two slabs of A and as many of B. Every operand tile (a slab)
// holds one 128-byte row of K values for each of its MN rows -- 64 values of a 16-bit type, 32 of
// tf32 (fp32 in memory) -- written by TMA with the 128-byte swizzle: inside
// each 1024-byte atom of 8 rows x 128 B, the 16-byte chunk c of row r is stored at chunk
// c ^ (r % 8). That spreads the 8 rows a wgmma reads at once over all 32 banks. The two ways an
// operand can lie in memory give two tiles:
//
//   K-major  (A row-major, B column-major): one TMA box of 128 B of K x MN rows. Row mn is 128 B
//            of K. A wgmma reads 8-row groups 1024 B apart (the stride byte offset); the next
//            wgmma's K (16 values of a 16-bit type, 8 of tf32: 32 B either way) starts 32 B
//            further along the row. The byte layout is the same for every type.
//   MN-major (A column-major, B row-major; 16-bit types only: wgmma reads tf32 K-major only):
//            MN/64 TMA boxes of 64 MN x 64 K rows, 8 KB each. Row k is 128 B of MN. Groups of 8
//            K rows are 1024 B apart (stride byte offset), blocks of 64 MN 8 KB apart (leading
//            byte offset); the next 16 values of K start 2 KB on.
#pragma once

#include <cstdint>

#include "schedule/tile_order.hpp"  // TILEGEMM_HOST_DEVICE

namespace tilegemm::sm90 {

constexpr int kRowBytes = 128;             // K per slab: one 128-byte swizzle row
constexpr int kAtomBytes = 8 * kRowBytes;  // 1024: the swizzle's period
constexpr int kMmaKBytes = 32;             // K of one wgmma: k16 of a 16-bit type, k8 of tf32
constexpr int kMmaPerSlab = kRowBytes / kMmaKBytes;  // 4 wgmma along K per slab, any type
constexpr int kMmaK16 = kMmaKBytes / 2;  // K of one 16-bit wgmma (MN-major tiles are 16-bit)
constexpr int kMnBlock = 64;             // MN values in one 128-byte row (MN-major, 16-bit)

// The values of K in one slab's 128-byte rows (64 of fp16/bf16, 32 of tf32). BLOCK_SIZE_K is
// this times the slabs of a stage.
TILEGEMM_HOST_DEVICE constexpr int block_k_for(int element_bytes) {
  return kRowBytes / element_bytes;
}

// The 64-bit wgmma matrix descriptor (PTX ISA, "Matrix Descriptor Format"): bits 0-13 start
// address >> 4, 16-29 leading byte offset >> 4, 32-45 stride byte offset >> 4, 49-51 base offset
// (0: tiles start on 1024-byte boundaries), 62-63 swizzle mode (1: 128-byte swizzle).
TILEGEMM_HOST_DEVICE constexpr uint64_t smem_descriptor(uint32_t address, uint32_t leading_bytes,
                                                        uint32_t stride_bytes) {
  return uint64_t((address & 0x3FFFF) >> 4) | uint64_t((leading_bytes & 0x3FFFF) >> 4) << 16 |
         uint64_t((stride_bytes & 0x3FFFF) >> 4) << 32 | uint64_t(1) << 62;
}

// Geometry of one operand tile of `mn` rows (a multiple of 64) x 128 bytes of K. `parts`: the
// programs of a cluster that load the tile between them, each its share of the boxes, multicast to
// all (a K-major tile is then cut into that many boxes along MN; an MN-major one has MN/64
// already).
struct OperandTile {
  int mn = 0;
  bool mn_major = false;
  int parts = 1;

  TILEGEMM_HOST_DEVICE constexpr int bytes() const { return mn * kRowBytes; }
  // TMA boxes per tile, and each box's extent along MN.
  TILEGEMM_HOST_DEVICE constexpr int boxes() const { return mn_major ? mn / kMnBlock : parts; }
  TILEGEMM_HOST_DEVICE constexpr int box_mn() const { return mn_major ? kMnBlock : mn / parts; }
  TILEGEMM_HOST_DEVICE constexpr int box_bytes() const { return bytes() / boxes(); }
  // Where the slice for one wgmma starts: MN rows from `mn0` (a multiple of 64), the ks-th
  // 32 bytes of K (K-major; values 16*ks .. 16*ks+15 of a 16-bit type, 8*ks .. 8*ks+7 of tf32).
  TILEGEMM_HOST_DEVICE constexpr uint32_t slice_offset(int mn0, int ks) const {
    return mn_major ? uint32_t(mn0 / kMnBlock) * box_bytes() + uint32_t(ks) * kMmaK16 * kRowBytes
                    : uint32_t(mn0) * kRowBytes + uint32_t(ks) * kMmaKBytes;
  }
  // MN-major: one box (64 K rows) apart. K-major with the swizzle: unused, 16 by rule.
  TILEGEMM_HOST_DEVICE constexpr uint32_t leading_bytes() const {
    return mn_major ? uint32_t(block_k_for(2)) * kRowBytes : 16;
  }
  TILEGEMM_HOST_DEVICE constexpr uint32_t stride_bytes() const { return kAtomBytes; }
  TILEGEMM_HOST_DEVICE constexpr uint64_t descriptor(uint32_t tile_address, int mn0, int ks) const {
    return smem_descriptor(tile_address + slice_offset(mn0, ks), leading_bytes(), stride_bytes());
  }
};

// Where a ring of `stages` stages stands after `steps` K steps: the stage the next step uses and
// the parity of that use's phase, which mbarrier waits name. A ping-pong consumer starts each of
// its tiles here, past the other consumer's steps.
struct RingPlace {
  int stage;
  uint32_t phase;
};
TILEGEMM_HOST_DEVICE constexpr RingPlace ring_place(int64_t steps, int stages) {
  return {int(steps % stages), uint32_t(steps / stages) & 1u};
}

// The staggered end of a shared tile's K loop: how many K steps before its end the second of two
// consumers that share every tile waits until the first has issued the tile's last step (0: no
// stagger; ping-pong consumers take whole tiles, split-K hands its sums over at a cluster
// barrier, one consumer has no one to wait for). The waiting consumer has freed every step before
// the last one it issued (up to k_steps - stagger - 2), the producer fills step g once step
// g - stages is free, and the first consumer needs every step up to the tile's last before it
// arrives: so at most stages - 1 (host-tested on a model of the ring).
TILEGEMM_HOST_DEVICE constexpr int stagger_steps(int consumers, bool ping_pong, int split_k,
                                                 int stages) {
  if (consumers != 2 || ping_pong || split_k != 1) return 0;
  return stages - 1 < 3 ? stages - 1 : 3;
}

// A cluster of cluster_m x cluster_n programs, ranks down M first (rank = m + cluster_m * n).
// The programs of a cluster row (the same m) take tiles of the same rows, so they share A's tile;
// those of a cluster column (the same n) share B's. Each program loads its part of a shared
// tile and TMA multicasts it to these programs (masks of ranks):
TILEGEMM_HOST_DEVICE constexpr uint16_t multicast_a(int rank, int cluster_m, int cluster_n) {
  uint32_t mask = 0;
  for (int n = 0; n < cluster_n; ++n) mask |= 1u << (rank % cluster_m + cluster_m * n);
  return uint16_t(mask);
}
TILEGEMM_HOST_DEVICE constexpr uint16_t multicast_b(int rank, int cluster_m) {
  return uint16_t(((1u << cluster_m) - 1) << (cluster_m * (rank / cluster_m)));
}
// Whether program `from`'s loads write into program `to`'s stages: then `from` may reload a
// stage only once `to`'s consumers have read it, so they arrive on `from`'s `empty` too.
TILEGEMM_HOST_DEVICE constexpr bool loads_into(int from, int to, int cluster_m, int cluster_n) {
  return ((multicast_a(from, cluster_m, cluster_n) | multicast_b(from, cluster_m)) >> to & 1u) != 0;
}
// The programs whose consumers free each of a program's stages: its cluster row and column,
// itself once (not the diagonal of a 2 x 2 cluster, which shares nothing with it).
TILEGEMM_HOST_DEVICE constexpr int cluster_readers(int cluster_m, int cluster_n) {
  return cluster_m + cluster_n - 1;
}

// Math (consumer) warpgroups, and the rows of a tile BLOCK_SIZE_M rows tall that each owns. Two
// ways to share the work:
//   cooperative (ping_pong false): every tile is split between two warpgroups, each owning half of
//                its rows, except a 64-row tile, the height of one wgmma, which has one;
//   ping-pong:   two warpgroups take whole tiles in turn, each owning all the rows of its tiles, so
//                that one's epilogue runs while the other's wgmma keep the tensor cores busy.
TILEGEMM_HOST_DEVICE constexpr int math_warpgroups(int block_m, bool ping_pong = false) {
  return ping_pong || block_m >= 128 ? 2 : 1;
}
TILEGEMM_HOST_DEVICE constexpr int warpgroup_rows(int block_m, bool ping_pong = false) {
  return ping_pong ? block_m : block_m / math_warpgroups(block_m);
}

// The epilogue's staging for TMA stores of D (row-major): each math warpgroup fills chunks of 64
// rows x 128 bytes -- 64 columns of a 16-bit D, 32 of an fp32 D -- one 128-byte row each, the
// 128-byte swizzle again, so that the warps' writes spread over all banks, and hands each to TMA
// as one box.
constexpr int kStoreElementBytes = 2;  // the default below: a 16-bit D
constexpr int kStoreRows = 64;
constexpr int kStoreChunkBytes = kStoreRows * kRowBytes;  // 8 KB
constexpr int64_t kSharedBudget = 227 * 1024;  // opt-in shared memory of one program, sm_90
TILEGEMM_HOST_DEVICE constexpr int store_columns(int element_bytes = kStoreElementBytes) {
  return kRowBytes / element_bytes;
}
constexpr int kStoreColumns = store_columns();  // 64 x 64 of a 16-bit D

// Where element (row, col) of a store chunk lives: 16-byte chunk c of row r at c ^ (r % 8).
TILEGEMM_HOST_DEVICE constexpr uint32_t store_chunk_offset(int row, int col,
                                                           int element_bytes = kStoreElementBytes) {
  const int byte = col * element_bytes;
  return uint32_t(row * kRowBytes + ((byte / 16) ^ (row % 8)) * 16 + byte % 16);
}

// Store chunks in one math warpgroup's part of a tile: its rows and all BN columns, for a D of
// `element_bytes` (an fp32 D has twice the chunks of a 16-bit one).
TILEGEMM_HOST_DEVICE constexpr int store_chunks_per_warpgroup(
    int block_m, int block_n, bool ping_pong = false, int element_bytes = kStoreElementBytes) {
  return warpgroup_rows(block_m, ping_pong) / kStoreRows * (block_n / store_columns(element_bytes));
}

// Shared memory besides the store buffers: the stages of `k_slabs` slabs each, two mbarriers per
// stage, one per math warpgroup for C's loads into its store buffers, and slack to align the
// start to 1024 bytes (the swizzle's period).
TILEGEMM_HOST_DEVICE constexpr int64_t stage_bytes(int block_m, int block_n, int stages,
                                                   bool ping_pong = false, int k_slabs = 1) {
  return int64_t(stages) * k_slabs * (block_m + block_n) * kRowBytes + 2 * 8 * stages +
         8 * math_warpgroups(block_m, ping_pong) + kAtomBytes;
}

// Split-K across a cluster (split_k > 1): the first program receives the others' partial sums
// of the tile here, in fp32.
TILEGEMM_HOST_DEVICE constexpr int64_t partial_bytes(int block_m, int block_n, int split_k) {
  return split_k > 1 ? int64_t(block_m) * block_n * 4 : 0;
}

// Chunk buffers per math warpgroup. When what the stages leave of the budget holds a
// warpgroup's whole part, it gets one buffer per chunk: the epilogue writes every chunk, then
// stores them all, one round with no wait (the buffers' last stores, a tile ago, are long done).
// The whole part of an fp32 D is asked for first, then of a 16-bit D. Otherwise two buffers take
// turns: one fills while the store of the other still reads it.
TILEGEMM_HOST_DEVICE constexpr int store_buffers(int block_m, int block_n, int stages,
                                                 int split_k = 1, bool ping_pong = false,
                                                 int k_slabs = 1) {
  const int64_t rest = kSharedBudget - stage_bytes(block_m, block_n, stages, ping_pong, k_slabs) -
                       partial_bytes(block_m, block_n, split_k);
  const int64_t per_chunk = int64_t(math_warpgroups(block_m, ping_pong)) * kStoreChunkBytes;
  const int whole_fp32 = store_chunks_per_warpgroup(block_m, block_n, ping_pong, 4);
  const int whole_16bit = store_chunks_per_warpgroup(block_m, block_n, ping_pong, 2);
  if (whole_fp32 * per_chunk <= rest) return whole_fp32;
  if (whole_16bit * per_chunk <= rest) return whole_16bit;
  return 2;
}

// Dynamic shared memory of a config: the stages and their barriers, the store buffers, split-K's
// partial sums, and the alignment slack.
TILEGEMM_HOST_DEVICE constexpr int64_t shared_bytes(int block_m, int block_n, int stages,
                                                    int split_k = 1, bool ping_pong = false,
                                                    int k_slabs = 1) {
  return stage_bytes(block_m, block_n, stages, ping_pong, k_slabs) +
         int64_t(math_warpgroups(block_m, ping_pong)) *
             store_buffers(block_m, block_n, stages, split_k, ping_pong, k_slabs) *
             kStoreChunkBytes +
         partial_bytes(block_m, block_n, split_k);
}

}  // namespace tilegemm::sm90
