// The autotuner's host parts: tuning keys, pruning rules, and the cache file protocol.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <tuple>

#include "problem/aligned_copies.hpp"
#include "tune/config_space.hpp"
#include "tune/heuristic.hpp"
#include "tune/tune_cache.hpp"
#include "tune/tuning_key.hpp"

namespace tilegemm::autotune {
namespace {

// Configs from their text, as the kernels' lists name them.
std::vector<KernelConfig> parsed_configs(std::initializer_list<const char*> texts) {
  std::vector<KernelConfig> configs;
  for (const char* text : texts) configs.push_back(*parse_kernel_config(text));
  return configs;
}

GemmProblem problem(int64_t m, int64_t n, int64_t k, DType dtype = DType::bf16) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a.dtype = p.b.dtype = dtype;
  p.d.dtype = p.c.dtype = dtype == DType::tf32 ? DType::fp32 : dtype;
  // Aligned stand-in addresses: keys look at addresses, never at data.
  p.a.data = p.b.data = p.d.data = reinterpret_cast<void*>(uintptr_t(1) << 20);
  return p;
}

// The Hopper kernel's list before its 128x192 tile (MidSizesTakeOneRoundOf128x192 adds it): each
// large shape unclustered, then in clusters of 2; 128x64; 64x128 with one consumer, also in
// clusters of 2; last, 64x64, whose stages hold two slabs of K (BLOCK_SIZE_K 128).
std::vector<KernelConfig> sm90_configs() {
  return parsed_configs({"128x256x64/g8/s4/w12/wt64x256", "128x256x64/g8/s4/w12/wt64x256/c2",
                         "256x128x64/g8/s4/w12/wt128x128", "256x128x64/g8/s4/w12/wt128x128/c2",
                         "128x128x64/g8/s6/w12/wt64x128", "128x128x64/g8/s6/w12/wt64x128/c2",
                         "128x64x64/g8/s8/w12/wt64x64", "64x128x64/g8/s8/w8/wt64x128",
                         "64x128x64/g8/s8/w8/wt64x128/c2", "64x64x128/g8/s6/w8/wt64x64"});
}

TEST(RulesConfig, LargestTileThatFillsSevenEighthsOfTheSms) {
  const std::vector<KernelConfig> configs = sm90_configs();
  const auto pick = [&](int64_t m, int64_t n, int64_t k) {
    return to_string(rules_config(configs, problem(m, n, k), 132));
  };
  // 128 tiles of 128x256 for 132 SMs: one wave with 4 SMs idle, not two of 128x128.
  EXPECT_EQ(pick(2048, 2048, 2048), "128x256x64/g8/s4/w12/wt64x256");
  // 112 tiles of 128x256: fewer than 7/8 of the SMs. 224 of 128x128 fill them, but give 92 SMs
  // two tiles each, 512 rows per K value against 384 for one 128x256 tile.
  EXPECT_EQ(pick(1792, 2048, 2048), "128x256x64/g8/s4/w12/wt64x256");
  // 240 tiles of 128x128 and 120 of 128x256: the larger tile fills.
  EXPECT_EQ(pick(1920, 2048, 2048), "128x256x64/g8/s4/w12/wt64x256");
  EXPECT_EQ(pick(4096, 4096, 4096), "128x256x64/g8/s4/w12/wt64x256");
  EXPECT_EQ(pick(8192, 8192, 1024), "128x256x64/g8/s4/w12/wt64x256");
  // Taller than wide: of equal tiles, the tall one.
  EXPECT_EQ(pick(16384, 1024, 4096), "256x128x64/g8/s4/w12/wt128x128");
  // Before the shape, the waves: 4095 x 4097 is 544 tiles of 128x256 (5 waves on 132 SMs) and 528
  // of 256x128 (4); 4097 x 4095 the other way round. (On lines 128 bytes apart, as the aligned
  // copies leave them: lines off L2 lines take the cluster, below.)
  const auto pick_on_lines = [&](int64_t m, int64_t n, int64_t k) {
    GemmProblem p = problem(m, n, k);
    p.a.ld = round_up(k, 64);
    p.b.ld = round_up(n, 64);
    return to_string(rules_config(configs, p, 132));
  };
  EXPECT_EQ(pick_on_lines(4095, 4097, 4093), "256x128x64/g8/s4/w12/wt128x128");
  EXPECT_EQ(pick_on_lines(4097, 4095, 4093), "128x256x64/g8/s4/w12/wt64x256");
  // 128 tiles of 64x128 or of 128x64 fill the GPU: of the two, the larger warp tile (one consumer
  // of 64 x 128 against two of 64 x 64), unclustered, for tall problems too: on the H200 it ran
  // 1.06-1.14x faster than 128x64 at 1280 x 512 x 1024, 1024 x 768 x 2048 and 2048 x 512 x 8192.
  EXPECT_EQ(pick(1024, 1024, 1024), "64x128x64/g8/s8/w8/wt64x128");
  EXPECT_EQ(pick(2048, 512, 1024), "64x128x64/g8/s8/w8/wt64x128");
  EXPECT_EQ(pick(1280, 512, 1024), "64x128x64/g8/s8/w8/wt64x128");
  EXPECT_EQ(pick(1024, 768, 2048), "64x128x64/g8/s8/w8/wt64x128");
  // Nothing fills the SMs: the tile whose program loads the fewest rows.
  EXPECT_EQ(pick(16, 4096, 4096), "64x64x128/g8/s6/w8/wt64x64");
  EXPECT_EQ(pick(256, 256, 2048), "64x64x128/g8/s6/w8/wt64x64");
  EXPECT_EQ(pick(512, 512, 512), "64x64x128/g8/s6/w8/wt64x64");
  // 128 tiles of 64x64 fill the SMs; 64 of 128x64 do not.
  EXPECT_EQ(pick(128, 4096, 4096), "64x64x128/g8/s6/w8/wt64x64");
  // 72 tiles of 64x128; 144 of 64x64 would give 12 SMs two (256 rows per K value against 192).
  EXPECT_EQ(pick(768, 768, 4096), "64x128x64/g8/s8/w8/wt64x128");
  // 128 tiles of 64x64 fill the SMs once: 128 rows per K value against 128x64's 192.
  EXPECT_EQ(pick(1024, 512, 1024), "64x64x128/g8/s6/w8/wt64x64");
  // Batches count as tiles.
  GemmProblem batched = problem(512, 512, 512);
  batched.batch_count = 64;
  EXPECT_EQ(to_string(rules_config(configs, batched, 132)), "128x256x64/g8/s4/w12/wt64x256");
}

TEST(RulesConfig, AKernelThatSplitsItsRoundCountsTheSplitsSteps) {
  // sm90's list; its last round, or its one round under the grid, is split between programs
  // (schedule/tail_split.hpp) for D = alpha * AB, and the rules count the split of the configs of
  // one consumer (8 warps).
  const std::vector<KernelConfig> configs = sm90_configs();
  const auto pick = [&](const GemmProblem& p) {
    return to_string(rules_config(configs, p, 132, true));
  };
  const auto pick_unsplit = [&](const GemmProblem& p) {
    return to_string(rules_config(configs, p, 132, false));
  };
  // 1 x 8192 x 8192: 64 tiles of 64x128 split in two, a head of 66 steps of 64 values of K and a
  // turn of its 8 stages for the tail (192 rows each), against 128 whole tiles of 128x64 that
  // fill the SMs, 128 steps, or of 64x64, 64 steps of 128 (128 rows).
  EXPECT_EQ(pick(problem(1, 8192, 8192)), "64x128x64/g8/s8/w8/wt64x128");
  EXPECT_EQ(pick(problem(16, 8192, 8192)), "64x128x64/g8/s8/w8/wt64x128");
  EXPECT_EQ(pick_unsplit(problem(1, 8192, 8192)), "128x64x64/g8/s8/w12/wt64x64");
  // 16 x 4096 x 4096: 64 tiles of 64x64 split in two (a head of 18 + 6 steps of 128) against 32
  // of 64x128 split four ways (16 + 3 x 8 of 64); the same for 1 and 64 rows.
  EXPECT_EQ(pick(problem(16, 4096, 4096)), "64x64x128/g8/s6/w8/wt64x64");
  EXPECT_EQ(pick(problem(1, 4096, 4096)), "64x64x128/g8/s6/w8/wt64x64");
  EXPECT_EQ(pick(problem(64, 4096, 4096)), "64x64x128/g8/s6/w8/wt64x64");
  // Over a longer K the heads' steps outweigh the waits: 16 x 4096 x 14336, 64x128 split four
  // ways (56 + 3 x 8 steps of 64) before 64x64 in two (58 + 6 of 128).
  EXPECT_EQ(pick(problem(16, 4096, 14336)), "64x128x64/g8/s8/w8/wt64x128");
  // 4096 x 16 x 4096, tall: 64 tiles of 64x64 split in two against 64x128's 64 split in two
  // (34 + 8 steps of 64) and 32 whole tiles of 128x64 (64 steps).
  EXPECT_EQ(pick(problem(4096, 16, 4096)), "64x64x128/g8/s6/w8/wt64x64");
  // An epilogue beyond alpha * AB does not split: as without.
  GemmProblem bias = problem(16, 4096, 4096);
  bias.epilogue.bias = bias.a.data;
  EXPECT_EQ(pick(bias), "64x64x128/g8/s6/w8/wt64x64");
  // Shapes whose tiles fill the SMs keep them.
  EXPECT_EQ(pick(problem(4096, 4096, 4096)), "128x256x64/g8/s4/w12/wt64x256");
  EXPECT_EQ(pick(problem(1024, 1024, 1024)), "64x128x64/g8/s8/w8/wt64x128");
  // (1024 x 1024 x 16384, bound by the tensor cores, takes 128x128 split in two: below.)
  // (1000-value rows, off L2 lines, take the cluster of 2, as without the split.)
  EXPECT_EQ(pick(problem(1000, 1000, 1000)), "64x128x64/g8/s8/w8/wt64x128/c2");
}

TEST(RulesConfig, WhereTheTensorCoresBoundAProblemTheSplitOfTwoConsumersCounts) {
  // 16-bit problems of 512 flops or more per element moved, K >= 4096: each config's busiest SM
  // counts its tile's work, the split of two consumers too (heuristic.cpp: compute_bound). Every
  // choice below was timed on the H200 against the one the rules made before.
  const std::vector<KernelConfig> configs = sm90_configs();
  const auto pick = [&](int64_t m, int64_t n, int64_t k, DType dtype = DType::bf16) {
    return to_string(rules_config(configs, problem(m, n, k, dtype), 132, true));
  };
  // 64 tiles of 128x128 split in two against 128 whole tiles of 64x128 (656 against 549 TFLOP/s);
  // at K = 4096 the split's hand-over outweighs the gain (393 against 422), and 64x128 stays.
  EXPECT_EQ(pick(1024, 1024, 16384), "128x128x64/g8/s6/w12/wt64x128");
  EXPECT_EQ(pick(1024, 1024, 32768), "128x128x64/g8/s6/w12/wt64x128");
  EXPECT_EQ(pick(1024, 1024, 4096), "64x128x64/g8/s8/w8/wt64x128");
  // Split three ways, before 64x64 or 128x64 whole (485 against 341; 693 against 462).
  EXPECT_EQ(pick(768, 768, 16384), "128x128x64/g8/s6/w12/wt64x128");
  EXPECT_EQ(pick(2048, 512, 32768), "128x128x64/g8/s6/w12/wt64x128");
  // The large tiles split, before 128x128 or 64x128 whole (708 against 565; 644 against 512).
  EXPECT_EQ(pick(1792, 768, 32768), "256x128x64/g8/s4/w12/wt128x128");
  EXPECT_EQ(pick(768, 1536, 32768), "128x256x64/g8/s4/w12/wt64x256");
  // 96 whole tiles of 128x128 before 192 of 64x128, which give an SM a whole tile and a head or a
  // tail (575 against 504).
  EXPECT_EQ(pick(2048, 768, 8192), "128x128x64/g8/s6/w12/wt64x128");
  // 64x64 split before 64x128 whole (231 against 197).
  EXPECT_EQ(pick(512, 768, 4096), "64x64x128/g8/s6/w8/wt64x64");
  // After a whole round, 12 tiles of 128x128 each split into a head and 7 tails, whose head waits
  // for them once: before 72 tiles of 128x256 or 256x128 in one round (474 against 430-439; 471
  // against 427-433). Counted as a wait per tail, the split weighed 1.19x the one round.
  EXPECT_EQ(pick(1536, 1536, 4096), "128x128x64/g8/s6/w12/wt64x128");
  EXPECT_EQ(pick(3072, 768, 4096), "128x128x64/g8/s6/w12/wt64x128");
  // K below 4096 keeps the count of rows loaded: 128x256 whole, not 128x128 split (496 against
  // 481).
  EXPECT_EQ(pick(768, 4096, 2048), "128x256x64/g8/s4/w12/wt64x256");
  // So does fp8, whose costs were not timed, and tf32x3 (tf32 whose sums promote). Plain tf32
  // (fast_accumulation, as with_aligned_copies leaves it), at half the rate on elements twice as
  // large, counts the work too, with A's fragments through registers where B is row-major (the
  // transposed product). H200, TFLOP/s: B row-major, 128x256 split 340, 128x128 split 298, 64x128
  // 271; B column-major (A and B through descriptors) 340, 353, 306.
  EXPECT_EQ(pick(1024, 1024, 16384, DType::tf32), "64x128x64/g8/s8/w8/wt64x128");
  EXPECT_EQ(pick(1024, 1024, 16384, DType::fp8_e4m3), "64x128x64/g8/s8/w8/wt64x128");
  // The sm90 kernel's tf32 list (BLOCK_SIZE_K 32).
  const std::vector<KernelConfig> tf32_configs =
      parsed_configs({"128x256x32/g8/s4/w12/wt64x256", "256x128x32/g8/s4/w12/wt128x128",
                      "128x128x32/g8/s6/w12/wt64x128", "128x64x32/g8/s8/w12/wt64x64",
                      "64x128x32/g8/s8/w8/wt64x128", "64x64x64/g8/s6/w8/wt64x64"});
  const auto pick_plain_tf32 = [&](int64_t m, int64_t n, int64_t k,
                                   Layout b_layout = Layout::row_major) {
    GemmProblem p = problem(m, n, k, DType::tf32);
    p.b.layout = b_layout;
    p.fast_accumulation = true;
    return to_string(rules_config(tf32_configs, p, 132, true));
  };
  EXPECT_EQ(pick_plain_tf32(1024, 1024, 16384), "128x256x32/g8/s4/w12/wt64x256");
  EXPECT_EQ(pick_plain_tf32(1024, 1024, 16384, Layout::col_major), "128x128x32/g8/s6/w12/wt64x128");
  // The rest of those runs (B row-major; the choice, then the fastest of the three): 768^2 x 8192
  // 128x128 (211 against 197 and 151), 512^2 x 32768 64x128 (230, as 128x128), 1024^2 x 4096
  // 64x128 (236 against 232 and 215).
  EXPECT_EQ(pick_plain_tf32(768, 768, 8192), "128x128x32/g8/s6/w12/wt64x128");
  EXPECT_EQ(pick_plain_tf32(512, 512, 32768), "64x128x32/g8/s8/w8/wt64x128");
  EXPECT_EQ(pick_plain_tf32(1024, 1024, 4096), "64x128x32/g8/s8/w8/wt64x128");
  // The tf32 suites' other shapes keep the choice the count of rows made, which ran them at
  // 1.02-1.06x cuBLAS.
  for (const auto& [m, n, k] : {std::tuple{4096, 4096, 4096},
                                {8192, 8192, 8192},
                                {16384, 16384, 16384},
                                {4096, 11008, 4096},
                                {4096, 4096, 11008}}) {
    EXPECT_EQ(pick_plain_tf32(m, n, k),
              to_string(rules_config(tf32_configs, problem(m, n, k, DType::tf32), 132, true)))
        << m << "x" << n << "x" << k;
  }
  // A bias: no split, and 128 whole tiles of 64x128 before 64 of 128x128.
  GemmProblem bias = problem(1024, 1024, 16384);
  bias.epilogue.bias = bias.a.data;
  EXPECT_EQ(to_string(rules_config(configs, bias, 132, true)), "64x128x64/g8/s8/w8/wt64x128");
}

TEST(RulesConfig, WithFp8BlockScalesTheSplitOfTwoConsumersCounts) {
  // A lone consumer's promotion by block factors is not hidden by a second consumer's wgmma
  // (heuristic.cpp: splits_round). The sm90 kernel's fp8 list; each choice below and the one the
  // rules made before were timed on the H200 (block scales, TFLOP/s).
  const std::vector<KernelConfig> configs =
      parsed_configs({"128x256x128/g8/s4/w12/wt64x256", "256x128x128/g8/s4/w12/wt128x128",
                      "128x128x128/g8/s6/w12/wt64x128", "128x64x128/g8/s8/w12/wt64x64",
                      "64x128x128/g8/s8/w8/wt64x128"});
  const auto pick = [&](int64_t m, int64_t n, int64_t k, ScaleMode mode = ScaleMode::block) {
    GemmProblem p = problem(m, n, k, DType::fp8_e4m3);
    p.scales.mode = mode;
    return to_string(rules_config(configs, p, 132, true));
  };
  // 56 tiles of 128x128 split in two before 112 whole tiles of 64x128 (625 against 502) or of
  // 128x64 (511), or 28 of 128x256 split four ways, whose tails store twice the sums (560).
  EXPECT_EQ(pick(128, 7168, 16384), "128x128x128/g8/s6/w12/wt64x128");
  // Per tensor the lone consumer keeps its rate, and 64x128 stays (673 against 650: fp8 v9).
  EXPECT_EQ(pick(128, 7168, 16384, ScaleMode::tensor), "64x128x128/g8/s8/w8/wt64x128");
  // 128x64 whole, 66 tiles in one round, before 64x128 split in two (393 against 293).
  EXPECT_EQ(pick(256, 2112, 7168), "128x64x128/g8/s8/w12/wt64x64");
  // 64 rows: 64x128, as before (330 against 128x128's 302).
  EXPECT_EQ(pick(64, 7168, 16384), "64x128x128/g8/s8/w8/wt64x128");
}

// With the 128x192 tile of fp16 and bf16 in the list (as the kernel's), mid sizes where 128x256
// leaves SMs idle and 128x128 gives some a second tile take one round of it. Each choice below ran
// faster on the H200 than the config of the shape's fastest earlier run, in one run
// (docs/history/results/h200-128x192-configs.csv).
TEST(RulesConfig, MidSizesTakeOneRoundOf128x192) {
  std::vector<KernelConfig> configs = sm90_configs();
  configs.push_back(*parse_kernel_config("128x192x64/g8/s4/w12/wt64x192"));
  const auto pick = [&](int64_t m, int64_t n, int64_t k) {
    return to_string(rules_config(configs, problem(m, n, k), 132, true));
  };
  // 96 tiles in one round, before 144 of 128x128 split after a round (548 against 470 TFLOP/s;
  // 532 against 469) and 72 of 128x256 in one round.
  EXPECT_EQ(pick(1536, 1536, 4096), "128x192x64/g8/s4/w12/wt64x192");
  EXPECT_EQ(pick(3072, 768, 4096), "128x192x64/g8/s4/w12/wt64x192");
  // Memory-bound by the rules' count: 96 tiles before 72 of 128x256 (584 against 487).
  EXPECT_EQ(pick(768, 4096, 2048), "128x192x64/g8/s4/w12/wt64x192");
  // Filled by the larger tile: 128x256 stays (4096^3: 128x192 ran 0.95x its rate).
  EXPECT_EQ(pick(4096, 4096, 4096), "128x256x64/g8/s4/w12/wt64x256");
  EXPECT_EQ(pick(2048, 2048, 2048), "128x256x64/g8/s4/w12/wt64x256");
}

TEST(RulesConfig, TheTraceSaysHowEachConfigWasWeighed) {
  const std::vector<KernelConfig> configs = sm90_configs();
  RulesTrace trace;
  // 1024 x 1024 x 16384: bound by the tensor cores; nothing lighter fills the SMs, so the lightest
  // busiest SM, 128x128 split in two, which does not fill them with whole tiles (64 of them).
  const KernelConfig chosen = rules_config(configs, problem(1024, 1024, 16384), 132, true, &trace);
  EXPECT_TRUE(trace.tensor_bound);
  ASSERT_FALSE(trace.weighed.empty());
  EXPECT_EQ(to_string(trace.weighed.front().config), "128x256x64/g8/s4/w12/wt64x256");
  const auto it = std::find_if(trace.weighed.begin(), trace.weighed.end(),
                               [&](const RulesWeighing& w) { return w.config == chosen; });
  ASSERT_NE(it, trace.weighed.end());
  EXPECT_EQ(it->programs, 64);
  EXPECT_FALSE(it->fills);
  for (const RulesWeighing& w : trace.weighed) EXPECT_GE(w.load, it->load) << to_string(w.config);
  EXPECT_NE(trace.rule.find("lightest busiest SM"), std::string::npos) << trace.rule;
  // 4096^3: the largest tile fills; memory's count, as for K = 2048.
  EXPECT_EQ(to_string(rules_config(configs, problem(4096, 4096, 4096), 132, true, &trace)),
            "128x256x64/g8/s4/w12/wt64x256");
  EXPECT_NE(trace.rule.find("the largest tile that fills"), std::string::npos) << trace.rule;
  rules_config(configs, problem(1024, 1024, 2048), 132, true, &trace);
  EXPECT_FALSE(trace.tensor_bound);
  // Lines off L2 lines: the cluster, said in the rule.
  GemmProblem off = problem(1000, 1000, 1000);
  EXPECT_EQ(to_string(rules_config(configs, off, 132, true, &trace)),
            "64x128x64/g8/s8/w8/wt64x128/c2");
  EXPECT_NE(trace.rule.find("cluster of 2"), std::string::npos) << trace.rule;
}

TEST(RulesConfig, OfOneTileTheDeeperStageThenMoreStagesForALongK) {
  // One tile three ways: stages of 128 values of K, or of 64, 8 or 12 deep.
  std::vector<KernelConfig> configs = parsed_configs(
      {"64x64x64/g8/s8/w8/wt64x64", "64x64x64/g8/s12/w8/wt64x64", "64x64x128/g8/s6/w8/wt64x64"});
  const auto pick = [&](int64_t m, int64_t n, int64_t k) {
    return to_string(rules_config(configs, problem(m, n, k), 132));
  };
  EXPECT_EQ(pick(512, 512, 512), "64x64x128/g8/s6/w8/wt64x64");
  EXPECT_EQ(pick(16, 4096, 4096), "64x64x128/g8/s6/w8/wt64x64");
  // Of equal stages, 12 deep for 32 K steps or more, 8 below.
  configs.pop_back();
  EXPECT_EQ(pick(16, 4096, 4096), "64x64x64/g8/s12/w8/wt64x64");
  EXPECT_EQ(pick(256, 256, 2048), "64x64x64/g8/s12/w8/wt64x64");
  EXPECT_EQ(pick(256, 256, 1984), "64x64x64/g8/s8/w8/wt64x64");
  EXPECT_EQ(pick(512, 512, 512), "64x64x64/g8/s8/w8/wt64x64");
}

TEST(RulesConfig, ClustersOfTwoWhere16BitLinesAreOffL2Lines) {
  std::vector<KernelConfig> configs =
      parsed_configs({"128x256x64/g8/s4/w12/wt64x256", "128x256x64/g8/s4/w12/wt64x256/c2",
                      "128x128x64/g8/s6/w12/wt64x128", "128x128x64/g8/s6/w12/wt64x128/c2",
                      "64x128x64/g8/s8/w8/wt64x128", "64x128x64/g8/s8/w8/wt64x128/c2",
                      "64x64x128/g8/s6/w8/wt64x64", "128x256x64/g8/s4/w12/wt64x256/c2x2",
                      "64x128x64/g8/s8/w8/wt64x128/c2x2"});
  const auto pick = [&](int64_t m, int64_t n, int64_t k, DType dtype, int64_t lda = 0,
                        int64_t ldb = 0) {
    GemmProblem p = problem(m, n, k, dtype);
    p.a.ld = lda;
    p.b.ld = ldb;
    return to_string(rules_config(configs, p, 132));
  };
  // Packed rows of 1000 and 2040 16-bit values: 2000 and 4080 bytes, 16-byte aligned, off L2
  // lines.
  EXPECT_EQ(pick(1000, 1000, 1000, DType::bf16), "64x128x64/g8/s8/w8/wt64x128/c2");
  EXPECT_EQ(pick(1000, 1000, 1000, DType::fp16), "64x128x64/g8/s8/w8/wt64x128/c2");
  EXPECT_EQ(pick(2040, 2040, 2040, DType::bf16), "128x256x64/g8/s4/w12/wt64x256/c2");
  // One operand off its lines is enough: A's here (lda 1544), then B's.
  EXPECT_EQ(pick(1536, 1536, 1536, DType::bf16, 1544), "128x256x64/g8/s4/w12/wt64x256/c2");
  EXPECT_EQ(pick(1536, 1536, 1536, DType::bf16, 0, 1544), "128x256x64/g8/s4/w12/wt64x256/c2");
  // On L2 lines, and for tf32, the unclustered tile.
  EXPECT_EQ(pick(1536, 1536, 1536, DType::bf16), "128x256x64/g8/s4/w12/wt64x256");
  EXPECT_EQ(pick(1536, 1536, 1536, DType::bf16, 1600, 1600), "128x256x64/g8/s4/w12/wt64x256");
  EXPECT_EQ(pick(1000, 1000, 1000, DType::tf32), "64x128x64/g8/s8/w8/wt64x128");
  // Six waves of tiles or more: the cluster of 2 x 2 (8192^3: 2048 tiles of 128x256, 16 waves on
  // 132 SMs; 5120^3: 800, 7 waves; 4096^3: 512, 4 waves).
  EXPECT_EQ(pick(8192, 8192, 8192, DType::bf16, 8200, 8200), "128x256x64/g8/s4/w12/wt64x256/c2x2");
  EXPECT_EQ(pick(5120, 5120, 5120, DType::fp16, 5128), "128x256x64/g8/s4/w12/wt64x256/c2x2");
  EXPECT_EQ(pick(4096, 4096, 4096, DType::bf16, 4104, 4104), "128x256x64/g8/s4/w12/wt64x256/c2");
  EXPECT_EQ(pick(8192, 8192, 8192, DType::bf16), "128x256x64/g8/s4/w12/wt64x256");
  // A tile without a cluster stays as it is.
  EXPECT_EQ(pick(512, 512, 512, DType::bf16, 520, 520), "64x64x128/g8/s6/w8/wt64x64");
}

TEST(RulesConfig, PingPongForAGeneralEpilogueOverAShortK) {
  std::vector<KernelConfig> configs =
      parsed_configs({"128x256x64/g8/s4/w12/wt64x256", "128x128x64/g8/s6/w12/wt64x128",
                      "64x64x128/g8/s6/w8/wt64x64", "128x128x64/g8/s5/w12/wt128x128/pingpong"});
  const auto pick = [&](int64_t m, int64_t n, int64_t k, bool bias) {
    GemmProblem p = problem(m, n, k);
    if (bias) p.epilogue.bias = p.d.data;
    return to_string(rules_config(configs, p, 132));
  };
  EXPECT_EQ(pick(8192, 8192, 1024, true), "128x128x64/g8/s5/w12/wt128x128/pingpong");
  EXPECT_EQ(pick(8192, 8192, 2048, true), "128x128x64/g8/s5/w12/wt128x128/pingpong");
  // alpha * AB alone, a longer K, or fewer than two 128x128 tiles per SM (2048^3: 256).
  EXPECT_EQ(pick(8192, 8192, 1024, false), "128x256x64/g8/s4/w12/wt64x256");
  EXPECT_EQ(pick(4096, 4096, 4096, true), "128x256x64/g8/s4/w12/wt64x256");
  EXPECT_EQ(pick(2048, 2048, 2048, true), "128x256x64/g8/s4/w12/wt64x256");
  // An activation or beta alone also counts.
  GemmProblem relu = problem(8192, 8192, 1024);
  relu.epilogue.activation = Activation::relu;
  EXPECT_EQ(to_string(rules_config(configs, relu, 132)), "128x128x64/g8/s5/w12/wt128x128/pingpong");
  GemmProblem scaled_c = problem(8192, 8192, 1024);
  scaled_c.epilogue.beta = 0.5f;
  EXPECT_EQ(to_string(rules_config(configs, scaled_c, 132)),
            "128x128x64/g8/s5/w12/wt128x128/pingpong");
}

TEST(Heuristic, ATunedTileIsTurnedWhereThatSavesAWave) {
  std::vector<KernelConfig> configs =
      parsed_configs({"128x256x64/g8/s4/w12/wt64x256", "128x256x64/g8/s4/w12/wt64x256/c2",
                      "256x128x64/g8/s4/w12/wt128x128", "256x128x64/g8/s4/w12/wt128x128/c2",
                      "128x64x64/g8/s8/w12/wt64x64"});
  const auto turn = [&](const char* tuned, int64_t m, int64_t n, int64_t k) {
    return to_string(
        turned_if_fewer_waves(*parse_kernel_config(tuned), configs, problem(m, n, k), 132));
  };
  // 544 tiles (5 waves) against 528 (4); the tuned GROUP_SIZE_M stays.
  EXPECT_EQ(turn("128x256x64/g16/s4/w12/wt64x256", 4095, 4097, 4093),
            "256x128x64/g16/s4/w12/wt128x128");
  EXPECT_EQ(turn("128x256x64/g8/s4/w12/wt64x256/c2", 4095, 4097, 4093),
            "256x128x64/g8/s4/w12/wt128x128/c2");
  // As many waves either way, or more turned: kept.
  EXPECT_EQ(turn("128x256x64/g16/s4/w12/wt64x256", 4096, 4096, 4096),
            "128x256x64/g16/s4/w12/wt64x256");
  EXPECT_EQ(turn("128x256x64/g16/s4/w12/wt64x256", 4097, 4095, 4093),
            "128x256x64/g16/s4/w12/wt64x256");
  // No turned twin in the list: kept.
  EXPECT_EQ(turn("128x64x64/g8/s8/w12/wt64x64", 1000, 4097, 1000), "128x64x64/g8/s8/w12/wt64x64");
}

TEST(RulesConfig, OfEqualTilesTheDeeperSlice) {
  // The sm80 kernel's 16-bit list: 128x256 at BLOCK_SIZE_K 32 (listed first, the kernel's
  // default, which every input type takes) and at 64.
  std::vector<KernelConfig> configs =
      parsed_configs({"128x256x32/g8/s4/w8/wt64x64", "128x128x32/g8/s4/w4/wt64x64",
                      "128x256x64/g8/s3/w8/wt64x64", "128x128x64/g8/s3/w4/wt64x64"});
  EXPECT_EQ(to_string(rules_config(configs, problem(4096, 4096, 4096), 132)),
            "128x256x64/g8/s3/w8/wt64x64");
  // Without the deep ones (a tf32 problem: can_implement leaves them out), the list as before.
  configs.resize(2);
  EXPECT_EQ(to_string(rules_config(configs, problem(4096, 4096, 4096), 132)),
            "128x256x32/g8/s4/w8/wt64x64");
}

TEST(TuningKey, EqualProblemsGiveEqualKeysAndHashes) {
  const TuningKey a = make_tuning_key(problem(4096, 4096, 4096), "auto", 0);
  const TuningKey b = make_tuning_key(problem(4096, 4096, 4096), "auto", 0);
  EXPECT_EQ(a, b);
  EXPECT_EQ(TuningKeyHash{}(a), TuningKeyHash{}(b));
  EXPECT_EQ(to_string(a), "4096x4096x4096 b1 bf16>bf16 row.row>row al7 ep0 auto");
}

TEST(TuningKey, LinesOffL2LinesSetBitsThreeAndFour) {
  // bf16 rows of 1000 values: 2000 bytes, 16-byte aligned, not a multiple of 128.
  EXPECT_EQ(to_string(make_tuning_key(problem(1000, 1000, 1000), "auto", 0)),
            "1000x1000x1000 b1 bf16>bf16 row.row>row al31 ep0 auto");
  GemmProblem p = problem(1000, 1024, 1024);
  EXPECT_EQ(make_tuning_key(p, "auto", 0).aligned, 7);
  p.a.ld = 1000 + 1024;
  EXPECT_EQ(make_tuning_key(p, "auto", 0).aligned, 7 | 8);
  p.a.ld = 0;
  p.b.ld = 1032;
  EXPECT_EQ(make_tuning_key(p, "auto", 0).aligned, 7 | 16);
  // Rows that are not even 16-byte aligned are off L2 lines too.
  p.b.ld = 1025;
  EXPECT_EQ(make_tuning_key(p, "auto", 0).aligned, 1 | 4 | 16);
}

TEST(TuningKey, EveryFieldChangesTheKey) {
  const GemmProblem base = problem(1024, 512, 256);
  const TuningKey k0 = make_tuning_key(base, "auto", 0);
  std::vector<GemmProblem> changed(10, base);
  changed[0].m = 1025;
  changed[1].k = 255;
  changed[2].batch_count = 2;
  changed[3].b.layout = Layout::col_major;
  changed[4].d.dtype = DType::fp32;
  changed[5].a.ld = 257;  // rows no longer 16-byte aligned
  changed[6].epilogue.bias = base.a.data;
  changed[7].epilogue.activation = Activation::gelu;
  changed[8].a.ld = 264;  // 16-byte aligned, off 128-byte lines
  changed[9].b.ld = 520;
  std::set<size_t> hashes = {TuningKeyHash{}(k0)};
  for (const GemmProblem& p : changed) {
    const TuningKey k = make_tuning_key(p, "auto", 0);
    EXPECT_NE(k, k0) << to_string(k);
    EXPECT_NE(to_string(k), to_string(k0));
    hashes.insert(TuningKeyHash{}(k));
  }
  EXPECT_EQ(hashes.size(), changed.size() + 1);
  EXPECT_NE(make_tuning_key(base, "sm80", 0), k0);
  EXPECT_NE(make_tuning_key(base, "auto", 1), k0);
}

TEST(TuningKey, Tf32sPromotedSumsPickOtherKernels) {
  // As the kernels see it (with_aligned_copies), plain tf32 runs the tensor cores' sums over all
  // of K and tf32x3's parts promote theirs (the sm90 kernel's Tf32Promoted): bit 7 tells them
  // apart, and plain tf32's keys stay those of the tuned table.
  const GemmProblem plain =
      with_aligned_copies(problem(1024, 512, 256, DType::tf32), AlignedCopyPlan{}, nullptr);
  EXPECT_EQ(make_tuning_key(plain, "auto", 0).epilogue & 128, 0);
  GemmProblem parts = plain;
  parts.fast_accumulation = false;
  EXPECT_EQ(make_tuning_key(parts, "auto", 0).epilogue & 128, 128);
}

TEST(TuningKey, TextFormReadsBack) {
  GemmProblem p = problem(300, 7, 4093, DType::tf32);
  p.a.layout = Layout::col_major;
  p.a.ld = 301;
  p.epilogue.beta = 1.0f;
  p.epilogue.activation = Activation::silu;
  const TuningKey key = make_tuning_key(p, "sm80", 0);
  const auto back = parse_tuning_key(to_string(key));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, key);
  EXPECT_FALSE(parse_tuning_key("4096x4096 b1 bf16>bf16 row.row>row al7 ep0 auto"));
  EXPECT_FALSE(parse_tuning_key("not a key"));
}

KernelChoices tensor_kernel() {
  KernelChoices k{"tc", {}, true, true, [](const KernelConfig& c, DType d) {
                    return int64_t(c.num_stages) * (c.block_m + c.block_n) * c.block_k *
                           dtype_size(d);
                  }};
  for (const char* text :
       {"128x256x32/g8/s4/w8", "128x128x32/g8/s4/w4", "32x64x32/g8/s5/w2", "256x256x64/g8/s4/w8"}) {
    k.configs.push_back(*parse_kernel_config(text));
  }
  return k;
}

std::vector<std::string> names(const std::vector<Candidate>& cs) {
  std::vector<std::string> out;
  for (const auto& c : cs) out.push_back(c.kernel + " " + to_string(c.config));
  return out;
}

TEST(ConfigSpace, TeachingAndCudaCoreKernelsArePrunedBesideATensorCoreKernel) {
  KernelChoices teaching{"naive", {*parse_kernel_config("16x16x1/g8/s1/w8")}, false, false, {}};
  KernelChoices simt{"warptile", {*parse_kernel_config("128x128x16/g8/s2/w8")}, false, true, {}};
  std::vector<std::string> pruned;
  const auto cs =
      config_space({teaching, simt, tensor_kernel()}, problem(4096, 4096, 4096), {}, &pruned);
  for (const auto& c : cs) EXPECT_EQ(c.kernel, "tc");
  ASSERT_EQ(pruned.size(), 3u);  // naive, warptile, and the 256x256x64 that needs 256 KB
  EXPECT_NE(pruned[0].find("teaching generation"), std::string::npos);
  EXPECT_NE(pruned[1].find("CUDA cores cannot pay"), std::string::npos);
  EXPECT_NE(pruned[2].find("shared memory"), std::string::npos);
  // Without a tensor-core kernel, warptile is what runs.
  const auto fp32 = config_space({teaching, simt}, problem(4096, 4096, 4096, DType::fp32), {});
  ASSERT_EQ(fp32.size(), 1u);
  EXPECT_EQ(fp32[0].kernel, "warptile");
}

TEST(ConfigSpace, SharedMemoryLimitComesFromTheDevice) {
  DeviceLimits small;
  small.shared_bytes_per_block = 48 * 1024;
  const auto cs = config_space({tensor_kernel()}, problem(4096, 4096, 4096), small);
  EXPECT_EQ(names(cs), std::vector<std::string>{"tc 32x64x32/g8/s5/w2"});
}

TEST(ConfigSpace, TilesFarLargerThanTheProblemArePruned) {
  std::vector<std::string> pruned;
  const auto cs = config_space({tensor_kernel()}, problem(16, 4096, 4096), {}, &pruned);
  EXPECT_EQ(names(cs), std::vector<std::string>{"tc 32x64x32/g8/s5/w2"});
  // ...but a kernel keeps its configs when none fits better.
  KernelChoices big{"big", {*parse_kernel_config("128x128x32/g8/s4/w4")}, true, true, {}};
  EXPECT_EQ(config_space({big}, problem(16, 16, 16), {}).size(), 1u);
}

TEST(Heuristic, NearestTunedShapeOfTheSameTypeAndRequest) {
  const TunedTable t = parse_tuned_table(R"({"gpu": "G", "entries": {
    "1024x1024x1024 b1 bf16>bf16 row.row>row al7 ep0 auto": {"kernel": "sm80", "config": "32x64x32/g8/s5/w2/wt32x32"},
    "4096x4096x4096 b1 bf16>bf16 row.row>row al7 ep0 auto": {"kernel": "sm80", "config": "128x128x32/g8/s4/w4/wt64x64"},
    "4096x4096x4096 b1 fp16>fp16 row.row>row al7 ep0 auto": {"kernel": "sm80", "config": "128x256x32/g8/s4/w8/wt64x64"},
    "4096x4096x4096 b1 tf32>fp32 row.row>row al7 ep0 auto": {"kernel": "sm80", "config": "256x128x32/g8/s4/w8/wt64x64"},
    "4096x4096x4096 b1 bf16>bf16 row.row>row al7 ep0 sm80": {"kernel": "sm80", "config": "64x32x32/g8/s5/w2/wt32x32"},
    "8192x8192x8192 b1 bf16>bf16 row.row>row al7 ep0 auto": {"kernel": "sm90", "config": "128x256x64/g16/s4/w12/wt64x256"}}})");
  ASSERT_EQ(t.rows.size(), 6u);
  EXPECT_EQ(t.gpu, "G");
  const auto pick = [&](const GemmProblem& p, const std::string& request = "auto") {
    const TunedRow* row = nearest_tuned(t, p, request);
    return row ? to_string(row->config) : std::string("none");
  };
  // Distance is the sum of |ln| of the ratios: 3000^3 is nearer 4096^3 than 1024^3.
  EXPECT_EQ(pick(problem(3000, 3000, 3000)), "128x128x32/g8/s4/w4/wt64x64");
  EXPECT_EQ(pick(problem(1100, 900, 1000)), "32x64x32/g8/s5/w2/wt32x32");
  // fp16 takes its own row, and stands in for bf16 where it has none (and the other way).
  EXPECT_EQ(pick(problem(4096, 4096, 4096, DType::fp16)), "128x256x32/g8/s4/w8/wt64x64");
  EXPECT_EQ(pick(problem(1024, 1024, 1024, DType::fp16)), "32x64x32/g8/s5/w2/wt32x32");
  // tf32 and fp32 use only rows of their own type.
  EXPECT_EQ(pick(problem(1024, 1024, 1024, DType::tf32)), "256x128x32/g8/s4/w8/wt64x64");
  EXPECT_EQ(pick(problem(1024, 1024, 1024, DType::fp32)), "none");
  // A named kernel uses the rows tuned for that request, and a row of its own wins a tie with an
  // "auto" row that it won...
  EXPECT_EQ(pick(problem(4096, 4096, 4096), "sm80"), "64x32x32/g8/s5/w2/wt32x32");
  // ...but a nearer "auto" row that it won comes first (the best config over every kernel was
  // its), of any type that has one: tf32's rows were all tuned for "auto".
  EXPECT_EQ(pick(problem(1024, 1024, 1024), "sm80"), "32x64x32/g8/s5/w2/wt32x32");
  EXPECT_EQ(pick(problem(1024, 1024, 1024, DType::tf32), "sm80"), "256x128x32/g8/s4/w8/wt64x64");
  // Not a row that another kernel won, nor any row for a kernel that won none.
  EXPECT_EQ(pick(problem(8192, 8192, 8192)), "128x256x64/g16/s4/w12/wt64x256");
  EXPECT_EQ(pick(problem(8192, 8192, 8192), "sm80"), "64x32x32/g8/s5/w2/wt32x32");
  EXPECT_EQ(pick(problem(8192, 8192, 8192, DType::tf32), "sm90"), "none");
  // Equally near (2048^3 is 5 ln 2 from both, output area included): the first in the table's
  // order.
  EXPECT_EQ(pick(problem(2048, 2048, 2048)), "32x64x32/g8/s5/w2/wt32x32");
}

TEST(Heuristic, TheOutputAreaCountsInTheDistance) {
  // 2048^3 is 3 ln 2 from each row in M, N and K; only 1024 x 4096 x 1024 has its output area
  // (as many tiles), and it wins.
  const TunedTable t = parse_tuned_table(R"({"gpu": "G", "entries": {
    "1024x1024x1024 b1 tf32>fp32 row.row>row al7 ep0 auto": {"kernel": "sm80", "config": "128x32x32/g8/s4/w4/wt32x32"},
    "1024x4096x1024 b1 tf32>fp32 row.row>row al7 ep0 auto": {"kernel": "sm80", "config": "128x128x32/g8/s3/w4/wt64x64"},
    "4096x4096x1024 b1 tf32>fp32 row.row>row al7 ep0 auto": {"kernel": "sm80", "config": "256x128x32/g8/s4/w8/wt64x64"}}})");
  ASSERT_EQ(t.rows.size(), 3u);
  const TunedRow* row = nearest_tuned(t, problem(2048, 2048, 2048, DType::tf32), "auto");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(to_string(row->config), "128x128x32/g8/s3/w4/wt64x64");
}

TEST(Heuristic, TableThatDoesNotParseIsEmpty) {
  EXPECT_TRUE(parse_tuned_table("{ nope").rows.empty());
  EXPECT_TRUE(parse_tuned_table(R"({"entries": {"bad key": {"config": "1x1x1"}}})").rows.empty());
}

class CacheFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tilegemm-cache-test-" +
            std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  TuneFile file(const std::string& version = "1.2.3", const std::string& gpu = "GPU X") const {
    return TuneFile((dir_ / cache_file_name(gpu, 132)).string(), gpu, 132, version);
  }
  void write(const std::string& text) const {
    std::filesystem::create_directories(dir_);
    std::ofstream(file().path()) << text;
  }
  std::filesystem::path dir_;
};

const CacheEntry kEntry{"sm80", *parse_kernel_config("128x128x32/g8/s4/w4/wt64x64"), 0.43};

TEST_F(CacheFiles, FileNameNamesTheGpuType) {
  EXPECT_EQ(cache_file_name("NVIDIA H100 80GB HBM3", 132), "nvidia_h100_80gb_hbm3-132sm.json");
}

TEST_F(CacheFiles, StoredEntriesReadBack) {
  ASSERT_TRUE(file().store("key one", kEntry).ok());
  ASSERT_TRUE(
      file().store("key two", {"warptile", *parse_kernel_config("64x64x16/g8/s2/w4"), 2.0}).ok());
  std::string warning;
  const auto entries = file().load(&warning);
  EXPECT_TRUE(warning.empty()) << warning;
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries.at("key one").kernel, "sm80");
  EXPECT_EQ(entries.at("key one").config, kEntry.config);
  EXPECT_DOUBLE_EQ(entries.at("key one").ms, 0.43);
  EXPECT_EQ(entries.at("key two").kernel, "warptile");
}

TEST_F(CacheFiles, ConcurrentWritersLoseNoEntry) {
  constexpr int kWriters = 8, kEach = 10;
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kEach; ++i) {
        EXPECT_TRUE(file().store("w" + std::to_string(w) + " i" + std::to_string(i), kEntry).ok());
      }
    });
  }
  for (auto& t : writers) t.join();
  EXPECT_EQ(file().load(nullptr).size(), size_t(kWriters * kEach));
}

TEST_F(CacheFiles, CorruptFileIsIgnoredWithAWarningAndRewritten) {
  write("{ this is not json");
  std::string warning;
  EXPECT_TRUE(file().load(&warning).empty());
  EXPECT_NE(warning.find("not valid JSON"), std::string::npos) << warning;
  ASSERT_TRUE(file().store("key", kEntry).ok());
  warning.clear();
  EXPECT_EQ(file().load(&warning).size(), 1u);
  EXPECT_TRUE(warning.empty()) << warning;
}

TEST_F(CacheFiles, AnotherVersionOrGpuIsIgnoredWithAWarning) {
  ASSERT_TRUE(file("1.2.3").store("key", kEntry).ok());
  std::string warning;
  EXPECT_TRUE(file("9.9.9").load(&warning).empty());
  EXPECT_NE(warning.find("written by tilegemm 1.2.3, this is 9.9.9"), std::string::npos) << warning;
  // A file of another GPU type that was copied over this one's name.
  std::filesystem::copy_file(file("1.2.3", "GPU X").path(), file("1.2.3", "GPU Y").path());
  warning.clear();
  EXPECT_TRUE(file("1.2.3", "GPU Y").load(&warning).empty());
  EXPECT_NE(warning.find("tuned for another GPU (GPU X)"), std::string::npos) << warning;
}

TEST_F(CacheFiles, MissingFileIsEmptyWithoutWarning) {
  std::string warning;
  EXPECT_TRUE(file().load(&warning).empty());
  EXPECT_TRUE(warning.empty());
}

}  // namespace
}  // namespace tilegemm::autotune
