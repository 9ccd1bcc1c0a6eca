#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "bench_suites.hpp"

namespace tilegemm::cli {
namespace {

TEST(BenchSuites, MatchTheAnchorShapes) {
  auto square = suite_shapes("square");
  ASSERT_TRUE(square);
  ASSERT_EQ(square->size(), 6u);
  EXPECT_EQ((*square)[0].m, 512);
  EXPECT_EQ(square->back().k, 16384);
  auto unaligned = suite_shapes("unaligned");
  ASSERT_TRUE(unaligned);
  EXPECT_EQ((*unaligned)[0].m, 4095);
  EXPECT_EQ((*unaligned)[0].n, 4097);
  EXPECT_EQ((*unaligned)[0].k, 4093);
  EXPECT_EQ(suite_shapes("skinny")->size(), 2u);
  EXPECT_EQ(suite_shapes("llm")->size(), 3u);
  EXPECT_EQ(suite_shapes("longk")->size(), 1u);
  EXPECT_EQ(suite_shapes("all")->size(), 15u);  // not fp8's, which --suite fp8 runs
  EXPECT_EQ(suite_shapes("fp8")->size(), 7u);
  EXPECT_FALSE(suite_shapes("tiny"));
}

TEST(BenchSuites, ParseShapesFile) {
  std::string error;
  auto shapes = parse_shapes("# M N K\n64 32 16\n\n1,2,3  # comma form\n", &error);
  ASSERT_EQ(shapes.size(), 2u) << error;
  EXPECT_EQ(shapes[1].m, 1);
  EXPECT_EQ(shapes[1].k, 3);
}

TEST(BenchSuites, ParseShapesNamesTheBadLine) {
  for (const char* text : {"64 32\n", "1 2 3\n4 five 6\n", "0 1 1\n", "1 2 3 4\n"}) {
    std::string error;
    EXPECT_TRUE(parse_shapes(text, &error).empty()) << text;
    EXPECT_NE(error.find("line "), std::string::npos) << error;
  }
  std::string error;
  EXPECT_TRUE(parse_shapes("# nothing\n", &error).empty());
  EXPECT_EQ(error, "no shapes found");
}

BenchRow row(const char* suite, double ours, double theirs) {
  BenchRow r;
  r.suite = suite;
  r.m = r.n = r.k = 1024;
  r.dtype = "bf16";
  r.layouts = "NN";
  r.kernel = "warptile";
  r.config = "128x128x16/g8/s2/w8/wt64x32";
  r.tilegemm_tflops = ours;
  r.cublas_tflops = theirs;
  r.ratio = ours / theirs;
  return r;
}

TEST(BenchSuites, CsvHasAHeaderAndOneLinePerRow) {
  std::ostringstream out;
  write_csv(out, {row("square", 10, 20), row("llm", 30, 30)});
  const std::string csv = out.str();
  EXPECT_EQ(csv.rfind("suite,m,n,k,dtype,layouts,kernel,config,tilegemm_ms", 0), 0u);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  EXPECT_NE(csv.find("square,1024,1024,1024,bf16,NN,warptile,128x128x16/g8/s2/w8/wt64x32"),
            std::string::npos);
}

TEST(BenchSuites, CsvNoteIsOneQuotedField) {
  BenchRow r = row("unaligned", 10, 20);
  r.note = "operands copied to 128-byte aligned lines first: a ld 4093 -> 4096, b ld 4097 -> 4160";
  std::ostringstream out;
  write_csv(out, {r, row("square", 10, 20)});
  const std::string csv = out.str();
  EXPECT_NE(csv.find(",relative_error,note\n"), std::string::npos);
  EXPECT_NE(csv.find(",\"" + r.note + "\"\n"), std::string::npos);
  EXPECT_NE(csv.find(",\"\"\n"), std::string::npos);  // an empty note
  r.note = "say \"x\"";
  out.str("");
  write_csv(out, {r});
  EXPECT_NE(out.str().find(",\"say \"\"x\"\"\"\n"), std::string::npos);
}

TEST(BenchSuites, JsonRoundTrips) {
  std::ostringstream out;
  write_json(out, {row("square", 10, 20)});
  auto j = nlohmann::json::parse(out.str());
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["suite"], "square");
  EXPECT_DOUBLE_EQ(j[0]["ratio"].get<double>(), 0.5);
}

TEST(BenchSuites, GeomeanPerSuite) {
  std::vector<BenchRow> rows = {row("square", 10, 20), row("square", 40, 20), row("llm", 3, 3)};
  EXPECT_NEAR(geomean(rows, "square", &BenchRow::tilegemm_tflops), 20.0, 1e-9);
  EXPECT_NEAR(geomean(rows, "square", &BenchRow::ratio), 1.0, 1e-9);
  EXPECT_EQ(geomean(rows, "longk", &BenchRow::ratio), 0.0);
}

}  // namespace
}  // namespace tilegemm::cli
