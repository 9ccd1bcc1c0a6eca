// Which GPU kernel runs a problem: the one the call names, or for "auto" the fastest that takes it.
#pragma once

#include <string>

#include "kernels/kernel_registry.hpp"

namespace tilegemm::dispatch {

// Whether "auto" gives a problem to the decode kernel when it can take it: 16-bit inputs, no
// groups, at most kDecodeRows rows and a B of at least kDecodeMinValues values (N x K), the space
// where it was measured faster than sm90, cold and warm (H200: M of 1 and 16, N and K of 4096 to
// 14336; docs/history/perf-notes.md, "The decode kernel").
inline constexpr int64_t kDecodeRows = 16;
inline constexpr int64_t kDecodeMinValues = int64_t(4096) * 4096;
bool suits_decode(const GemmProblem& problem);

// The kernel "auto" means for this problem: the decode kernel where it suits the problem
// (suits_decode), else the first of sm90 (Hopper), sm80 (tensor cores from sm_80), warptile
// (fp32 on CUDA cores) and tile2d that can take it.
const gpu::Kernel* auto_kernel(const GemmProblem& problem);

// The kernel a call asks for: auto_kernel for "auto", else the one named (nullptr if there is no
// such kernel).
const gpu::Kernel* requested_kernel(const GemmProblem& problem, const std::string& kernel_request);

// Why "auto" passed over the kernels it prefers to `chosen` that take the problem's input type
// ("kernel: reason; ..."); empty when none was passed over.
std::string auto_kernel_note(const GemmProblem& problem, const gpu::Kernel& chosen);

}  // namespace tilegemm::dispatch
