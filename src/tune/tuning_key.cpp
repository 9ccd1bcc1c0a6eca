#include "tune/tuning_key.hpp"

#include <functional>
#include <sstream>

#include "problem/aligned_copies.hpp"
#include "problem/alignment.hpp"
#include "problem/dtype.hpp"
#include "problem/matrix_view.hpp"

namespace tilegemm::autotune {
namespace {

template <typename M>
bool rows_aligned(const M& matrix, int64_t rows, int64_t cols) {
  return vector_aligned(matrix.data, effective_ld(matrix.ld, matrix.layout, rows, cols),
                        matrix.batch_stride, dtype_size(matrix.dtype));
}

}  // namespace

TuningKey make_tuning_key(const GemmProblem& p, const std::string& kernel, int device) {
  TuningKey key;
  key.m = p.m;
  key.n = p.n;
  key.k = p.k;
  key.batch = p.batch_count;
  key.groups = p.groups.rows;
  key.input = p.a.dtype;
  key.output = p.d.dtype;
  key.a = p.a.layout;
  key.b = p.b.layout;
  key.d = p.d.layout;
  key.aligned =
      uint8_t((rows_aligned(p.a, p.m, p.k) ? 1 : 0) | (rows_aligned(p.b, p.k, p.n) ? 2 : 0) |
              (rows_aligned(p.d, p.m, p.n) ? 4 : 0) | (on_l2_lines(p.a, p.m, p.k) ? 0 : 8) |
              (on_l2_lines(p.b, p.k, p.n) ? 0 : 16));
  // bits 0-4 the epilogue; 5-6 fp8's scale mode and 7 fast accumulation, which pick other kernels
  const bool fast = is_fp8(p.a.dtype) && p.fast_accumulation;
  key.epilogue =
      uint8_t((p.epilogue.beta != 0.0f ? 1 : 0) | (p.epilogue.bias ? 2 : 0) |
              (int(p.epilogue.activation) << 2) | (int(p.scales.mode) << 5) | (fast ? 128 : 0));
  key.kernel = automatic(kernel) ? "auto" : kernel;
  key.device = device;
  return key;
}

std::string to_string(const TuningKey& k) {
  std::string s = std::to_string(k.m) + "x" + std::to_string(k.n) + "x" + std::to_string(k.k);
  const char* batch = k.groups == GroupRows::offsets  ? " go"
                      : k.groups == GroupRows::counts ? " gc"
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
  std::istringstream in(text);
  std::string dims, batch, types, layouts, aligned, epilogue, kernel, extra;
  if (!(in >> dims >> batch >> types >> layouts >> aligned >> epilogue >> kernel) ||
      (in >> extra)) {
    return std::nullopt;
  }
  TuningKey key;
  char x1 = 0, x2 = 0;
  std::istringstream d(dims);
  if (!(d >> key.m >> x1 >> key.n >> x2 >> key.k) || x1 != 'x' || x2 != 'x') return std::nullopt;
  const auto after = [](const std::string& s, const char* prefix) -> std::optional<int64_t> {
    if (s.rfind(prefix, 0) != 0) return std::nullopt;
    try {
      return std::stoll(s.substr(std::string(prefix).size()));
    } catch (...) {
      return std::nullopt;
    }
  };
  if (batch.rfind("go", 0) == 0 || batch.rfind("gc", 0) == 0) {
    key.groups = batch[1] == 'o' ? GroupRows::offsets : GroupRows::counts;
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
  key.kernel = kernel;
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
