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
      GpuTimer timer;
      std::printf("ceilings (measured now):\n");
      std::printf("  device-to-device copy: %.0f GB/s (read + write)\n",
                  measure_copy_bandwidth_gbs(timer));
      for (DType d : {DType::bf16, DType::fp16, DType::tf32, DType::fp32}) {
        std::printf("  cuBLAS %s 8192^3: %.1f TFLOP/s\n", std::string(to_string(d)).c_str(),
                    measure_cublas_tflops(timer, d));
      }
      for (DType d : {DType::bf16, DType::fp16, DType::tf32}) {
        std::printf("  mma.sync %s peak (registers only): %.1f TFLOP/s\n",
                    std::string(to_string(d)).c_str(), measure_mma_sync_tflops(timer, d));
      }
      for (DType d : {DType::bf16, DType::fp16}) {
        const WgmmaPeak w = measure_wgmma_peak(timer, d);
        if (w.tflops == 0.0) {
          std::printf("  wgmma %s peak: n/a (needs compute capability 9.0 and sm_90a code)\n",
                      std::string(to_string(d)).c_str());
          continue;
        }
        std::printf(
            "  wgmma %s peak (128x256 K steps from shared memory, random operands): %.1f "
            "TFLOP/s, %.0f cycles per K step of 64, SM clock %.0f MHz meanwhile\n",
            std::string(to_string(d)).c_str(), w.tflops, w.cycles_per_step, w.sm_mhz);
      }
      const CallFloor floor = measure_call_floor(timer);
      if (floor.empty_us == 0.0) {
        std::printf("  a call's floor: n/a (its kernels could not run)\n");
      } else {
        std::printf(
            "  a call's floor, timed as bench times a call (L2 flushed, then events): an empty "
            "kernel %.2f us; 128 programs writing 64 KB each (a 2048^2 16-bit D) %.2f us\n",
            floor.empty_us, floor.tile_writes_us);
      }
    }
  });
}

}  // namespace tilegemm::cli
