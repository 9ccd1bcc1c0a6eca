// A probe, not part of the library: what a call costs before it does any work, timed as bench
// times it (cold: a 2 x L2 memset, then the call alone between two events; warm: ten calls back
// to back). Empty kernels of one program and of a persistent grid, with and without a large
// dynamic shared-memory request, launched plainly and through cudaLaunchKernelEx with a
// kernel-parameter block the size of sm90_gemm's; and cuBLAS on problems too small to take time.
// Build and run on the GPU:
//   nvcc -O2 -std=c++20 -arch=sm_90a -o probe bench/probes/call-floor.cu -lcublas && ./probe
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "probe_check.cuh"

// cuBLAS calls alike.
#define CHECK_BLAS(call)                                 \
  do {                                                   \
    if (cublasStatus_t st = (call); st != 0) {           \
      std::fprintf(stderr, "%s: status %d\n", #call, st); \
      std::exit(1);                                      \
    }                                                    \
  } while (0)

template <int kBytes>
struct Params {
  unsigned char bytes[kBytes];
};

__global__ void empty_kernel() {}
// Reads one byte of its parameters, so that they are not optimised away.
template <int kBytes>
__global__ void empty_with_params(Params<kBytes> p, int* out) {
  if (p.bytes[threadIdx.x % kBytes] == 255 && out) *out = 1;
}
// Each program writes `values` bf16 values of its own: the smallest useful epilogue.
__global__ void write_tile(__nv_bfloat16* d, int values) {
  for (int i = threadIdx.x; i < values; i += blockDim.x)
    d[size_t(blockIdx.x) * values + i] = __float2bfloat16(float(i));
}

int main(int argc, char** argv) {
  // "ncu": each call five times, untimed, for a profiler's own durations.
  const bool profile_only = argc > 1 && std::string(argv[1]) == "ncu";
  int sms = 0, l2 = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  const size_t flush_bytes = std::max<size_t>(size_t(l2) * 2, 64u << 20);
  char* flush;
  CHECK(cudaMalloc(&flush, flush_bytes));
  __nv_bfloat16 *a, *b, *d;
  CHECK(cudaMalloc(&a, 64 << 20));
  CHECK(cudaMalloc(&b, 64 << 20));
  CHECK(cudaMalloc(&d, 64 << 20));
  CHECK(cudaMemset(a, 0, 64 << 20));
  CHECK(cudaMemset(b, 0, 64 << 20));
  int* out;
  CHECK(cudaMalloc(&out, 4));
  const int big_smem = 200 << 10;
  CHECK(cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, big_smem));
  CHECK(cudaFuncSetAttribute(write_tile, cudaFuncAttributeMaxDynamicSharedMemorySize, big_smem));
  cublasHandle_t handle;
  CHECK_BLAS(cublasCreate(&handle));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));

  // The median over 50 timed calls of `call`, cold (the flush before each) or warm (ten calls
  // back to back per timing, after one untimed). `prelude`, where given, runs between the flush
  // and the first event: a kernel that asks the SMs' shared memory to be laid out as the call's.
  auto time_us = [&](const std::function<void()>& call, bool warm,
                     const std::function<void()>& prelude = {}) {
    std::vector<float> t;
    call();
    CHECK(cudaDeviceSynchronize());
    for (int r = 0; r < 50; ++r) {
      if (!warm) CHECK(cudaMemsetAsync(flush, r, flush_bytes));
      if (prelude) prelude();
      CHECK(cudaEventRecord(e0));
      for (int i = 0; i < (warm ? 10 : 1); ++i) call();
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, e0, e1));
      t.push_back(ms * 1000 / (warm ? 10 : 1));
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  // A persistent grid's empty kernel with kBytes of parameters, launched plainly or through
  // cudaLaunchKernelEx (as sm90_gemm is).
  auto with_params = [&]<int kBytes>(bool ex, int programs) {
    return [&, ex, programs] {
      static bool set = false;
      if (!set) {
        CHECK(cudaFuncSetAttribute(empty_with_params<kBytes>,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, big_smem));
        set = true;
      }
      const Params<kBytes> params{};
      if (ex) {
        cudaLaunchConfig_t config{};
        config.gridDim = dim3(programs);
        config.blockDim = dim3(384);
        config.dynamicSmemBytes = big_smem;
        config.stream = 0;
        CHECK(cudaLaunchKernelEx(&config, empty_with_params<kBytes>, params, out));
      } else {
        empty_with_params<kBytes><<<programs, 384, big_smem>>>(params, out);
      }
      CHECK(cudaGetLastError());
    };
  };
  struct Case {
    const char* name;
    std::function<void()> call;
  };
  const float one = 1.0f, zero = 0.0f;
  auto gemm = [&](int m, int n, int k) {
    return [=, &handle] {
      CHECK_BLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, CUDA_R_16BF, n,
                              a, CUDA_R_16BF, k, &zero, d, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
    };
  };
  std::vector<Case> cases = {
      {"empty, 1 program of 128 threads",
       [] {
         empty_kernel<<<1, 128>>>();
         CHECK(cudaGetLastError());
       }},
      {"empty, SMs programs of 384 threads",
       [&] {
         empty_kernel<<<sms, 384>>>();
         CHECK(cudaGetLastError());
       }},
      {"empty, SMs x 384, 200 KB shared",
       [&] {
         empty_kernel<<<sms, 384, big_smem>>>();
         CHECK(cudaGetLastError());
       }},
      {"empty, SMs x 384, 200 KB, 16 B params", with_params.operator()<16>(false, sms)},
      {"empty, SMs x 384, 200 KB, 256 B params", with_params.operator()<256>(false, sms)},
      {"empty, SMs x 384, 200 KB, 512 B params", with_params.operator()<512>(false, sms)},
      {"empty, SMs x 384, 200 KB, 1 KB params", with_params.operator()<1024>(false, sms)},
      {"empty, SMs x 384, 200 KB, 2 KB params", with_params.operator()<2048>(false, sms)},
      {"empty, SMs x 384, 200 KB, 4 KB params", with_params.operator()<4096>(false, sms)},
      {"empty, SMs x 384, 200 KB, 16 B params, LaunchKernelEx",
       with_params.operator()<16>(true, sms)},
      {"empty, SMs x 384, 200 KB, 1 KB params, LaunchKernelEx",
       with_params.operator()<1024>(true, sms)},
      {"empty, 16 x 384, 200 KB, 1 KB params, LaunchKernelEx",
       with_params.operator()<1024>(true, 16)},
      {"write 8 KB per program, SMs x 384",
       [&] {
         write_tile<<<sms, 384>>>(d, 4096);
         CHECK(cudaGetLastError());
       }},
      {"write 8 KB per program, SMs x 384, 200 KB shared",
       [&] {
         write_tile<<<sms, 384, big_smem>>>(d, 4096);
         CHECK(cudaGetLastError());
       }},
      {"cuBLAS 64 x 64 x 64", gemm(64, 64, 64)},
      {"cuBLAS 8 x 640 x 64", gemm(8, 640, 64)},
      {"cuBLAS 256 x 1408 x 128", gemm(256, 1408, 128)},
      {"cuBLAS 512 x 512 x 512", gemm(512, 512, 512)},
  };
  const auto big_shared_prelude = [&] {
    empty_kernel<<<sms, 384, big_smem>>>();
    CHECK(cudaGetLastError());
  };
  if (profile_only) {
    for (const auto& c : cases) {
      for (int i = 0; i < 5; ++i) {
        CHECK(cudaMemsetAsync(flush, i, flush_bytes));
        c.call();
      }
    }
    CHECK(cudaDeviceSynchronize());
    return 0;
  }
  std::printf("%-64s %10s %10s %18s\n", "call", "cold us", "warm us", "cold, 200 KB first");
  for (const auto& c : cases)
    std::printf("%-64s %10.2f %10.2f %18.2f\n", c.name, time_us(c.call, false),
                time_us(c.call, true), time_us(c.call, false, big_shared_prelude));
  CHECK_BLAS(cublasDestroy(handle));
  return 0;
}
