// The epilogue's run store (epilogue_store_run), which the tensor-core kernel uses for 16-byte
// writes of D, against its element-by-element form (epilogue_store); the runs shifted onto D's
// 16-byte boundaries (aligned_runs.hpp).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "epilogue/aligned_runs.hpp"
#include "epilogue/epilogue.hpp"

namespace tilegemm {
namespace {

struct Case {
  DType out;
  Layout layout;
};

// An 8 x 16 D (and C) of `out` in `layout`, with random C and bias, alpha, beta and gelu.
struct Buffers {
  std::vector<uint8_t> c, d_run, d_elements;
  std::vector<float> bias;
  EpilogueParams params;
  static constexpr int kRows = 8, kCols = 16;

  explicit Buffers(const Case& k) {
    const size_t bytes = size_t(kRows) * kCols * size_t(dtype_size(k.out));
    c.resize(bytes);
    d_run.assign(bytes, 0xff);
    d_elements.assign(bytes, 0xff);
    bias.resize(kCols);
    std::mt19937 rng(7);
    std::normal_distribution<float> normal;
    for (int i = 0; i < kRows * kCols; ++i) store_from_float(c.data(), k.out, i, normal(rng));
    for (float& b : bias) b = normal(rng);
    params.alpha = 0.75f;
    params.beta = -0.5f;
    params.activation = Activation::gelu;
    params.bias = bias.data();
    const Strides s = strides_of(k.layout, k.layout == Layout::row_major ? kCols : kRows);
    params.c = {c.data(), k.out, s, 0};
    params.d = {d_elements.data(), k.out, s, 0};
  }
};

TEST(Epilogue, RunStoreMatchesElementStoresForEveryOutputTypeAndLayout) {
  for (DType out : {DType::fp32, DType::fp16, DType::bf16})
    for (Layout layout : {Layout::row_major, Layout::col_major})
      for (int count : {8, 5}) {  // a whole (16-byte) run, and one cut by the matrix edge
        Buffers b({out, layout});
        const bool along_row = layout == Layout::row_major;
        const int64_t row = along_row ? 3 : 0, col = along_row ? 8 : 5;  // an aligned run start
        float acc[8];
        for (int j = 0; j < 8; ++j) acc[j] = 0.25f * float(j) - 1.0f;
        for (int j = 0; j < count; ++j) {
          epilogue_store(b.params, 0, along_row ? row : row + j, along_row ? col + j : col, acc[j]);
        }
        b.params.d.data = b.d_run.data();
        epilogue_store_run(b.params, 0, row, col, count, /*aligned=*/true, acc);
        EXPECT_EQ(b.d_run, b.d_elements)
            << to_string(out) << " " << to_string(layout) << " count " << count;
      }
}

TEST(Epilogue, UnalignedRunStoresElementByElement) {
  Buffers b({DType::fp16, Layout::row_major});
  float acc[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (int j = 0; j < 8; ++j) epilogue_store(b.params, 0, 2, 1 + j, acc[j]);
  b.params.d.data = b.d_run.data();
  epilogue_store_run(b.params, 0, 2, 1, 8, /*aligned=*/false, acc);  // starts at column 1
  EXPECT_EQ(b.d_run, b.d_elements);
}

TEST(AlignedRuns, ShiftedRunsCoverARowOnceAndStartOnBoundaries) {
  // A row of 128 tile outputs of which `valid` lie inside D, its first output `misalign` bytes
  // past a 16-byte boundary: runs 0 .. 16 cover each valid output once, every run marked aligned
  // starts on a boundary, and only the first and the last run of the row are partial.
  const uintptr_t base = uintptr_t(1) << 20;
  for (int element_size : {2, 4})
    for (int misalign = 0; misalign < 16; misalign += element_size)
      for (int valid : {1, 5, 8, 9, 63, 64, 100, 127, 128}) {
        const uintptr_t address = base + misalign;
        const int shift = run_shift(address, element_size);
        ASSERT_EQ((address - uintptr_t(shift) * element_size) % 16, 0u);
        std::vector<int> covered(valid, 0);
        int partial = 0;
        for (int run = 0; run <= 128 / 8; ++run) {
          const OutputRun r = shifted_run(run, shift, valid);
          if (r.count == 0) continue;
          ASSERT_GE(r.begin, 0);
          ASSERT_LE(r.begin + r.count, valid);
          ASSERT_LE(r.count, 8);
          for (int j = 0; j < r.count; ++j) ++covered[r.begin + j];
          if (r.aligned) {
            EXPECT_EQ((address + uintptr_t(r.begin) * element_size) % 16, 0u)
                << element_size << " " << misalign << " " << valid << " " << run;
          }
          if (!r.aligned || r.count < 8) ++partial;
        }
        EXPECT_EQ(covered, std::vector<int>(valid, 1)) << element_size << " " << misalign;
        EXPECT_LE(partial, 2);
      }
  // Unshifted, the runs are the tile's own: 8r .. 8r+7, aligned, none past the row's end.
  for (int run = 0; run < 128 / 8; ++run) {
    const OutputRun r = shifted_run(run, 0, 100);
    EXPECT_EQ(r.begin, 8 * run);
    EXPECT_EQ(r.count, run < 12 ? 8 : (run == 12 ? 4 : 0));
    EXPECT_TRUE(r.aligned);
  }
}

}  // namespace
}  // namespace tilegemm
