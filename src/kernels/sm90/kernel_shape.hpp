// The sm90 kernel's compile-time shape, with named fields, and what follows from it: the roles of
// its warpgroups, how its K loops end, and which programs of a cluster share an operand tile.
// Host and device; unit-tested on the host (tests/host/test_sm90_layout.cpp).
//
//   roles      warpgroup 0 is the producer: one of its threads issues every TMA copy. The math
//              warpgroups ("consumers") after it take the tile's wgmma and its epilogue: two
//              that split each tile's rows (cooperative), one for a 64-row tile, or two that take
//              whole tiles in turn (ping-pong).
//   clusters   cluster_m programs along M take vertically adjacent tiles and share B's tile: each
//              loads 1/cluster_m of it and TMA multicasts that part into every program's shared
//              memory. cluster_n programs along N share A's tile the same way.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "tilegemm/config.hpp"

namespace tilegemm::sm90 {

// Shared memory holds K in slabs of one 128-byte swizzle row per MN row of a tile: 64 values of a
// 16-bit type, 32 of tf32.
constexpr int kSlabBytes = 128;

// The values of K in one slab (64 of fp16/bf16, 32 of tf32). BLOCK_SIZE_K is this times the
// slabs of a stage.
TILEGEMM_HOST_DEVICE constexpr int block_k_for(int element_bytes) {
  return kSlabBytes / element_bytes;
}

// Math (consumer) warpgroups, and the rows of a tile BLOCK_SIZE_M rows tall that each owns:
//   cooperative  every tile is split between two warpgroups, each owning half of its rows, except
//                a 64-row tile, the height of one wgmma, which has one;
//   ping-pong    two warpgroups take whole tiles in turn, each owning all the rows of its tiles, so
//                that one's epilogue runs while the other's wgmma keep the tensor cores busy.
TILEGEMM_HOST_DEVICE constexpr int math_warpgroups(int block_m, bool ping_pong = false) {
  return ping_pong || block_m >= 128 ? 2 : 1;
}
TILEGEMM_HOST_DEVICE constexpr int warpgroup_rows(int block_m, bool ping_pong = false) {
  return ping_pong ? block_m : block_m / math_warpgroups(block_m);
}

// The staggered end of a shared tile's K loop: how many K steps before its end the second of two
// consumers that share every tile waits until the first has issued the tile's last step (0: no
// stagger; ping-pong consumers take whole tiles, one consumer has no one to wait for). The waiting
// consumer has freed every step before the last one it issued (up to k_steps - stagger - 2), the
// producer fills step g once step g - stages is free, and the first consumer needs every step up
// to the tile's last before it arrives: so at most stages - 1 (host-tested on a model of the
// ring). Each consumer's epilogue then runs beside the other's wgmma, and at a program's end only
// half of its D drains after the last wgmma.
TILEGEMM_HOST_DEVICE constexpr int stagger_steps(int consumers, bool ping_pong, int stages) {
  if (consumers != 2 || ping_pong) return 0;
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

// The most fp32 registers of accumulators and sums a promoting consumer thread may hold
// (Sm90Shape::promotion_registers): 128x256's and 256x128's 128 + 64, or 128x128's 64 and two
// units of 64. The rest of the 232 a consumer thread has hold the epilogue's addresses and the
// scales.
inline constexpr int kPromotionRegisters = 192;

// A compiled shape: a structural type, so that the kernel takes it as a template argument and
// every value below is a compile-time constant there.
struct Sm90Shape {
  int block_m = 128;  // BLOCK_SIZE_M, BLOCK_SIZE_N
  int block_n = 256;
  int num_stages = 4;
  int cluster_m = 1;  // programs per cluster along M (they share B's tile), and along N (A's)
  int cluster_n = 1;
  KernelSchedule schedule = KernelSchedule::cooperative;
  // Slabs of 128 bytes of K per stage. Every stage costs its producer a wait, an arrive and a TMA
  // load per box, and its consumers a wait and a release, whatever its size; a small tile's
  // stage is small, so two slabs per stage pay those fixed costs once per two.
  int k_slabs = 1;

  TILEGEMM_HOST_DEVICE constexpr bool ping_pong() const {
    return schedule == KernelSchedule::ping_pong;
  }
  TILEGEMM_HOST_DEVICE constexpr int cluster_size() const { return cluster_m * cluster_n; }
  TILEGEMM_HOST_DEVICE constexpr int consumers() const {
    return math_warpgroups(block_m, ping_pong());
  }
  TILEGEMM_HOST_DEVICE constexpr int threads() const { return (consumers() + 1) * 128; }
  // Rows of a tile one consumer owns, and its m64 wgmma per K step.
  TILEGEMM_HOST_DEVICE constexpr int consumer_rows() const {
    return warpgroup_rows(block_m, ping_pong());
  }
  TILEGEMM_HOST_DEVICE constexpr int mma_m() const { return consumer_rows() / 64; }
  // Consumers that read each stage: all of them, or in ping-pong the one whose tile it is.
  TILEGEMM_HOST_DEVICE constexpr int stage_readers() const { return ping_pong() ? 1 : consumers(); }
  TILEGEMM_HOST_DEVICE constexpr int stagger() const {
    return stagger_steps(consumers(), ping_pong(), num_stages);
  }
  TILEGEMM_HOST_DEVICE constexpr int block_k(int element_bytes) const {
    return k_slabs * block_k_for(element_bytes);
  }
  // fp8 with promoted sums (mainloop.cuh): a consumer runs each slab's wgmma into a second set
  // of fp32 sums, one unit of an m64 tile's columns at a time, and adds it into its accumulators.
  // A unit is as wide as m64n128 wgmma at most: wider ones would double the sums' registers, and
  // narrower ones read A from shared memory once per 64 columns, as many bytes as they compute.
  TILEGEMM_HOST_DEVICE constexpr int promotion_unit_n() const {
    return block_n < 128 ? block_n : 128;
  }
  // The fp32 registers a consumer thread holds for them: accumulators and `units` units' sums.
  TILEGEMM_HOST_DEVICE constexpr int promotion_registers(int units = 1) const {
    return mma_m() * block_n / 2 + units * promotion_unit_n() / 2;
  }
  // Whether a promoting consumer looks one K step ahead (mainloop.cuh: mma_lookahead): it issues
  // step kt + 1's unit into a second set of sums before it waits for step kt's and adds it, so
  // that the tensor cores hold one of its units while it adds. For tiles of one unit per step
  // (one m64 tile, at most 128 columns, one slab) whose two sets of sums fit beside the
  // accumulators.
  TILEGEMM_HOST_DEVICE constexpr bool promotion_lookahead() const {
    return mma_m() == 1 && block_n <= 128 && k_slabs == 1 &&
           promotion_registers(2) <= kPromotionRegisters;
  }
  // The config this shape is compiled for, for inputs of `element_bytes`.
  KernelConfig config(int element_bytes) const {
    return {.block_m = block_m,
            .block_n = block_n,
            .block_k = block_k(element_bytes),
            .group_size_m = 8,
            .num_stages = num_stages,
            .num_warps = threads() / 32,
            .warp_m = consumer_rows(),
            .warp_n = block_n,
            .cluster_m = cluster_m,
            .cluster_n = cluster_n,
            .schedule = schedule};
  }
};

// A shape as a type: how the kernel (a __global__ template) takes it. nvcc 13.0's host stubs
// cannot name a class-type template argument of a kernel, so the kernel takes this type and reads
// ShapeTag::value.
template <Sm90Shape kShape>
struct ShapeTag {
  static constexpr Sm90Shape value = kShape;
};

// What a shape must be for the kernel to compile it.
TILEGEMM_HOST_DEVICE constexpr bool valid(const Sm90Shape& s) {
  return s.consumer_rows() % 64 == 0 && s.block_n % 64 == 0 && s.block_n <= 256 &&
         s.num_stages >= 2 && (s.cluster_m == 1 || (s.cluster_m == 2 && s.block_n % 128 == 0)) &&
         (s.cluster_n == 1 || s.cluster_n == 2) && (!s.ping_pong() || s.cluster_size() == 1) &&
         (s.k_slabs == 1 || s.k_slabs == 2);
}

}  // namespace tilegemm::sm90
