// The validator's contract as a property over random problems on the CPU backend: a problem that
// validate() accepts runs to the float64 reference's result and writes no byte of D's memory
// outside D's elements; one it refuses comes back with a message and leaves every byte as it was.
// The problems are small but their descriptions are not tame: leading dimensions and batch
// strides packed, padded, one too small or negative; null pointers; D overlapping A; in-place C;
// mismatched or unknown types; NaN and infinite scalars; activations out of range.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cpu/reference.hpp"
#include "problem/dtype.hpp"
#include "problem/tolerance.hpp"
#include "tilegemm/tilegemm.hpp"

namespace tilegemm {
namespace {

using Rng = std::mt19937_64;

int64_t pick(Rng& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}
bool chance(Rng& rng, double p) { return std::uniform_real_distribution<double>()(rng) < p; }

// One operand's description and the memory behind it: enough for what the description reaches
// when its leading dimension and batch stride are taken as valid, plus a margin.
struct Operand {
  std::vector<uint8_t> memory;
  Layout layout = Layout::row_major;
  int64_t ld = 0, batch_stride = 0;
  int64_t ld_used = 0, stride_used = 0;  // what the elements' addresses are computed with

  void draw(Rng& rng, int64_t rows, int64_t cols, int64_t batch, DType dtype) {
    layout = chance(rng, 0.5) ? Layout::row_major : Layout::col_major;
    const int64_t min_ld = std::max<int64_t>(1, layout == Layout::row_major ? cols : rows);
    const int64_t lines = layout == Layout::row_major ? rows : cols;
    switch (pick(rng, 0, 9)) {
      case 0:
        ld = -1;
        break;
      case 1:
        ld = min_ld - 1;
        break;
      case 2:
      case 3:
        ld = min_ld + pick(rng, 1, 5);
        break;
      case 4:
        ld = min_ld;
        break;
      default:
        ld = 0;  // packed
    }
    ld_used = std::max(ld, min_ld);
    const int64_t packed = ld_used * lines;
    switch (pick(rng, 0, 9)) {
      case 0:
        batch_stride = -3;
        break;
      case 1:
        batch_stride = std::max<int64_t>(packed - 1, 0);
        break;
      case 2:
        batch_stride = packed + pick(rng, 1, 7);
        break;
      case 3:
        batch_stride = 0;
        break;
      default:
        batch_stride = packed;
    }
    stride_used = std::max<int64_t>(batch_stride, packed);
    const int64_t elements = (batch - 1) * stride_used + packed + 16;
    memory.resize(size_t(elements * dtype_size(dtype)));
    for (int64_t i = 0; i < elements; ++i) {
      store_from_float(memory.data(), dtype, i, float(pick(rng, -64, 64)) / 32.0f);
    }
  }
};

DType any_input_dtype(Rng& rng) {
  const DType inputs[] = {DType::fp32, DType::fp16, DType::bf16, DType::tf32};
  return chance(rng, 0.03) ? static_cast<DType>(17) : inputs[pick(rng, 0, 3)];
}

DType any_output_dtype(Rng& rng) {
  const DType outputs[] = {DType::fp32, DType::fp16, DType::bf16};
  return chance(rng, 0.03) ? DType::tf32 : outputs[pick(rng, 0, 2)];
}

TEST(ValidationProperty, AcceptedProblemsRunCorrectlyAndRefusedOnesLeaveDUntouched) {
  Rng rng(2026);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  int accepted = 0, refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    GemmProblem p;
    p.m = pick(rng, 0, 20), p.n = pick(rng, 0, 20), p.k = pick(rng, 0, 20);
    p.batch_count = pick(rng, 1, 3);
    const DType in = any_input_dtype(rng);
    const DType in_b = chance(rng, 0.05) ? any_input_dtype(rng) : in;
    const DType out = any_output_dtype(rng);
    Operand a, b, c, d;
    a.draw(rng, p.m, p.k, p.batch_count, in);
    b.draw(rng, p.k, p.n, p.batch_count, in_b);
    d.draw(rng, p.m, p.n, p.batch_count, out);
    p.a = {a.memory.data(), in, a.layout, a.ld, a.batch_stride};
    p.b = {b.memory.data(), in_b, b.layout, b.ld, b.batch_stride};
    p.d = {d.memory.data(), out, d.layout, d.ld, d.batch_stride};
    p.epilogue.alpha = chance(rng, 0.03) ? nan : float(pick(rng, -4, 4)) / 2.0f;
    p.epilogue.beta = chance(rng, 0.4) ? 0.0f : chance(rng, 0.03) ? INFINITY : 0.5f;
    if (p.epilogue.beta != 0.0f || chance(rng, 0.1)) {
      if (chance(rng, 0.2)) {
        p.c = {d.memory.data(), out, d.layout, d.ld, d.batch_stride};  // in place: C is D
      } else {
        c.draw(rng, p.m, p.n, p.batch_count, out == DType::tf32 ? DType::fp32 : out);
        p.c = {c.memory.data(), out, c.layout, c.ld, c.batch_stride};
      }
    }
    std::vector<float> bias;
    if (chance(rng, 0.3)) {
      const bool each = chance(rng, 0.5);
      bias.resize(size_t(std::max<int64_t>(p.n * (each ? p.batch_count : 1), 1)), 0.25f);
      p.epilogue.bias = bias.data();
      p.epilogue.bias_batch_stride = each ? p.n : 0;
    }
    p.epilogue.activation = static_cast<Activation>(pick(rng, 0, 5));  // 5: out of range
    p.epilogue.leaky_relu_slope = chance(rng, 0.03) ? nan : 0.1f;
    if (chance(rng, 0.03)) p.a.data = nullptr;
    if (chance(rng, 0.03)) p.d.data = a.memory.data();  // D over A

    // D's memory, and which of its bytes are D's elements (where validate() accepts).
    std::vector<uint8_t>& d_memory = p.d.data == a.memory.data() ? a.memory : d.memory;
    const std::vector<uint8_t> before = d_memory, a_before = a.memory, b_before = b.memory;
    const bool valid = validate(p).ok();
    std::vector<double> reference;
    if (valid) reference = reference::gemm(p);

    GemmOptions options;
    options.backend = Backend::cpu;
    const Status s = gemm(p, options);
    const std::string what = "trial " + std::to_string(trial) + ": " + std::to_string(p.m) + "x" +
                             std::to_string(p.n) + "x" + std::to_string(p.k) + " batch " +
                             std::to_string(p.batch_count);
    ASSERT_EQ(s.ok(), valid) << what << ": " << s.message;
    if (!s.ok()) {
      ++refused;
      ASSERT_FALSE(s.message.empty()) << what;
      ASSERT_TRUE(d_memory == before) << what << ": refused (" << s.message << ") but D changed";
      continue;
    }
    ++accepted;
    const double error = reference::relative_error(reference::read_output(p), reference);
    ASSERT_LE(error, tolerance_for(in, out)) << what;
    // Every byte outside D's elements is as it was; A and B are never written.
    std::vector<uint8_t> is_d(d_memory.size(), 0);
    const int size = dtype_size(out);
    for (int64_t e = 0; e < p.batch_count; ++e) {
      for (int64_t i = 0; i < p.m; ++i) {
        for (int64_t j = 0; j < p.n; ++j) {
          const int64_t at =
              e * p.d.batch_stride +
              (d.layout == Layout::row_major ? i * d.ld_used + j : j * d.ld_used + i);
          std::memset(is_d.data() + at * size, 1, size_t(size));
        }
      }
    }
    for (size_t byte = 0; byte < d_memory.size(); ++byte) {
      ASSERT_TRUE(is_d[byte] || d_memory[byte] == before[byte]) << what << ": byte " << byte;
    }
    ASSERT_TRUE(b.memory == b_before) << what;
    if (p.d.data != a.memory.data()) ASSERT_TRUE(a.memory == a_before) << what;
  }
  // The draw reaches both sides of the contract often.
  EXPECT_GT(accepted, 300);
  EXPECT_GT(refused, 300);
}

}  // namespace
}  // namespace tilegemm
