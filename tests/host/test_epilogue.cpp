// The epilogue's run store (epilogue_store_run), which the tensor-core kernel uses for 16-byte
// writes of D, against its element-by-element form (epilogue_store).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

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

}  // namespace
}  // namespace tilegemm
