// fp16/bf16 conversions: exact values, rounding to nearest even, specials.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "problem/dtype.hpp"

namespace tilegemm {
namespace {

TEST(Fp16, ExactValuesRoundTrip) {
  for (float v : {0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f /* 2^-14 */,
                  5.960464477539063e-08f /* 2^-24 */, 0.333251953125f}) {
    EXPECT_EQ(fp16_bits_to_float(float_to_fp16_bits(v)), v) << v;
  }
  EXPECT_EQ(float_to_fp16_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_fp16_bits(-2.0f), 0xc000);
}

TEST(Fp16, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1).
  EXPECT_EQ(float_to_fp16_bits(1.0f + 0.00048828125f), 0x3c00);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 and 1 + 2^-9: ties to even (1 + 2^-9).
  EXPECT_EQ(float_to_fp16_bits(1.0f + 3 * 0.00048828125f), 0x3c02);
  // Subnormal halfway: 1.5 * 2^-24 -> 2 * 2^-24.
  EXPECT_EQ(float_to_fp16_bits(1.5f * 5.960464477539063e-08f), 0x0002);
}

TEST(Fp16, OverflowUnderflowAndNaN) {
  EXPECT_EQ(float_to_fp16_bits(65520.0f), 0x7c00);
  EXPECT_EQ(float_to_fp16_bits(1e-9f), 0x0000);
  EXPECT_TRUE(std::isnan(fp16_bits_to_float(float_to_fp16_bits(std::nanf("")))));
  EXPECT_TRUE(std::isinf(fp16_bits_to_float(0x7c00)));
}

TEST(Bf16, RoundsToNearestEvenAndKeepsNaN) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(bf16_bits_to_float(0x3f80), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(float_to_bf16_bits(1.00390625f), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(1.01171875f), 0x3f82);  // 1 + 3*2^-8 -> 1 + 2^-6
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(std::nanf("")))));
}

TEST(LoadStore, GoThroughTheElementType) {
  uint16_t half[2];
  store_from_float(half, DType::fp16, 1, 3.0f);
  EXPECT_EQ(load_as_float(half, DType::fp16, 1), 3.0f);
  float f[1];
  store_from_float(f, DType::fp32, 0, 0.1f);
  EXPECT_EQ(load_as_float(f, DType::fp32, 0), 0.1f);
}

}  // namespace
}  // namespace tilegemm
