// Aligned (and, for tf32 on Hopper, transposed) copies of A and B made on the GPU before a GEMM
// (the plan, and why: problem/aligned_copies.hpp).
#pragma once

#include <string>

#include "kernels/workspace.hpp"
#include "problem/aligned_copies.hpp"
#include "tilegemm/tilegemm.hpp"

namespace tilegemm::gpu {

// What gemm() copies before running `p`: operands whose lines are not 16-byte aligned and, for the
// sm90 kernel (auto or named, where this device and build have it and it takes the copies),
// tf32 operands that are not K-major, transposed, and operands onto 128-byte lines (16-bit ones
// each on its own, tf32 ones in pairs), where the problem outweighs the copy
// (problem/aligned_copies.hpp); for tf32x3, both operands split into their tf32 parts.
AlignedCopyPlan copy_plan(const GemmProblem& p, const GemmOptions& options);

// The copies of one GEMM call: make() takes their memory from the call's workspace and enqueues
// them on the problem's stream; the workspace keeps the memory until the GEMM on them is enqueued.
class AlignedCopies {
 public:
  // Makes the copies `plan` names. With an empty plan, or when the workspace has no room for them
  // (Workspace::take), it copies nothing and problem() is `problem` itself.
  Status make(const GemmProblem& problem, const AlignedCopyPlan& plan, Workspace& workspace);
  // The problem the kernel should run: A and/or B replaced by their copies when made.
  const GemmProblem& problem() const { return problem_; }
  // For the report: what was copied ("" when nothing was).
  std::string description() const { return describe(plan_); }

 private:
  GemmProblem problem_;
  AlignedCopyPlan plan_;  // what was copied: empty unless the copies were made
};

}  // namespace tilegemm::gpu
