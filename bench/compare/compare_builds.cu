// Two builds of tilegemm in one process: the base (an earlier commit, its namespace renamed
// tilegemm_base) and the head (this tree). For each case both run on the same inputs:
//   results   D from each, from NaN-poisoned outputs, compared bit for bit
//   speed     each build's call timed alternately with the other's in ABBA order (L2 flushed
//             before every call, CUDA events around the call alone, median of the reps), as
//             `tilegemm bench` times
// and a line per case with both TFLOP/s and head / base. scripts/compare-builds.sh builds and
// runs it.
//
//   compare_builds [--reps N] [--quick] [--csv FILE]
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "compare_api.hpp"

namespace {

constexpr int kFp32 = 0, kFp16 = 1, kBf16 = 2, kTf32 = 3;
constexpr int kGelu = 3;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "compare_builds: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(2);
  }
}

int bytes_of(int dtype) { return dtype == kFp16 || dtype == kBf16 ? 2 : 4; }
const char* name_of(int dtype) {
  return dtype == kFp16 ? "fp16" : dtype == kBf16 ? "bf16" : dtype == kTf32 ? "tf32" : "fp32";
}

// Standard-normal-like values (Box-Muller on a hash of the index and seed), stored as `dtype`.
__global__ void fill_random(void* out, int64_t count, int dtype, uint32_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    uint64_t z = uint64_t(i) * 0x9E3779B97F4A7C15ull + seed * 0xD1B54A32D192ED03ull + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const float u1 = (float(uint32_t(z >> 40)) + 1.0f) * (1.0f / 16777216.0f);
    const float u2 = float(uint32_t(z) & 0xFFFFFF) * (1.0f / 16777216.0f);
    const float v = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    if (dtype == kFp16) {
      static_cast<__half*>(out)[i] = __float2half_rn(v);
    } else if (dtype == kBf16) {
      static_cast<__nv_bfloat16*>(out)[i] = __float2bfloat16_rn(v);
    } else {
      static_cast<float*>(out)[i] = v;
    }
  }
}

void random_fill(void* p, int64_t count, int dtype, uint32_t seed) {
  fill_random<<<1024, 256>>>(p, count, dtype, seed);
  check(cudaGetLastError(), "fill_random launch");
}

struct Spec {
  std::string suite;
  int64_t m, n, k;
  int input;
  bool a_col = false, b_col = false;
  int output = -1;        // -1: the input type's default (tf32 -> fp32)
  bool epilogue = false;  // beta = 1 (C in place), a bias and gelu
  int64_t batch = 1;
};

struct Buffers {
  void *a = nullptr, *b = nullptr, *bias = nullptr, *c = nullptr, *d_base = nullptr,
       *d_head = nullptr;
  ~Buffers() {
    for (void* p : {a, b, bias, c, d_base, d_head}) cudaFree(p);
  }
};

class Timer {
 public:
  Timer() {
    int device = 0, l2 = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "L2 size");
    flush_bytes_ = std::max<size_t>(size_t(l2) * 2, 64u << 20);
    check(cudaMalloc(&flush_, flush_bytes_), "cudaMalloc of the flush buffer");
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~Timer() {
    cudaFree(flush_);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  // The L2 flushed by a write, then the call alone between two events.
  template <class Call>
  double ms(Call call) {
    check(cudaMemsetAsync(flush_, 0, flush_bytes_), "flush");
    check(cudaEventRecord(start_), "cudaEventRecord");
    call();
    check(cudaEventRecord(stop_), "cudaEventRecord");
    check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms;
  }

 private:
  void* flush_ = nullptr;
  size_t flush_bytes_ = 0;
  cudaEvent_t start_, stop_;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

struct Outcome {
  std::string base_ran, head_ran;
  double base_ms = 0.0, head_ms = 0.0;
  int64_t differing = -1;  // elements of D whose bits differ; -1 when a run failed
  std::string error;
};

Outcome run_case(const Spec& s, int reps, Timer& timer) {
  const int output = s.output >= 0 ? s.output : (s.input == kTf32 ? kFp32 : s.input);
  const int in_bytes = bytes_of(s.input), out_bytes = bytes_of(output);
  const int64_t a_count = s.m * s.k, b_count = s.k * s.n, d_count = s.m * s.n;
  Buffers buf;
  check(cudaMalloc(&buf.a, size_t(a_count * s.batch) * in_bytes), "cudaMalloc A");
  check(cudaMalloc(&buf.b, size_t(b_count * s.batch) * in_bytes), "cudaMalloc B");
  check(cudaMalloc(&buf.bias, size_t(s.n) * out_bytes), "cudaMalloc bias");
  check(cudaMalloc(&buf.c, size_t(d_count * s.batch) * out_bytes), "cudaMalloc C");
  check(cudaMalloc(&buf.d_base, size_t(d_count * s.batch) * out_bytes), "cudaMalloc D");
  check(cudaMalloc(&buf.d_head, size_t(d_count * s.batch) * out_bytes), "cudaMalloc D");
  const uint32_t seed = uint32_t(s.m * 131 + s.n * 17 + s.k + s.input * 7);
  random_fill(buf.a, a_count * s.batch, s.input, seed);
  random_fill(buf.b, b_count * s.batch, s.input, seed + 1);
  random_fill(buf.bias, s.n, output, seed + 2);
  random_fill(buf.c, d_count * s.batch, output, seed + 3);

  compare::Case c;
  c.m = s.m, c.n = s.n, c.k = s.k, c.batch = s.batch;
  c.input = s.input, c.output = output;
  c.a_col = s.a_col, c.b_col = s.b_col;
  c.a = buf.a, c.b = buf.b;
  c.a_stride = s.batch > 1 ? a_count : 0;
  c.b_stride = s.batch > 1 ? b_count : 0;
  c.d_stride = s.batch > 1 ? d_count : 0;
  if (s.epilogue) {
    c.beta = 1.0f;
    c.bias = buf.bias;
    c.activation = kGelu;
  }
  compare::Case base = c, head = c;
  base.d = buf.d_base;
  head.d = buf.d_head;

  Outcome out;
  const size_t d_bytes = size_t(d_count * s.batch) * out_bytes;
  // Results: D poisoned with NaN (all bits set), or C where the epilogue reads it in place.
  for (void* d : {buf.d_base, buf.d_head}) {
    if (s.epilogue) {
      check(cudaMemcpy(d, buf.c, d_bytes, cudaMemcpyDeviceToDevice), "C into D");
    } else {
      check(cudaMemset(d, 0xFF, d_bytes), "poison D");
    }
  }
  if (!compare::base_gemm(base, &out.base_ran, &out.error) ||
      !compare::head_gemm(head, &out.head_ran, &out.error)) {
    return out;
  }
  check(cudaDeviceSynchronize(), "the first runs");
  std::vector<unsigned char> x(d_bytes), y(d_bytes);
  check(cudaMemcpy(x.data(), buf.d_base, d_bytes, cudaMemcpyDeviceToHost), "copy D");
  check(cudaMemcpy(y.data(), buf.d_head, d_bytes, cudaMemcpyDeviceToHost), "copy D");
  out.differing = 0;
  for (size_t i = 0; i < d_bytes; i += out_bytes)
    out.differing += std::memcmp(&x[i], &y[i], out_bytes) != 0;

  // Speed: after untimed rounds of the same calls, alternating in ABBA order so that neither
  // build always runs first (the clock and power state drift within a pair of calls).
  std::string error;
  const auto call = [&](compare::GemmFunction f, const compare::Case& which) {
    if (!f(which, nullptr, &error)) {
      std::fprintf(stderr, "compare_builds: %s\n", error.c_str());
      std::exit(2);
    }
  };
  const double flops = 2.0 * double(s.m) * s.n * s.k * s.batch;
  const int n = flops > 2e12 ? std::max(6, reps / 2) : reps;
  for (int i = 0; i < 3; ++i) {
    timer.ms([&] { call(compare::base_gemm, base); });
    timer.ms([&] { call(compare::head_gemm, head); });
  }
  std::vector<double> tb, th;
  for (int i = 0; i < n; ++i) {
    const auto time_base = [&] { tb.push_back(timer.ms([&] { call(compare::base_gemm, base); })); };
    const auto time_head = [&] { th.push_back(timer.ms([&] { call(compare::head_gemm, head); })); };
    if (i % 2 == 0) {
      time_base();
      time_head();
    } else {
      time_head();
      time_base();
    }
  }
  check(cudaDeviceSynchronize(), "the timed runs");
  out.base_ms = median(tb);
  out.head_ms = median(th);
  return out;
}

std::vector<Spec> specs(bool quick) {
  // The bench suites (cli/bench_suites.cpp), row-major A and B as `bench` runs them.
  const std::vector<Spec> suite_shapes = {
      {"square", 512, 512, 512, 0},       {"square", 1024, 1024, 1024, 0},
      {"square", 2048, 2048, 2048, 0},    {"square", 4096, 4096, 4096, 0},
      {"square", 8192, 8192, 8192, 0},    {"square", 16384, 16384, 16384, 0},
      {"unaligned", 4095, 4097, 4093, 0}, {"unaligned", 1000, 1000, 1000, 0},
      {"unaligned", 3000, 5000, 700, 0},  {"skinny", 16, 4096, 4096, 0},
      {"skinny", 128, 4096, 4096, 0},     {"llm", 4096, 11008, 4096, 0},
      {"llm", 4096, 4096, 11008, 0},      {"llm", 8192, 8192, 1024, 0},
      {"longk", 1024, 1024, 16384, 0}};
  std::vector<Spec> out;
  for (int dtype : {kBf16, kFp16, kTf32})
    for (Spec s : suite_shapes) {
      if (quick && s.m * s.n * s.k > (int64_t(1) << 36)) continue;
      s.input = dtype;
      out.push_back(s);
    }
  // Other layouts, epilogues, output types, batches and the tail split's shapes (summarised
  // apart from the suites).
  const auto extra = [&](Spec s) {
    s.suite = "extra";
    out.push_back(s);
  };
  extra({.m = 1000, .n = 1000, .k = 1000, .input = kBf16, .a_col = true, .b_col = true});
  extra({.m = 4095, .n = 4097, .k = 4093, .input = kFp16, .epilogue = true});
  extra({.m = 8192, .n = 8192, .k = 1024, .input = kBf16, .epilogue = true});  // ping-pong
  extra({.m = 520, .n = 1032, .k = 1512, .input = kBf16, .batch = 4});         // tail split
  extra({.m = 4096, .n = 4096, .k = 11008, .input = kFp16, .b_col = true});    // tail split
  extra({.m = 200, .n = 136, .k = 64, .input = kBf16, .output = kFp32, .epilogue = true});
  extra({.m = 130, .n = 70, .k = 45, .input = kBf16});       // unaligned rows: sm80, staged
  extra({.m = 2040, .n = 2040, .k = 2040, .input = kBf16});  // lines off L2 lines: a cluster
  extra({.m = 6144, .n = 6152, .k = 6144, .input = kBf16});  // 2 x 2 clusters
  extra({.m = 1000, .n = 3000, .k = 700, .input = kTf32, .b_col = true});
  extra({.m = 300, .n = 200, .k = 100, .input = kTf32, .a_col = true});  // sm80 tf32
  extra({.m = 777, .n = 555, .k = 333, .input = kFp16, .a_col = true, .epilogue = true});
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 20;
  bool quick = false;
  std::string csv;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (arg == "--quick") {
      quick = true;
    } else if (arg == "--csv" && i + 1 < argc) {
      csv = argv[++i];
    } else {
      std::fprintf(stderr, "usage: compare_builds [--reps N] [--quick] [--csv FILE]\n");
      return 2;
    }
  }
  Timer timer;
  std::ofstream csv_out;
  if (!csv.empty()) {
    csv_out.open(csv);
    csv_out << "suite,m,n,k,batch,dtype,layouts,epilogue,base_config,head_config,base_ms,head_ms,"
               "base_tflops,head_tflops,head_over_base,differing_elements\n";
  }
  std::vector<double> ratios[4], extra_ratios;
  int64_t mismatched_cases = 0, failed = 0;
  for (const Spec& s : specs(quick)) {
    const Outcome o = run_case(s, reps, timer);
    const double flops = 2.0 * double(s.m) * s.n * s.k * s.batch;
    const double tb = o.base_ms > 0 ? flops / o.base_ms * 1e-9 : 0.0;
    const double th = o.head_ms > 0 ? flops / o.head_ms * 1e-9 : 0.0;
    const double ratio = o.base_ms > 0 && o.head_ms > 0 ? o.base_ms / o.head_ms : 0.0;
    const std::string layouts = std::string(s.a_col ? "T" : "N") + (s.b_col ? "T" : "N");
    if (o.differing < 0) {
      ++failed;
      std::printf("%-9s %s %5lld x %5lld x %5lld  FAILED: %s\n", s.suite.c_str(), name_of(s.input),
                  (long long)s.m, (long long)s.n, (long long)s.k, o.error.c_str());
      continue;
    }
    mismatched_cases += o.differing > 0;
    (s.suite == "extra" ? extra_ratios : ratios[s.input]).push_back(ratio);
    std::printf(
        "%-9s %s %5lld x %5lld x %5lld b%lld %s%s  %-44s | %-44s %8.1f %8.1f  %.4f  %s\n",
        s.suite.c_str(), name_of(s.input), (long long)s.m, (long long)s.n, (long long)s.k,
        (long long)s.batch, layouts.c_str(), s.epilogue ? " epi" : "", o.base_ran.c_str(),
        o.head_ran.c_str(), tb, th, ratio,
        o.differing == 0 ? "bitwise equal" : (std::to_string(o.differing) + " differ").c_str());
    std::fflush(stdout);
    if (csv_out) {
      csv_out << s.suite << ',' << s.m << ',' << s.n << ',' << s.k << ',' << s.batch << ','
              << name_of(s.input) << ',' << layouts << ','
              << (s.epilogue ? "beta+bias+gelu" : "none") << ",\"" << o.base_ran << "\",\""
              << o.head_ran << "\"," << o.base_ms << ',' << o.head_ms << ',' << tb << ',' << th
              << ',' << ratio << ',' << o.differing << std::endl;
    }
  }
  std::vector<double> all;
  for (int dtype : {kBf16, kFp16, kTf32}) {
    if (ratios[dtype].empty()) continue;
    const auto& r = ratios[dtype];
    all.insert(all.end(), r.begin(), r.end());
    std::printf("head/base %s: median %.4f, lowest %.4f over %zu shapes\n", name_of(dtype),
                median(r), *std::min_element(r.begin(), r.end()), r.size());
  }
  if (!all.empty()) {
    std::printf("head/base all: median %.4f, lowest %.4f over %zu shapes\n", median(all),
                *std::min_element(all.begin(), all.end()), all.size());
  }
  if (!extra_ratios.empty()) {
    std::printf("head/base extra cases: median %.4f, lowest %.4f over %zu cases\n",
                median(extra_ratios), *std::min_element(extra_ratios.begin(), extra_ratios.end()),
                extra_ratios.size());
  }
  std::printf("cases whose D differs bit for bit: %lld; failed: %lld\n",
              (long long)mismatched_cases, (long long)failed);
  return failed > 0 ? 1 : 0;
}
