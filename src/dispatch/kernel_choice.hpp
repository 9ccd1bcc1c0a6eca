// Which GPU kernel runs a problem: the one the call names, or for "auto" the fastest that takes it.
#pragma once

#include <string>

#include "kernels/kernel_registry.hpp"

namespace tilegemm::dispatch {

// Whether "auto" gives a problem to the decode kernel when it can take it: 16-bit inputs, no
// groups, at most kDecodeRows rows, or kDecodeMinColumns to kDecodeMaxColumns columns, which it
// runs as the transposed product (no bias), and where the rows of A and B are 16-byte aligned, an
// operand to stream (N x K, or M x K) of at least kDecodeMinValues values or a K of at least
// kDecodeMinK; where they are not, one of at least kDecodeStagedMinValues, which its staged path
// reads as it lies (smaller problems take the aligned copies, and the copy's problem is asked
// again). Measured on the H200, bf16, cold and warm, against sm90 (docs/history/perf-notes.md, "The
// decode kernel" and "Unaligned rows and few columns"):
//   - aligned, M of 1 and 16, N and K of 4096 to 14336: faster everywhere;
//   - aligned, smaller: faster from K = 2048 (1 x 256 x 5312 10.9 against 14.1 us, 16 x 2048 x
//     2048 11.1 against 12.2), slower below it (16 x 1024 x 1024 9.0 against 7.9);
//   - unaligned, the staged path against copies and sm90 (or the decode kernel on the copies):
//     16 x 4097 x 4097 39.6 against 49 us, 5 x 1342 x 3157 21.2 against 26.8; slower under about
//     a million values (1 x 229 x 171 10.7 against 9.3);
//   - few columns, the transposed product: faster at N = 8 (8192 x 8 x 4096 34.6 against 49.4 us
//     cold, 29.3 against 48.5 warm); slower cold at N = 16 (4096 x 16 x 4096 23.1 against 20.6,
//     14336 x 16 x 4096 43.6 against 42.6; faster warm) and at N = 1 (4096 x 1 x 4096, B's
//     column of ld 1 off 16 bytes: 32.1 against 27.3).
inline constexpr int64_t kDecodeRows = 16;
inline constexpr int64_t kDecodeMinColumns = 2;
inline constexpr int64_t kDecodeMaxColumns = 8;
inline constexpr int64_t kDecodeMinValues = int64_t(4096) * 4096;
inline constexpr int64_t kDecodeMinK = 2048;
inline constexpr int64_t kDecodeStagedMinValues = int64_t(1) << 20;
bool suits_decode(const GemmProblem& problem);

// Whether "auto" runs the problem, as it lies, on the decode kernel: it suits it and one of its
// configs takes it. Then no aligned copies are made.
bool decode_as_it_lies(const GemmProblem& problem);

// The kernel "auto" means for this problem: the decode kernel where it takes the problem as it
// lies (decode_as_it_lies), else the first of sm90 (Hopper), sm80 (tensor cores from sm_80),
// warptile (fp32 on CUDA cores) and tile2d that can take it.
const gpu::Kernel* auto_kernel(const GemmProblem& problem);

// The kernel a call asks for: auto_kernel for "auto", else the one named (nullptr if there is no
// such kernel).
const gpu::Kernel* requested_kernel(const GemmProblem& problem, const std::string& kernel_request);

// Why "auto" passed over the kernels it prefers to `chosen` that take the problem's input type
// ("kernel: reason; ..."); empty when none was passed over.
std::string auto_kernel_note(const GemmProblem& problem, const gpu::Kernel& chosen);

}  // namespace tilegemm::dispatch
