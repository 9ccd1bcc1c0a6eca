// A GEMM whose A, B and D each hold more than 2^31 elements: every index past int32's range must
// be computed in 64 bits, by TMA descriptors, epilogue stores and the schedule alike. The inputs
// come from a hash of each element's (row, column), so the float64 reference recomputes any
// element on the host without holding the 17 GB of operands there.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>
#include <thread>
#include <vector>

#include "harness/workload.hpp"
#include "problem/dtype.hpp"

namespace tilegemm {
namespace {

// bf16 with M = 65536, N = K = 49152: A 3.2e9, B 2.4e9 and D 3.2e9 elements (17.7 GB).
constexpr int64_t kM = 65536, kN = 49152, kK = 49152;

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Element (row, col) of operand `which`: a multiple of 1/128 in [-1, 1), exact in bf16 (at most
// 8 significant bits), so the reference sees the values the GPU reads.
float element(uint64_t which, int64_t row, int64_t col) {
  const uint64_t h = splitmix64((which << 62) ^ (uint64_t(row) << 31) ^ uint64_t(col));
  return float(int(h >> 56) - 128) / 128.0f;
}

#define CUDA_OK(call)                                                      \
  do {                                                                     \
    const cudaError_t e_ = (call);                                         \
    ASSERT_EQ(e_, cudaSuccess) << #call << ": " << cudaGetErrorString(e_); \
  } while (0)

// Writes operand `which` (rows x cols, `layout`, packed) to `device`, a chunk of lines at a time,
// each chunk's elements computed on every core.
void upload(uint64_t which, int64_t rows, int64_t cols, Layout layout, void* device) {
  const int64_t lines = layout == Layout::row_major ? rows : cols;
  const int64_t line = layout == Layout::row_major ? cols : rows;
  const int64_t chunk_lines = std::max<int64_t>(1, (int64_t(1) << 27) / line);
  std::vector<uint16_t> host(size_t(chunk_lines * line));
  const unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  for (int64_t first = 0; first < lines; first += chunk_lines) {
    const int64_t count = std::min(chunk_lines, lines - first);
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < workers; ++t) {
      threads.emplace_back([&, t] {
        for (int64_t i = t; i < count; i += workers) {
          for (int64_t j = 0; j < line; ++j) {
            const int64_t outer = first + i;
            const float v =
                layout == Layout::row_major ? element(which, outer, j) : element(which, j, outer);
            host[size_t(i * line + j)] = float_to_bf16_bits(v);
          }
        }
      });
    }
    for (std::thread& t : threads) t.join();
    CUDA_OK(cudaMemcpy(static_cast<uint16_t*>(device) + first * line, host.data(),
                       size_t(count * line) * 2, cudaMemcpyHostToDevice));
  }
}

class GpuLarge : public ::testing::Test {
 protected:
  void SetUp() override {
    if (devices().empty()) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
    size_t free = 0, total = 0;
    ASSERT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
    const double need = double(kM * kK + kK * kN + kM * kN) * 2 + (1 << 30);
    if (double(free) < need) {
      GTEST_SKIP() << "needs " << need / 1e9 << " GB of free device memory, has " << free / 1e9;
    }
  }
};

TEST_F(GpuLarge, MoreThan2To31ElementsInEachOperandMatchTheReference) {
  static_assert(kM * kK > (int64_t(1) << 31) && kK * kN > (int64_t(1) << 31) &&
                kM * kN > (int64_t(1) << 31));
  void *a = nullptr, *b = nullptr, *d = nullptr;
  CUDA_OK(cudaMalloc(&a, size_t(kM * kK) * 2));
  CUDA_OK(cudaMalloc(&b, size_t(kK * kN) * 2));
  CUDA_OK(cudaMalloc(&d, size_t(kM * kN) * 2));
  std::unique_ptr<void, cudaError_t (*)(void*)> free_a(a, cudaFree), free_b(b, cudaFree),
      free_d(d, cudaFree);
  upload(0, kM, kK, Layout::row_major, a);

  // Samples: the first and last elements, D's last rows and columns, and random ones.
  std::mt19937_64 rng(7);
  std::vector<std::pair<int64_t, int64_t>> samples = {
      {0, 0}, {kM - 1, kN - 1}, {kM - 1, 0}, {0, kN - 1}, {kM / 2, kN / 2}};
  for (int i = 0; i < 250; ++i) samples.push_back({int64_t(rng() % kM), int64_t(rng() % kN)});
  for (int i = 0; i < 50; ++i)
    samples.push_back({kM - 1 - int64_t(rng() % 256), int64_t(rng() % kN)});
  std::vector<double> reference(samples.size());
  {
    std::vector<std::thread> threads;
    for (size_t s = 0; s < samples.size(); ++s) {
      threads.emplace_back([&, s] {
        double sum = 0;
        for (int64_t k = 0; k < kK; ++k) {
          sum += double(element(0, samples[s].first, k)) * double(element(1, k, samples[s].second));
        }
        reference[s] = sum;
      });
      if (threads.size() == std::max(1u, std::thread::hardware_concurrency())) {
        for (std::thread& t : threads) t.join();
        threads.clear();
      }
    }
    for (std::thread& t : threads) t.join();
  }

  for (const Layout layout_b : {Layout::row_major, Layout::col_major}) {
    SCOPED_TRACE(std::string("B ") + std::string(to_string(layout_b)));
    upload(1, kK, kN, layout_b, b);
    CUDA_OK(cudaMemset(d, 0xFF, size_t(kM * kN) * 2));  // 0xFFFF is a bf16 NaN
    GemmProblem p;
    p.m = kM, p.n = kN, p.k = kK;
    p.a = {a, DType::bf16, Layout::row_major, 0, 0};
    p.b = {b, DType::bf16, layout_b, 0, 0};
    p.d = {d, DType::bf16, Layout::row_major, 0, 0};
    GemmOptions options;
    options.backend = Backend::gpu;
    GemmReport report;
    const Status s = gemm(p, options, &report);
    ASSERT_TRUE(s.ok()) << s.message;
    CUDA_OK(cudaDeviceSynchronize());
    std::cout << "ran " << report.kernel << " " << to_string(report.config) << "\n";

    // Every element written: D read back a chunk at a time and scanned for the poison.
    int64_t unwritten = 0;
    std::vector<uint16_t> chunk(size_t(1) << 28);
    for (int64_t first = 0; first < kM * kN; first += int64_t(chunk.size())) {
      const int64_t count = std::min<int64_t>(int64_t(chunk.size()), kM * kN - first);
      CUDA_OK(cudaMemcpy(chunk.data(), static_cast<uint16_t*>(d) + first, size_t(count) * 2,
                         cudaMemcpyDeviceToHost));
      for (int64_t i = 0; i < count; ++i) unwritten += (chunk[size_t(i)] & 0x7FFF) > 0x7F80;
    }
    EXPECT_EQ(unwritten, 0);

    double error = 0, norm = 0;
    for (size_t s = 0; s < samples.size(); ++s) {
      uint16_t h = 0;
      const int64_t offset = samples[s].first * kN + samples[s].second;
      CUDA_OK(cudaMemcpy(&h, static_cast<uint16_t*>(d) + offset, 2, cudaMemcpyDeviceToHost));
      const double got = bf16_bits_to_float(h);
      error += (got - reference[s]) * (got - reference[s]);
      norm += reference[s] * reference[s];
    }
    const double relative = std::sqrt(error / norm);
    std::cout << "relative error over " << samples.size() << " sampled elements: " << relative
              << "\n";
    EXPECT_LE(relative, harness::tolerance_for(DType::bf16, DType::bf16));
  }
}

}  // namespace
}  // namespace tilegemm
