// The CPU backend: the GPU kernels' algorithm on the host.
//
// It walks the same tile schedule (grouped order), masks the same edges and calls the same
// epilogue as the kernels, one program at a time on a pool of threads. It serves machines
// without a GPU, and debugging: a tile computed here can be compared with the kernel's, as
// Triton's interpreter mode allows.
#pragma once

#include "tilegemm/tilegemm.hpp"

namespace tilegemm::cpu {

// The config the CPU backend uses when none is given.
KernelConfig default_config();

// Runs a validated problem whose pointers are host memory. `num_threads` = 0: one per core.
Status run(const GemmProblem& problem, const KernelConfig& config, int num_threads = 0);

}  // namespace tilegemm::cpu
