#include "bench_suites.hpp"

#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

namespace tilegemm::cli {

std::vector<std::string> suite_names() {
  return {"square", "unaligned", "skinny", "llm", "longk", "fp8"};
}

std::optional<std::vector<BenchShape>> suite_shapes(const std::string& name) {
  std::vector<BenchShape> all = {{"square", 512, 512, 512},       {"square", 1024, 1024, 1024},
                                 {"square", 2048, 2048, 2048},    {"square", 4096, 4096, 4096},
                                 {"square", 8192, 8192, 8192},    {"square", 16384, 16384, 16384},
                                 {"unaligned", 4095, 4097, 4093}, {"unaligned", 1000, 1000, 1000},
                                 {"unaligned", 3000, 5000, 700},  {"skinny", 16, 4096, 4096},
                                 {"skinny", 128, 4096, 4096},     {"llm", 4096, 11008, 4096},
                                 {"llm", 4096, 4096, 11008},      {"llm", 8192, 8192, 1024},
                                 {"longk", 1024, 1024, 16384}};
  // fp8's shapes (LLM and DeepSeek-V3 layers, as cuBLASLt's and DeepGEMM's figures name them):
  // not in "all", which every dtype runs.
  if (name == "all") return all;
  const std::vector<BenchShape> fp8 = {{"fp8", 4096, 4096, 4096},  {"fp8", 8192, 8192, 8192},
                                       {"fp8", 4096, 7168, 16384}, {"fp8", 4096, 24576, 1536},
                                       {"fp8", 8192, 8192, 1024},  {"fp8", 128, 7168, 16384},
                                       {"fp8", 4096, 4096, 11008}};
  all.insert(all.end(), fp8.begin(), fp8.end());
  std::vector<BenchShape> out;
  for (const auto& s : all)
    if (s.suite == name) out.push_back(s);
  if (out.empty()) return std::nullopt;
  return out;
}

std::vector<BenchShape> parse_shapes(const std::string& text, std::string* error) {
  std::vector<BenchShape> out;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    for (char& c : line)
      if (c == ',') c = ' ';
    std::istringstream fields(line);
    std::vector<std::string> tokens;
    for (std::string t; fields >> t;) tokens.push_back(t);
    if (tokens.empty()) continue;
    BenchShape s{"file"};
    int64_t* dims[3] = {&s.m, &s.n, &s.k};
    bool ok = tokens.size() == 3;
    for (size_t i = 0; ok && i < 3; ++i) {
      size_t used = 0;
      try {
        *dims[i] = std::stoll(tokens[i], &used);
      } catch (const std::exception&) {
        used = 0;
      }
      ok = used == tokens[i].size() && *dims[i] > 0;
    }
    if (!ok) {
      if (error) *error = "line " + std::to_string(number) + ": expected 'M N K' with M, N, K > 0";
      return {};
    }
    out.push_back(s);
  }
  if (out.empty() && error) *error = "no shapes found";
  return out;
}

namespace {
// A CSV field in double quotes, its quotes doubled (RFC 4180): the note holds commas.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + '"';
}
}  // namespace

void write_csv(std::ostream& out, const std::vector<BenchRow>& rows) {
  out << "suite,m,n,k,dtype,layouts,kernel,config,tilegemm_ms,cublas_ms,tilegemm_tflops,"
         "cublas_tflops,ratio,percent_of_ceiling,tilegemm_gbs,relative_error,note\n";
  for (const auto& r : rows) {
    out << r.suite << ',' << r.m << ',' << r.n << ',' << r.k << ',' << r.dtype << ',' << r.layouts
        << ',' << r.kernel << ',' << r.config << ',' << std::setprecision(6) << r.tilegemm_ms << ','
        << r.cublas_ms << ',' << r.tilegemm_tflops << ',' << r.cublas_tflops << ',' << r.ratio
        << ',' << r.percent_of_ceiling << ',' << r.tilegemm_gbs << ',' << r.relative_error << ','
        << quoted(r.note) << '\n';
  }
}

void write_json(std::ostream& out, const std::vector<BenchRow>& rows) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& r : rows) {
    j.push_back({{"suite", r.suite},
                 {"m", r.m},
                 {"n", r.n},
                 {"k", r.k},
                 {"dtype", r.dtype},
                 {"layouts", r.layouts},
                 {"kernel", r.kernel},
                 {"config", r.config},
                 {"tilegemm_ms", r.tilegemm_ms},
                 {"cublas_ms", r.cublas_ms},
                 {"tilegemm_tflops", r.tilegemm_tflops},
                 {"cublas_tflops", r.cublas_tflops},
                 {"ratio", r.ratio},
                 {"percent_of_ceiling", r.percent_of_ceiling},
                 {"tilegemm_gbs", r.tilegemm_gbs},
                 {"relative_error", r.relative_error},
                 {"note", r.note}});
  }
  out << j.dump(2) << '\n';
}

double geomean(const std::vector<BenchRow>& rows, const std::string& suite,
               double BenchRow::*field) {
  double log_sum = 0;
  int count = 0;
  for (const auto& r : rows) {
    if (r.suite != suite || !(r.*field > 0)) continue;
    log_sum += std::log(r.*field);
    ++count;
  }
  return count ? std::exp(log_sum / count) : 0.0;
}

}  // namespace tilegemm::cli
