#include "tune/heuristic.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "epilogue/epilogue.hpp"
#include "problem/aligned_copies.hpp"
#include "schedule/tail_split.hpp"
#include "schedule/tile_order.hpp"
#include "schedule/wave_traffic.hpp"
#include "tune/tuning_key.hpp"

namespace tilegemm::autotune {

extern const char* const kH100TunedTable;  // h100_table.json, embedded by CMake

TunedTable parse_tuned_table(const char* json) {
  TunedTable t;
  const auto j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("entries")) return t;
  t.gpu = j.value("gpu", "");
  for (const auto& [text, e] : j["entries"].items()) {
    const auto key = parse_tuning_key(text);
    const auto config = parse_kernel_config(e.value("config", ""));
    if (key && config) t.rows.push_back({*key, e.value("kernel", ""), *config});
  }
  return t;
}

namespace {

const TunedTable& h100_table() {
  static const TunedTable table = parse_tuned_table(kH100TunedTable);
  return table;
}

bool is_16_bit(DType d) { return d == DType::fp16 || d == DType::bf16; }

// Distance between shapes: the sum of |log| of the ratios of M, N and K (a shape twice as tall
// is as far as one twice as deep), plus that of the output areas M x N, which set how many tiles
// there are and so which config fills the GPU. Without the area term 2048^3 was as near 1024^3 as
// 1024 x 4096 x 1024 and took 1024^3's small tile, 0.29x cuBLAS for tf32.
double shape_distance(const TuningKey& a, const GemmProblem& p) {
  const auto term = [](double x, double y) {
    return std::abs(std::log(std::max(x, 1.0) / std::max(y, 1.0)));
  };
  return term(a.m, p.m) + term(a.n, p.n) + term(a.k, p.k) +
         term(double(a.m) * double(a.n), double(p.m) * double(p.n));
}

// Programs a config runs for the problem: a tile each.
int64_t programs(const KernelConfig& c, const GemmProblem& p) {
  return num_tiles(p.m, p.n, c.block_m, c.block_n) * p.batch_count;
}

// Rounds of one program per SM that the config's programs take.
int64_t waves(const KernelConfig& c, const GemmProblem& p, int sms) {
  return cdiv(programs(c, p), int64_t(std::max(sms, 1)));
}

// Where the tensor cores bound a problem rather than memory, and its K loops are long enough that
// a tile's fixed costs (its first loads, its epilogue) weigh little beside its steps, the rules
// count the tiles' work, not their loads. Flops per element of A, B and D moved (the least a
// problem can move): the ridge of 989 TFLOP/s (bf16) over 3.35 TB/s is 590 flops per 2-byte
// element on the H100, over 4.8 TB/s 412 on the H200. K: on the H200, 128x128 split lost 3 % to
// 128x256 whole at 768 x 4096 x 2048 and to 256x128 at 2048 x 1536 x 2048, where the count in
// steps had it faster. Timed for single 16-bit products (no batch, no groups), and taken for
// plain tf32 too, whose tensor cores run at half the rate on elements twice as large (the same
// ridge): on the H200 1024 x 1024 x 16384 (row-major B) ran 340 TFLOP/s on 128x256 split, which
// the count of work takes (time_per_area), against 271 on 64x128, which the count of rows loaded
// took.
constexpr double kComputeBoundFlopsPerElement = 512.0;
constexpr int64_t kComputeBoundMinK = 4096;

// Plain tf32: with_aligned_copies sets its fast_accumulation (tf32x3's parts promote theirs).
bool plain_tf32(const GemmProblem& p) { return p.a.dtype == DType::tf32 && p.fast_accumulation; }

// Whether the sm90 kernel takes the tiles' A operand through registers: plain tf32 with a
// column-major A, or with a row-major B, which it runs as the transposed product (an operand it
// cannot read as it lies is copied K-major before the rules see the problem).
bool a_from_registers(const GemmProblem& p) {
  return plain_tf32(p) && (p.a.layout == Layout::col_major || p.b.layout == Layout::row_major);
}

bool compute_bound(const GemmProblem& p) {
  const bool single = p.batch_count == 1 && p.groups.form == GroupForm::none;
  if (!single || !(is_16_bit(p.a.dtype) || plain_tf32(p)) || p.k < kComputeBoundMinK) return false;
  const double m = double(p.m), n = double(p.n), k = double(p.k);
  return 2.0 * m * n * k >= kComputeBoundFlopsPerElement * (m * k + k * n + m * n);
}

// The tensor cores' time per value of K for a tile, per element of the tile, relative to one
// consumer of 64x128 (8 warps) alone on its SM, by the consumers' warp tile. Timed on the H200
// (bf16): two consumers of 64 x 256 or 128 x 128 0.82, of 64 x 128 0.84 (one's adds and waits
// under the other's wgmma), of 64 x 64 1.12, and one 1.36 (an m64n64 wgmma reads as many bytes of
// shared memory per flop as the tensor cores take). One consumer that runs more than one piece of
// work on its SM (whole tiles, then a head or tails) 1.25 (64x128 against 128x128 whole at 2048 x
// 768 x 8192 and 3072 x 512 x 32768: 1.21 and 1.25), where two consumers keep their figure.
// Two of 64 x 192 count as two of 64 x 128: 128x192 ran 4096^3 and 8192^3 at 0.95x and 0.97x
// 128x256's rate (0.86 and 0.84 per area); counted at 0.85 the rules took the fastest timed
// config on two shapes fewer.
// A consumer that takes A through registers (a_from_registers: plain tf32) loads its fragments
// beside the wgmma that reads them. Timed on the H200 (tf32 NN against NT, the same config, eight
// shapes of 512-2048 x 512-2048 x 8192-32768): 64 x 256 warp tiles ran at the same rate, two
// consumers of 64 x 128 at 0.81-0.91x (median 0.84: 1.19), one at 0.86-0.96x (median 0.88: 1.13).
// 64 x 64 warp tiles were not timed so.
double time_per_area(const KernelConfig& c, bool alone, bool a_in_registers) {
  const bool one_consumer = c.num_warps == 8;
  const int warp_tile = c.warp_m * c.warp_n;
  if (warp_tile >= 64 * 256) return 0.82;
  if (warp_tile >= 64 * 128) {
    const double own = !one_consumer ? 0.84 : alone ? 1.0 : 1.25;
    return a_in_registers ? own * (one_consumer ? 1.13 : 1.19) : own;
  }
  return one_consumer ? 1.36 : 1.12;
}

// Whether the rules count the split of a config's last round, or of its one round under the grid
// (schedule/tail_split.hpp; sm90's kTailSplits): D = alpha * AB into a row-major D (the routes
// through the store buffers), not grouped, and a program of one consumer (8 warps, the 64-row
// tiles) or a problem bound by the tensor cores (compute_bound). The kernel splits the other
// configs of one program too, but where memory bounds the problem those of two consumers stream B
// more slowly when split: on the H200, 128x128 split four ways ran 16 x 4096 x 4096 at 21.6
// TFLOP/s and 128 x 4096 x 4096 at 179, where 64x128 ran 25.0 and 216. Where the tensor cores
// bound it, 128x128 split in two ran 1024 x 1024 x 16384 at 656 against 64x128's 549 whole.
// With fp8 block scales the split of two consumers counts too: a consumer promotes its sums
// with a factor per K block, which a second consumer's wgmma hides and a lone one's does not, so
// 64x128 (one consumer) runs block scales at 0.74x its per-tensor rate where 128x128 keeps
// 0.97x. On the H200, 128x128 split in two ran 128 x 7168 x 16384 at 625 TFLOP/s against
// 64x128's 502 whole; counted so, the rules' picks over 26 shapes of M = 64-512 (DeepSeek-V3's
// N x K) ran at 0.97 of the fastest config's rate (geometric mean), against 0.95 uncounted.
bool splits_round(const KernelConfig& c, const GemmProblem& p, bool tail_splits) {
  const bool block_scaled = p.scales.mode == ScaleMode::block;
  return tail_splits && (c.num_warps == 8 || compute_bound(p) || block_scaled) &&
         c.cluster_m * c.cluster_n == 1 && c.schedule != KernelSchedule::ping_pong &&
         scales_only(p.epilogue) && p.d.layout == Layout::row_major &&
         p.groups.form == GroupForm::none;
}

// Whether the rules weigh a config by its tiles' work (busiest_sm_load): for a kernel that splits
// rounds (sm90's consumers) on a problem the tensor cores bound.
bool counts_work(const GemmProblem& p, bool tail_splits) { return tail_splits && compute_bound(p); }

// What the busiest SM takes: its K steps, each weighed per value of K by what bounds the problem.
// Where memory does, the rows the SM loads (BLOCK_SIZE_M + BLOCK_SIZE_N per value of K); where the
// tensor cores do (compute_bound, for a kernel that splits rounds: sm90's consumers), the tile's
// area times time_per_area. Its steps: a tile's K, times the programs the SM runs in turn, or,
// where the kernel splits the last round (splits_round), the whole rounds' steps and the split
// round's busiest program's.
// Where a program is alone on its SM and memory bounds it, its K step is bound by what the SM
// takes in, so of two configs that both leave SMs idle the lighter one finishes first. There a
// head's wait for each of its tails costs about a turn of the ring, num_stages steps (the loads in
// flight over one memory latency), not the kHeadFixupSteps the plan counts for K loops bound by
// the tensor cores. On the H200 that count ordered the one-consumer configs as measured on seven
// decode shapes: 16 x 4096 x 4096 takes 64x64 split in two (a head of 18 + 6 steps of 128) before
// 64x128 split four ways (16 + 3 x 8 of 64), 27.3 against 25.0 TFLOP/s; 1 x 8192 x 8192 takes
// 64x128 split in two (66 + 8 steps of 64) before 128 whole tiles of 64x64 (64 of 128) or of
// 128x64 (128 of 64), 2.8 against 2.5 and 1.9.
// Where the tensor cores bound it, a wait costs that turn and a tail's store besides: on the H200,
// 128x128 split in two lost to 64x128 whole at 1024 x 1024 x 4096 (393 against 422 TFLOP/s) and
// won at 8192 (529 against 501). After whole rounds the tails of an item, each after a whole tile
// on its program, finish together: the head waits that once, then adds each tail's sums, at about
// a tail's store each. Counted per tail as under one round, 1536 x 1536 x 4096's 128x128 (132
// whole tiles, then 12 of a head of 1 step and 7 tails of 9) weighed 1.19x 128x256's one round
// (72 tiles), where it ran 8-10 % faster in six runs (and 3072 x 768 x 4096 against 256x128).
// `counted`, when given, receives the split the load counts (left as it was where none counts).
double busiest_sm_load(const KernelConfig& c, const GemmProblem& p, int sms, bool tail_splits,
                       TailSplit* counted = nullptr) {
  const bool tensor_bound = counts_work(p, tail_splits);
  const bool registers_a = a_from_registers(p);
  const auto per_k = [&](bool alone) {
    return tensor_bound ? double(c.block_m) * c.block_n * time_per_area(c, alone, registers_a)
                        : double(c.block_m + c.block_n);
  };
  if (splits_round(c, p, tail_splits) && c.block_k > 0) {
    const int64_t k_steps = cdiv(p.k, int64_t(c.block_k));
    const TailSplit split = plan_tail_split(programs(c, p), sms, k_steps);
    if (split.on()) {
      if (counted) *counted = split;
      const int64_t whole_rounds = split.whole_items / std::max(sms, 1);
      const int64_t turn = std::max(c.num_stages, kHeadFixupSteps);  // a turn of the ring
      const int64_t tensor_wait = c.num_stages + kTailStoreSteps;    // and a tail's store
      // Where memory bounds the problem, a tail of two consumers stores a tile's BM x BN fp32
      // sums, twice a lone consumer's or more, for its head to read: the head waits that store
      // besides the turn.
      const int64_t memory_wait = c.num_warps == 8 ? turn : tensor_wait;
      const int64_t steps = !tensor_bound ? split_round_steps(split, memory_wait)
                            : whole_rounds > 0
                                ? split_round_steps(split, kTailStoreSteps, tensor_wait)
                                : split_round_steps(split, tensor_wait);
      const bool alone = whole_rounds == 0 && split.tails_per_helper <= 1;
      return per_k(alone) * double(c.block_k) * double(whole_rounds * k_steps + steps);
    }
  }
  const int64_t rounds = waves(c, p, sms);
  return double(rounds) * per_k(rounds <= 1) * double(p.k);
}

}  // namespace

KernelConfig turned_if_fewer_waves(const KernelConfig& c, const std::vector<KernelConfig>& configs,
                                   const GemmProblem& p, int sms) {
  for (const KernelConfig& t : configs) {
    const bool turned = t.block_m == c.block_n && t.block_n == c.block_m &&
                        t.block_k == c.block_k && t.num_stages == c.num_stages &&
                        t.num_warps == c.num_warps && t.cluster_m == c.cluster_m &&
                        t.cluster_n == c.cluster_n && t.schedule == c.schedule;
    if (turned && waves(t, p, sms) < waves(c, p, sms)) {
      KernelConfig out = t;
      out.group_size_m = c.group_size_m;
      return out;
    }
  }
  return c;
}

namespace {

// Waves of tiles (rounds of one per SM) from which 16-bit problems off L2 lines take clusters of
// 2 x 2 (rules_config).
constexpr int64_t kClusterOf4MinWaves = 6;

// The choice of rules_config before the cluster rule below.
KernelConfig rules_tile(const std::vector<KernelConfig>& configs, const GemmProblem& p, int sms,
                        bool tail_splits, RulesTrace& trace) {
  // Ping-pong (sm90) for an epilogue beyond alpha*AB over a short K (up to 2048), when every SM
  // gets at least two of its tiles, one per consumer. There a tile's epilogue takes about as long
  // as its mainloop, and ping-pong runs it during the other consumer's mainloop: 8192 x 8192 x
  // 1024 with beta*C + bias + gelu ran 13 % faster than on 128x256. Over a longer K the 128x128
  // tile's mainloop, 7 % slower than 128x256's, costs more than the overlap saves (4096^3: +1 %,
  // 4096 x 11008 x 4096: -5 %).
  if (!scales_only(p.epilogue) && p.k <= 2048) {
    for (const KernelConfig& c : configs)
      if (c.schedule == KernelSchedule::ping_pong && programs(c, p) >= 2 * int64_t(sms)) {
        trace.rule = "ping-pong: an epilogue beyond alpha * AB over K <= 2048, two tiles per SM";
        return c;
      }
  }
  // Otherwise ping-pong is left to the autotuner.
  std::vector<KernelConfig> by_area;
  for (const KernelConfig& c : configs)
    if (c.schedule != KernelSchedule::ping_pong) by_area.push_back(c);
  const bool tall = p.m > p.n;  // among equal areas, the tile whose aspect follows the problem's
  std::stable_sort(
      by_area.begin(), by_area.end(), [&](const KernelConfig& x, const KernelConfig& y) {
        const int64_t ax = int64_t(x.block_m) * x.block_n, ay = int64_t(y.block_m) * y.block_n;
        if (ax != ay) return ax > ay;
        // Of two equal tiles, the one with fewer waves (turned_if_fewer_waves), then the one of the
        // larger warp tile, then the one whose aspect follows the problem's.
        if (const int64_t wx = waves(x, p, sms), wy = waves(y, p, sms); wx != wy) return wx < wy;
        // An m64n64 wgmma reads as many bytes of shared memory per flop as the tensor cores take
        // (time_per_area): on the H200 64x128 (one consumer of 64 x 128) ran 1024 x 768 x 2048
        // 1.10x and 1280 x 512 x 1024 1.06x faster than 128x64 (two of 64 x 64), which the aspect
        // would take.
        if (const int64_t tx = int64_t(x.warp_m) * x.warp_n, ty = int64_t(y.warp_m) * y.warp_n;
            tx != ty)
          return tx > ty;
        if (x.block_m != y.block_m) return tall ? x.block_m > y.block_m : x.block_n > y.block_n;
        // The same tile: the deeper slice (half the barriers per mma).
        if (x.block_k != y.block_k) return x.block_k > y.block_k;
        // Then more stages over a long K loop (32 slices or more), where a program waits on
        // memory, fewer over a short one (sm90 64x64, 12 stages against 8: +13 % at
        // 128 x 4096 x 4096, -4 % at 512^3).
        const bool long_k = cdiv(p.k, int64_t(x.block_k)) >= 32;
        return long_k ? x.num_stages > y.num_stages : x.num_stages < y.num_stages;
      });
  // "Fills" the GPU: programs for at least 7/8 of the SMs. One wave of large tiles with a few SMs
  // idle beats two of half-size tiles (2048^3 on 132 SMs: 128 tiles of 128x256 ran 2 % faster
  // than 256 of 128x128). A smaller tile that fills only by giving some SMs a second one is not
  // taken where a larger tile before it loads less into its busiest SM (768 x 768 x 4096: 72
  // tiles of 128x64 ran 47 % faster than 144 of 64x64; 1792 x 2048 x 2048: 112 of 128x256 4 %
  // faster than 224 of 128x128).
  trace.tensor_bound = counts_work(p, tail_splits);
  for (const KernelConfig& c : by_area) {
    RulesWeighing w{.config = c,
                    .programs = programs(c, p),
                    .fills = programs(c, p) * 8 >= int64_t(sms) * 7,
                    .load = 0.0,
                    .split = {}};
    w.load = busiest_sm_load(c, p, sms, tail_splits, &w.split);
    trace.weighed.push_back(w);
  }
  double lightest_before = 0.0;
  for (const RulesWeighing& w : trace.weighed) {
    const bool lighter_before = lightest_before > 0.0 && lightest_before < w.load;
    if (w.fills && !lighter_before) {
      trace.rule = "the largest tile that fills 7/8 of the SMs, no larger one lighter";
      return w.config;
    }
    if (lightest_before == 0.0 || w.load < lightest_before) lightest_before = w.load;
  }
  // Nothing fills it: the config whose busiest SM loads the least, the first in the order above
  // on a tie (sm90: 64x64 at 512^3 and on skinny problems).
  const RulesWeighing* best = nullptr;
  for (const RulesWeighing& w : trace.weighed)
    if (best == nullptr || w.load < best->load) best = &w;
  trace.rule = "the lightest busiest SM; no lighter config fills the SMs";
  return best == nullptr ? KernelConfig{} : best->config;
}

// The unclustered config `c` in clusters of cluster_m x cluster_n, if `configs` has it; else
// nullptr.
const KernelConfig* clustered_twin(const KernelConfig& c, const std::vector<KernelConfig>& configs,
                                   int cluster_m, int cluster_n) {
  for (const KernelConfig& t : configs) {
    KernelConfig unclustered = t;
    unclustered.cluster_m = unclustered.cluster_n = 1;
    if (t.cluster_m == cluster_m && t.cluster_n == cluster_n && unclustered == c) return &t;
  }
  return nullptr;
}

}  // namespace

KernelConfig rules_config(const std::vector<KernelConfig>& configs, const GemmProblem& p, int sms,
                          bool tail_splits, RulesTrace* trace) {
  RulesTrace local;
  RulesTrace& t = trace != nullptr ? *trace : local;
  t = RulesTrace{};
  const KernelConfig c = rules_tile(configs, p, sms, tail_splits, t);
  t.tile = c;
  // 16-bit operands whose lines are off L2 lines take the tile's cluster of 2: each 128-byte box
  // row then reads two L2 lines, the K loop is bound by L2, and the cluster reads B once for two
  // programs. On the H100 (bf16, `run --config`, TFLOP/s): 2040^3 (4080-byte lines) 374 ->
  // 480 on 128x256; 1512^3 265 -> 291; 1000 x 1000 x 4000 on 64x128 205 -> 278; 1000^3 130 ->
  // 143. On 128-byte lines, and for tf32, the cluster loses (1536^3 packed: 335 -> 318; tf32
  // 1000^3 122 -> 104). Where every SM takes kClusterOf4MinWaves tiles or more, the cluster of
  // 2 x 2, which reads A once for two programs too: 8192^3 on 8200-element lines 640 -> 725,
  // 6144^3 606 -> 727 (8.7 waves of 128x256); at 4096^3 (3.9 waves) the two tie. Only 30
  // clusters of four fit on the H100 (120 SMs), so with one wave of tiles the 2 x 2 cluster
  // needs two rounds and loses a third (2040^3: 493 -> 347).
  const bool off_lines = !on_l2_lines(p.a, p.m, p.k) || !on_l2_lines(p.b, p.k, p.n);
  if (is_16_bit(p.a.dtype) && off_lines) {
    const KernelConfig* four = clustered_twin(c, configs, 2, 2);
    if (four != nullptr && waves(c, p, sms) >= kClusterOf4MinWaves) {
      t.rule += "; A's or B's lines off L2 lines, six waves or more: its cluster of 2 x 2";
      return *four;
    }
    if (const KernelConfig* two = clustered_twin(c, configs, 2, 1)) {
      t.rule += "; A's or B's lines off L2 lines: its cluster of 2";
      return *two;
    }
  }
  return c;
}

KernelConfig kernel_rules_config(const GemmProblem& p, const gpu::Kernel& kernel, int sms,
                                 RulesTrace* trace, bool anywhere) {
  std::vector<KernelConfig> configs;
  for (const KernelConfig& c : kernel.info.configs) {
    const std::string why =
        anywhere ? kernel.can_implement_on_its_gpu(p, c) : kernel.can_implement(p, c);
    if (why.empty()) configs.push_back(c);
  }
  return rules_config(configs.empty() ? kernel.info.configs : configs, p, sms, kernel.tail_splits,
                      trace);
}

const TunedRow* nearest_tuned(const TunedTable& table, const GemmProblem& p,
                              const std::string& kernel_request) {
  const TunedRow* best = nullptr;
  double best_distance = 0.0;
  for (const TunedRow& row : table.rows) {
    const bool same_type =
        row.key.input == p.a.dtype || (is_16_bit(row.key.input) && is_16_bit(p.a.dtype));
    // A named kernel also takes the rows tuned over every kernel ("auto") that it won: its best
    // config there is that row's. (tf32's rows were tuned so when auto meant sm80; since auto
    // takes sm90 for tf32, `--kernel sm80` had no rows of its own and fell to the rules, 128x256
    // where the table has 128x128: 190-192 against 213-214 TFLOP/s at 4096^3 on the H100.)
    const bool requested = row.key.kernel == kernel_request;
    const bool won =
        kernel_request != "auto" && row.key.kernel == "auto" && row.kernel == kernel_request;
    if (!same_type || !(requested || won)) continue;
    // Of equally near rows, an exact-type match first, then a row tuned for the request itself.
    const double d = shape_distance(row.key, p) + (row.key.input == p.a.dtype ? 0.0 : 2e-6) +
                     (requested ? 0.0 : 1e-6);
    if (best == nullptr || d < best_distance) best = &row, best_distance = d;
  }
  return best;
}

HeuristicChoice heuristic(const GemmProblem& p, const gpu::Kernel& kernel,
                          const std::string& kernel_request, const std::string& gpu_name, int sms) {
  HeuristicChoice choice;
  const TunedTable& table = h100_table();
  if (table.gpu == gpu_name) {
    // The winner of the nearest tuned shape, if it runs this problem.
    const TunedRow* best =
        nearest_tuned(table, p, automatic(kernel_request) ? "auto" : kernel_request);
    if (best != nullptr && best->kernel == kernel.info.name &&
        kernel.can_implement(p, best->config).empty()) {
      choice.config = best->config;
      choice.rule = "table";
      // The tuned shape's tile may leave this one a partial wave that the same tile turned
      // does not.
      const KernelConfig turned = turned_if_fewer_waves(best->config, kernel.info.configs, p, sms);
      if (!(turned == best->config) && kernel.can_implement(p, turned).empty()) {
        choice.config = turned;
        choice.rule = "table, turned";
      }
      return choice;
    }
  }
  // The rules choose among the configs that take this problem (sm80's 3-stage ones take one input
  // type each, with aligned rows only); if none does, the error comes from the launch.
  choice.config = kernel_rules_config(p, kernel, sms);
  if (kernel.persistent && choice.config.cluster_m <= 1 && choice.config.cluster_n <= 1) {
    // A persistent kernel's wave is one program per SM, so the L2 model can pick the launch
    // order: 128x256 tiles on 132 SMs read 23 % fewer bytes per wave with GROUP_SIZE_M 16 than
    // with 8.
    choice.config.group_size_m = int(l2_group_size(
        p.m, p.n, choice.config.block_m, choice.config.block_n, sms, choice.config.group_size_m));
  }
  choice.rule = "rules";
  return choice;
}

}  // namespace tilegemm::autotune
