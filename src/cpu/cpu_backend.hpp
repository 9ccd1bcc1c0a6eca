// The CPU backend: the GPU kernels' algorithm on the host.
//
// It walks the same tile schedule (grouped order), masks the same edges and calls the same
// epilogue as the kernels, one program at a time on a pool of threads. It serves machines
// without a GPU, and debugging: a tile computed here can be compared with the kernel's, as
// Triton's interpreter mode allows.
#pragma once

#include <string>

#include "tilegemm/tilegemm.hpp"

namespace tilegemm::cpu {

// The config the CPU backend uses when none is given.
KernelConfig default_config();

// Empty when the CPU backend takes `config`, else why not: BLOCK_SIZE_M, _N and _K from 1 to
// kMaxBlock (each host thread keeps a tile of A, B and the accumulators: 12 MB at the most) and
// GROUP_SIZE_M >= 1. The other fields are the GPU kernels' and are not read here.
constexpr int kMaxBlock = 1024;
std::string config_check(const KernelConfig& config);

// The threads a call takes when it is not told: $TILEGEMM_NUM_THREADS, else $OMP_NUM_THREADS
// (its first value), else one per core. A value that is not a count from 1 to kMaxThreads is an
// error naming the variable.
constexpr int kMaxThreads = 1024;
Status threads_from_environment(int* threads);

// Runs a validated problem whose pointers are host memory with `num_threads` threads (0:
// threads_from_environment). Memory for a thread's tiles that cannot be had comes back as
// out_of_memory.
Status run(const GemmProblem& problem, const KernelConfig& config, int num_threads = 0);

}  // namespace tilegemm::cpu
