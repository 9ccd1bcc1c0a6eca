// A probe, not part of the library: what a read-only stream of B gets after bench's cold-mode
// flush (a write, so L2 is left full of dirty lines that the stream must evict to DRAM), after
// a flush that then reads (L2 full of clean lines), and warm (B read just before). Build and run
// on the GPU: nvcc -O2 -arch=sm_90a -o probe bench/probes/flush-read-stream.cu && ./probe
// (docs/history/perf-notes.md, "The decode kernel").
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "probe_check.cuh"

__global__ void stream_read(const uint4* __restrict__ p, size_t n, unsigned* out) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    uint4 v = __ldcg(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) *out = acc;
}
int main() {
  const size_t flush_bytes = 256ull << 20;
  char *flush, *b;
  unsigned* out;
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMalloc(&b, 512ull << 20));
  CHECK(cudaMalloc(&out, 4));
  CHECK(cudaMemset(b, 1, 512ull << 20));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (size_t mb : {8, 32, 64, 128, 400}) {
    const size_t n = (mb << 20) / 16;
    for (int mode = 0; mode < 3; ++mode) {
      std::vector<float> t;
      for (int r = 0; r < 15; ++r) {
        if (mode == 0) CHECK(cudaMemsetAsync(flush, r, flush_bytes));
        if (mode == 1) {
          CHECK(cudaMemsetAsync(flush, r, flush_bytes));
          stream_read<<<sms * 8, 256>>>((const uint4*)flush, flush_bytes / 16, out);
          CHECK(cudaGetLastError());
        }
        if (mode == 2) stream_read<<<sms * 8, 256>>>((const uint4*)b, n, out);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(e0));
        stream_read<<<sms * 8, 256>>>((const uint4*)b, n, out);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 3) t.push_back(ms);
      }
      std::sort(t.begin(), t.end());
      float med = t[t.size() / 2];
      printf("%4zu MB  %-28s %8.2f us  %7.0f GB/s\n", mb,
             mode == 0   ? "after a write flush (dirty)"
             : mode == 1 ? "after write+read flush (clean)"
                         : "warm (read just before)",
             med * 1e3, (mb << 20) / (med * 1e-3) / 1e9);
    }
  }
}
