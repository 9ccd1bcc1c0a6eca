// The GPU half of gemm(), plan() and tune(): aligned copies, the kernel and config choice, the
// launch. A build without CUDA (TILEGEMM_CUDA=OFF) links gpu_gemm_none.cpp in its place.
#pragma once

#include <functional>
#include <span>

#include "kernels/kernel_registry.hpp"

namespace tilegemm::dispatch {

// Success when a CUDA device is there to run on; else no_device, with why and what to do.
Status gpu_available();

// Runs a validated problem on the GPU: makes the aligned copies it needs, picks the kernel ("auto"
// or by name) and config, and launches.
Status run_on_gpu(const GemmProblem& problem, const GemmOptions& options, GemmReport* report);

// Runs gemm_grouped()'s problems (validated, at least one) on the GPU: in one launch where the
// kernel chosen for stand_in(problems) takes them all (Kernel::launch_problems), else one
// run_on_gpu() call after another (the report's kernel_note says why).
Status run_problems_on_gpu(std::span<const GemmProblem> problems, const GemmOptions& options,
                           GemmReport* report);

// The device memory run_problems_on_gpu() takes (tilegemm::grouped_workspace_size).
Status problems_workspace_on_gpu(std::span<const GemmProblem> problems, const GemmOptions& options,
                                 size_t* bytes);

// Times the configs of a validated problem with m, n > 0 on the GPU (tilegemm::tune), on the
// aligned copies gemm() would make, so that the winner is cached under gemm()'s tuning key.
Status tune_on_gpu(const GemmProblem& problem, const GemmOptions& options, TuneResult* result,
                   const std::function<void(int, int)>& progress);

// What run_on_gpu() would choose, without running or tuning (tilegemm::plan).
Status plan_on_gpu(const GemmProblem& problem, const GemmOptions& options, GemmReport* report);

// The device memory run_on_gpu() takes for a validated problem (tilegemm::workspace_size).
Status workspace_on_gpu(const GemmProblem& problem, const GemmOptions& options, size_t* bytes);

// Launches one kernel and config on a validated problem (no choice made). `checked`: the kernel's
// can_implement passed for this problem before (a remembered choice); else it is asked now.
Status launch(const gpu::Kernel& kernel, const GemmProblem& problem, const KernelConfig& config,
              gpu::Workspace& workspace, bool checked = false);

}  // namespace tilegemm::dispatch
