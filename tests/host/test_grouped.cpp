// Grouped GEMMs (tilegemm.hpp: Groups) on the host: the persistent walk over the groups, the
// clamping of the sizes, the CPU backend against the float64 reference, and the validation, for
// the three forms (groups of rows, offsets and counts, and of K values, k_offsets), and
// gemm_grouped()'s problems of their own (ptr_array).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "bench_suites.hpp"
#include "cpu/reference.hpp"
#include "gemm_check.hpp"
#include "problem/groups.hpp"
#include "problem/scales.hpp"
#include "schedule/grouped_tiles.hpp"
#include "tune/tuning_key.hpp"

namespace tilegemm {
namespace {

using harness::WorkloadSpec;

// The int32 sizes a call reads, from each group's rows (k_offsets: K values).
std::vector<int32_t> sizes_of(GroupForm form, std::vector<int32_t> rows) {
  if (form == GroupForm::offsets || form == GroupForm::k_offsets) {
    for (size_t g = 1; g < rows.size(); ++g) rows[g] += rows[g - 1];
  }
  return rows;
}

TEST(GroupRowsOf, OffsetsAndCountsAreClampedIntoTheMatrix) {
  // offsets that go down leave the later group empty; past M they stop at M
  const std::vector<int32_t> offsets = {5, 3, 9, 40, -2};
  const int64_t m = 20;
  const int64_t expected[][2] = {{0, 5}, {5, 5}, {5, 9}, {9, 20}, {20, 20}};
  for (int64_t g = 0; g < 5; ++g) {
    const GroupRowRange r = group_rows(GroupForm::offsets, offsets.data(), g, m);
    EXPECT_EQ(r.batch, 0);
    EXPECT_EQ(r.begin, expected[g][0]) << g;
    EXPECT_EQ(r.end, expected[g][1]) << g;
  }
  const std::vector<int32_t> counts = {-3, 0, 7, 25};
  const int64_t rows[] = {0, 0, 7, 20};
  for (int64_t g = 0; g < 4; ++g) {
    const GroupRowRange r = group_rows(GroupForm::counts, counts.data(), g, m);
    EXPECT_EQ(r.batch, g);
    EXPECT_EQ(r.begin, 0);
    EXPECT_EQ(r.end, rows[g]);
  }
}

// Which matrices the groups share: the offsets form's A, C and D, the k_offsets form's A and B.
TEST(GroupEntries, EachFormSharesItsMatrices) {
  const auto expect = [](GroupForm form, int64_t a, int64_t b, int64_t c_d) {
    const GroupEntries e = entries_in_memory(form, 6);
    EXPECT_EQ(e.a, a) << to_string(form);
    EXPECT_EQ(e.b, b) << to_string(form);
    EXPECT_EQ(e.c_d, c_d) << to_string(form);
  };
  expect(GroupForm::none, 6, 6, 6);
  expect(GroupForm::offsets, 1, 6, 1);
  expect(GroupForm::counts, 6, 6, 6);
  expect(GroupForm::k_offsets, 1, 1, 6);
  expect(GroupForm::ptr_array, 1, 1, 1);
}

TEST(GroupKOf, KOffsetsAreClampedIntoKAndTheOtherFormsTakeAllOfK) {
  const std::vector<int32_t> offsets = {5, 3, 9, 40, -2};
  const int64_t k = 20;
  const int64_t expected[][2] = {{0, 5}, {5, 5}, {5, 9}, {9, 20}, {20, 20}};
  for (int64_t g = 0; g < 5; ++g) {
    const GroupKRange r = group_k(GroupForm::k_offsets, offsets.data(), g, k);
    EXPECT_EQ(r.begin, expected[g][0]) << g;
    EXPECT_EQ(r.end, expected[g][1]) << g;
    // k_offsets: every row of the group's own batch entry of C and D
    const GroupRowRange rows = group_rows(GroupForm::k_offsets, offsets.data(), g, 7);
    EXPECT_EQ(rows.batch, g);
    EXPECT_EQ(rows.begin, 0);
    EXPECT_EQ(rows.end, 7);
    for (GroupForm form : {GroupForm::offsets, GroupForm::counts}) {
      const GroupKRange all = group_k(form, offsets.data(), g, k);
      EXPECT_EQ(all.begin, 0);
      EXPECT_EQ(all.end, k);
    }
  }
}

// Every program of grids of several sizes walks the grouped tiles: together they take every tile
// of every group exactly once, each program's items in the dense walk's order (p, p + P, ...),
// and within a group the tiles come in grouped order.
TEST(GroupedTilesWalk, EveryProgramTakesItsItemsAndTogetherEveryTileOnce) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const GroupForm form = trial % 3 == 0   ? GroupForm::offsets
                           : trial % 3 == 1 ? GroupForm::counts
                                            : GroupForm::k_offsets;
    const int groups = 1 + int(rng() % 12);
    const int block_m = trial % 4 ? 128 : 64, block_n = 128;
    const int64_t n = 1 + int64_t(rng() % 700), m = int64_t(rng() % 900);
    const int64_t k = 1 + int64_t(rng() % 3000);
    std::vector<int32_t> rows(groups);  // k_offsets: each group's K values
    for (auto& r : rows) r = rng() % 4 == 0 ? 0 : int32_t(rng() % (m / 2 + 2));
    if (form == GroupForm::k_offsets) {
      int64_t sum = 0;
      for (auto& r : rows) r = int32_t(std::min<int64_t>(rng() % (k / 3 + 2), k - sum)), sum += r;
    } else if (form == GroupForm::offsets) {
      int64_t sum = 0;
      for (auto& r : rows) r = int32_t(std::min<int64_t>(r, m - sum)), sum += r;
    } else {
      for (auto& r : rows) r = int32_t(std::min<int64_t>(r, m));
    }
    const std::vector<int32_t> sizes = sizes_of(form, rows);
    const GroupedTiles tiles{form,    sizes.data(),           groups, m, n, block_m,
                             block_n, int32_t(1 + rng() % 8), k};
    // the rows of D a group's tiles cover
    const auto rows_of = [&](int g) { return form == GroupForm::k_offsets ? m : rows[g]; };
    std::map<std::tuple<int, int64_t, int64_t>, int> seen;
    int64_t expected = 0;
    for (int g = 0; g < groups; ++g) expected += cdiv(rows_of(g), block_m) * cdiv(n, block_n);
    EXPECT_LE(expected, grouped_items_bound(form, groups, m, n, block_m, block_n));
    for (int programs : {1, 3, 132}) {
      seen.clear();
      for (int p = 0; p < programs; ++p) {
        GroupCursor cursor;
        for (int item = p; tiles.seek(cursor, item); item += programs) {
          const GroupedTile t = tiles.tile(cursor, item);
          ASSERT_EQ(t.group, cursor.group);
          ASSERT_LT(t.tile.pid_m * block_m, rows_of(t.group));
          ASSERT_LT(t.tile.pid_n * block_n, n);
          ++seen[{t.group, t.tile.pid_m, t.tile.pid_n}];
        }
      }
      EXPECT_EQ(int64_t(seen.size()), expected) << "trial " << trial << " programs " << programs;
      for (const auto& [tile, count] : seen) EXPECT_EQ(count, 1);
    }
    // Group g's rows (k_offsets: K values) begin where those of the groups before it end
    // (offsets) or at 0.
    GroupCursor cursor;
    for (int item = 0; tiles.seek(cursor, item); ++item) {
      const GroupedTile t = tiles.tile(cursor, item);
      int64_t before = 0;
      for (int g = 0; g < t.group; ++g) before += rows[g];
      EXPECT_EQ(t.rows.begin, form == GroupForm::offsets ? before : 0);
      EXPECT_EQ(t.rows.rows(), rows_of(t.group));
      EXPECT_EQ(t.rows.batch, form == GroupForm::offsets ? 0 : t.group);
      EXPECT_EQ(t.k.begin, form == GroupForm::k_offsets ? before : 0);
      EXPECT_EQ(t.k.size(), form == GroupForm::k_offsets ? rows[t.group] : k);
    }
  }
}

// The ptr_array form: each problem its own M, N and K (0 among them), its tiles its own
// cdiv(M, BM) x cdiv(N, BN), each tile of every problem taken exactly once by the programs
// together.
TEST(GroupedTilesWalk, PtrArrayProblemsEachHaveTheirOwnSizes) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 100; ++trial) {
    const int groups = 1 + int(rng() % 12);
    const int block_m = trial % 2 ? 128 : 64, block_n = trial % 3 ? 128 : 256;
    std::vector<int32_t> sizes;  // M, N, K of each
    int64_t expected = 0;
    for (int g = 0; g < groups; ++g) {
      const int32_t m = rng() % 5 == 0 ? 0 : int32_t(rng() % 900);
      const int32_t n = rng() % 7 == 0 ? 0 : int32_t(rng() % 700);
      const int32_t k = rng() % 6 == 0 ? 0 : int32_t(rng() % 3000);
      sizes.insert(sizes.end(), {m, n, k});
      expected += cdiv(m, block_m) * cdiv(n, block_n);
    }
    const GroupedTiles tiles{GroupForm::ptr_array,
                             sizes.data(),
                             groups,
                             0,
                             0,
                             block_m,
                             block_n,
                             int32_t(1 + rng() % 8),
                             0};
    for (int programs : {1, 5, 132}) {
      std::map<std::tuple<int, int64_t, int64_t>, int> seen;
      for (int p = 0; p < programs; ++p) {
        GroupCursor cursor;
        for (int item = p; tiles.seek(cursor, item); item += programs) {
          const GroupedTile t = tiles.tile(cursor, item);
          const int32_t* own = &sizes[size_t(3 * t.group)];
          ASSERT_EQ(t.rows.batch, 0);
          ASSERT_EQ(t.rows.begin, 0);
          ASSERT_EQ(t.rows.end, own[0]);
          ASSERT_EQ(t.n, own[1]);
          ASSERT_EQ(t.k.begin, 0);
          ASSERT_EQ(t.k.end, own[2]);
          ASSERT_LT(t.tile.pid_m * block_m, own[0]);
          ASSERT_LT(t.tile.pid_n * block_n, own[1]);
          ++seen[{t.group, t.tile.pid_m, t.tile.pid_n}];
        }
      }
      EXPECT_EQ(int64_t(seen.size()), expected) << "trial " << trial << " programs " << programs;
      for (const auto& [tile, count] : seen) EXPECT_EQ(count, 1);
    }
  }
}

GemmOptions cpu() {
  GemmOptions o;
  o.backend = Backend::cpu;
  o.config = parse_kernel_config("32x48x16/g3");
  return o;
}

WorkloadSpec grouped_spec(GroupForm form, std::vector<int32_t> rows, int64_t m, int64_t n,
                          int64_t k, uint64_t seed) {
  WorkloadSpec s = testing::spec_of(m, n, k, DType::bf16);
  s.groups = form;
  s.group_rows = std::move(rows);
  s.batch_count = int64_t(s.group_rows.size());
  s.seed = seed;
  return s;
}

// The CPU backend runs every form, layout and the whole epilogue (a bias per group) from a
// NaN-poisoned D: every taken row right, every other row left NaN (Workload::check). The groups'
// sizes are random with an empty group among them; in the k_offsets form (weight gradients) they
// are K values that end anywhere (an empty group's D: the epilogue alone), the last 10 of K in
// no group, left unread.
TEST(GroupedCpu, EveryFormLayoutAndEpilogue) {
  uint64_t seed = 1;
  for (GroupForm form : {GroupForm::offsets, GroupForm::counts, GroupForm::k_offsets})
    for (Layout la : {Layout::row_major, Layout::col_major})
      for (Layout lb : {Layout::row_major, Layout::col_major})
        for (int epilogue = 0; epilogue < 3; ++epilogue) {
          const int64_t m = form == GroupForm::offsets ? 100 : 37;
          const int64_t k = form == GroupForm::k_offsets ? 100 : 33;
          const int64_t extent = form == GroupForm::counts ? m : 90;  // offsets: rows; k: K
          std::vector<int32_t> sizes = harness::random_group_rows(form, 5, extent, seed);
          sizes[seed % 5] = 0;  // an empty group
          WorkloadSpec s = grouped_spec(form, sizes, m, 45, k, seed++);
          s.layout_a = la;
          s.layout_b = lb;
          s.output_dtype = epilogue == 2 ? DType::fp32 : DType::bf16;
          if (epilogue > 0) {
            s.alpha = 0.5f;
            s.beta = -1.25f;
            s.bias = true;
            s.activation = epilogue == 1 ? Activation::gelu : Activation::silu;
          }
          testing::expect_matches_reference(s, cpu());
        }
}

// fp8 groups with scales (tilegemm.hpp: Scales): B's scales one set per group, A's one per group
// in the counts form and one for A's M rows in the offsets form, in every mode; the CPU backend
// against the float64 reference, whose own arithmetic finds each group's set.
TEST(GroupedScales, EachGroupReadsItsOwnSet) {
  GemmProblem p;
  p.m = 300;
  p.n = 200;
  p.k = 260;  // 3 blocks of K
  p.batch_count = 5;
  for (GroupForm form : {GroupForm::offsets, GroupForm::counts}) {
    p.groups.form = form;
    const int64_t a_sets = form == GroupForm::counts ? 5 : 1;
    p.scales.mode = ScaleMode::tensor;
    EXPECT_EQ(scale_count_a(p), a_sets);
    EXPECT_EQ(scale_count_b(p), 5);
    p.scales.mode = ScaleMode::channel;
    EXPECT_EQ(scale_count_a(p), 300 * a_sets);
    EXPECT_EQ(scale_count_b(p), 200 * 5);
    p.scales.mode = ScaleMode::block;
    EXPECT_EQ(scale_count_a(p), 300 * 3 * a_sets);
    EXPECT_EQ(scale_count_b(p), 2 * 3 * 5);
    // group 3's set starts three sets in; its block (kb 2, rows of B's column block 1) is the
    // set's entry 1 * 3 + 2
    const ScaleView v = scale_view(p).group(form, 3);
    EXPECT_EQ(v.b - p.scales.b, 3 * 6);
    EXPECT_EQ(v.a - p.scales.a, form == GroupForm::counts ? 3 * 900 : 0);
  }
  p.groups.form = GroupForm::none;  // a dense batch shares one set
  EXPECT_EQ(scale_count_a(p), 300 * 3);
  EXPECT_EQ(scale_count_b(p), 2 * 3);
}

TEST(GroupedCpu, Fp8EveryFormAndScaleMode) {
  uint64_t seed = 90;
  for (GroupForm form : {GroupForm::offsets, GroupForm::counts})
    for (ScaleMode mode :
         {ScaleMode::none, ScaleMode::tensor, ScaleMode::channel, ScaleMode::block}) {
      const int64_t m = form == GroupForm::offsets ? 150 : 40;
      std::vector<int32_t> sizes = harness::random_group_rows(form, 4, m, seed);
      sizes[seed % 4] = 0;  // an empty group
      WorkloadSpec s = grouped_spec(form, sizes, m, 150, 300, seed++);
      s.input_dtype = DType::fp8_e4m3;
      s.output_dtype = DType::bf16;
      s.layout_b = Layout::col_major;
      s.scale_mode = mode;
      testing::expect_matches_reference(s, cpu());
    }
}

// One group of all of K is the dense GEMM, and a group's product is the dense GEMM of its slice.
TEST(GroupedReference, KOffsetsGroupsAreTheirSlicesByHand) {
  // A 2 x 3, B 3 x 2 (row-major fp32); group 0 takes K value 0, group 1 K values 1 and 2
  const float a[] = {1, 2, 3, 4, 5, 6};
  const float b[] = {1, 2, 3, 4, 5, 6};
  const float bias[] = {10, 20, /* group 1 */ 30, 40};
  float d[8];
  const int32_t offsets[] = {1, 3};
  GemmProblem p;
  p.m = 2;
  p.n = 2;
  p.k = 3;
  p.batch_count = 2;
  p.a = {a, DType::fp32};
  p.b = {b, DType::fp32};
  p.d = {d, DType::fp32, Layout::row_major, 0, 4};
  p.epilogue.bias = bias;
  p.epilogue.bias_batch_stride = 2;
  p.groups = {GroupForm::k_offsets, offsets};
  ASSERT_TRUE(validate(p).ok()) << validate(p).message;
  const std::vector<double> ref = reference::grouped_gemm(p, {1, 3});
  // group 0: [1; 4] x [1 2]; group 1: [2 3; 5 6] x [3 4; 5 6]
  const std::vector<double> expected = {1 + 10,  2 + 20,  4 + 10,  8 + 20,
                                        21 + 30, 26 + 40, 45 + 30, 56 + 40};
  EXPECT_EQ(ref, expected);
}

TEST(GroupedCpu, OneGroupOfAllRowsIsTheDenseGemm) {
  WorkloadSpec s = grouped_spec(GroupForm::offsets, {77}, 77, 64, 40, 3);
  testing::expect_matches_reference(s, cpu());
  WorkloadSpec c = grouped_spec(GroupForm::counts, {77}, 77, 64, 40, 3);
  testing::expect_matches_reference(c, cpu());
}

// The reference itself: a one-row group's values computed by hand, with a bias per group and
// with scales per group.
TEST(GroupedReference, OneRowGroupByHand) {
  // offsets form: groups of 1 and 2 rows of A (3 x 2), B per group (2 x 2), row-major fp32
  const float a[] = {1, 2, 3, 4, 5, 6};
  const float b[] = {1, 0, 0, 1, /* group 1 */ 2, 0, 0, 3};
  const float bias[] = {10, 20, /* group 1 */ 30, 40};
  float d[6];
  const int32_t offsets[] = {1, 3};
  GemmProblem p;
  p.m = 3;
  p.n = 2;
  p.k = 2;
  p.batch_count = 2;
  p.a = {a, DType::fp32};
  p.b = {b, DType::fp32, Layout::row_major, 0, 4};
  p.d = {d, DType::fp32};
  p.epilogue.bias = bias;
  p.epilogue.bias_batch_stride = 2;
  p.groups = {GroupForm::offsets, offsets};
  const std::vector<double> ref = reference::grouped_gemm(p, {1, 3});
  const std::vector<double> expected = {1 + 10, 2 + 20, 6 + 30, 12 + 40, 10 + 30, 18 + 40};
  EXPECT_EQ(ref, expected);
  // Scales per tensor (fp8's, here on fp32 values): A's one for the rows all groups share, B's one
  // per group, group 1's multiplying group 1's rows alone.
  const float scale_a[] = {0.5f}, scale_b[] = {2.0f, 4.0f};
  p.epilogue.bias = nullptr;
  p.scales = {ScaleMode::tensor, scale_a, scale_b};
  const std::vector<double> scaled = {1, 2, 6 * 2, 12 * 2, 10 * 2, 18 * 2};
  EXPECT_EQ(reference::grouped_gemm(p, {1, 3}), scaled);
}

TEST(GroupedValidation, EveryRuleNamesTheArgument) {
  const int32_t sizes[] = {2, 4};
  const auto base = [&] {
    GemmProblem p;
    p.m = 4;
    p.n = 8;
    p.k = 8;
    p.batch_count = 2;
    p.a = {reinterpret_cast<void*>(1 << 20), DType::bf16};
    p.b = {reinterpret_cast<void*>(2 << 20), DType::bf16, Layout::row_major, 0, 64};
    p.d = {reinterpret_cast<void*>(3 << 20), DType::bf16};
    p.groups = {GroupForm::offsets, sizes};
    return p;
  };
  EXPECT_TRUE(validate(base()).ok()) << validate(base()).message;
  const auto expect = [](const GemmProblem& p, const char* text) {
    const Status s = validate(p);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message.find(text), std::string::npos) << s.message;
  };
  GemmProblem p = base();
  p.groups.sizes = nullptr;
  expect(p, "groups.sizes is null but groups.form is offsets");
  p = base();
  p.groups.form = GroupForm::none;
  expect(p, "groups.sizes must be null when groups.form is none");
  p = base();
  p.groups.form = GroupForm(7);
  expect(p, "groups.form is not a GroupForm (value 7)");
  p = base();
  p.a.batch_stride = 32;
  expect(p, "a.batch_stride must be 0 when groups.form is offsets");
  p = base();
  p.d.batch_stride = 32;
  expect(p, "d.batch_stride must be 0 when groups.form is offsets");
  p = base();
  p.epilogue.bias_batch_stride = -1;
  expect(p, "epilogue.bias_batch_stride must be >= 0");
  p = base();
  p.groups.form = GroupForm::k_offsets;  // the groups share A and B, each has its D
  p.b.batch_stride = 0;
  p.d.batch_stride = 32;
  EXPECT_TRUE(validate(p).ok()) << validate(p).message;
  p.a.batch_stride = 32;
  expect(p, "a.batch_stride must be 0 when groups.form is k_offsets");
  p.a.batch_stride = 0;
  p.b.batch_stride = 64;
  expect(p, "b.batch_stride must be 0 when groups.form is k_offsets");
  p = base();
  p.a.dtype = p.b.dtype = DType::fp8_e4m3;
  p.scales = {ScaleMode::tensor, reinterpret_cast<float*>(4 << 20),
              reinterpret_cast<float*>(5 << 20)};
  EXPECT_TRUE(validate(p).ok()) << validate(p).message;
  // B's scales, one per group, must not overlap D (the second group's lies 4 bytes in)
  p.scales.b = static_cast<const float*>(p.d.data) - 1;
  expect(p, "d overlaps scales.b");
  p.scales.b = reinterpret_cast<float*>(5 << 20);
  p.groups.form = GroupForm::k_offsets;
  p.b.batch_stride = 0;
  p.d.batch_stride = 32;
  expect(p,
         "groups.form k_offsets with scales.mode tensor: fp8 scales are taken by the rows forms");
  p = base();
  p.groups.sizes = reinterpret_cast<const int32_t*>(p.d.data);
  expect(p, "d overlaps groups.sizes");
  // counts: each group a batch entry of its own, whose D entries must not overlap
  p = base();
  p.groups.form = GroupForm::counts;
  expect(p, "d.batch_stride = 0 makes batch entries of D overlap");
  p.a.batch_stride = 32;
  p.d.batch_stride = 32;
  EXPECT_TRUE(validate(p).ok()) << validate(p).message;
}

// gemm_grouped()'s problems (the ptr_array form) of random sizes, empty ones among them (no
// rows, no columns, no K: the epilogue alone), each with its own epilogue, on the CPU backend.
std::vector<WorkloadSpec> random_problems(int count, Layout la, Layout lb, DType out,
                                          uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<WorkloadSpec> specs;
  for (int g = 0; g < count; ++g) {
    const int64_t m = g == 1 ? 0 : 1 + int64_t(rng() % 70),
                  n = g == 2 ? 0 : 1 + int64_t(rng() % 60);
    const int64_t k = g == 3 ? 0 : 1 + int64_t(rng() % 90);
    WorkloadSpec s = testing::spec_of(m, n, k, DType::bf16);
    s.layout_a = la;
    s.layout_b = lb;
    s.output_dtype = out;
    s.seed = seed * 100 + uint64_t(g);
    if (g % 2 == 1) {  // every other problem the whole epilogue, each its own
      s.alpha = 0.25f * float(1 + g % 5);
      s.beta = -0.5f * float(1 + g % 3);
      s.bias = true;
      s.activation = g % 4 == 1 ? Activation::gelu : Activation::relu;
    }
    specs.push_back(s);
  }
  return specs;
}

TEST(GroupedProblemsCpu, EachProblemItsOwnSizesAndEpilogue) {
  uint64_t seed = 1;
  for (Layout la : {Layout::row_major, Layout::col_major})
    for (Layout lb : {Layout::row_major, Layout::col_major})
      for (DType out : {DType::bf16, DType::fp32}) {
        GemmReport report;
        testing::expect_problems_match_reference(random_problems(7, la, lb, out, seed++), cpu(),
                                                 &report);
        EXPECT_EQ(report.backend, Backend::cpu);
      }
  // No problems: nothing to do.
  EXPECT_TRUE(gemm_grouped({}, cpu()).ok());
}

// Every rule names the problem that breaks it, and on any error no problem's D is written.
TEST(GroupedProblemsValidation, EveryRuleNamesTheProblemAndNothingIsWritten) {
  std::vector<std::unique_ptr<harness::Workload>> w(3);
  for (int g = 0; g < 3; ++g) {
    WorkloadSpec s = testing::spec_of(8 + g, 16, 24, DType::bf16);
    s.seed = uint64_t(g + 1);
    ASSERT_TRUE(harness::Workload::create(s, false, &w[size_t(g)]).ok());
  }
  const auto base = [&] {
    std::vector<GemmProblem> problems;
    for (const auto& x : w) problems.push_back(x->problem());
    return problems;
  };
  const auto expect = [&](const std::vector<GemmProblem>& problems, const char* text) {
    const Status s = gemm_grouped(problems, cpu());
    EXPECT_FALSE(s.ok()) << text;
    EXPECT_NE(s.message.find(text), std::string::npos) << s.message;
    size_t bytes = 0;
    EXPECT_FALSE(grouped_workspace_size(problems, cpu(), &bytes).ok()) << text;
  };
  std::vector<GemmProblem> p = base();
  p[2].a.ld = 3;
  expect(p, "problems[2].a.ld");
  p = base();
  p[1].batch_count = 2;
  p[1].d.batch_stride = 9 * 16;
  expect(p, "problems[1].batch_count must be 1");
  p = base();
  p[1].a.dtype = p[1].b.dtype = DType::fp16;
  expect(p, "problems[1].a.dtype is fp16 but problems[0].a.dtype is bf16");
  p = base();
  p[2].a.layout = Layout::col_major;
  p[2].a.ld = 0;
  expect(p, "problems[2].a.layout is col but problems[0].a.layout is row");
  p = base();
  p[2].m = 1;  // a single row is both row- and column-major
  p[2].a.layout = Layout::col_major;
  p[2].a.ld = 1;
  size_t bytes = 0;
  EXPECT_TRUE(grouped_workspace_size(p, cpu(), &bytes).ok());
  p = base();
  p[1].stream = reinterpret_cast<void*>(64);
  expect(p, "problems[1].stream differs");
  p = base();
  p[2].d.data = static_cast<char*>(p[0].d.data) + 16;
  expect(p, "problems[2].d overlaps problems[0].d");
  p = base();
  p[1].groups = {GroupForm::ptr_array, nullptr};
  expect(p, "problems[1].groups.form ptr_array is gemm_grouped()'s form");
  p = base();
  p[1].groups = {GroupForm::counts, static_cast<const int32_t*>(p[0].a.data)};
  expect(p, "problems[1].groups.form must be none");
  // A GemmProblem takes no ptr_array groups.
  GemmProblem one = base()[0];
  one.groups = {GroupForm::ptr_array, nullptr};
  EXPECT_NE(gemm(one, cpu()).message.find("gemm_grouped()'s form"), std::string::npos);
  for (const auto& x : w) {
    ASSERT_TRUE(x->fetch_output().ok());
    EXPECT_TRUE(std::isinf(x->check(1e12))) << "D was written: expected NaN everywhere";
  }
  EXPECT_TRUE(gemm_grouped(base(), cpu()).ok());
  for (const auto& x : w) EXPECT_LE(x->check(1e12), 1e-2);
}

TEST(GroupedTuningKey, TheFormIsPartOfTheKeyAndItsText) {
  const int32_t sizes[] = {2, 4};
  GemmProblem p;
  p.m = 4;
  p.n = 8;
  p.k = 8;
  p.batch_count = 2;
  p.a.dtype = p.b.dtype = p.d.dtype = DType::bf16;
  const autotune::TuningKey dense = autotune::make_tuning_key(p, "auto", 0);
  p.groups = {GroupForm::offsets, sizes};
  const autotune::TuningKey offsets = autotune::make_tuning_key(p, "auto", 0);
  p.groups.form = GroupForm::counts;
  const autotune::TuningKey counts = autotune::make_tuning_key(p, "auto", 0);
  p.groups.form = GroupForm::k_offsets;
  const autotune::TuningKey k_offsets = autotune::make_tuning_key(p, "auto", 0);
  EXPECT_FALSE(dense == offsets);
  EXPECT_FALSE(offsets == counts);
  EXPECT_FALSE(counts == k_offsets);
  for (const auto& key : {dense, offsets, counts, k_offsets}) {
    const auto back = autotune::parse_tuning_key(autotune::to_string(key));
    ASSERT_TRUE(back.has_value()) << autotune::to_string(key);
    EXPECT_TRUE(*back == key) << autotune::to_string(key);
  }
  EXPECT_NE(autotune::to_string(offsets).find(" go2 "), std::string::npos);
  EXPECT_NE(autotune::to_string(counts).find(" gc2 "), std::string::npos);
}

TEST(MoeSuite, CasesAreTheIssuesShapes) {
  const std::vector<cli::MoeCase> cases = cli::moe_cases();
  ASSERT_EQ(cases.size(), 7u);
  for (const auto& c : cases) {
    int64_t sum = 0, least = INT64_MAX, most = 0;
    for (int32_t r : c.rows)
      sum += r, least = std::min<int64_t>(least, r), most = std::max<int64_t>(most, r);
    if (c.form == GroupForm::offsets) EXPECT_EQ(sum, c.m) << c.name;
    if (c.form == GroupForm::counts) EXPECT_LE(most, c.m) << c.name;
    if (c.form == GroupForm::k_offsets) EXPECT_EQ(sum, c.k) << c.name;
    if (c.name == "skewed") {
      EXPECT_EQ(c.rows.size(), 16u);
      EXPECT_EQ(sum, 15232);
      EXPECT_EQ(least, 64);
      EXPECT_EQ(most, 4096);
    }
    if (c.name == "decode") {
      EXPECT_EQ(c.rows.size(), 32u);
      EXPECT_GE(least, 16);
      EXPECT_LE(most, 95);
    }
  }
}

}  // namespace
}  // namespace tilegemm
