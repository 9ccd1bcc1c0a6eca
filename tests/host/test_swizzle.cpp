// The sm80 kernel's shared-memory swizzle: a permutation of each row's chunks that keeps every
// read pattern of the kernel free of bank conflicts (see src/kernels/sm80/smem_swizzle.hpp).
#include <gtest/gtest.h>

#include <set>

#include "kernels/sm80/smem_swizzle.hpp"

namespace tilegemm::sm80 {
namespace {

constexpr int kRowWidths[] = {2, 4, 8, 16, 32, 64};  // chunks per row: 32 B .. 1 KB rows

int bank_group(int byte_offset) { return (byte_offset / 16) % 8; }

TEST(Swizzle, PermutesTheChunksOfEachRowInPlace) {
  for (int chunks : kRowWidths)
    for (int row = 0; row < 64; ++row) {
      std::set<int> offsets;
      for (int c = 0; c < chunks; ++c) {
        const int at = swizzled_chunk_offset(row, c, chunks);
        EXPECT_GE(at, row * chunks * 16);
        EXPECT_LT(at, (row + 1) * chunks * 16);
        // ... and inside the chunk's own 128-byte line, so 16-byte writes of a row coalesce.
        EXPECT_EQ(at / 128, (row * chunks * 16 + c * 16) / 128);
        offsets.insert(at);
      }
      EXPECT_EQ(int(offsets.size()), chunks) << "row " << row << " of " << chunks << " chunks";
    }
}

TEST(Swizzle, RepeatsEveryPeriodOfRows) {
  for (int chunks : kRowWidths)
    for (int row = 0; row < 64; ++row)
      for (int c = 0; c < chunks; ++c) {
        EXPECT_EQ(swizzled_chunk_offset(row + kSwizzlePeriod, c, chunks),
                  swizzled_chunk_offset(row, c, chunks) + kSwizzlePeriod * chunks * 16);
      }
}

TEST(Swizzle, LdmatrixRowsHitEightDifferentBankGroups) {
  // ldmatrix: one 16-byte row from each of 8 consecutive tile rows (aligned to 8), same chunk.
  for (int chunks : kRowWidths)
    for (int first = 0; first < 64; first += 8)
      for (int c = 0; c < chunks; ++c) {
        std::set<int> groups;
        for (int r = first; r < first + 8; ++r)
          groups.insert(bank_group(swizzled_chunk_offset(r, c, chunks)));
        EXPECT_EQ(groups.size(), 8u) << chunks << " chunks/row, rows " << first << "+, chunk " << c;
      }
}

TEST(Swizzle, Tf32FragmentReadsHitEightDifferentBankGroups) {
  // tf32 MN-contiguous fragments: rows r..r+3 (r = 0 or 4 mod 8), chunks {2j, 2j+1} of each.
  for (int chunks : {8, 16, 32, 64})
    for (int first = 0; first < 64; first += 4)
      for (int j = 0; j < chunks / 2; ++j) {
        std::set<int> groups;
        for (int r = first; r < first + 4; ++r)
          for (int c : {2 * j, 2 * j + 1})
            groups.insert(bank_group(swizzled_chunk_offset(r, c, chunks)));
        EXPECT_EQ(groups.size(), 8u) << chunks << " chunks/row, rows " << first << "+, pair " << j;
      }
}

// Padded rows (tf32 MN-contiguous tiles on the cp.async path).
int bank(int byte_offset) { return (byte_offset / 4) % 32; }
int padded_word_offset(int row, int word, int chunks_per_row) {
  return padded_chunk_offset(row, word / 4, chunks_per_row) + (word % 4) * 4;
}

TEST(PaddedRows, Tf32FragmentReadsHitEveryBank) {
  // One interleaved fragment load: lane l reads 16 bytes, values n0 + 4(l / 4) .. + 3 of row
  // first + l % 4 (n0 a multiple of 32); each quarter-warp (lanes 8q .. 8q+7) is one wavefront and
  // must hit all 32 banks. Rows of 32 to 256 tf32 values.
  for (int chunks : {8, 16, 32, 64})
    for (int first = 0; first < 64; ++first)
      for (int n0 = 0; n0 < chunks * 4; n0 += 32)
        for (int quarter = 0; quarter < 4; ++quarter) {
          std::set<int> banks;
          for (int lane = 8 * quarter; lane < 8 * quarter + 8; ++lane)
            for (int v = 0; v < 4; ++v)
              banks.insert(
                  bank(padded_word_offset(first + lane % 4, n0 + 4 * (lane / 4) + v, chunks)));
          EXPECT_EQ(banks.size(), 32u) << chunks << " chunks/row, rows " << first << "+, n0 " << n0
                                       << ", quarter " << quarter;
        }
}

TEST(PaddedRows, CopyWritesOfEightChunksHitEightBankGroups) {
  // cp.async: eight consecutive threads write eight consecutive chunks in row-major chunk order.
  for (int chunks : {8, 16, 32, 64})
    for (int first = 0; first < 64 * chunks; first += 8) {
      std::set<int> groups;
      for (int c = first; c < first + 8; ++c)
        groups.insert(bank_group(padded_chunk_offset(c / chunks, c % chunks, chunks)));
      EXPECT_EQ(groups.size(), 8u) << chunks << " chunks/row, chunk " << first;
    }
}

TEST(PaddedRows, EveryElementIsAFixedDistanceFromTheFirst) {
  // What the kernel's immediate offsets rely on: moving by (rows, chunks) moves every element
  // by the same number of bytes.
  for (int chunks : {8, 16, 32, 64})
    for (int row = 0; row < 40; ++row)
      for (int c = 0; c + 2 < chunks; ++c) {
        EXPECT_EQ(padded_chunk_offset(row + 4, c + 2, chunks) - padded_chunk_offset(row, c, chunks),
                  padded_chunk_offset(4, 2, chunks) - padded_chunk_offset(0, 0, chunks));
      }
}

// The ldmatrix reads of a warp tile (a_fragment_chunk, b_fragment_chunk) from the offsets a thread
// holds across the K loop: held_fragment_offset plus 16 rows per unit of the other index. Every
// lane, mma step and fragment of the kernel's tiles, against the swizzle of the read itself.
TEST(HeldFragmentOffsets, GiveEveryLdmatrixReadOfAWarpTile) {
  for (bool operand_b : {false, true})
    for (bool contig_k : {true, false})
      for (int chunks : {4, 8, 16, 32}) {
        // K-contiguous: rows of BK values (4 or 8 chunks), fragments down M or N. MN-contiguous
        // (16-bit): rows of BM or BN values, 16 rows per mma step.
        const int steps = contig_k ? chunks / 2 : 4;
        const int fragments = contig_k ? 4 : chunks / 2;
        for (int first = 0; first < 8 * chunks; first += 32)
          for (int ks = 0; ks < steps; ++ks)
            for (int f = 0; f < fragments && (contig_k || first + 16 * f + 16 <= 8 * chunks); ++f)
              for (int lane = 0; lane < 32; ++lane) {
                const int x0 = first + 16 * f;
                const ChunkAt at = operand_b ? b_fragment_chunk(contig_k, x0, ks, lane)
                                             : a_fragment_chunk(contig_k, x0, ks, lane);
                ASSERT_LT(at.chunk, chunks);
                const int held = held_fragment_offset(operand_b, contig_k, first, contig_k ? ks : f,
                                                      lane, chunks);
                const int sixteen_rows = 16 * chunks * 16;
                EXPECT_EQ(swizzled_chunk_offset(at.row, at.chunk, chunks),
                          held + (contig_k ? f : ks) * sixteen_rows)
                    << (operand_b ? "B" : "A")
                    << (contig_k ? " K-contiguous, " : " MN-contiguous, ") << chunks
                    << " chunks/row, first " << first << ", step " << ks << ", fragment " << f
                    << ", lane " << lane;
              }
      }
}

}  // namespace
}  // namespace tilegemm::sm80
