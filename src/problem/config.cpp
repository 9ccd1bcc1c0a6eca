#include "tilegemm/config.hpp"

#include <charconv>
#include <string>
#include <vector>

namespace tilegemm {

std::string to_string(const KernelConfig& c) {
  std::string s = std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + "x" +
                  std::to_string(c.block_k) + "/g" + std::to_string(c.group_size_m) + "/s" +
                  std::to_string(c.num_stages) + "/w" + std::to_string(c.num_warps);
  if (c.warp_m > 0 || c.warp_n > 0) {
    s += "/wt" + std::to_string(c.warp_m) + "x" + std::to_string(c.warp_n);
  }
  if (c.cluster_n > 1) {
    s += "/c" + std::to_string(c.cluster_m) + "x" + std::to_string(c.cluster_n);
  } else if (c.cluster_m > 1) {
    s += "/c" + std::to_string(c.cluster_m);
  }
  if (c.schedule == KernelSchedule::ping_pong) s += "/pingpong";
  return s;
}

namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = text.find(sep, start);
    parts.push_back(text.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

std::optional<int> parse_positive(std::string_view s) {
  int value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value <= 0) return std::nullopt;
  return value;
}

// "AxB" or "AxBxC" into `out` (all positive).
bool parse_dims(std::string_view s, size_t count, int* out) {
  auto parts = split(s, 'x');
  if (parts.size() != count) return false;
  for (size_t i = 0; i < count; ++i) {
    auto v = parse_positive(parts[i]);
    if (!v) return false;
    out[i] = *v;
  }
  return true;
}

}  // namespace

std::optional<KernelConfig> parse_kernel_config(std::string_view text, std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<KernelConfig> {
    if (error) {
      *error = "config '" + std::string(text) + "': " + why +
               " (expected e.g. 128x128x16/g8/s2/w8, 128x128x16/g8/s2/w8/wt64x32, "
               "128x256x64/g8/s4/w12/wt64x256/c2 or 128x128x64/g8/s5/w12/wt128x128/pingpong)";
    }
    return std::nullopt;
  };
  auto parts = split(text, '/');
  KernelConfig c;
  int block[3];
  if (!parse_dims(parts[0], 3, block)) return fail("block shape must be BMxBNxBK");
  c.block_m = block[0];
  c.block_n = block[1];
  c.block_k = block[2];
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string_view p = parts[i];
    if (p.substr(0, 2) == "wt") {
      int wt[2];
      if (!parse_dims(p.substr(2), 2, wt)) return fail("warp tile must be wtWMxWN");
      c.warp_m = wt[0];
      c.warp_n = wt[1];
      continue;
    }
    if (p.empty()) return fail("empty field");
    if (p == "pingpong") {
      c.schedule = KernelSchedule::ping_pong;
      continue;
    }
    if (p[0] == 'c' && p.find('x') != std::string_view::npos) {
      int cluster[2];
      if (!parse_dims(p.substr(1), 2, cluster)) return fail("cluster must be cM or cMxN");
      c.cluster_m = cluster[0];
      c.cluster_n = cluster[1];
      continue;
    }
    auto v = parse_positive(p.substr(1));
    if (!v) return fail("field '" + std::string(p) + "' needs a positive number");
    switch (p[0]) {
      case 'g':
        c.group_size_m = *v;
        break;
      case 's':
        c.num_stages = *v;
        break;
      case 'w':
        c.num_warps = *v;
        break;
      case 'c':
        c.cluster_m = *v;
        break;
      default:
        return fail("unknown field '" + std::string(p) + "'");
    }
  }
  return c;
}

bool same_instantiation(const KernelConfig& x, const KernelConfig& y) {
  return x.block_m == y.block_m && x.block_n == y.block_n && x.block_k == y.block_k &&
         x.num_stages == y.num_stages && x.num_warps == y.num_warps && x.warp_m == y.warp_m &&
         x.warp_n == y.warp_n && x.cluster_m == y.cluster_m && x.cluster_n == y.cluster_n &&
         x.schedule == y.schedule;
}

}  // namespace tilegemm
