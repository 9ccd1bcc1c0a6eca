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

// Runs a validated problem whose pointers are host memory. `num_threads` = 0: one per core.
// Memory for a thread's tiles that cannot be had comes back as out_of_memory.
Status run(const GemmProblem& problem, const KernelConfig& config, int num_threads = 0);

}  // namespace tilegemm::cpu
