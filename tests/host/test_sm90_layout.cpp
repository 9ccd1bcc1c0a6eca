// The sm90 kernel's host-side parts: the shared storage, the persistent tile walk, the wgmma
// descriptors and the epilogue's store chunks against a model of where TMA's 128-byte swizzle
// puts each element, the stage ring, and which problems the TMA-store epilogue takes.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "epilogue/sm90_store_chunk.hpp"
#include "kernels/kernel_registry.hpp"
#include "kernels/sm90/compiled_shapes.hpp"
#include "kernels/sm90/kernel_shape.hpp"
#include "kernels/sm90/operand_tile.hpp"
#include "kernels/sm90/pipeline_state.hpp"
#include "kernels/sm90/shared_storage.hpp"
#include "kernels/sm90/tensor_map.hpp"
#include "schedule/tile_order.hpp"
#include "tilegemm/config.hpp"

namespace tilegemm::sm90 {
namespace {

// TMA with the 128-byte swizzle writes the 16-byte chunk c of row r of a box at chunk
// c ^ (r % 8), rows 128 bytes apart (CUDA driver API, CU_TENSOR_MAP_SWIZZLE_128B).
uint32_t tma_byte(uint32_t box_start, int row, int byte_in_row) {
  const int chunk = (byte_in_row / 16) ^ (row % 8);
  return box_start + row * kRowBytes + chunk * 16 + byte_in_row % 16;
}

// Where the tile puts operand element (mn, k) of `bytes` bytes, as TMA writes it: box after box,
// each with its own rows (K-major: box_mn rows of K; MN-major: 64 K rows of 64 MN values).
uint32_t tma_element(const OperandTile& t, int mn, int k, int bytes) {
  const int box = mn / t.box_mn(), in_box = mn % t.box_mn();
  if (!t.mn_major) return tma_byte(box * t.box_bytes(), in_box, k * bytes);
  return tma_byte(box * t.box_bytes(), k, in_box * bytes);
}

// Where wgmma reads element (mn, k) of the slice a descriptor names (PTX ISA, the canonical
// 128-byte-swizzle layouts): the unswizzled address from the start, leading and stride byte
// offsets, then the swizzle applied to the address bits (bits 4-6 ^= bits 7-9).
uint32_t wgmma_element(const OperandTile& t, uint64_t descriptor, int mn, int k, int bytes) {
  const uint32_t start = uint32_t(descriptor & 0x3FFF) << 4;
  const uint32_t leading = uint32_t(descriptor >> 16 & 0x3FFF) << 4;
  const uint32_t stride = uint32_t(descriptor >> 32 & 0x3FFF) << 4;
  EXPECT_EQ(descriptor >> 62, 1u) << "128-byte swizzle mode";
  uint32_t linear;
  if (t.mn_major) {
    linear = start + (mn / t.mn_block()) * leading + (mn % t.mn_block()) * bytes +
             (k / 8) * stride + (k % 8) * kRowBytes;
  } else {
    linear = start + (mn / 8) * stride + (mn % 8) * kRowBytes + k * bytes;
  }
  return linear ^ ((linear >> 7 & 7) << 4);
}

TEST(Sm90Layout, DescriptorsReadEveryElementWhereTmaWroteIt) {
  // parts = 2: the tile loaded by the two programs of a cluster, half the boxes each. 16-bit
  // elements in both layouts; tf32 (4 bytes, 8 values of K per wgmma) K-major, the only way
  // wgmma reads it.
  for (int bytes : {2, 4})
    for (bool mn_major : {false, true})
      for (int rows : {64, 128, 256})
        for (int parts : {1, 2}) {
          const OperandTile tile{rows, mn_major, parts, bytes};
          if (mn_major && (bytes != 2 || tile.boxes() % parts != 0)) continue;
          const int mma_k = kMmaKBytes / bytes;
          EXPECT_EQ(kMmaPerSlab * mma_k, block_k_for(bytes));
          // A wgmma slice: 64 rows of A from a multiple of 64, or all rows of B; mma_k of K.
          for (int mn0 = 0; mn0 < rows; mn0 += 64)
            for (int ks = 0; ks < kMmaPerSlab; ++ks) {
              const uint64_t d = tile.descriptor(0, mn0, ks);
              const int extent = mn0 == 0 ? rows : 64;
              for (int mn = 0; mn < extent && mn0 + mn < rows; ++mn)
                for (int k = 0; k < mma_k; ++k) {
                  ASSERT_EQ(wgmma_element(tile, d, mn, k, bytes),
                            tma_element(tile, mn0 + mn, ks * mma_k + k, bytes))
                      << bytes << "-byte " << (mn_major ? "MN" : "K") << "-major rows=" << rows
                      << " mn0=" << mn0 << " parts=" << parts << " ks=" << ks << " mn=" << mn
                      << " k=" << k;
                }
            }
        }
}

TEST(Sm90Layout, RegisterFragmentsOfAnMnMajorTf32TileAreWhereTmaWroteThem) {
  // The 128 threads' four values cover a 64 x 8 tile of A once each.
  std::set<std::pair<int, int>> covered;
  for (int thread = 0; thread < 128; ++thread)
    for (int r = 0; r < 4; ++r) {
      const int row = fragment_row(thread, r), k = fragment_k(thread, r);
      ASSERT_TRUE(row >= 0 && row < 64 && k >= 0 && k < 8) << thread << " " << r;
      covered.insert({row, k});
    }
  EXPECT_EQ(covered.size(), 64u * 8u);
  // value_offset is where TMA put each element of an MN-major tf32 tile (boxes of 32 x 32), and K
  // values 8 apart lie 1024 bytes apart (a consumer's fragments of the next wgmma).
  for (int rows : {64, 128, 256}) {
    const OperandTile tile{rows, true, 1, 4};
    EXPECT_EQ(tile.boxes(), rows / 32);
    EXPECT_EQ(tile.box_bytes(), 4096);
    for (int mn = 0; mn < rows; ++mn)
      for (int k = 0; k < block_k_for(4); ++k) {
        ASSERT_EQ(tile.value_offset(mn, k), tma_element(tile, mn, k, 4))
            << "rows=" << rows << " mn=" << mn << " k=" << k;
        if (k + 8 < block_k_for(4)) {
          ASSERT_EQ(tile.value_offset(mn, k + 8), tile.value_offset(mn, k) + 1024u);
        }
      }
  }
}

TEST(Sm90Layout, ATransposedSliceIsDTransposesChunks) {
  // A 64 x 64 slice of a consumer's part, value (row, col), lands at D^T's row `col`, column
  // `row`, of the chunk that holds that column: every value once, inside the slice's chunks, where
  // TMA reads D^T's element.
  for (int bytes : {2, 4}) {
    const int columns = store_columns(bytes);
    std::set<uint32_t> places;
    for (int row = 0; row < 64; ++row)
      for (int col = 0; col < 64; ++col) {
        const uint32_t at = transposed_slice_offset(row, col, bytes);
        ASSERT_LT(at, uint32_t(64 / columns * kStoreChunkBytes));
        ASSERT_EQ(at, uint32_t(row / columns * kStoreChunkBytes) +
                          tma_byte(0, col, row % columns * bytes));
        places.insert(at);
      }
    EXPECT_EQ(places.size(), 64u * 64u) << bytes;
  }
}

TEST(Sm90Layout, DescriptorBitFields) {
  const uint64_t d = smem_descriptor(0x12400, 8192, 1024);
  EXPECT_EQ(d & 0x3FFF, 0x12400u >> 4);
  EXPECT_EQ(d >> 16 & 0x3FFF, 8192u >> 4);
  EXPECT_EQ(d >> 32 & 0x3FFF, 1024u >> 4);
  EXPECT_EQ(d >> 49 & 7, 0u);
  EXPECT_EQ(d >> 62, 1u);
}

TEST(Sm90Layout, ASliceDescriptorFromTheTilesIsTheSliceDescriptor) {
  // The promoting consumers move the tile's descriptor on by each slice's offset: the same
  // descriptor as one made from the slice's address, for tiles anywhere in shared memory (they
  // start on 1024-byte boundaries; an SM has 228 KB).
  for (int bytes : {1, 2})
    for (bool mn_major : {false, true})
      for (int rows : {64, 128, 256}) {
        if (mn_major && bytes != 2) continue;
        const OperandTile tile{rows, mn_major};
        for (uint32_t address = 0; address + tile.bytes() <= 228 * 1024; address += 1024)
          for (int mn0 = 0; mn0 < rows; mn0 += 64)
            for (int ks = 0; ks < kMmaPerSlab; ++ks)
              ASSERT_EQ(tile.descriptor_at(tile.descriptor(address, 0, 0), mn0, ks),
                        tile.descriptor(address, mn0, ks))
                  << (mn_major ? "MN" : "K") << "-major rows=" << rows << " at " << address
                  << " mn0=" << mn0 << " ks=" << ks;
      }
}

TEST(Sm90Layout, StoreChunksAreTheLayoutTmaStoresRead) {
  // Every element of a 64 x 64 chunk once, where a TMA box with the 128-byte swizzle has it.
  std::set<uint32_t> seen;
  for (int row = 0; row < kStoreRows; ++row)
    for (int col = 0; col < kStoreColumns; ++col) {
      const uint32_t at = store_chunk_offset(row, col);
      ASSERT_EQ(at, tma_byte(0, row, col * kStoreElementBytes)) << row << "," << col;
      seen.insert(at);
    }
  EXPECT_EQ(seen.size(), size_t(kStoreChunkBytes / kStoreElementBytes));
  // A warp's store of one column pair per lane (lanes: 8 rows x 4 pairs, a 16-byte chunk per
  // row) touches each of the 32 banks once.
  for (int block = 0; block < kStoreColumns / 8; ++block) {
    std::set<uint32_t> banks;
    for (int lane = 0; lane < 32; ++lane)
      banks.insert(store_chunk_offset(lane / 4, 8 * block + 2 * (lane % 4)) / 4 % 32);
    EXPECT_EQ(banks.size(), 32u) << "column block " << block;
  }
}

TEST(Sm90Layout, Fp32StoreChunksAreTheLayoutTmaStoresRead) {
  // An fp32 D's chunk is 64 rows x 32 columns, the same 128-byte rows and swizzle.
  ASSERT_EQ(store_columns(4), 32);
  std::set<uint32_t> seen;
  for (int row = 0; row < kStoreRows; ++row)
    for (int col = 0; col < store_columns(4); ++col) {
      const uint32_t at = store_chunk_offset(row, col, 4);
      ASSERT_EQ(at, tma_byte(0, row, col * 4)) << row << "," << col;
      seen.insert(at);
    }
  EXPECT_EQ(seen.size(), size_t(kStoreChunkBytes / 4));
  // A warp's 8-byte store of one column pair per lane (8 rows x 4 pairs, 32 bytes per row)
  // covers 256 bytes: two wavefronts, each bank twice and no more.
  for (int block = 0; block < store_columns(4) / 8; ++block) {
    std::map<uint32_t, int> bank_words;
    for (int lane = 0; lane < 32; ++lane) {
      const uint32_t at = store_chunk_offset(lane / 4, 8 * block + 2 * (lane % 4), 4);
      ASSERT_EQ(at % 8, 0u);
      ++bank_words[at / 4 % 32];
      ++bank_words[(at / 4 + 1) % 32];
    }
    EXPECT_EQ(bank_words.size(), 32u) << "column block " << block;
    for (const auto& [bank, words] : bank_words) EXPECT_EQ(words, 2) << "bank " << bank;
  }
}

// D = alpha * AB in bf16, row-major, M x N with leading dimension ld, at a 16-byte aligned
// address (never dereferenced: the route is decided from the description alone).
GemmArgs plain_bf16_d(int64_t m, int64_t n, int64_t ld) {
  GemmArgs args;
  args.m = m, args.n = n, args.k = 64;
  args.epilogue.alpha = 0.5f;
  args.epilogue.d = {reinterpret_cast<void*>(uintptr_t{1} << 20), DType::bf16, {ld, 1}, 0};
  return args;
}

TEST(Sm90Epilogue, TmaStoresTakeEveryEpilogueIntoAnAlignedSixteenBitRowMajorD) {
  EXPECT_EQ(store_route(plain_bf16_d(200, 136, 136), 128), StoreRoute::tma);
  EXPECT_EQ(store_route(plain_bf16_d(130, 70, 72), 128), StoreRoute::tma);  // odd edges: TMA clips
  GemmArgs fp16 = plain_bf16_d(64, 64, 64);
  fp16.epilogue.d.dtype = DType::fp16;
  EXPECT_EQ(store_route(fp16, 128), StoreRoute::tma);
  GemmArgs batched = plain_bf16_d(64, 64, 64);
  batched.batch_count = 3;
  batched.epilogue.d.batch_stride = 64 * 64;
  EXPECT_EQ(store_route(batched, 128), StoreRoute::tma);

  const auto route_with = [](auto change) {
    GemmArgs args = plain_bf16_d(200, 136, 136);
    change(args);
    return store_route(args, 128);
  };
  // beta*C, a bias or an activation: the general epilogue, still through TMA.
  EXPECT_EQ(route_with([](GemmArgs& a) { a.epilogue.beta = 1.0f; }), StoreRoute::tma_general);
  EXPECT_EQ(route_with([](GemmArgs& a) { a.epilogue.bias = a.epilogue.d.data; }),
            StoreRoute::tma_general);
  EXPECT_EQ(route_with([](GemmArgs& a) { a.epilogue.activation = Activation::relu; }),
            StoreRoute::tma_general);
  // Any other row-major D goes through the same buffers, written out by the threads (staged):
  // rows TMA cannot describe, pairs aligned or not, batch entries that overlap, an fp32 D.
  EXPECT_EQ(route_with([](GemmArgs& a) { a.epilogue.d.stride.row = 140; }),  // 280-byte rows
            StoreRoute::staged);
  EXPECT_EQ(route_with([](GemmArgs& a) {
              a.batch_count = 2;  // batch entries that overlap
              a.epilogue.d.batch_stride = 136 * 100;
            }),
            StoreRoute::staged);
  EXPECT_EQ(route_with([](GemmArgs& a) {
              a.epilogue.d.stride.row = 140;
              a.epilogue.beta = 1.0f;
            }),
            StoreRoute::staged_general);
  // An fp32 D through TMA too where its rows are 16-byte multiples (4 values).
  EXPECT_EQ(route_with([](GemmArgs& a) { a.epilogue.d.dtype = DType::fp32; }), StoreRoute::tma);
  EXPECT_EQ(route_with([](GemmArgs& a) {
              a.epilogue.d.dtype = DType::fp32;
              a.epilogue.beta = 1.0f;
            }),
            StoreRoute::tma_general);
  EXPECT_EQ(route_with([](GemmArgs& a) {
              a.epilogue.d.dtype = DType::fp32;
              a.epilogue.d.stride.row = 138;  // 552-byte rows
            }),
            StoreRoute::staged);
  EXPECT_EQ(route_with([](GemmArgs& a) {
              a.epilogue.d.data = static_cast<char*>(a.epilogue.d.data) + 2;  // 2-byte aligned
            }),
            StoreRoute::staged);
  // A column-major D: alpha * AB through TMA as D^T's chunks where a tensor map describes D^T
  // (columns 16-byte multiples apart), else, and with more than alpha * AB, from registers.
  EXPECT_EQ(route_with([](GemmArgs& a) {
              a.epilogue.d.stride = {1, 200};
            }),  // column-major
            StoreRoute::tma_transposed);
  EXPECT_EQ(route_with([](GemmArgs& a) {
              a.epilogue.d.stride = {1, 204};  // 408-byte columns
            }),
            StoreRoute::general);
  EXPECT_EQ(route_with([](GemmArgs& a) {
              a.epilogue.d.stride = {1, 200};
              a.epilogue.beta = 1.0f;
            }),
            StoreRoute::general);
  // So is a row-major D with more rows than 32-bit chunk origins reach, by pairs where they are
  // aligned.
  EXPECT_EQ(route_with([](GemmArgs& a) {
              a.m = int64_t(INT32_MAX) + 1;
              a.epilogue.d.stride.row = 140;
            }),
            StoreRoute::scaled);
  EXPECT_EQ(route_with([](GemmArgs& a) {
              a.m = int64_t(INT32_MAX) + 1;
              a.epilogue.d.stride.row = 140;
              a.epilogue.beta = 1.0f;
            }),
            StoreRoute::general);
}

// An fp8 D goes through TMA where its chunks (64 rows x 128 columns) fit the tile's width, staged
// where TMA cannot describe it; in narrower tiles from registers.
TEST(Sm90Epilogue, AnFp8DGoesThroughTmaWhereItsChunksFitTheTile) {
  GemmArgs args = plain_bf16_d(200, 144, 144);
  args.epilogue.d.dtype = DType::fp8_e4m3;
  EXPECT_EQ(store_route(args, 128), StoreRoute::tma);
  EXPECT_EQ(store_route(args, 256), StoreRoute::tma);
  EXPECT_EQ(store_route(args, 64), StoreRoute::general);
  args.epilogue.d.dtype = DType::fp8_e5m2;
  args.epilogue.activation = Activation::gelu;
  EXPECT_EQ(store_route(args, 128), StoreRoute::tma_general);
  args.epilogue.d.stride.row = 136;  // 136-byte rows: no tensor map
  EXPECT_EQ(store_route(args, 128), StoreRoute::staged_general);
  EXPECT_EQ(store_route(args, 64), StoreRoute::general);
  args.epilogue.d.stride = {1, 200};  // column-major
  EXPECT_EQ(store_route(args, 128), StoreRoute::general);
  args.epilogue.activation = Activation::none;
  EXPECT_EQ(store_route(args, 128), StoreRoute::general);
}

// Plain tf32 with row-major A and B: the transposed product (D^T = B^T A^T), whose operands are
// B and A viewed transposed, and whose D^T goes out through the store buffers (tma_transposed
// into a row-major D, the tma route into a column-major one). Not with a bias, a column-major A,
// a column-major B, tf32x3's promoted sums, or where D^T would go out from registers.
TEST(Sm90Epilogue, Tf32WithARowMajorBRunsTheTransposedProduct) {
  const auto tf32_nn = [] {
    GemmArgs args = plain_bf16_d(520, 264, 264);
    args.k = 1000;
    args.epilogue.d.dtype = DType::fp32;
    args.a = {reinterpret_cast<void*>(uintptr_t{1} << 30), DType::tf32, {1000, 1}, 0};
    args.b = {reinterpret_cast<void*>(uintptr_t{1} << 32), DType::tf32, {264, 1}, 0};
    return args;
  };
  const GemmArgs nn = tf32_nn();
  ASSERT_TRUE(runs_transposed(nn, false));
  EXPECT_FALSE(runs_transposed(nn, true));
  const GemmArgs t = transposed_product(nn, 128);
  EXPECT_EQ(t.m, 264);
  EXPECT_EQ(t.n, 520);
  EXPECT_EQ(t.a.data, nn.b.data);
  EXPECT_EQ(t.b.data, nn.a.data);
  EXPECT_TRUE(operand_a(t).mn_major);
  EXPECT_FALSE(operand_b(t).mn_major);
  EXPECT_EQ(operand_a(t).ld, 264);
  EXPECT_EQ(operand_b(t).ld, 1000);
  EXPECT_EQ(t.epilogue.d.offset(0, 5, 7), nn.epilogue.d.offset(0, 7, 5));
  EXPECT_EQ(store_route(t, 256), StoreRoute::tma_transposed);
  EXPECT_EQ(t.group_size_m, 3);  // 264 rows: 3 tiles of 128
  const auto with = [&](auto change) {
    GemmArgs args = tf32_nn();
    change(args);
    return runs_transposed(args, false);
  };
  EXPECT_FALSE(with([](GemmArgs& a) { a.epilogue.bias = a.epilogue.d.data; }));
  EXPECT_FALSE(with([](GemmArgs& a) { a.a.stride = {1, 520}; }));          // column-major A
  EXPECT_FALSE(with([](GemmArgs& a) { a.b.stride = {1, 1000}; }));         // column-major B
  EXPECT_FALSE(with([](GemmArgs& a) { a.epilogue.d.stride.row = 265; }));  // D's rows unaligned
  EXPECT_FALSE(with([](GemmArgs& a) { a.epilogue.beta = 1.0f; }));         // into a row-major D
  EXPECT_TRUE(with([](GemmArgs& a) {
    a.epilogue.beta = 1.0f;
    a.epilogue.d.stride = {1, 520};  // column-major D: D^T is row-major
  }));
  EXPECT_TRUE(with([](GemmArgs& a) { a.epilogue.d.dtype = DType::bf16; }));
}

TEST(Sm90Epilogue, CComesByTmaWhenItLooksLikeD) {
  GemmArgs args = plain_bf16_d(200, 136, 136);
  args.epilogue.beta = 1.0f;
  args.epilogue.c = args.epilogue.d;  // in place
  EXPECT_TRUE(c_by_tma(args, 128));
  args.epilogue.activation = Activation::gelu;
  EXPECT_TRUE(c_by_tma(args, 128));

  const auto with = [&](auto change) {
    GemmArgs changed = args;
    change(changed);
    return c_by_tma(changed, 128);
  };
  EXPECT_FALSE(with([](GemmArgs& a) { a.epilogue.beta = 0.0f; }));  // C is not read
  EXPECT_FALSE(with([](GemmArgs& a) { a.epilogue.c.dtype = DType::fp32; }));
  EXPECT_FALSE(with([](GemmArgs& a) { a.epilogue.c.stride = {1, 200}; }));  // column-major C
  EXPECT_FALSE(with([](GemmArgs& a) { a.epilogue.c.stride.row = 140; }));   // 280-byte rows
  EXPECT_FALSE(with([](GemmArgs& a) { a.epilogue.d.stride.row = 140; }));   // D not by TMA
  EXPECT_FALSE(with([](GemmArgs& a) { a.epilogue.d.dtype = DType::fp32; }));
  // An fp32 C into an fp32 D too.
  EXPECT_TRUE(with([](GemmArgs& a) { a.epilogue.c.dtype = a.epilogue.d.dtype = DType::fp32; }));
}

// The shared storage of a shape, as the host sees it: its bytes, and where each part starts.
struct StorageFacts {
  int64_t bytes;  // what a launch asks for, the alignment slack included
  int store_buffers;
  size_t a, b, store, full, empty, c_full;  // offsets from the 1024-byte aligned base
  int64_t stage_bytes;                      // both operands' tiles of one stage
};
template <Sm90Shape kShape>
StorageFacts facts() {
  using S = SharedStorage<kShape>;
  return {shared_bytes<kShape>(), S::kStoreBuffers,    offsetof(S, a),
          offsetof(S, b),         offsetof(S, store),  offsetof(S, full),
          offsetof(S, empty),     offsetof(S, c_full), int64_t(sizeof(S::a[0]) + sizeof(S::b[0]))};
}
template <size_t... I>
std::vector<std::pair<Sm90Shape, StorageFacts>> compiled_facts(std::index_sequence<I...>) {
  return {{kCompiledShapes[I], facts<kCompiledShapes[I]>()}...};
}

TEST(Sm90Storage, EveryCompiledShapeFitsTheH100WithItsPartsOnTheSwizzlePeriod) {
  const auto all = compiled_facts(std::make_index_sequence<std::size(kCompiledShapes)>{});
  ASSERT_EQ(all.size(), std::size(kCompiledShapes));
  for (const auto& [shape, f] : all) {
    const KernelConfig c = shape.config(2);
    EXPECT_LE(f.bytes, 227 * 1024) << to_string(c);
    // Operand slabs and store buffers start on the swizzle's 1024-byte period; the barriers
    // follow them, 8 bytes each.
    EXPECT_EQ(f.a, 0u);
    EXPECT_EQ(f.b % kAtomBytes, 0u) << to_string(c);
    EXPECT_EQ(f.store % kAtomBytes, 0u) << to_string(c);
    EXPECT_EQ(f.b, size_t(shape.num_stages) * shape.k_slabs * shape.block_m * kRowBytes);
    EXPECT_EQ(f.store, f.b + size_t(shape.num_stages) * shape.k_slabs * shape.block_n * kRowBytes);
    EXPECT_EQ(f.full, f.store + size_t(shape.consumers()) * f.store_buffers * kStoreChunkBytes);
    EXPECT_EQ(f.empty, f.full + 8u * shape.num_stages);
    EXPECT_EQ(f.c_full, f.empty + 8u * shape.num_stages);
    EXPECT_EQ(f.bytes, int64_t(f.c_full) + 8 * shape.consumers() + kAtomBytes) << to_string(c);
    EXPECT_EQ(f.stage_bytes, int64_t(shape.k_slabs) * (shape.block_m + shape.block_n) * kRowBytes);
    // A stage holds k_slabs slabs of 128 bytes of K: BLOCK_SIZE_K 64 (or 128) of 16-bit values,
    // half that of tf32.
    EXPECT_EQ(c.block_k, 64 * shape.k_slabs);
    EXPECT_EQ(shape.config(4).block_k, 32 * shape.k_slabs);
  }
}

// What the kernel table says a config needs (the autotuner prunes by it, the launch asks for it)
// is its compiled shape's storage, for 16-bit and tf32 inputs alike; nothing for a config that
// is not compiled.
TEST(Sm90Storage, TheKernelTableAsksForEachCompiledShapesStorage) {
  const gpu::Kernel* sm90 = gpu::find_kernel("sm90");
  ASSERT_NE(sm90, nullptr);
  for (const auto& [shape, f] :
       compiled_facts(std::make_index_sequence<std::size(kCompiledShapes)>{})) {
    EXPECT_EQ(sm90->shared_bytes(shape.config(2), DType::bf16), f.bytes)
        << to_string(shape.config(2));
    EXPECT_EQ(sm90->shared_bytes(shape.config(2), DType::fp16), f.bytes)
        << to_string(shape.config(2));
    if (shape_compiled_for(shape, 4)) {
      EXPECT_EQ(sm90->shared_bytes(shape.config(4), DType::tf32), f.bytes)
          << to_string(shape.config(4));
    }
  }
  KernelConfig not_compiled = kCompiledShapes[0].config(2);
  not_compiled.num_stages = 3;
  EXPECT_EQ(sm90->shared_bytes(not_compiled, DType::bf16), 0);
}

TEST(Sm90Storage, StoreBuffersHoldAWholePartWhenTheStagesLeaveRoom) {
  // A consumer's part of 128x256 (and of 256x128) is 4 chunks of 64 x 64: with 3 stages
  // (144 KB) all of them fit beside the stages, with 4 (192 KB) two buffers take turns.
  EXPECT_EQ(store_chunks(warpgroup_rows(128), 256), 4);
  EXPECT_EQ(store_chunks(warpgroup_rows(256), 128), 4);
  EXPECT_EQ((store_buffers<Sm90Shape{.block_m = 128, .block_n = 256, .num_stages = 3}>()), 4);
  EXPECT_EQ((store_buffers<Sm90Shape{.block_m = 256, .block_n = 128, .num_stages = 3}>()), 4);
  EXPECT_EQ((store_buffers<Sm90Shape{.block_m = 128, .block_n = 256, .num_stages = 4}>()), 2);
  EXPECT_EQ((store_buffers<Sm90Shape{.block_m = 256, .block_n = 128, .num_stages = 4}>()), 2);
  // 128x192 with four stages (160 KB): three buffers, the whole part of a 16-bit D; an fp32 D's
  // six chunks go in rounds, the last two held into the next tile.
  EXPECT_EQ(store_chunks(warpgroup_rows(128), 192), 3);
  EXPECT_EQ((store_buffers<Sm90Shape{.block_m = 128, .block_n = 192, .num_stages = 4}>()), 3);
  EXPECT_TRUE((holds_chunks<Sm90Shape{.block_m = 128, .block_n = 192, .num_stages = 4}>()));
  EXPECT_GT((shared_bytes<Sm90Shape{.block_m = 128, .block_n = 192, .num_stages = 5}>()),
            227 * 1024);
  // 128x128 with six stages: two buffers, the whole part of a 16-bit D.
  EXPECT_EQ((store_buffers<Sm90Shape{.block_m = 128, .block_n = 128, .num_stages = 6}>()), 2);
  // 128x64 and 64x64: room for a consumer's whole part of an fp32 D (two 64 x 32 chunks).
  EXPECT_EQ(store_chunks(warpgroup_rows(128), 64, 4), 2);
  EXPECT_EQ((store_buffers<Sm90Shape{.block_m = 128, .block_n = 64, .num_stages = 8}>()), 2);
  EXPECT_EQ(
      (store_buffers<Sm90Shape{.block_m = 64, .block_n = 64, .num_stages = 6, .k_slabs = 2}>()), 2);
  // A 64-row tile has one consumer, which owns it all.
  EXPECT_EQ(math_warpgroups(64), 1);
  EXPECT_EQ(math_warpgroups(128), 2);
  EXPECT_EQ(store_chunks(warpgroup_rows(64), 64), 1);
  EXPECT_EQ(store_chunks(warpgroup_rows(64), 128), 2);
  // Where the buffers hold less than a consumer's part of an fp32 D, the TMA route carries
  // chunks into the next tile.
  EXPECT_TRUE((holds_chunks<Sm90Shape{.block_m = 128, .block_n = 256, .num_stages = 4}>()));
  EXPECT_TRUE((holds_chunks<Sm90Shape{.block_m = 128, .block_n = 128, .num_stages = 6}>()));
  EXPECT_FALSE((holds_chunks<Sm90Shape{.block_m = 128, .block_n = 64, .num_stages = 8}>()));
  EXPECT_FALSE((holds_chunks<kPingPong>()));
  // Stages of two slabs hold twice the bytes, with the barriers of one stage each: six of 64x64
  // take what twelve of one slab do, less six stages' barriers, and a seventh no longer fits.
  EXPECT_EQ(
      (shared_bytes<Sm90Shape{.block_m = 64, .block_n = 64, .num_stages = 6, .k_slabs = 2}>() -
       shared_bytes<Sm90Shape{.block_m = 64, .block_n = 64, .num_stages = 12}>()),
      -2 * 8 * 6);
  EXPECT_GT(
      (shared_bytes<Sm90Shape{.block_m = 64, .block_n = 64, .num_stages = 7, .k_slabs = 2}>()),
      227 * 1024);
  EXPECT_GT((shared_bytes<Sm90Shape{.block_m = 128, .block_n = 256, .num_stages = 5}>()),
            227 * 1024);
}

TEST(Sm90Storage, PingPongConsumersOwnWholeTiles) {
  // Two consumers whatever the tile's height, each with every row of its tiles.
  EXPECT_EQ(math_warpgroups(64, true), 2);
  EXPECT_EQ(math_warpgroups(128, true), 2);
  EXPECT_EQ(warpgroup_rows(128, true), 128);
  EXPECT_EQ(warpgroup_rows(64, true), 64);
  EXPECT_EQ(warpgroup_rows(128), 64);
  EXPECT_EQ(warpgroup_rows(64), 64);
  EXPECT_EQ(kPingPong.consumers(), 2);
  EXPECT_EQ(kPingPong.consumer_rows(), 128);
  EXPECT_EQ(kPingPong.stage_readers(), 1);
  // Room for a whole tile of 16-bit D per consumer beside five stages of 128x128; a sixth stage
  // would leave two buffers.
  EXPECT_EQ(store_chunks(kPingPong.consumer_rows(), kPingPong.block_n), 4);
  EXPECT_EQ(store_buffers<kPingPong>(), 4);
  EXPECT_EQ((store_buffers<Sm90Shape{.block_m = 128,
                                     .block_n = 128,
                                     .num_stages = 6,
                                     .schedule = KernelSchedule::ping_pong}>()),
            2);
  // The config names the schedule; it is never inferred from the warp tile.
  EXPECT_EQ(to_string(kPingPong.config(2)), "128x128x64/g8/s5/w12/wt128x128/pingpong");
  EXPECT_EQ(parse_kernel_config("128x128x64/g8/s5/w12/wt128x128/pingpong")->schedule,
            KernelSchedule::ping_pong);
  EXPECT_EQ(parse_kernel_config("128x128x64/g8/s5/w12/wt128x128")->schedule,
            KernelSchedule::cooperative);
}

TEST(Sm90Storage, CompiledShapesAreValidAndTf32TakesNoClusterAlongN) {
  for (const Sm90Shape& s : kCompiledShapes) EXPECT_TRUE(valid(s)) << to_string(s.config(2));
  const auto sixteen = compiled_shapes<2>();
  const auto tf32 = compiled_shapes<4>();
  EXPECT_EQ(sixteen.size(), std::size(kCompiledShapes));
  for (const Sm90Shape& s : tf32) EXPECT_EQ(s.cluster_n, 1);
  // tf32 takes every shape but the clusters along N and the tiles 192 wide (no m64n192 tf32
  // wrapper); fp8 takes no tile 192 wide either.
  for (const Sm90Shape& s : tf32) EXPECT_NE(s.block_n, 192);
  EXPECT_EQ(
      int(tf32.size()),
      int(std::count_if(std::begin(kCompiledShapes), std::end(kCompiledShapes),
                        [](const Sm90Shape& s) { return s.cluster_n == 1 && s.block_n != 192; })));
  EXPECT_TRUE(std::any_of(sixteen.begin(), sixteen.end(),
                          [](const Sm90Shape& s) { return s.block_n == 192; }));
  for (const Sm90Shape& s : compiled_shapes<1, false>()) EXPECT_NE(s.block_n, 192);
  // The first is the default: 128x256, four stages, no cluster.
  EXPECT_EQ(to_string(sixteen[0].config(2)), "128x256x64/g8/s4/w12/wt64x256");
  EXPECT_EQ(to_string(tf32[0].config(4)), "128x256x32/g8/s4/w12/wt64x256");
}

TEST(Sm90Storage, Fp8ShapesAndThosePromotionFitsInRegisters) {
  const auto fast = compiled_shapes<1, false>();
  const auto promoted = compiled_shapes<1, true>();
  for (const Sm90Shape& s : fast) {
    EXPECT_EQ(s.cluster_n, 1);
    EXPECT_FALSE(s.ping_pong());
    EXPECT_EQ(s.k_slabs, 1);  // a slab per stage: one scale block of K per step
  }
  // Promotion holds one unit of sums, an m64 tile's columns up to 128, beside a consumer's
  // accumulators: 64 + 128 fp32 registers at most (128x256, 256x128), so every fp8 tile takes it.
  ASSERT_EQ(promoted.size(), fast.size());
  for (const Sm90Shape& s : promoted) {
    EXPECT_EQ(s.promotion_unit_n(), std::min(s.block_n, 128));
    EXPECT_LE(s.promotion_registers(), kPromotionRegisters);
  }
  EXPECT_EQ((Sm90Shape{.block_m = 128, .block_n = 256}.promotion_registers()), 128 + 64);
  EXPECT_EQ((Sm90Shape{.block_m = 256, .block_n = 128}.promotion_registers()), 128 + 64);
  EXPECT_EQ((Sm90Shape{.block_m = 128, .block_n = 64}.promotion_registers()), 32 + 32);
  // Tiles of one unit per K step look a step ahead, with a second unit of sums: 128x128 and
  // 64x128 (64 + 2 x 64 registers), 128x64; 128x256 and 256x128 would need 256.
  for (const Sm90Shape& s : promoted) {
    const bool one_unit = s.mma_m() == 1 && s.block_n <= 128;
    EXPECT_EQ(s.promotion_lookahead(), one_unit) << to_string(s.config(1));
    if (s.promotion_lookahead()) EXPECT_LE(s.promotion_registers(2), kPromotionRegisters);
  }
  EXPECT_TRUE((Sm90Shape{.block_m = 128, .block_n = 128}.promotion_lookahead()));
  EXPECT_FALSE((Sm90Shape{.block_m = 128, .block_n = 256}.promotion_lookahead()));
  EXPECT_FALSE((Sm90Shape{.block_m = 256, .block_n = 128}.promotion_lookahead()));
  EXPECT_EQ(to_string(fast[0].config(1)), "128x256x128/g8/s4/w12/wt64x256");
  EXPECT_EQ(to_string(promoted[0].config(1)), "128x256x128/g8/s4/w12/wt64x256");
  // Every promoted shape is also compiled without promotion (one config list serves both).
  for (const Sm90Shape& s : promoted)
    EXPECT_TRUE(std::any_of(fast.begin(), fast.end(), [&](const Sm90Shape& f) {
      return to_string(f.config(1)) == to_string(s.config(1));
    }));
}

TEST(Sm90Storage, PromotedTf32TakesFp8sPromotedShapes) {
  // tf32x3's promoting tf32 kernels: the shapes of fp8's (one slab per stage, no clusters along
  // N, no ping-pong), each also in plain tf32's list, so the heuristic's tf32 rules find them.
  const auto fp8 = compiled_shapes<1, true>();
  const auto promoted = compiled_shapes<4, true>();
  const auto plain = compiled_shapes<4, false>();
  ASSERT_EQ(promoted.size(), fp8.size());
  for (size_t i = 0; i < promoted.size(); ++i) {
    EXPECT_EQ(to_string(promoted[i].config(4)), to_string(fp8[i].config(4)));
    EXPECT_LE(promoted[i].promotion_registers(), kPromotionRegisters);
    EXPECT_TRUE(std::any_of(plain.begin(), plain.end(), [&](const Sm90Shape& f) {
      return to_string(f.config(4)) == to_string(promoted[i].config(4));
    })) << to_string(promoted[i].config(4));
  }
  EXPECT_EQ(to_string(promoted[0].config(4)), "128x256x32/g8/s4/w12/wt64x256");
}

TEST(Sm90Clusters, MulticastReachesExactlyTheProgramsThatShareATile) {
  // For every cluster shape and every work item of a walk, a program's part of A goes to the
  // programs whose tiles have its rows, its part of B to those with its columns; a stage is freed
  // by exactly the programs that write into it, cluster_readers of them.
  for (int cluster_m : {1, 2}) {
    for (int cluster_n : {1, 2}) {
      const int size = cluster_m * cluster_n;
      const PersistentTiles tiles(1000, 700, 128, 64, 8, cluster_m, cluster_n);
      for (int32_t item = 0; item < tiles.items(3); ++item) {
        for (int from = 0; from < size; ++from) {
          const TileCoord mine = tiles.tile(item, from).tile;
          for (int to = 0; to < size; ++to) {
            const TileCoord theirs = tiles.tile(item, to).tile;
            const bool a = multicast_a(from, cluster_m, cluster_n) >> to & 1;
            const bool b = multicast_b(from, cluster_m) >> to & 1;
            EXPECT_EQ(a, theirs.pid_m == mine.pid_m) << cluster_m << "x" << cluster_n;
            EXPECT_EQ(b, theirs.pid_n == mine.pid_n) << cluster_m << "x" << cluster_n;
            EXPECT_EQ(loads_into(from, to, cluster_m, cluster_n), a || b);
            EXPECT_EQ(loads_into(from, to, cluster_m, cluster_n),
                      loads_into(to, from, cluster_m, cluster_n));
          }
          EXPECT_EQ(multicast_a(from, cluster_m, cluster_n) >> size, 0) << "ranks in the cluster";
          EXPECT_EQ(multicast_b(from, cluster_m) >> size, 0);
        }
      }
      for (int to = 0; to < size; ++to) {
        int writers = 0;
        for (int from = 0; from < size; ++from)
          writers += loads_into(from, to, cluster_m, cluster_n);
        EXPECT_EQ(writers, cluster_readers(cluster_m, cluster_n)) << cluster_m << "x" << cluster_n;
      }
    }
  }
  // The diagonal of a 2 x 2 cluster shares neither operand.
  EXPECT_FALSE(loads_into(0, 3, 2, 2));
  EXPECT_FALSE(loads_into(1, 2, 2, 2));
}

template <int kStages>
void expect_after_matches_stepping() {
  for (int k_steps : {1, 2, 3, 5, 16, 64}) {
    PipelineState<kStages> walked;
    for (int turn = 0; turn < 40; ++turn) {
      const auto place = PipelineState<kStages>::after(int64_t(turn) * k_steps);
      ASSERT_EQ(place.stage, walked.stage)
          << kStages << " stages, " << k_steps << " steps, turn " << turn;
      ASSERT_EQ(place.phase, walked.phase)
          << kStages << " stages, " << k_steps << " steps, turn " << turn;
      for (int kt = 0; kt < k_steps; ++kt) walked.advance();
    }
  }
}

template <int kStages>
void expect_behind_is_the_stage_steps_ago() {
  PipelineState<kStages> walked;
  int stages[64];  // the stage of each step walked
  for (int step = 0; step < 64; ++step) {
    for (int ago = 1; ago <= kStages && ago <= step; ++ago)
      ASSERT_EQ(walked.behind(ago), stages[step - ago]) << kStages << " stages, step " << step;
    stages[step] = walked.stage;
    walked.advance();
  }
}

TEST(Sm90Pipeline, BehindNamesTheStageOfAnEarlierStep) {
  // A promoting consumer that looks a step ahead frees a stage one or two steps after it issued
  // the stage's unit.
  expect_behind_is_the_stage_steps_ago<2>();
  expect_behind_is_the_stage_steps_ago<4>();
  expect_behind_is_the_stage_steps_ago<6>();
  expect_behind_is_the_stage_steps_ago<8>();
}

TEST(Sm90Pipeline, StateAfterAnyStepsIsWhereAnIncrementalWalkStands) {
  // A consumer that skips the other's tiles must wait on the stage and phase that stepping
  // through every K step of every earlier tile reaches.
  expect_after_matches_stepping<2>();
  expect_after_matches_stepping<4>();
  expect_after_matches_stepping<5>();
  expect_after_matches_stepping<6>();
  expect_after_matches_stepping<8>();
  expect_after_matches_stepping<12>();
}

// A model of one program's ring with two consumers that share every tile, step by step: the
// producer fills K step g (of all the program's tiles in turn; tile t has steps[t] of them) once
// both consumers have freed step g - stages; a consumer issues a step once it is filled, and
// after it frees the step before (wgmma.wait_group 1), the tile's last one at the tile's end
// (wait_group 0). With the staggered end, on a tile of more than `stagger` steps consumer 1
// issues step steps[t] - stagger only once consumer 0 has issued the tile's last step (named
// barrier 5). True when every step of every tile gets issued. Also checks the barrier's pairing:
// consumer 0's arrival for a staggered tile must come after consumer 1 has left the barrier for
// the staggered tile before, or two arrivals of consumer 0 would complete a phase.
bool staggered_ring_completes(int stages, const std::vector<int>& steps, int stagger) {
  std::vector<int> tile_of, step_of, ordinal_of;  // per step of the walk; ordinal: -1 unstaggered
  int staggered_tiles = 0;
  for (int t = 0; t < int(steps.size()); ++t) {
    const bool staggered = stagger > 0 && steps[t] > stagger;
    for (int kt = 0; kt < steps[t]; ++kt) {
      tile_of.push_back(t), step_of.push_back(kt);
      ordinal_of.push_back(staggered ? staggered_tiles : -1);
    }
    staggered_tiles += staggered;
  }
  const int total = int(tile_of.size());
  int filled = 0;               // steps the producer has filled
  int issued[2] = {0, 0};       // steps each consumer has issued
  int freed[2] = {0, 0};        // steps each consumer has freed (a prefix)
  int passed = 0, awaited = 0;  // staggered tiles consumer 0 arrived for, consumer 1 left
  for (bool moved = true; moved;) {
    moved = false;
    if (filled < total && (filled < stages || std::min(freed[0], freed[1]) > filled - stages)) {
      ++filled, moved = true;
    }
    for (int c = 0; c < 2; ++c) {
      const int g = issued[c];
      if (g == total || g >= filled) continue;
      const int k_steps = steps[tile_of[g]], kt = step_of[g], ordinal = ordinal_of[g];
      if (ordinal >= 0 && c == 1 && kt == k_steps - stagger) {
        if (passed <= ordinal) continue;  // waits at the barrier
        if (awaited == ordinal) ++awaited;
      }
      ++issued[c], moved = true;
      freed[c] = kt == k_steps - 1 ? g + 1 : g;  // the previous step; the tile's last at its end
      if (ordinal >= 0 && c == 0 && kt == k_steps - 1) {
        if (awaited < ordinal) return false;  // a second arrival before consumer 1 left the first
        ++passed;
      }
    }
  }
  return issued[0] == total && issued[1] == total;
}

TEST(Sm90Pipeline, StaggeredEndsNeverStallTheRing) {
  // Every compiled shape with two consumers sharing its tiles staggers; the rest do not.
  EXPECT_EQ(stagger_steps(2, false, 4), 3);
  EXPECT_EQ(stagger_steps(2, false, 6), 3);
  EXPECT_EQ(stagger_steps(2, false, 3), 2);
  EXPECT_EQ(stagger_steps(1, false, 8), 0);  // one consumer
  EXPECT_EQ(stagger_steps(2, true, 5), 0);   // ping-pong
  for (const Sm90Shape& s : kCompiledShapes) {
    EXPECT_EQ(s.stagger() > 0, s.consumers() == 2 && !s.ping_pong()) << to_string(s.config(2));
  }
  std::mt19937 rng(5);
  for (int stages : {2, 3, 4, 5, 6, 8}) {
    const int stagger = stagger_steps(2, false, stages);
    for (int k_steps = stagger + 1; k_steps <= 40; ++k_steps)
      for (int tiles : {1, 2, 5}) {
        const std::vector<int> steps(tiles, k_steps);
        ASSERT_TRUE(staggered_ring_completes(stages, steps, stagger))
            << stages << " stages, " << k_steps << " K steps, " << tiles << " tiles";
        ASSERT_TRUE(staggered_ring_completes(stages, steps, 0));
      }
    // Tiles of different lengths, some too short to stagger (a tail split's heads and tails,
    // schedule/tail_split.hpp).
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<int> steps(1 + rng() % 8);
      for (int& s : steps) s = 1 + int(rng() % 24);
      ASSERT_TRUE(staggered_ring_completes(stages, steps, stagger)) << stages << " stages";
    }
    // One step more and the ring stalls: the waiting consumer holds a stage the other needs.
    EXPECT_FALSE(staggered_ring_completes(stages, {stages + 1}, stages)) << stages << " stages";
  }
}

TEST(PersistentTile, EveryTileOfEveryBatchOnceAndWavesInGroupedOrder) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t m = 1 + rng() % 2000, n = 1 + rng() % 2000, batches = 1 + rng() % 3;
    const int bm = 64 << (rng() % 3), bn = 64 << (rng() % 3), group = 1 + rng() % 8;
    const int grid = 1 + rng() % 140;
    const int64_t per_batch = num_tiles(m, n, bm, bn), items = per_batch * batches;
    std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
    for (int cta = 0; cta < grid; ++cta)
      for (int64_t item = cta; item < items; item += grid) {
        const BatchedTile t = persistent_tile(item, m, n, bm, bn, group);
        ASSERT_LT(t.batch, batches);
        const TileCoord g = grouped_tile_order(item % per_batch, m, n, bm, bn, group);
        ASSERT_EQ(t.tile.pid_m, g.pid_m);
        ASSERT_EQ(t.tile.pid_n, g.pid_n);
        ASSERT_TRUE(seen.insert({t.batch, t.tile.pid_m, t.tile.pid_n}).second);
      }
    EXPECT_EQ(int64_t(seen.size()), items);
  }
}

}  // namespace
}  // namespace tilegemm::sm90
