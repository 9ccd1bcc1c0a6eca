// What the probes in this folder share: every CUDA call checked, a failed one ending the probe
// with its name. The probes are standalone programs, built by nvcc one file at a time.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                     \
  do {                                                                  \
    if (cudaError_t err = (call); err != cudaSuccess) {                 \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(err)); \
      std::exit(1);                                                     \
    }                                                                   \
  } while (0)
