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

namespace tilegemm {
namespace {

// Every fp8 pattern decoded, against values written out from the OCP FP8 definition.
double e4m3_value(int bits) {
  const int sign = bits >> 7, exponent = (bits >> 3) & 15, mantissa = bits & 7;
  const double magnitude = exponent == 0 ? mantissa / 8.0 * std::pow(2.0, -6)
                                         : (1 + mantissa / 8.0) * std::pow(2.0, exponent - 7);
  return sign ? -magnitude : magnitude;
}
double e5m2_value(int bits) {
  const int sign = bits >> 7, exponent = (bits >> 2) & 31, mantissa = bits & 3;
  const double magnitude = exponent == 0 ? mantissa / 4.0 * std::pow(2.0, -14)
                                         : (1 + mantissa / 4.0) * std::pow(2.0, exponent - 15);
  return sign ? -magnitude : magnitude;
}

TEST(Fp8, EveryE4m3PatternDecodesAndRoundTrips) {
  for (int bits = 0; bits < 256; ++bits) {
    const float v = load_as_float(&bits, DType::fp8_e4m3, 0);  // little-endian: the low byte
    if ((bits & 0x7f) == 0x7f) {                               // S.1111.111: NaN, no infinities
      EXPECT_TRUE(std::isnan(v)) << bits;
      continue;
    }
    EXPECT_EQ(double(v), e4m3_value(bits)) << bits;
    EXPECT_EQ(float_to_fp8_bits(v, e4m3_format()), bits == 0x80 ? 0x80 : bits) << bits;
  }
  EXPECT_EQ(e4m3_value(0x7e), 448.0);
}

TEST(Fp8, EveryE5m2PatternDecodesAndRoundTrips) {
  for (int bits = 0; bits < 256; ++bits) {
    const float v = load_as_float(&bits, DType::fp8_e5m2, 0);
    const int exponent = (bits >> 2) & 31, mantissa = bits & 3;
    if (exponent == 31) {
      EXPECT_TRUE(mantissa == 0 ? std::isinf(v) : std::isnan(v)) << bits;
      continue;
    }
    EXPECT_EQ(double(v), e5m2_value(bits)) << bits;
    EXPECT_EQ(float_to_fp8_bits(v, e5m2_format()), bits) << bits;
  }
  EXPECT_EQ(e5m2_value(0x7b), 57344.0);
}

TEST(Fp8, RoundsToNearestEvenAndSaturates) {
  // e4m3 steps are 1/8 between 1 and 2: 1 + 1/16 is a tie, to even (1); 1 + 3/16 to 1 + 1/4.
  EXPECT_EQ(float_to_fp8_bits(1.0f + 1.0f / 16, e4m3_format()), 0x38);
  EXPECT_EQ(float_to_fp8_bits(1.0f + 3.0f / 16, e4m3_format()), 0x3a);
  EXPECT_EQ(float_to_fp8_bits(1.0f + 1.0f / 16 + 1e-4f, e4m3_format()), 0x39);
  // Subnormals: the smallest e4m3 is 2^-9; half of it ties to zero, 0.75 of it rounds up.
  EXPECT_EQ(float_to_fp8_bits(std::ldexp(1.0f, -10), e4m3_format()), 0x00);
  EXPECT_EQ(float_to_fp8_bits(0.75f * std::ldexp(1.0f, -9), e4m3_format()), 0x01);
  // The largest subnormal rounds up into the smallest normal.
  EXPECT_EQ(float_to_fp8_bits(std::ldexp(7.9f, -9), e4m3_format()), 0x08);
  // Past the largest finite value: saturated, both signs; NaN stays NaN.
  EXPECT_EQ(float_to_fp8_bits(1000.0f, e4m3_format()), 0x7e);
  EXPECT_EQ(float_to_fp8_bits(-1e30f, e4m3_format()), 0xfe);
  EXPECT_EQ(float_to_fp8_bits(std::numeric_limits<float>::infinity(), e5m2_format()), 0x7b);
  EXPECT_TRUE(std::isnan(
      fp8_bits_to_float(float_to_fp8_bits(std::nanf(""), e4m3_format()), e4m3_format())));
  EXPECT_TRUE(std::isnan(
      fp8_bits_to_float(float_to_fp8_bits(std::nanf(""), e5m2_format()), e5m2_format())));
}

// Whether x has TF32's 10 mantissa bits at most (the low 13 bits of its fp32 pattern are zero).
bool is_tf32(float x) { return (float_bits(x) & 0x1fffu) == 0; }

TEST(Tf32x3, BigPlusSmallHoldsAllButTheLastBitsOfEveryValue) {
  // On random values of every exponent, both halves are tf32 values and big + small is x to
  // within 2^-21 of x (the bits below small's 11 are dropped).
  uint64_t state = 12345;
  for (int i = 0; i < 200000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const float x = bits_to_float(uint32_t(state >> 32) & 0xff7fffffu);  // finite
    // (Near the subnormals small's lost bits are a fixed quantum, not a fraction of x.)
    if (std::fabs(x) < 1e-30f) continue;
    const Tf32Split s = split_tf32(x);
    ASSERT_TRUE(is_tf32(s.big) && is_tf32(s.small)) << x;
    const double sum = double(s.big) + double(s.small);
    ASSERT_LE(std::fabs(sum - double(x)), std::ldexp(std::fabs(double(x)), -21)) << x;
    ASSERT_LE(std::fabs(double(s.small)), std::ldexp(std::fabs(double(x)), -10)) << x;
  }
  // A tf32 value is its own big half; the largest floats keep a finite big half (cut, not
  // rounded up past the range); infinities and NaN pass as big with a zero small half.
  EXPECT_EQ(split_tf32(1.5f).big, 1.5f);
  EXPECT_EQ(split_tf32(1.5f).small, 0.0f);
  const float max = std::numeric_limits<float>::max();
  EXPECT_TRUE(std::isfinite(split_tf32(max).big));
  EXPECT_LE(std::fabs(double(split_tf32(max).big) + double(split_tf32(max).small) - double(max)),
            std::ldexp(double(max), -21));
  EXPECT_EQ(split_tf32(-max).big, -split_tf32(max).big);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(split_tf32(inf).big, inf);
  EXPECT_EQ(split_tf32(inf).small, 0.0f);
  EXPECT_EQ(split_tf32(-inf).big, -inf);
  EXPECT_TRUE(std::isnan(split_tf32(std::nanf("")).big));
  EXPECT_EQ(split_tf32(std::nanf("")).small, 0.0f);
}

}  // namespace
}  // namespace tilegemm
