#include "cpu/cpu_backend.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

#include "cpu/micro_kernel.hpp"
#include "epilogue/epilogue.hpp"
#include "problem/dtype.hpp"
#include "problem/groups.hpp"
#include "problem/matrix_view.hpp"
#include "problem/scales.hpp"
#include "schedule/tile_order.hpp"

namespace tilegemm::cpu {

// 128 x 128 x 128: a thread's tiles of A, B and the accumulators (192 KB) stay in its core's L2,
// and each K block's register blocks run 128 steps deep. On 2 cores with AVX-512, fp32 1024^3
// ran 41 GFLOP/s with it against 33 with 64 x 64 x 64 (docs/performance.md).
KernelConfig default_config() {
  KernelConfig c;
  c.block_m = 128;
  c.block_n = 128;
  c.block_k = 128;
  c.group_size_m = 8;
  c.num_stages = 1;
  c.num_warps = 1;
  return c;
}

namespace {

// Values col0 .. col0 + count - 1 of row `row` of batch entry `batch` of `v`, as floats: a copy
// where they lie contiguous in fp32 (or tf32, tf32x3) memory, else one conversion per element.
void load_row(const MatrixView& v, int64_t batch, int64_t row, int64_t col0, int count,
              float* out) {
  const int64_t first = v.offset(batch, row, col0);
  if (dtype_size(v.dtype) == 4 && v.stride.col == 1) {
    std::memcpy(out, static_cast<const float*>(v.data) + first, size_t(count) * sizeof(float));
    return;
  }
  for (int j = 0; j < count; ++j) out[j] = load_as_float(v.data, v.dtype, first + j * v.stride.col);
}

// One program: computes the BLOCK_SIZE_M x BLOCK_SIZE_N tile (pid_m, pid_n) of batch entry
// `batch`. The K loop loads masked tiles of A and B (zeros outside the matrix, as tl.load's
// `other=0.0`) and accumulates in fp32, as the kernels do.
struct Program {
  const GemmProblem& p;
  const KernelConfig& cfg;
  MatrixView a, b;
  ScaleView scales;
  EpilogueParams epilogue;
  std::vector<float> tile_a, tile_b, acc;  // BM x BK, BK x BN, BM x BN (row-major)
  float amax = 0.0f;  // of the finished values this program stored (fp8 D); fmax skips NaNs

  Program(const GemmProblem& problem, const KernelConfig& config)
      : p(problem),
        cfg(config),
        a(view_of(problem.a, problem.m, problem.k)),
        b(view_of(problem.b, problem.k, problem.n)),
        scales(scale_view(problem)),
        epilogue(make_epilogue_params(problem)),
        tile_a(size_t(config.block_m) * config.block_k),
        tile_b(size_t(config.block_k) * config.block_n),
        acc(size_t(config.block_m) * config.block_n) {}

  // Tile `tile` of batch entry (group) `batch`, whose rows of A, C and D are `range` and K values
  // of A and B `ks` (a dense problem's: all M rows of its own batch entry, all K).
  void run(int64_t batch, TileCoord tile, GroupRowRange range, GroupKRange ks) {
    const int bm = cfg.block_m, bn = cfg.block_n, bk = cfg.block_k;
    const int64_t row0 = range.begin + tile.pid_m * bm, col0 = tile.pid_n * bn;
    const int rows = valid_extent(range.end, row0, bm);
    const int cols = valid_extent(p.n, col0, bn);
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (int64_t k0 = ks.begin; k0 < ks.end; k0 += bk) {
      const int depth = valid_extent(ks.end, k0, bk);
      for (int i = 0; i < rows; ++i) {
        load_row(a, range.batch, row0 + i, k0, depth, &tile_a[size_t(i) * bk]);
      }
      for (int kk = 0; kk < depth; ++kk) {
        load_row(b, batch, k0 + kk, col0, cols, &tile_b[size_t(kk) * bn]);
      }
      if (a.dtype == DType::tf32) {  // TF32 math, as on the GPU: inputs rounded to 10 bits
        for (int i = 0; i < rows; ++i)
          for (int kk = 0; kk < depth; ++kk)
            tile_a[size_t(i) * bk + kk] = round_to_tf32(tile_a[size_t(i) * bk + kk]);
        for (int kk = 0; kk < depth; ++kk)
          for (int j = 0; j < cols; ++j)
            tile_b[size_t(kk) * bn + j] = round_to_tf32(tile_b[size_t(kk) * bn + j]);
      }
      if (scales.mode != ScaleMode::none) {  // fp8: the values the product uses
        // A grouped problem's group `batch` has scales of its own (ScaleView::group).
        const ScaleView s =
            p.groups.form == GroupForm::none ? scales : scales.group(p.groups.form, batch);
        for (int i = 0; i < rows; ++i)
          for (int kk = 0; kk < depth; ++kk)
            tile_a[size_t(i) * bk + kk] *= s.a_at(row0 + i, k0 + kk);
        for (int kk = 0; kk < depth; ++kk)
          for (int j = 0; j < cols; ++j) tile_b[size_t(kk) * bn + j] *= s.b_at(k0 + kk, col0 + j);
      }
      multiply_add(best_isa(), tile_a.data(), bk, tile_b.data(), bn, acc.data(), bn, rows, cols,
                   depth);
    }
    for (int i = 0; i < rows; ++i) {
      for (int j = 0; j < cols; ++j) {
        const float x =
            epilogue_store(epilogue, batch, row0 + i, col0 + j, acc[size_t(i) * bn + j]);
        amax = std::fmax(amax, std::fabs(x));
      }
    }
  }
};

}  // namespace

std::string config_check(const KernelConfig& c) {
  const auto within = [](int v) { return v >= 1 && v <= kMaxBlock; };
  if (!within(c.block_m) || !within(c.block_n) || !within(c.block_k)) {
    return "config " + to_string(c) + ": the CPU backend takes BLOCK_SIZE_M, BLOCK_SIZE_N and " +
           "BLOCK_SIZE_K from 1 to " + std::to_string(kMaxBlock);
  }
  if (c.group_size_m < 1) {
    return "config " + to_string(c) + ": GROUP_SIZE_M must be >= 1";
  }
  return {};
}

Status threads_from_environment(int* threads) {
  for (const char* name : {"TILEGEMM_NUM_THREADS", "OMP_NUM_THREADS"}) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    // OMP_NUM_THREADS may list a count per nesting level ("4,2"): the first is this level's.
    const std::string text(value);
    const std::string first = text.substr(0, text.find(','));
    char* end = nullptr;
    errno = 0;
    const long n = std::strtol(first.c_str(), &end, 10);
    if (errno != 0 || end == first.c_str() || *end != '\0' || n < 1 || n > kMaxThreads) {
      return {StatusCode::invalid_argument, std::string(name) + "='" + text +
                                                "' is not a thread count (1 to " +
                                                std::to_string(kMaxThreads) + ")"};
    }
    *threads = int(n);
    return Status::success();
  }
  *threads = int(std::max(1u, std::thread::hardware_concurrency()));
  return Status::success();
}

Status run(const GemmProblem& p, const KernelConfig& cfg, int num_threads) {
  if (std::string why = config_check(cfg); !why.empty()) {
    return {StatusCode::invalid_argument, why};
  }
  int threads = num_threads;
  if (threads <= 0) {
    if (Status s = threads_from_environment(&threads); !s.ok()) return s;
  }
  if (p.m == 0 || p.n == 0) {
    if (p.d.amax != nullptr) *p.d.amax = 0.0f;
    return Status::success();
  }
  // Work item w is tile w - first[g] of group g, for first[g] <= w < first[g + 1]: the groups'
  // tiles one after the other (a dense problem's batch entries are groups of all M rows).
  std::vector<GroupRowRange> ranges;
  std::vector<GroupKRange> k_ranges;
  std::vector<int64_t> first{0};
  try {
    for (int64_t g = 0; g < p.batch_count; ++g) {
      ranges.push_back(group_rows_after(p.groups.form, p.groups.sizes, g, p.m,
                                        ranges.empty() ? 0 : ranges.back().end));
      k_ranges.push_back(group_k_after(p.groups.form, p.groups.sizes, g, p.k,
                                       k_ranges.empty() ? 0 : k_ranges.back().end));
      first.push_back(first.back() +
                      num_tiles(ranges.back().rows(), p.n, cfg.block_m, cfg.block_n));
    }
  } catch (const std::bad_alloc&) {
    return {StatusCode::out_of_memory, "CPU backend: no host memory for the groups' tile counts"};
  }
  const int64_t work = first.back();
  threads = int(std::min<int64_t>(threads, work));

  // Programs are handed out in pid order, as a GPU's block scheduler roughly does. A thread that
  // cannot have its tiles' memory takes no program; the others take them all, or, if none could,
  // the call reports out_of_memory.
  std::atomic<int64_t> next{0};
  std::mutex amax_lock;
  float amax = 0.0f;
  auto worker = [&] {
    try {
      Program program(p, cfg);
      for (int64_t item = next++; item < work; item = next++) {
        const int64_t g = std::upper_bound(first.begin(), first.end(), item) - first.begin() - 1;
        const GroupRowRange& range = ranges[size_t(g)];
        program.run(g,
                    grouped_tile_order(item - first[size_t(g)], range.rows(), p.n, cfg.block_m,
                                       cfg.block_n, cfg.group_size_m),
                    range, k_ranges[size_t(g)]);
      }
      const std::lock_guard<std::mutex> hold(amax_lock);
      amax = std::fmax(amax, program.amax);
    } catch (const std::bad_alloc&) {
      // Thrown by Program's tiles, before the thread takes a program.
    }
  };
  std::vector<std::thread> pool;
  try {
    for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  } catch (const std::system_error&) {
    // Fewer threads than asked for: the ones there are take every program.
  }
  worker();
  for (auto& t : pool) t.join();
  if (next.load() < work) {
    return {StatusCode::out_of_memory,
            "CPU backend: no host memory for a thread's tiles of config " + to_string(cfg)};
  }
  if (p.d.amax != nullptr) *p.d.amax = amax;
  return Status::success();
}

}  // namespace tilegemm::cpu
