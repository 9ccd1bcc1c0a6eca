// tilegemm explain: the seeds' walkthrough of the pid -> tile mapping, as a tool.
//
// Prints every intermediate of the mapping for one program, a drawing of the launch order, and
// the L2 argument in numbers: how many A row-blocks and B column-blocks a wave of programs that
// run at the same time touches, in row-major and in grouped order.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "problem/aligned_copies.hpp"
#include "problem/scales.hpp"
#include "schedule/grouped_tiles.hpp"
#include "schedule/tail_split.hpp"
#include "schedule/tile_order.hpp"
#include "schedule/wave_traffic.hpp"
#include "tune/heuristic.hpp"

namespace tilegemm::cli {
namespace {

struct ExplainOptions {
  int64_t m = 0, n = 0, k = 0;
  std::string block = "128x64x32", order = "grouped", dtype = "fp16", scale_mode = "none";
  int64_t group = 8, pid = 0, wave = 0;
  bool choice = false;
  bool rules = false;
  std::string group_rows;           // a grouped GEMM: each group's rows (K values for k_offsets)
  std::string grouped = "offsets";  // its form
};

// How program `pid` of a persistent grid of `wave` programs walks a grouped GEMM's tiles
// (schedule/grouped_tiles.hpp): each group's tiles in grouped order, one group after the other,
// and the program taking items pid, pid + wave, ... across the groups. A group's tiles cover its
// rows (offsets: one after the other in M; counts: the first rows of its batch entry) or, in the
// k_offsets form, all of its batch entry's M x N with its own K values.
void print_grouped_walk(const ExplainOptions& o, int64_t bm, int64_t bn, int64_t wave) {
  const std::optional<GroupForm> form = parse_group_form(o.grouped);
  if (!form || *form == GroupForm::none || *form == GroupForm::ptr_array) {
    fail("--grouped '" + o.grouped + "' is not a form of groups (offsets, counts, k_offsets)");
  }
  std::vector<int32_t> sizes = group_rows_option("--group-rows", o.group_rows);
  const bool k_form = *form == GroupForm::k_offsets;
  const int64_t extent = k_form ? o.k : o.m;
  int64_t taken = 0;
  for (int32_t& size : sizes) {
    taken += size;
    if (*form == GroupForm::counts) {
      if (size > o.m) fail("--group-rows '" + o.group_rows + "': a group takes more than M rows");
    } else {
      if (taken > extent) {
        fail("--group-rows '" + o.group_rows + "': the groups take more than " +
             (k_form ? "K values" : "M rows"));
      }
      size = int32_t(taken);  // each group's size -> where it ends
    }
  }
  if (wave > INT32_MAX || cdiv(o.n, bn) > INT32_MAX ||
      grouped_items_bound(*form, int64_t(sizes.size()), o.m, o.n, bm, bn) > INT32_MAX) {
    fail("--group-rows: more than 2^31 tiles or programs (the kernel's walk is 32-bit)");
  }
  const GroupedTiles tiles{
      *form, sizes.data(), int32_t(sizes.size()), o.m,
      o.n,   int32_t(bm),  int32_t(bn),           int32_t(std::min<int64_t>(o.group, INT32_MAX)),
      o.k};
  std::printf(
      "\ngrouped walk (the %s form, %zu groups taking %lld %s): program %lld of a persistent grid "
      "of %lld takes work items %lld, %lld, ...; each group's tiles in grouped order, one group "
      "after the other\n",
      o.grouped.c_str(), sizes.size(), (long long)taken, k_form ? "K values" : "rows",
      (long long)o.pid, (long long)wave, (long long)o.pid, (long long)(o.pid + wave));
  GroupCursor cursor;
  int shown = 0;
  for (int64_t item = o.pid; item <= INT32_MAX && tiles.seek(cursor, int32_t(item)); item += wave) {
    if (++shown > 16) {
      std::printf("  ...\n");
      return;
    }
    const GroupedTile t = tiles.tile(cursor, int32_t(item));
    const int64_t r0 = t.row0(int(bm)), r1 = std::min(r0 + bm, t.rows.end);
    std::printf("  item %lld: group %d (", (long long)item, t.group);
    if (*form != GroupForm::offsets) std::printf("batch entry %lld, ", (long long)t.rows.batch);
    if (k_form && t.k.size() == 0) {
      std::printf("no K values: its D is the epilogue's alone, ");
    } else if (k_form) {
      std::printf("K values %lld..%lld, ", (long long)t.k.begin, (long long)t.k.end - 1);
    } else {
      std::printf("rows %lld..%lld, ", (long long)t.rows.begin, (long long)t.rows.end - 1);
    }
    std::printf("items %d..%d), pid_m %lld pid_n %lld -> rows %lld..%lld, columns %lld..%lld\n",
                cursor.first_item, cursor.first_item + cursor.items - 1, (long long)t.tile.pid_m,
                (long long)t.tile.pid_n, (long long)r0, (long long)r1 - 1,
                (long long)(t.tile.pid_n * bn),
                (long long)std::min(t.tile.pid_n * bn + bn, o.n) - 1);
  }
  if (shown == 0) {
    std::printf("  none: the groups have fewer than %lld tiles\n", (long long)o.pid + 1);
  }
}

// A packed, row-major problem of this shape and dtype, D = A * B, at stand-in device addresses,
// 16-byte aligned and far apart: plan() and the rules compare them, never read them.
GemmProblem stand_in_problem(const ExplainOptions& o, DType dtype) {
  GemmProblem p;
  p.m = o.m;
  p.n = o.n;
  p.k = o.k;
  p.a = {reinterpret_cast<const void*>(uintptr_t(1) << 40), dtype};
  p.b = {reinterpret_cast<const void*>(uintptr_t(2) << 40), dtype};
  const DType out = harness::default_output_dtype(dtype);
  p.c = {reinterpret_cast<const void*>(uintptr_t(3) << 40), out};
  p.d = {reinterpret_cast<void*>(uintptr_t(3) << 40), out};
  return p;
}

// What gemm() would run for a packed, row-major problem of this shape and dtype: backend,
// kernel, config, where the config comes from, and the tuning key (docs/autotuning.md).
void print_config_choice(const ExplainOptions& o, DType dtype) {
  const GemmProblem p = stand_in_problem(o, dtype);
  GemmReport report;
  const Status s = plan(p, GemmOptions{}, &report);
  std::printf(
      "\nconfig choice (what gemm() would run for a packed row-major %lldx%lldx%lld %s "
      "problem):\n",
      (long long)o.m, (long long)o.n, (long long)o.k, o.dtype.c_str());
  if (!s.ok()) {
    std::printf("  none: %s\n", s.message.c_str());
    return;
  }
  std::printf("  backend %s  kernel %s  config %s  from: %s\n",
              std::string(to_string(report.backend)).c_str(), report.kernel.c_str(),
              to_string(report.config).c_str(), report.config_source.c_str());
  if (!report.tuning_key.empty()) std::printf("  tuning key: %s\n", report.tuning_key.c_str());
  if (!report.kernel_note.empty()) std::printf("  note: %s\n", report.kernel_note.c_str());
  if (!report.aligned_copies.empty()) std::printf("  note: %s\n", report.aligned_copies.c_str());
}

// How sm90's rules (tune/heuristic.cpp, docs/autotuning.md) weigh its configs for a packed,
// row-major problem of this shape and dtype on `sms` SMs: no GPU is needed, only the build's
// list of configs. The busiest SM's load is shown relative to the chosen config's.
void print_rules(const ExplainOptions& o, DType dtype, int64_t sms) {
  const gpu::Kernel* kernel = gpu::find_kernel("sm90");
  std::printf("\nsm90's rules on %lld SMs (a packed row-major %lldx%lldx%lld %s problem):\n",
              (long long)sms, (long long)o.m, (long long)o.n, (long long)o.k, o.dtype.c_str());
  if (kernel == nullptr) {
    std::printf("  none: this build has no sm90 kernel\n");
    return;
  }
  // The kernels' view of it, as gemm() gives it to them (plain tf32 sums over all of K); the
  // copies a call might make first are left out.
  const GemmProblem p = with_aligned_copies(stand_in_problem(o, dtype), AlignedCopyPlan{}, nullptr);
  std::string why_not;
  for (const KernelConfig& c : kernel->info.configs) {
    why_not = kernel->can_implement_on_its_gpu(p, c);
    if (why_not.empty()) break;
  }
  if (!why_not.empty()) {
    std::printf("  none: %s\n", why_not.c_str());
    return;
  }
  autotune::RulesTrace trace;
  const KernelConfig chosen = autotune::kernel_rules_config(
      p, *kernel, int(std::min<int64_t>(sms, INT32_MAX)), &trace, /*anywhere=*/true);
  double chosen_load = 0.0;  // the load that decided: the tile's, before any cluster
  for (const autotune::RulesWeighing& w : trace.weighed)
    if (w.config == trace.tile) chosen_load = w.load;
  if (!trace.weighed.empty()) {
    std::printf("  the busiest SM's load counts %s, relative to the choice's\n",
                trace.tensor_bound ? "its tiles' work (the tensor cores bound the problem)"
                                   : "the rows it loads (memory bounds the problem)");
    std::printf("  %-40s %9s  %-5s  %-10s  %s\n", "config", "programs", "fills", "busiest SM",
                "the last round's split it counts (K steps of the config's BLOCK_SIZE_K)");
    for (const autotune::RulesWeighing& w : trace.weighed) {
      std::string split = "-";
      if (w.split.on()) {
        split = std::to_string(w.split.tail_items) + " tiles, each a head of " +
                std::to_string(w.split.head_steps) + " and " +
                std::to_string(w.split.tails_per_item) + " tail(s) of " +
                std::to_string(w.split.tail_steps);
      }
      std::printf("  %-40s %9lld  %-5s  %-10.2f  %s\n", to_string(w.config).c_str(),
                  (long long)w.programs, w.fills ? "yes" : "no",
                  chosen_load > 0 ? w.load / chosen_load : 0.0, split.c_str());
    }
  }
  std::printf("  choice: %s (%s)\n", to_string(chosen).c_str(), trace.rule.c_str());
}

// The fp8 scales the traced program reads (tilegemm.hpp's ScaleMode, problem/scales.hpp).
void print_tile_scales(const ExplainOptions& o, ScaleMode mode, int64_t r0, int64_t r1, int64_t c0,
                       int64_t c1, int64_t bk) {
  const TileScales t = tile_scales(mode, o.k, r0, r1, c0, c1);
  const auto range = [](int64_t first, int64_t last) {
    return "[" + std::to_string(first) + ", " + std::to_string(last + 1) + ")";
  };
  std::printf("\nscales (fp8, --scale-mode %s) this program reads:\n", o.scale_mode.c_str());
  if (mode == ScaleMode::tensor) {
    std::printf("  scale_a[0] and scale_b[0], once, on the accumulators after the K loop\n");
  } else if (mode == ScaleMode::channel) {
    std::printf(
        "  scale_a[m] for rows m in %s and scale_b[n] for columns n in %s: %lld values,\n"
        "  on the accumulators after the K loop (acc[m][n] *= scale_a[m] * scale_b[n])\n",
        range(t.a_first, t.a_last).c_str(), range(t.b_first, t.b_last).c_str(), (long long)t.count);
  } else {
    std::printf(
        "  A (1 x 128 blocks): scale_a[kb * %lld + m] for rows m in %s\n"
        "  B (128 x 128 blocks): scale_b[nb * %lld + kb] for column blocks nb in %s\n"
        "  for each K block kb in [0, %lld): %lld values in all. The K step of BLOCK_SIZE_K=%lld\n"
        "  that covers kb multiplies its promoted sums by them (sm90: each consumer thread loads\n"
        "  those of its two rows per m64 tile and of its units of up to 128 columns)\n",
        (long long)o.m, range(t.a_first, t.a_last).c_str(), (long long)t.k_blocks,
        range(t.b_first, t.b_last).c_str(), (long long)t.k_blocks, (long long)t.count,
        (long long)bk);
  }
}

TileCoord tile_of(int64_t pid, const ExplainOptions& o, int64_t bm, int64_t bn, bool grouped) {
  return grouped ? grouped_tile_order(pid, o.m, o.n, bm, bn, o.group)
                 : row_major_tile_order(pid, o.n, bn);
}

struct WaveTraffic {
  WaveBlocks blocks;
  double bytes = 0;
};

// The A row-blocks and B column-blocks that programs [first, first + count) read, and the bytes
// they must bring from memory if each block is fetched once (the best L2 can do for the wave).
WaveTraffic wave_traffic(const ExplainOptions& o, int64_t bm, int64_t bn, bool grouped,
                         int64_t first, int64_t count, int element_bytes) {
  const WaveBlocks b = wave_blocks(o.m, o.n, bm, bn, grouped ? o.group : 1, first, count);
  return {b, b.elements(bm, bn, o.k) * element_bytes};
}

std::string human_bytes(double bytes) {
  char buf[32];
  if (bytes >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.2f MB", bytes / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f KB", bytes / 1e3);
  }
  return buf;
}

// Programs in one wave at the most: the L2 model walks each wave's programs.
constexpr int64_t kMaxWave = 65536;

void explain_command(const ExplainOptions& o) {
  std::string error;
  auto block = parse_kernel_config(o.block, &error);
  if (!block) fail("--block '" + o.block + "' must be BMxBNxBK, e.g. 128x64x32");
  const int64_t bm = block->block_m, bn = block->block_n, bk = block->block_k;
  if (o.m <= 0 || o.n <= 0 || o.k <= 0) fail("M, N and K must be > 0");
  // explain counts tiles, K steps and bytes in 64 bits (and a number past 2^63 - 1 reaches here
  // as 2^63 - 1).
  constexpr int64_t kMaxExtent = int64_t(1) << 40;
  if (o.m > kMaxExtent || o.n > kMaxExtent || o.k > kMaxExtent) {
    fail("M, N and K must be at most 2^40 (got " + std::to_string(o.m) + " x " +
         std::to_string(o.n) + " x " + std::to_string(o.k) + ")");
  }
  if (bm <= 0 || bn <= 0 || bk <= 0) fail("--block '" + o.block + "': sizes must be > 0");
  // GROUP_SIZE_M past the grid's rows orders as the grid's rows would; 2^20 keeps the order's
  // products (GROUP_SIZE_M x programs along N) inside 64 bits.
  constexpr int64_t kMaxGroup = int64_t(1) << 20;
  if (o.group <= 0 || o.group > kMaxGroup) {
    fail("--group must be from 1 to " + std::to_string(kMaxGroup) + " (got " +
         std::to_string(o.group) + ")");
  }
  if (o.wave < 0 || o.wave > kMaxWave) {
    fail("--wave must be from 1 to " + std::to_string(kMaxWave) + " (got " +
         std::to_string(o.wave) + "; 0: the default)");
  }
  // The grid must be countable: programs (and every pid) in 64 bits, with room for the L2
  // model's sums.
  if (cdiv(o.m, bm) > (int64_t(1) << 40) / cdiv(o.n, bn)) {
    fail("M x N in tiles of " + std::to_string(bm) + "x" + std::to_string(bn) +
         " is more than 2^40 programs: choose a larger --block");
  }
  if (o.order != "grouped" && o.order != "row")
    fail("--order '" + o.order + "' must be grouped or row");
  const bool grouped = o.order == "grouped";
  const DType dtype = dtype_option("--dtype", o.dtype);
  const std::optional<ScaleMode> parsed_mode = parse_scale_mode(o.scale_mode);
  if (!parsed_mode) {
    fail("--scale-mode '" + o.scale_mode + "' is not a scale mode (none, tensor, channel, block)");
  }
  const ScaleMode scale_mode = *parsed_mode;
  const int64_t programs = num_tiles(o.m, o.n, bm, bn);
  if (o.pid < 0 || o.pid >= programs) {
    fail("--pid " + std::to_string(o.pid) + " is outside the grid of " + std::to_string(programs) +
         " programs (0.." + std::to_string(programs - 1) + ")");
  }

  const auto s = grouped_tile_order_steps(o.pid, o.m, o.n, bm, bn, o.group);
  const auto P = [](const char* name, const std::string& formula, int64_t value) {
    std::printf("  %-17s= %-30s = %lld\n", name, formula.c_str(), (long long)value);
  };
  const auto str = [](int64_t v) { return std::to_string(v); };
  std::printf(
      "C[%lldx%lld] = A[%lldx%lld] * B[%lldx%lld]   BLOCK_SIZE_M=%lld BLOCK_SIZE_N=%lld "
      "BLOCK_SIZE_K=%lld GROUP_SIZE_M=%lld order=%s\n\n",
      (long long)o.m, (long long)o.n, (long long)o.m, (long long)o.k, (long long)o.k,
      (long long)o.n, (long long)bm, (long long)bn, (long long)bk, (long long)o.group,
      o.order.c_str());
  std::printf("grid:\n");
  P("num_pid_m", "cdiv(" + str(o.m) + ", " + str(bm) + ")", s.num_pid_m);
  P("num_pid_n", "cdiv(" + str(o.n) + ", " + str(bn) + ")", s.num_pid_n);
  P("programs", str(s.num_pid_m) + " * " + str(s.num_pid_n), programs);
  std::printf("\nprogram pid = %lld:\n", (long long)o.pid);
  int64_t pid_m, pid_n;
  if (grouped) {
    P("num_pid_in_group", str(o.group) + " * " + str(s.num_pid_n), s.num_pid_in_group);
    P("group_id", str(o.pid) + " // " + str(s.num_pid_in_group), s.group_id);
    P("first_pid_m", str(s.group_id) + " * " + str(o.group), s.first_pid_m);
    P("group_size_m",
      "min(" + str(s.num_pid_m) + " - " + str(s.first_pid_m) + ", " + str(o.group) + ")",
      s.group_size_m);
    P("pid_m",
      str(s.first_pid_m) + " + (" + str(o.pid) + " % " + str(s.num_pid_in_group) + ") % " +
          str(s.group_size_m),
      s.pid_m);
    P("pid_n", "(" + str(o.pid) + " % " + str(s.num_pid_in_group) + ") // " + str(s.group_size_m),
      s.pid_n);
    pid_m = s.pid_m;
    pid_n = s.pid_n;
  } else {
    const TileCoord t = row_major_tile_order(o.pid, o.n, bn);
    P("pid_m", str(o.pid) + " // " + str(s.num_pid_n), t.pid_m);
    P("pid_n", str(o.pid) + " % " + str(s.num_pid_n), t.pid_n);
    pid_m = t.pid_m;
    pid_n = t.pid_n;
  }
  const int64_t r0 = pid_m * bm, r1 = std::min(o.m, r0 + bm);
  const int64_t c0 = pid_n * bn, c1 = std::min(o.n, c0 + bn);
  std::printf("\ntile:\n");
  std::printf("  rows of A and C   = [%lld, %lld)%s\n", (long long)r0, (long long)r1,
              r1 - r0 < bm ? "   (masked: last rows outside the matrix)" : "");
  std::printf("  cols of B and C   = [%lld, %lld)%s\n", (long long)c0, (long long)c1,
              c1 - c0 < bn ? "   (masked: last columns outside the matrix)" : "");
  std::printf("  K loop            = %lld steps of BLOCK_SIZE_K=%lld over [0, %lld)%s\n",
              (long long)cdiv(o.k, bk), (long long)bk, (long long)o.k,
              o.k % bk ? "   (last step masked)" : "");

  if (s.num_pid_m <= 32 && s.num_pid_n <= 24) {
    std::printf(
        "\nlaunch order (%s): the pid that computes each tile of C; rows = pid_m, "
        "columns = pid_n\n",
        o.order.c_str());
    std::vector<int64_t> owner(static_cast<size_t>(programs));
    for (int64_t pid = 0; pid < programs; ++pid) {
      TileCoord t = tile_of(pid, o, bm, bn, grouped);
      owner[size_t(t.pid_m * s.num_pid_n + t.pid_n)] = pid;
    }
    const int width = int(std::to_string(programs - 1).size()) + 1;
    for (int64_t i = 0; i < s.num_pid_m; ++i) {
      std::printf("  ");
      for (int64_t j = 0; j < s.num_pid_n; ++j) {
        const int64_t pid = owner[size_t(i * s.num_pid_n + j)];
        const std::string cell =
            pid == o.pid ? "[" + std::to_string(pid) + "]" : std::to_string(pid) + " ";
        std::printf("%*s", width + 1, cell.c_str());
      }
      std::printf("\n");
    }
  }

  // The L2 argument: a wave is the set of programs resident at once (one per SM by default).
  int64_t wave = o.wave;
  if (wave <= 0) {
    const auto devs = devices();
    wave = devs.empty() ? 132 : devs[0].sm_count;
  }
  const int64_t grid = wave;  // a persistent grid's programs
  wave = std::min(wave, programs);
  const int elem = dtype_size(dtype);
  const int64_t waves = cdiv(programs, wave);
  std::printf(
      "\nL2 model: a wave of %lld programs running at once (%s elements, %d bytes); each "
      "A row-block is %lld x %lld, each B column-block %lld x %lld\n",
      (long long)wave, o.dtype.c_str(), elem, (long long)bm, (long long)o.k, (long long)o.k,
      (long long)bn);
  // The mean over the waves takes the first waves of up to 2^21 programs in all, so that a grid
  // of billions of programs is explained in a moment.
  const int64_t counted = std::clamp<int64_t>((int64_t(1) << 21) / wave, 1, waves);
  std::printf(
      "  %-8s %-28s %-28s %s\n", "order", "first wave: A blocks/B blocks", "bytes from memory",
      counted < waves ? ("mean over the first " + std::to_string(counted) + " waves").c_str()
                      : "mean over all waves");
  for (bool g : {false, true}) {
    const WaveTraffic first = wave_traffic(o, bm, bn, g, 0, wave, elem);
    double total = 0;
    for (int64_t w = 0; w < counted; ++w) {
      total +=
          wave_traffic(o, bm, bn, g, w * wave, std::min(wave, programs - w * wave), elem).bytes;
    }
    std::printf(
        "  %-8s %-28s %-28s %s\n", g ? "grouped" : "row",
        (std::to_string(first.blocks.row_blocks) + " / " + std::to_string(first.blocks.col_blocks))
            .c_str(),
        human_bytes(first.bytes).c_str(), human_bytes(total / double(counted)).c_str());
  }
  std::printf(
      "  (grouped uses GROUP_SIZE_M=%lld; fewer distinct blocks per wave = more reuse in "
      "L2)\n",
      (long long)o.group);
  std::printf(
      "  fewest bytes in the first wave: GROUP_SIZE_M=%lld (the one above on a tie); the rules\n"
      "  pick it for the persistent sm90 kernel, whose wave is one program per SM\n",
      (long long)l2_group_size(o.m, o.n, bm, bn, wave, o.group));
  // A partial last round of a persistent grid (one program per SM), or a single round under it:
  // how the sm90 kernel would share it out (schedule/tail_split.hpp).
  // The model walks every split of a tile's K steps: taken for K loops a kernel can run (the
  // sm90 kernel counts them in 32 bits).
  if (const int64_t last = programs % grid; last != 0 && cdiv(o.k, bk) <= INT32_MAX) {
    const int64_t k_steps = cdiv(o.k, bk);
    const TailSplit split = plan_tail_split(programs, grid, k_steps);
    if (programs > grid) {
      std::printf("\nlast round: %lld tiles for %lld programs of a persistent grid; ",
                  (long long)last, (long long)grid);
    } else {
      std::printf("\none round: %lld tiles for a persistent grid of up to %lld programs; ",
                  (long long)last, (long long)grid);
    }
    if (!split.on()) {
      std::printf("not split: over %lld K steps its tails would cost what they save\n",
                  (long long)k_steps);
    } else {
      const int first_head = split.helpers, s = split.tails_per_item;
      std::printf(
          "the sm90 kernel (D = alpha*AB, no cluster or ping-pong) would split each tile:\n"
          "  heads: K steps 0..%d of %lld on programs %d..%d, then %s\n",
          split.head_steps - 1, (long long)k_steps, first_head, first_head + split.tail_items - 1,
          s == 1 ? "the tail's sums added" : "its tails' sums added in order");
      if (s == 1) {
        std::printf(
            "  tails: K steps %d..%lld on programs 0..%d, %d tiles each, sums through a "
            "workspace\n",
            split.head_steps, (long long)k_steps - 1, split.helpers - 1, split.tails_per_helper);
      } else {
        std::printf(
            "  tails: %d per tile, K steps %d..%d, %d..%lld, ... (the last %d..%lld) on programs "
            "0..%d, one each, sums through a workspace\n",
            s, split.tail_begin(0), split.tail_begin(1) - 1, split.tail_begin(1),
            (long long)split.tail_begin(1) + split.tail_steps_of(1, int32_t(k_steps)) - 1,
            split.tail_begin(s - 1), (long long)k_steps - 1, split.helpers - 1);
      }
    }
  }
  if (scale_mode != ScaleMode::none) print_tile_scales(o, scale_mode, r0, r1, c0, c1, bk);
  if (!o.group_rows.empty()) print_grouped_walk(o, bm, bn, wave);
  if (o.choice) print_config_choice(o, dtype);
  if (o.rules) print_rules(o, dtype, grid);
}

}  // namespace

void add_explain_command(CLI::App& app) {
  static ExplainOptions o;
  auto* cmd =
      app.add_subcommand("explain", "Walk through the pid -> tile mapping and its L2 effect");
  cmd->add_option("M", o.m, "rows of A and C")->required();
  cmd->add_option("N", o.n, "columns of B and C")->required();
  cmd->add_option("K", o.k, "the reduction dimension")->required();
  cmd->add_option("--block", o.block, "BLOCK_SIZE_M x BLOCK_SIZE_N x BLOCK_SIZE_K")
      ->capture_default_str();
  cmd->add_option("--group", o.group, "GROUP_SIZE_M")->capture_default_str();
  cmd->add_option("--pid", o.pid, "the program to trace")->capture_default_str();
  cmd->add_option("--order", o.order, "grouped or row")->capture_default_str();
  cmd->add_option("--wave", o.wave, "programs running at once (default: the GPU's SMs, else 132)");
  cmd->add_option("--dtype", o.dtype, "element type for the byte counts")->capture_default_str();
  cmd->add_option("--scale-mode", o.scale_mode,
                  "fp8: also show the scales the program reads (tensor, channel, block)")
      ->capture_default_str();
  cmd->add_option("--group-rows", o.group_rows,
                  "a grouped GEMM's rows per group, comma-separated (K values per group for "
                  "k_offsets): also show how the program walks the groups' tiles in a persistent "
                  "grid of --wave");
  CLI::Option* grouped =
      cmd->add_option(
             "--grouped", o.grouped,
             "the form of --group-rows: offsets (the groups' rows one after the other in M), "
             "counts (each group's first rows of its own batch entry), k_offsets (each "
             "group's K values one after the other in K, its tiles all of M x N)")
          ->capture_default_str();
  cmd->add_flag("--choice", o.choice,
                "also say which kernel and config gemm() would run for this shape and dtype, "
                "where the config comes from (heuristic, cache) and its tuning key");
  cmd->add_flag("--rules", o.rules,
                "also show how sm90's rules weigh its configs for this shape and dtype on --wave "
                "SMs, and which they choose (no GPU needed)");
  cmd->callback([grouped] {
    if (grouped->count() > 0 && o.group_rows.empty()) fail("--grouped needs --group-rows");
    explain_command(o);
  });
}

}  // namespace tilegemm::cli
