#include "tune/tuning_key.hpp"

#include <cctype>
#include <charconv>
#include <functional>
#include <string_view>
#include <vector>

#include "problem/aligned_copies.hpp"
#include "problem/alignment.hpp"
#include "problem/dtype.hpp"
#include "problem/matrix_view.hpp"

namespace tilegemm::autotune {
namespace {

// The whitespace-separated words of `text`. (Parsed without iostreams: their locale machinery is
// more than a key needs, and a library loaded into another program shares that program's.)
std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    const size_t begin = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > begin) words.push_back(text.substr(begin, i - begin));
  }
  return words;
}

// `text` as a whole decimal integer, or nullopt.
std::optional<int64_t> whole_number(std::string_view text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return value;
}

}  // namespace

TuningKey make_tuning_key(const GemmProblem& p, const std::string& kernel, int device) {
  TuningKey key;
  key.m = p.m;
  key.n = p.n;
  key.k = p.k;
  key.batch = p.batch_count;
  key.groups = p.groups.form;
  key.input = p.a.dtype;
  key.output = p.d.dtype;
  key.a = p.a.layout;
  key.b = p.b.layout;
  key.d = p.d.layout;
  key.aligned =
      uint8_t((rows_aligned(p.a, p.m, p.k) ? 1 : 0) | (rows_aligned(p.b, p.k, p.n) ? 2 : 0) |
              (rows_aligned(p.d, p.m, p.n) ? 4 : 0) | (on_l2_lines(p.a, p.m, p.k) ? 0 : 8) |
              (on_l2_lines(p.b, p.k, p.n) ? 0 : 16));
  // bits 0-4 the epilogue; 5-6 fp8's scale mode; 7 what picks other kernels of the same types:
  // fp8's fast accumulation, tf32's promoted sums (tf32x3's; with_aligned_copies sets plain
  // tf32's fast_accumulation)
  const bool other_kernels =
      is_fp8(p.a.dtype) ? p.fast_accumulation : p.a.dtype == DType::tf32 && !p.fast_accumulation;
  key.epilogue = uint8_t((p.epilogue.beta != 0.0f ? 1 : 0) | (p.epilogue.bias ? 2 : 0) |
                         (int(p.epilogue.activation) << 2) | (int(p.scales.mode) << 5) |
                         (other_kernels ? 128 : 0));
  key.kernel = automatic(kernel) ? "auto" : kernel;
  key.device = device;
  return key;
}

std::string to_string(const TuningKey& k) {
  std::string s = std::to_string(k.m) + "x" + std::to_string(k.n) + "x" + std::to_string(k.k);
  const char* batch = k.groups == GroupForm::offsets     ? " go"
                      : k.groups == GroupForm::counts    ? " gc"
                      : k.groups == GroupForm::k_offsets ? " gk"
                                                         : " b";
  s.append(batch).append(std::to_string(k.batch));
  s.append(" ").append(to_string(k.input)).append(">").append(to_string(k.output));
  s.append(" ").append(to_string(k.a)).append(".").append(to_string(k.b));
  s.append(">").append(to_string(k.d));
  s.append(" al").append(std::to_string(k.aligned));
  s.append(" ep").append(std::to_string(k.epilogue));
  s.append(" ").append(k.kernel);
  return s;
}

std::optional<TuningKey> parse_tuning_key(const std::string& text) {
  const std::vector<std::string> words = words_of(text);
  if (words.size() != 7) return std::nullopt;
  const std::string &dims = words[0], &types = words[2], &layouts = words[3], &aligned = words[4],
                    &epilogue = words[5];
  std::string batch = words[1];
  TuningKey key;
  const size_t x1 = dims.find('x'), x2 = x1 == std::string::npos ? x1 : dims.find('x', x1 + 1);
  if (x2 == std::string::npos) return std::nullopt;
  const auto m = whole_number(std::string_view(dims).substr(0, x1)),
             n = whole_number(std::string_view(dims).substr(x1 + 1, x2 - x1 - 1)),
             k = whole_number(std::string_view(dims).substr(x2 + 1));
  if (!m || !n || !k) return std::nullopt;
  key.m = *m;
  key.n = *n;
  key.k = *k;
  const auto after = [](const std::string& s, const char* prefix) -> std::optional<int64_t> {
    if (s.rfind(prefix, 0) != 0) return std::nullopt;
    return whole_number(std::string_view(s).substr(std::string_view(prefix).size()));
  };
  if (batch.rfind("go", 0) == 0 || batch.rfind("gc", 0) == 0 || batch.rfind("gk", 0) == 0) {
    key.groups = batch[1] == 'o'   ? GroupForm::offsets
                 : batch[1] == 'c' ? GroupForm::counts
                                   : GroupForm::k_offsets;
    batch.replace(0, 2, "b");
  }
  const auto b = after(batch, "b"), al = after(aligned, "al"), ep = after(epilogue, "ep");
  const size_t arrow = types.find('>'), dot = layouts.find('.'), to = layouts.find('>');
  if (!b || !al || !ep || arrow == std::string::npos || dot == std::string::npos ||
      to == std::string::npos || to < dot) {
    return std::nullopt;
  }
  const auto input = parse_dtype(types.substr(0, arrow)),
             output = parse_dtype(types.substr(arrow + 1));
  const auto la = parse_layout(layouts.substr(0, dot));
  const auto lb = parse_layout(layouts.substr(dot + 1, to - dot - 1));
  const auto ld = parse_layout(layouts.substr(to + 1));
  if (!input || !output || !la || !lb || !ld) return std::nullopt;
  key.batch = *b;
  key.input = *input;
  key.output = *output;
  key.a = *la;
  key.b = *lb;
  key.d = *ld;
  key.aligned = uint8_t(*al);
  key.epilogue = uint8_t(*ep);
  key.kernel = words[6];
  return key;
}

size_t TuningKeyHash::operator()(const TuningKey& k) const {
  // FNV-1a over the fields: cheap, and the key is hashed on every tuned call.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  };
  mix(uint64_t(k.m));
  mix(uint64_t(k.n));
  mix(uint64_t(k.k));
  mix(uint64_t(k.batch) | uint64_t(k.groups) << 60);
  mix(uint64_t(k.input) | uint64_t(k.output) << 8 | uint64_t(k.a) << 16 | uint64_t(k.b) << 24 |
      uint64_t(k.d) << 32 | uint64_t(k.aligned) << 40 | uint64_t(k.epilogue) << 48);
  mix(std::hash<std::string>{}(k.kernel));
  mix(uint64_t(k.device));
  return size_t(h);
}

}  // namespace tilegemm::autotune
