// The subcommands that need the GPU backend, in a build without it (TILEGEMM_CUDA=OFF): they
// take any arguments and say what to build instead. `info --ceilings` says the same.
#include "commands.hpp"
#include "timing.hpp"

namespace tilegemm::cli {
namespace {

const char* const kRebuild =
    " needs the GPU backend, which this build has not (it was configured with "
    "TILEGEMM_CUDA=OFF, or found no GPU): configure again with -DTILEGEMM_CUDA=ON on a machine "
    "with the CUDA toolkit";

void add_gpu_only_command(CLI::App& app, const std::string& name, const std::string& what) {
  auto* cmd = app.add_subcommand(name, what + " (needs the GPU backend: not in this build)");
  cmd->allow_extras();
  cmd->callback([name] { fail("tilegemm " + name + kRebuild); });
}

}  // namespace

void add_bench_command(CLI::App& app) {
  add_gpu_only_command(app, "bench", "Time tilegemm and cuBLAS side by side on shape suites");
}

void add_tune_command(CLI::App& app) {
  add_gpu_only_command(
      app, "tune",
      "Time every candidate config of a problem, store the winner in the tuning cache");
}

void print_ceilings() { fail(std::string("tilegemm info --ceilings") + kRebuild); }

}  // namespace tilegemm::cli
