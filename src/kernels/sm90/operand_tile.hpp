// The sm90 kernel's shared-memory operand tiles, and the wgmma descriptors that read them.
// Host and device: the host tests check that a descriptor finds every element where TMA put it.
//
// A pipeline stage holds one or two slabs of A and as many of B. Every operand tile (a slab)
// holds one 128-byte row of K values for each of its MN rows -- 64 values of a 16-bit type, 32 of
// tf32 (fp32 in memory) -- written by TMA with the 128-byte swizzle: inside each 1024-byte atom of
// 8 rows x 128 B, the 16-byte chunk c of row r is stored at chunk c ^ (r % 8). That spreads the 8
// rows a wgmma reads at once over all 32 banks. The two ways an operand can lie in memory give
// two tiles:
//
//   K-major  (A row-major, B column-major): one TMA box of 128 B of K x MN rows. Row mn is 128 B
//            of K. A wgmma reads 8-row groups 1024 B apart (the stride byte offset); the next
//            wgmma's K (16 values of a 16-bit type, 8 of tf32: 32 B either way) starts 32 B
//            further along the row. The byte layout is the same for every type.
//   MN-major (A column-major, B row-major): square TMA boxes of 128 B of MN x as many K rows
//            (64 x 64 of a 16-bit type, 8 KB; 32 x 32 of tf32, 4 KB). Row k is 128 B of MN.
//            16-bit: wgmma reads them by descriptor: groups of 8 K rows are 1024 B apart (stride
//            byte offset), blocks of 64 MN 8 KB apart (leading byte offset); the next 16 values
//            of K start 2 KB on. tf32 (A only): wgmma reads tf32 K-major only, so a consumer loads
//            its fragments from the tile into registers (value_offset) and wgmma takes A from
//            there (mainloop.cuh).
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "epilogue/sm90_store_chunk.hpp"
#include "kernels/sm90/kernel_shape.hpp"

namespace tilegemm::sm90 {

constexpr int kRowBytes = kSlabBytes;      // one MN row of a slab: 128 bytes of K
constexpr int kAtomBytes = 8 * kRowBytes;  // 1024: the swizzle's period
constexpr int kMmaKBytes = 32;             // K of one wgmma: k16 of a 16-bit type, k8 of tf32
constexpr int kMmaPerSlab = kRowBytes / kMmaKBytes;  // 4 wgmma along K per slab, any type

// The 64-bit wgmma matrix descriptor (PTX ISA, "Matrix Descriptor Format"): bits 0-13 start
// address >> 4, 16-29 leading byte offset >> 4, 32-45 stride byte offset >> 4, 49-51 base offset
// (0: tiles start on 1024-byte boundaries), 62-63 swizzle mode (1: 128-byte swizzle).
TILEGEMM_HOST_DEVICE constexpr uint64_t smem_descriptor(uint32_t address, uint32_t leading_bytes,
                                                        uint32_t stride_bytes) {
  return uint64_t((address & 0x3FFFF) >> 4) | uint64_t((leading_bytes & 0x3FFFF) >> 4) << 16 |
         uint64_t((stride_bytes & 0x3FFFF) >> 4) << 32 | uint64_t(1) << 62;
}

// wgmma's register fragment of a 64 x 8 tf32 tile of A (ptx/wgmma.cuh, WgmmaRegisterA): value r
// (0-3) of thread `thread` (0-127) of the warpgroup is row fragment_row(thread, r) and column
// fragment_k(thread, r) of the tile.
TILEGEMM_HOST_DEVICE constexpr int fragment_row(int thread, int r) {
  return 16 * (thread / 32) + thread % 32 / 4 + 8 * (r % 2);
}
TILEGEMM_HOST_DEVICE constexpr int fragment_k(int thread, int r) {
  return thread % 4 + 4 * (r / 2);
}

// Geometry of one operand tile of `mn` rows (a multiple of 64) x 128 bytes of K, of elements of
// `element_bytes` (the MN-major boxes' extent). `parts`: the programs of a cluster that load the
// tile between them, each its share of the boxes, multicast to all (a K-major tile is then cut
// into that many boxes along MN; an MN-major one has its boxes already).
struct OperandTile {
  int mn = 0;
  bool mn_major = false;
  int parts = 1;
  int element_bytes = 2;

  TILEGEMM_HOST_DEVICE constexpr int bytes() const { return mn * kRowBytes; }
  // MN-major: MN values in one 128-byte row, and K rows in one box (the same number).
  TILEGEMM_HOST_DEVICE constexpr int mn_block() const { return kRowBytes / element_bytes; }
  // TMA boxes per tile, and each box's extent along MN.
  TILEGEMM_HOST_DEVICE constexpr int boxes() const { return mn_major ? mn / mn_block() : parts; }
  TILEGEMM_HOST_DEVICE constexpr int box_mn() const { return mn_major ? mn_block() : mn / parts; }
  TILEGEMM_HOST_DEVICE constexpr int box_bytes() const { return bytes() / boxes(); }
  // Where the slice for one wgmma starts: MN rows from `mn0` (a multiple of 64), the ks-th
  // 32 bytes of K (K-major; values 16*ks .. 16*ks+15 of a 16-bit type, 8*ks .. 8*ks+7 of tf32).
  TILEGEMM_HOST_DEVICE constexpr uint32_t slice_offset(int mn0, int ks) const {
    return mn_major ? uint32_t(mn0 / mn_block()) * box_bytes() +
                          uint32_t(ks) * (kMmaKBytes / element_bytes) * kRowBytes
                    : uint32_t(mn0) * kRowBytes + uint32_t(ks) * kMmaKBytes;
  }
  // MN-major: the byte where TMA put element (mn, k): in its box, row k, with the 128-byte swizzle
  // of the store chunks' rows (the same layout). K values 8 apart lie kAtomBytes apart with the
  // same swizzle.
  TILEGEMM_HOST_DEVICE constexpr uint32_t value_offset(int mn, int k) const {
    return uint32_t(mn / mn_block()) * box_bytes() +
           store_chunk_offset(k, mn % mn_block(), element_bytes);
  }
  // MN-major: one box apart. K-major with the swizzle: unused, 16 by rule.
  TILEGEMM_HOST_DEVICE constexpr uint32_t leading_bytes() const {
    return mn_major ? uint32_t(box_bytes()) : 16;
  }
  TILEGEMM_HOST_DEVICE constexpr uint32_t stride_bytes() const { return kAtomBytes; }
  TILEGEMM_HOST_DEVICE constexpr uint64_t descriptor(uint32_t tile_address, int mn0, int ks) const {
    return smem_descriptor(tile_address + slice_offset(mn0, ks), leading_bytes(), stride_bytes());
  }
  // The same from the tile's own descriptor (slice 0, 0): its address field moved on by the
  // slice's offset, one add in a K loop. Nothing carries out of the field: tiles start on
  // 1024-byte boundaries and shared addresses lie below 2^18.
  TILEGEMM_HOST_DEVICE constexpr uint64_t descriptor_at(uint64_t tile_descriptor, int mn0,
                                                        int ks) const {
    return tile_descriptor + (slice_offset(mn0, ks) >> 4);
  }
};

}  // namespace tilegemm::sm90
