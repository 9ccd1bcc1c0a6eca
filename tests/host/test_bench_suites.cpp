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
  EXPECT_EQ(csv.rfind("suite,m,n,k,dtype,layouts,kernel,config,timing,tilegemm_ms,", 0), 0u);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  EXPECT_NE(csv.find("square,1024,1024,1024,bf16,NN,warptile,128x128x16/g8/s2/w8/wt64x32,cold,"),
            std::string::npos);
}

TEST(BenchSuites, CsvCarriesTheSpreadTheTimingAndTheRunsMachineAndSource) {
  BenchRow r = row("square", 10, 20);
  r.timing = "warm";
  r.tilegemm_ms = 2.5;
  r.tilegemm_ms_min = 2.25;
  r.tilegemm_ms_max = 3.75;
  r.cublas_ms = 1.5;
  r.cublas_ms_min = 1.25;
  r.cublas_ms_max = 1.75;
  r.gpu = "NVIDIA H100 80GB HBM3";
  r.driver = "580.159.04";
  r.commit = "0123456789ab-dirty";
  std::ostringstream out;
  write_csv(out, {r});
  const std::string csv = out.str();
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_NE(header.find(",timing,tilegemm_ms,tilegemm_ms_min,tilegemm_ms_max,cublas_ms,"
                        "cublas_ms_min,cublas_ms_max,"),
            std::string::npos);
  EXPECT_NE(header.find(",gpu,driver,commit,note"), std::string::npos);
  EXPECT_NE(csv.find(",warm,2.5,2.25,3.75,1.5,1.25,1.75,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",\"NVIDIA H100 80GB HBM3\",\"580.159.04\",0123456789ab-dirty,"),
            std::string::npos)
      << csv;
  // Every line has as many fields as the header (the quoted ones hold no commas here).
  const auto fields = [](const std::string& line) {
    return std::count(line.begin(), line.end(), ',');
  };
  const std::string line =
      csv.substr(header.size() + 1, csv.find('\n', header.size() + 1) - header.size() - 1);
  EXPECT_EQ(fields(line), fields(header));

  std::ostringstream json;
  write_json(json, {r});
  auto j = nlohmann::json::parse(json.str());
  EXPECT_EQ(j[0]["timing"], "warm");
  EXPECT_DOUBLE_EQ(j[0]["tilegemm_ms_max"].get<double>(), 3.75);
  EXPECT_DOUBLE_EQ(j[0]["cublas_ms_min"].get<double>(), 1.25);
  EXPECT_EQ(j[0]["commit"], "0123456789ab-dirty");
  EXPECT_EQ(j[0]["driver"], "580.159.04");
}

TEST(BenchSuites, CsvNoteIsOneQuotedField) {
  BenchRow r = row("unaligned", 10, 20);
  r.note = "operands copied to 128-byte aligned lines first: a ld 4093 -> 4096, b ld 4097 -> 4160";
  std::ostringstream out;
  write_csv(out, {r, row("square", 10, 20)});
  const std::string csv = out.str();
  EXPECT_NE(csv.find(",commit,note\n"), std::string::npos);
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
