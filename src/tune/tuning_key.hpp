// The autotuner's key: everything about a call that can change which config is fastest.
//
//   exact M, N, K and batch count (no bucketing: a tuned shape is reused only for that shape), and
//   for a grouped GEMM the form of its groups (the batch count is then the group count)
//   dtypes of A/B and D; layouts of A, B and D
//   alignment class: whether A, B and D rows are 16-byte aligned (the copy path a kernel takes),
//     and whether A's and B's lines are off 128-byte boundaries (each box row of a tile then
//     reads two L2 lines, which a cluster's multicast halves)
//   epilogue kind: beta != 0, bias, activation (and for fp8 the scale mode and accumulation)
//   the kernel asked for ("auto" or a name)
//   the GPU (name and SM count) and the library version -- these name the cache file, and the
//   string form carries them too
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tilegemm/tilegemm.hpp"

namespace tilegemm::autotune {

// Whether a call leaves the kernel to the library: "auto", or empty.
inline bool automatic(const std::string& kernel_request) {
  return kernel_request.empty() || kernel_request == "auto";
}

struct TuningKey {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  GroupForm groups = GroupForm::none;  // text: "b<batch>", or "go<G>" (offsets), "gc<G>" (counts),
                                       // "gk<G>" (k_offsets)
  DType input = DType::fp32, output = DType::fp32;
  Layout a = Layout::row_major, b = Layout::row_major, d = Layout::row_major;
  // bit 0: A rows 16-byte aligned, bit 1: B, bit 2: D; bit 3: A's lines not 128 bytes apart,
  // bit 4: B's (set where lines are off L2 lines, so that the usual key reads "al7")
  uint8_t aligned = 0;
  // bit 0: beta != 0, bit 1: bias, bits 2-4: activation, 5-6: fp8 scale mode, 7: fp8 fast
  // accumulation
  uint8_t epilogue = 0;
  std::string kernel = "auto";
  int device = 0;  // CUDA ordinal (the in-memory cache spans devices; files are per GPU type)

  friend bool operator==(const TuningKey&, const TuningKey&) = default;
};

TuningKey make_tuning_key(const GemmProblem& problem, const std::string& kernel, int device);

// Stable text form, e.g. "4096x4096x4096 b1 bf16>bf16 row.row>row al7 ep0 auto" (the cache
// file's entry name; the GPU and version are the file's).
std::string to_string(const TuningKey& key);

// Reads the text form back (device 0); nullopt if it is not one.
std::optional<TuningKey> parse_tuning_key(const std::string& text);

struct TuningKeyHash {
  size_t operator()(const TuningKey& key) const;
};

}  // namespace tilegemm::autotune
