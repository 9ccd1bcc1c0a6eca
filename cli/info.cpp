// tilegemm info [--ceilings]: the devices, the kernels of this build, and measured ceilings.
#include <cstdio>

#include "commands.hpp"
#include "timing.hpp"

namespace tilegemm::cli {

void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Show CUDA devices, compiled kernels and their configs");
  static bool ceilings = false;
  cmd->add_flag("--ceilings", ceilings,
                "Also measure this GPU's ceilings: copy bandwidth, cuBLAS rates, mma.sync and "
                "wgmma peaks, a call's floor");
  cmd->callback([] {
    const auto devs = devices();
    if (devs.empty()) {
      std::printf(
          "GPU: none (no CUDA device found); the CPU backend is available: --backend cpu\n");
    }
    for (const auto& d : devs) {
      std::printf(
          "GPU %d: %s, compute capability %d.%d, %d SMs, L2 %.1f MB, shared memory per "
          "block (opt-in) %lld KB, memory %.1f GB\n",
          d.index, d.name.c_str(), d.compute_capability_major, d.compute_capability_minor,
          d.sm_count, double(d.l2_bytes) / 1e6,
          static_cast<long long>(d.shared_memory_per_block_optin / 1024),
          double(d.global_memory_bytes) / 1e9);
    }
    std::printf("kernels:\n");
    for (const auto& k : available_kernels()) {
      std::printf("  %-9s %s\n", k.name.c_str(), k.description.c_str());
      for (const auto& c : k.configs) std::printf("            config %s\n", to_string(c).c_str());
    }
    std::printf("  %-9s the CPU backend (--backend cpu), any config\n", "cpu");
    if (ceilings) {
      if (devs.empty()) fail("--ceilings needs a CUDA device");
      print_ceilings();
    }
  });
}

}  // namespace tilegemm::cli
