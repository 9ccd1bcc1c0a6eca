// The tilegemm command as a user runs it: golden output of `explain`, and error messages.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

#include "tilegemm/tilegemm.hpp"

namespace {

struct Result {
  int exit_code;
  std::string output;  // stdout and stderr together
};

Result run_cli(const std::string& args) {
  const std::string cmd = std::string(TILEGEMM_CLI_PATH) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

struct ErrorCase {
  const char* args;
  const char* message;
  const char* or_message = nullptr;  // another wording that will do (another CLI11's)
};

// Each command fails with exit status 2 and a message containing the expected text. A build
// without the GPU backend refuses `bench` and `tune` whatever their arguments, and says why.
void expect_errors(std::initializer_list<ErrorCase> cases) {
  for (const auto& c : cases) {
    const Result r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    const std::string args = c.args;
    const bool gpu_only = args.starts_with("bench") || args.starts_with("tune");
    const char* message = !TILEGEMM_WITH_CUDA && gpu_only
                              ? "needs the GPU backend, which this build has not"
                              : c.message;
    const bool named = r.output.find(message) != std::string::npos ||
                       (c.or_message && r.output.find(c.or_message) != std::string::npos);
    EXPECT_TRUE(named) << c.args << "\n" << r.output;
  }
}

std::string golden(const std::string& name) {
  std::ifstream in(std::string(TILEGEMM_GOLDEN_DIR) + "/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(CliExplain, SeedExamplePid60MatchesGolden) {
  const Result r = run_cli("explain 1024 768 128 --block 128x64x32 --group 2 --pid 60 --wave 8");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, golden("explain_1024_768_128_pid60.txt"));
  EXPECT_NE(r.output.find("pid_m            = 4 + (60 % 24) % 2"), std::string::npos);
}

TEST(CliExplain, SeedExampleEightByEightMatchesGolden) {
  const Result r = run_cli("explain 8 8 6 --block 2x2x2 --group 2 --pid 15 --wave 4");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, golden("explain_8_8_6_pid15.txt"));
}

TEST(CliExplain, NamesTheGroupSizeWithTheFewestBytesPerWave) {
  // 128x256 tiles at 4096^3 on 132 SMs: 16 x 9 blocks per wave with GROUP_SIZE_M 16, against
  // 12 x 16 with the 8 asked for.
  const Result r = run_cli("explain 4096 4096 4096 --block 128x256x64 --group 8 --wave 132");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("grouped  12 / 16"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("fewest bytes in the first wave: GROUP_SIZE_M=16"), std::string::npos)
      << r.output;
}

TEST(CliExplain, SaysHowThePersistentKernelSplitsAPartialLastRound) {
  // 512 tiles of 128x256 on 132 SMs: 116 in the last round, 172 K steps of 64.
  Result r = run_cli("explain 4096 4096 11008 --block 128x256x64 --group 16 --wave 132");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("last round: 116 tiles for 132 programs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("heads: K steps 0..157 of 172 on programs 16..131"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("tails: K steps 158..171 on programs 0..15, 8 tiles each"),
            std::string::npos)
      << r.output;
  // The same round over 64 K steps is not split; a grid of whole rounds has no last round.
  r = run_cli("explain 4096 4096 4096 --block 128x256x64 --group 16 --wave 132");
  EXPECT_NE(r.output.find("not split: over 64 K steps"), std::string::npos) << r.output;
  r = run_cli("explain 4224 4096 4096 --block 128x256x64 --group 16 --wave 132");
  EXPECT_EQ(r.output.find("last round"), std::string::npos) << r.output;
  // Under one round: 32 tiles of 64x128 over 64 K steps, each a head and three tails.
  r = run_cli("explain 16 4096 4096 --block 64x128x64 --wave 132");
  EXPECT_NE(r.output.find("one round: 32 tiles for a persistent grid of up to 132 programs"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("heads: K steps 0..15 of 64 on programs 96..127"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("tails: 3 per tile, K steps 16..31, 32..47, ... (the last 48..63) on "
                          "programs 0..95, one each"),
            std::string::npos)
      << r.output;
}

TEST(CliExplain, RulesShowHowSm90WeighsItsConfigsWithoutAGpu) {
  const Result r = run_cli("explain 1024 1024 16384 --dtype bf16 --rules --wave 132");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("sm90's rules on 132 SMs"), std::string::npos) << r.output;
  if (!TILEGEMM_WITH_CUDA) {
    EXPECT_NE(r.output.find("none: this build has no sm90 kernel"), std::string::npos) << r.output;
    return;
  }
  EXPECT_NE(r.output.find("its tiles' work (the tensor cores bound the problem)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("128x256x64/g8/s4/w12/wt64x256"), std::string::npos) << r.output;
  // 64 tiles of 128x128 over 256 K steps on 132 SMs: each a head and a tail (split-K in two).
  EXPECT_NE(r.output.find("64 tiles, each a head of "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" and 1 tail(s) of "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("choice: 128x128x64/g8/s6/w12/wt64x128 (the lightest busiest SM"),
            std::string::npos)
      << r.output;
  // fp32 is not sm90's: the reason, named.
  const Result f = run_cli("explain 100 100 100 --dtype fp32 --rules");
  EXPECT_EQ(f.exit_code, 0) << f.output;
  EXPECT_NE(f.output.find("none: "), std::string::npos) << f.output;
  EXPECT_NE(f.output.find("fp32"), std::string::npos) << f.output;
}

TEST(CliExplain, RowOrderIsAvailable) {
  const Result r = run_cli("explain 1024 768 128 --block 128x64x32 --pid 60 --order row --wave 8");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("pid_m            = 60 // 12"), std::string::npos) << r.output;
}

TEST(CliExplain, ChoiceSaysWhatGemmWouldRun) {
  const Result r = run_cli("explain 1024 768 128 --dtype bf16 --choice");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("config choice (what gemm() would run for a packed row-major "
                          "1024x768x128 bf16 problem):"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(" from: "), std::string::npos) << r.output;
}

TEST(CliExplain, ShowsTheFp8ScalesAProgramReads) {
  // 300 x 400 in 128 x 128 tiles: program 3 of the grouped order is pid_m 0, pid_n 1.
  const Result r = run_cli("explain 300 400 1000 --block 128x128x128 --pid 3 --scale-mode block");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("scale_a[kb * 300 + m] for rows m in [0, 128)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("scale_b[nb * 8 + kb] for column blocks nb in [1, 2)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("1032 values in all"), std::string::npos) << r.output;
  const Result bad = run_cli("explain 300 400 1000 --scale-mode rows");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("--scale-mode 'rows' is not a scale mode"), std::string::npos)
      << bad.output;
}

TEST(CliExplain, BadArgumentsNameTheOption) {
  Result r = run_cli("explain 1024 768 128 --block 128x64 --pid 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--block '128x64'"), std::string::npos) << r.output;
  r = run_cli("explain 1024 768 128 --block 128x64x32 --pid 96");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--pid 96 is outside the grid of 96 programs"), std::string::npos)
      << r.output;
  r = run_cli("explain 1024 768 128 --group 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--group must be from 1 to 1048576 (got 0)"), std::string::npos)
      << r.output;
}

TEST(CliRun, BadOptionValuesAreNamed) {
  expect_errors({
      {"run 8 8 8 --dtype fp64", "--dtype 'fp64' is not a dtype"},
      {"run 8 8 8 --dtype bf16 --out-dtype fp8", "fp8_e4m3 needs fp8 inputs (a.dtype is bf16)"},
      {"run 8 8 8 --dtype fp8 --out-dtype fp8 --in-place --beta 1", "an fp8 D takes a bf16 C"},
      {"run 8 8 8 --dtype bf16 --scale-mode tensor", "--scale-mode tensor needs fp8 inputs"},
      {"run 8 8 8 --dtype fp8 --scale-mode rows", "--scale-mode 'rows' is not a scale mode"},
      {"run 8 8 8 --dtype fp8 --dtype-b bf16", "must be the same (or both fp8)"},
      {"run 8 8 8 --dtype tf32 --out-dtype tf32", "d.dtype tf32 is a math mode"},
      {"run 8 8 8 --layout-a diag", "--layout-a 'diag' is not a layout"},
      {"run 8 8 8 --autotune yes", "--autotune 'yes' must be off, on-miss or always"},
      {"tune 8 8 0", "M, N and K must be > 0"},
      {"tune --suite tiny", "--suite 'tiny' is not a suite"},
      {"tune 8 8 8 --dtype fp4", "--dtype 'fp4' is not a dtype"},
      {"run 8 8 8 --activation tanh", "--activation 'tanh' is not an activation"},
      {"run 8 8 8 --activation leaky_relu:abc", "slope 'abc' is not a number"},
      {"run 8 8 8 --backend tpu", "--backend 'tpu' is not a backend"},
      {"run 8 8 8 --config 128x128", "--config: config '128x128'"},
      {"run 8 8 8 --lda 3 --backend cpu", "--lda (a.ld) = 3 is smaller than the row length 8"},
      {"run -5 8 8 --backend cpu", "M, N and K must be >= 0"},
      {"run 8 8 8 --backend cpu --kernel warptile", "is a GPU kernel",
       "is not in this build, which has no GPU kernels"},
  });
}

// Invocations that once aborted, ran for minutes or were accepted: each now fails at once with
// the option named, before any buffer of the problem's size exists.
TEST(CliRun, BadInputsFailFastBeforeAnyLargeAllocation) {
  expect_errors({
      {"run 8 8 8 --ldb -1 --backend cpu", "--ldb (b.ld) must be >= 0 (got -1)"},
      {"run 8 8 0 --lda -2 --backend cpu", "--lda (a.ld) must be >= 0 (got -2)"},
      {"run 8 8 8 --lda 100000000000 --backend cpu", "GB of host memory; this machine has"},
      {"run 4000000000 4000000000 1 --backend cpu", "GB of host memory; this machine has"},
      {"run 100000 100000 100000 --backend cpu", "GB of host memory; this machine has"},
      {"run 8 8 8 --batch 1000000000000 --backend cpu", "GB of host memory; this machine has"},
      {"run 8 8 8 --backend cpu --config 2147483647x2147483647x2147483647",
       "the CPU backend takes BLOCK_SIZE_M, BLOCK_SIZE_N and BLOCK_SIZE_K from 1 to 1024"},
      {"run 8 8 8 --backend cpu --config 65536x65536x1", "from 1 to 1024"},
      {"run 8 8 8 --backend cpu --alpha nan", "--alpha (epilogue.alpha) must be finite (got NaN)"},
      {"run 8 8 8 --backend cpu --beta inf", "--beta (epilogue.beta) must be finite (got inf)"},
      {"run 8 8 8 --backend cpu --reps -1", "--reps must be >= 1"},
      {"run 8 8 8 --backend cpu --kernel bogus", "kernel 'bogus' does not exist",
       "is not in this build, which has no GPU kernels"},
      {"explain 64 64 64 --wave -5", "--wave must be from 1 to 65536 (got -5"},
      // Found by the CLI fuzz test under UBSan: signed overflow in the order and the strides.
      {"explain 2143 1906 1 --group 9223372036854775807", "--group must be from 1 to 1048576"},
      {"run 35 20 7 --lda -9223372036854775808 --backend cpu",
       "--lda (a.ld) must be >= 0 (got -9223372036854775808)"},
      {"explain 1099511627776 1099511627776 1 --block 1x1x1", "more than 2^40 programs"},
      // CLI11 2.1 reads a number past int64 as its largest value; later versions refuse it.
      {"explain 99999999999999999999 8 8", "M, N and K must be at most 2^40",
       "Could not convert: M = 99999999999999999999"},
      {"explain 8 8 99999999999999999999 --block 1x1x1", "M, N and K must be at most 2^40",
       "Could not convert: K = 99999999999999999999"},
  });
}

TEST(CliExplain, AGridOfBillionsOfProgramsIsExplainedQuickly) {
  // 3.9e9 programs: the L2 model's mean takes the first waves (their programs walked once).
  const Result r = run_cli("explain 1000000 1000000 1 --block 16x16x1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("mean over the first"), std::string::npos) << r.output;
}

TEST(CliRun, CpuBackendChecksAgainstTheReference) {
  const Result r =
      run_cli("run 65 33 47 --backend cpu --check --beta 0.5 --bias --activation gelu --reps 1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PASS"), std::string::npos) << r.output;
}

TEST(CliRun, Fp8WithEachScaleModeChecksAgainstTheReference) {
  for (const char* mode : {"none", "tensor", "channel", "block"}) {
    const Result r = run_cli(std::string("run 70 150 260 --backend cpu --check --reps 1 ") +
                             "--dtype fp8_e4m3 --dtype-b fp8_e5m2 --scale-mode " + mode);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("fp8_e4m3xfp8_e5m2"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("PASS"), std::string::npos) << r.output;
  }
}

TEST(CliRun, Fp8OutputChecksAgainstTheReferenceAndReportsItsAmax) {
  for (const char* type : {"fp8_e4m3", "fp8_e5m2"}) {
    const Result r = run_cli(std::string("run 70 150 260 --backend cpu --check --reps 1 ") +
                             "--dtype fp8 --scale-mode block --bias --out-dtype " + type);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find(std::string("->") + type), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("PASS"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("amax: "), std::string::npos) << r.output;
  }
}

TEST(CliRun, GroupedBothFormsCheckAgainstTheReference) {
  for (const char* args : {"run 300 70 40 --grouped offsets --groups 5 --bias",
                           "run 50 70 40 --grouped counts --group-rows 3,0,50,17 --layout-b col",
                           "run 50 70 90 --grouped k_offsets --group-rows 30,0,1,50 --layout-a col "
                           "--beta 1 --activation gelu"}) {
    const Result r = run_cli(std::string(args) + " --dtype bf16 --backend cpu --check --reps 1");
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("groups: "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("PASS"), std::string::npos) << r.output;
  }
  const Result r = run_cli(
      "run 64 32 16 --grouped counts --group-rows 3,0,64,17 --backend cpu "
      "--check --reps 1");
  EXPECT_NE(r.output.find("groups: counts, 4 groups of 3,0,64,17 rows (84 rows taken)"),
            std::string::npos)
      << r.output;
  const Result k = run_cli(
      "run 64 32 16 --grouped k_offsets --group-rows 3,0,13 --backend cpu --check --reps 1");
  EXPECT_NE(k.output.find("groups: k_offsets, 3 groups of 3,0,13 K values (192 rows taken)"),
            std::string::npos)
      << k.output;
}

// `command` succeeds, prints every line of `lines` and nothing that contains `absent`.
void expect_explained(const std::string& command, std::initializer_list<const char*> lines,
                      const char* absent) {
  const Result r = run_cli(command);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* line : lines) {
    EXPECT_NE(r.output.find(line), std::string::npos) << line << "\n" << r.output;
  }
  EXPECT_EQ(r.output.find(absent), std::string::npos) << r.output;
}

// Groups of 512, 0, 1 and 587 rows, 128x256 tiles of 512 columns: items 0-7 are group 0's, 8-9
// group 2's, 10-19 group 3's (from row 513); program 3 of 4 takes 3, 7, 11, 15, 19.
TEST(CliExplain, ShowsHowAProgramWalksTheGroups) {
  expect_explained(
      "explain 1100 512 64 --block 128x256x64 --group-rows 512,0,1,587 --pid 3 --wave 4",
      {"item 3: group 0 (rows 0..511, items 0..7), pid_m 3 pid_n 0 -> rows 384..511, columns "
       "0..255",
       "item 11: group 3 (rows 513..1099, items 10..19), pid_m 1 pid_n 0 -> rows 641..768",
       "item 19: group 3 (rows 513..1099, items 10..19), pid_m 4 pid_n 1 -> rows 1025..1099, "
       "columns 256..511"},
      "item 23");
  expect_errors({{"explain 100 64 64 --group-rows 60,50", "the groups take more than M rows"}});
}

// The counts form: groups of 200, 0 and 300 rows of their own batch entries, 128x256 tiles of 512
// columns: items 0-3 are group 0's, 4-9 group 2's; program 1 of 4 takes 1, 5, 9. The k_offsets
// form: groups of 300, 0 and 700 K values, each of all 256 x 512: items 0-3, 4-7 (no K values) and
// 8-11; program 2 of 3 takes 2, 5, 8, 11.
TEST(CliExplain, ShowsTheWalkOfTheCountsAndKOffsetsForms) {
  expect_explained(
      "explain 300 512 64 --block 128x256x64 --grouped counts --group-rows 200,0,300 --pid 1 "
      "--wave 4",
      {"item 1: group 0 (batch entry 0, rows 0..199, items 0..3), pid_m 1 pid_n 0 -> rows "
       "128..199, columns 0..255",
       "item 5: group 2 (batch entry 2, rows 0..299, items 4..9), pid_m 1 pid_n 0 -> rows "
       "128..255, columns 0..255",
       "item 9: group 2 (batch entry 2, rows 0..299, items 4..9), pid_m 2 pid_n 1 -> rows "
       "256..299, columns 256..511"},
      "item 13");
  expect_explained(
      "explain 256 512 1000 --block 128x256x64 --grouped k_offsets --group-rows 300,0,700 --pid 2 "
      "--wave 3",
      {"item 2: group 0 (batch entry 0, K values 0..299, items 0..3), pid_m 0 pid_n 1 -> rows "
       "0..127, columns 256..511",
       "item 5: group 1 (batch entry 1, no K values: its D is the epilogue's alone, items 4..7), "
       "pid_m 1 pid_n 0 -> rows 128..255, columns 0..255",
       "item 11: group 2 (batch entry 2, K values 300..999, items 8..11), pid_m 1 pid_n 1 -> rows "
       "128..255, columns 256..511"},
      "item 14");
  expect_errors({
      {"explain 100 64 64 --grouped counts --group-rows 60,120", "a group takes more than M rows"},
      {"explain 100 64 64 --grouped k_offsets --group-rows 40,30",
       "the groups take more than K values"},
      {"explain 100 64 64 --grouped sideways --group-rows 4", "is not a form of groups"},
      {"explain 100 64 64 --grouped ptr_array --group-rows 4", "is not a form of groups"},
      {"explain 100 64 64 --grouped counts", "--grouped needs --group-rows"},
  });
}

TEST(CliRun, GroupedOptionsAreNamed) {
  expect_errors({
      {"run 64 8 8 --grouped sideways --groups 2", "--grouped 'sideways' is not a form of groups"},
      {"run 64 8 8 --grouped ptr_array --groups 2", "the ptr_array form, are gemm_grouped()'s"},
      {"run 64 8 8 --grouped offsets", "--grouped offsets needs --groups G"},
      {"run 64 8 8 --groups 3",
       "--groups and --group-rows need --grouped offsets, counts or k_offsets"},
      {"run 64 8 8 --grouped k_offsets --group-rows 4,5 --backend cpu",
       "--group-rows (group_rows): the groups take 9 K values, more than k = 8"},
      {"run 64 8 8 --grouped offsets --group-rows 3,x", "'x' is not a row count"},
      {"run 64 8 8 --grouped offsets --group-rows 60,10 --backend cpu",
       "--group-rows (group_rows): the groups take 70 rows, more than m = 64"},
      {"run 64 8 8 --grouped counts --group-rows 65 --backend cpu",
       "--group-rows (group_rows): a group of 65 rows"},
      {"run 64 8 8 --grouped counts --groups 2 --batch 2", "--batch: a grouped GEMM's batch"},
      {"run 64 8 8 --grouped counts --groups 2 --group-rows 1,2,3", "--groups 2 but --group-rows"},
  });
}

TEST(CliRun, JsonOutputHasTheCheck) {
  const Result r = run_cli("run 16 16 16 --backend cpu --check --json --reps 1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"passed\": true"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"kernel\": \"cpu\""), std::string::npos) << r.output;
}

// The command, the library and the headers tell one version; the command also the commit it was
// built from (12 hex digits, "-dirty" when the tree had changes, "unknown" outside git).
TEST(CliInfo, VersionIsTheLibrarysAndTheHeaders) {
  const std::string headers = std::to_string(TILEGEMM_VERSION_MAJOR) + "." +
                              std::to_string(TILEGEMM_VERSION_MINOR) + "." +
                              std::to_string(TILEGEMM_VERSION_PATCH);
  EXPECT_EQ(tilegemm::version(), headers);
  const Result r = run_cli("--version");
  EXPECT_EQ(r.exit_code, 0);
  const std::string escaped = std::regex_replace(headers, std::regex(R"(\.)"), R"(\.)");
  EXPECT_TRUE(std::regex_match(
      r.output, std::regex(escaped + R"( \(source ([0-9a-f]{12}(-dirty)?|unknown)\)\n)")))
      << r.output;
}

TEST(CliInfo, ListsKernels) {
  const Result r = run_cli("info");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find(TILEGEMM_WITH_CUDA ? "warptile" : "cpu       the CPU backend"),
            std::string::npos)
      << r.output;
}

}  // namespace

namespace {

TEST(CliBench, BadArgumentsAreNamedBeforeAnyGpuWork) {
  expect_errors({
      {"bench --suite tiny", "--suite 'tiny' is not a suite"},
      {"bench --layouts NX", "--layouts 'NX' must be NN, NT, TN or TT"},
      {"bench --dtype fp64", "--dtype 'fp64' is not a dtype"},
      {"bench --dtype fp16 --scale-mode block", "--scale-mode block needs fp8 inputs"},
      {"bench --out-dtype fp9", "--out-dtype 'fp9' is not a dtype"},
      {"bench --dtype bf16 --out-dtype fp8_e4m3", "fp8_e4m3 needs fp8 inputs (a.dtype is bf16)"},
      {"bench --autotune sometimes", "--autotune 'sometimes' must be off, on-miss or always"},
      {"bench --reps 0", "--reps must be >= 1"},
      {"bench --case edge", "--case names cases of --suite moe"},
      {"bench --suite moe --case edge,nope", "--case 'nope' is not a case of the moe suite"},
      {"bench --shapes /nonexistent/shapes.txt",
       "--shapes '/nonexistent/shapes.txt' cannot be read"},
      {"bench --config 1x2", "--config: config '1x2'"},
  });
}

}  // namespace
