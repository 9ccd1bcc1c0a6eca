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

std::vector<MoeCase> moe_cases() {
  const auto same = [](int groups, int32_t rows) { return std::vector<int32_t>(groups, rows); };
  // 16 experts from 64 to 4096 tokens, 15,232 in all
  const std::vector<int32_t> skewed = {64,  64,  128,  192,  256,  384,  448,  512,
                                       640, 768, 1024, 1280, 1536, 1792, 2048, 4096};
  // empty experts, one-token experts and one huge one
  const std::vector<int32_t> edge = {0, 1, 8192, 0, 1, 64, 0, 5};
  // decode: 16 to 95 tokens per expert (a fixed draw), up to 128 each
  const std::vector<int32_t> decode = {39, 84, 27, 61, 90, 16, 55, 73, 22, 47, 95,
                                       33, 68, 18, 80, 51, 29, 76, 44, 92, 35, 58,
                                       20, 87, 63, 25, 71, 49, 94, 31, 66, 41};
  const auto sum = [](const std::vector<int32_t>& r) {
    int64_t s = 0;
    for (int32_t x : r) s += x;
    return s;
  };
  return {{"dsv3-gate-up", GroupForm::offsets, 32 * 512, 4096, 7168, same(32, 512)},
          {"dsv3-down", GroupForm::offsets, 32 * 512, 7168, 2048, same(32, 512)},
          {"mixtral-w1", GroupForm::offsets, 8 * 2048, 14336, 4096, same(8, 2048)},
          {"skewed", GroupForm::offsets, sum(skewed), 4096, 7168, skewed},
          {"edge", GroupForm::offsets, sum(edge), 4096, 7168, edge},
          {"decode", GroupForm::counts, 128, 4096, 7168, decode},
          // the gate/up projection's weight gradient: dW_g = dY_g^T X_g over each expert's tokens
          {"dsv3-gate-up-wgrad", GroupForm::k_offsets, 4096, 7168, 32 * 512, same(32, 512)}};
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
  out << "suite,m,n,k,dtype,layouts,kernel,config,timing,tilegemm_ms,tilegemm_ms_min,"
         "tilegemm_ms_max,cublas_ms,cublas_ms_min,cublas_ms_max,tilegemm_tflops,cublas_tflops,"
         "ratio,percent_of_ceiling,tilegemm_gbs,relative_error,gpu,driver,commit,note\n";
  for (const auto& r : rows) {
    out << r.suite << ',' << r.m << ',' << r.n << ',' << r.k << ',' << r.dtype << ',' << r.layouts
        << ',' << r.kernel << ',' << r.config << ',' << r.timing << ',' << std::setprecision(6)
        << r.tilegemm_ms << ',' << r.tilegemm_ms_min << ',' << r.tilegemm_ms_max << ','
        << r.cublas_ms << ',' << r.cublas_ms_min << ',' << r.cublas_ms_max << ','
        << r.tilegemm_tflops << ',' << r.cublas_tflops << ',' << r.ratio << ','
        << r.percent_of_ceiling << ',' << r.tilegemm_gbs << ',' << r.relative_error << ','
        << quoted(r.gpu) << ',' << quoted(r.driver) << ',' << r.commit << ',' << quoted(r.note)
        << '\n';
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
                 {"timing", r.timing},
                 {"tilegemm_ms", r.tilegemm_ms},
                 {"tilegemm_ms_min", r.tilegemm_ms_min},
                 {"tilegemm_ms_max", r.tilegemm_ms_max},
                 {"cublas_ms", r.cublas_ms},
                 {"cublas_ms_min", r.cublas_ms_min},
                 {"cublas_ms_max", r.cublas_ms_max},
                 {"tilegemm_tflops", r.tilegemm_tflops},
                 {"cublas_tflops", r.cublas_tflops},
                 {"ratio", r.ratio},
                 {"percent_of_ceiling", r.percent_of_ceiling},
                 {"tilegemm_gbs", r.tilegemm_gbs},
                 {"relative_error", r.relative_error},
                 {"gpu", r.gpu},
                 {"driver", r.driver},
                 {"commit", r.commit},
                 {"note", r.note}});
    if (!r.groups.empty()) j.back()["groups"] = r.groups;
    if (r.ptr_array_tflops > 0) {
      j.back()["ptr_array_tflops"] = r.ptr_array_tflops;
      j.back()["ptr_array_error"] = r.ptr_array_error;
    }
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
