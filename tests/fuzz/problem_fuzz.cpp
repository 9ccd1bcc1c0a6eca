// libFuzzer target (built with ASan and UBSan by scripts/fuzz-problem.sh): arbitrary problems
// through validate(), arbitrary group sizes through the grouped walk, and arbitrary text through
// the config parser. Its corpus, tests/fuzz/corpus, starts each run where the last search ended.
//
//   validate     any sizes, strides, enums (in range or not), scalars (NaN, infinities), and
//                pointers (null, far apart, overlapping) must come back as a Status without
//                undefined behaviour; the pointers are never read.
//   groups       any int32 sizes, clamped by group_rows_after, must give ranges inside [0, M]
//                (the offsets form's in order, without overlap), and every program of a
//                persistent grid must walk each tile of each group exactly once.
//   config       any text: parse_kernel_config either fails with a message or gives a config
//                that to_string writes back to text parsing to the same config.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "problem/groups.hpp"
#include "schedule/grouped_tiles.hpp"
#include "tilegemm/tilegemm.hpp"

namespace {

// Reads the fuzzer's bytes as values; past the end, zeros.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t u8() { return at_ < size_ ? data_[at_++] : 0; }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = v << 8 | u8();
    return v;
  }
  // Sizes and strides: mostly small, some at the edges of int64.
  int64_t size() {
    switch (u8() % 8) {
      case 0:
        return 0;
      case 1:
        return -int64_t(u8()) - 1;
      case 2:
        return int64_t(1) << (u8() % 63);
      case 3:
        return INT64_MAX - u8();
      case 4:
        return int64_t(u32()) << (u8() % 32);
      default:
        return u8() + (int64_t(u8() % 16) << 8);
    }
  }
  float scalar() {
    switch (u8() % 6) {
      case 0:
        return __builtin_nanf("");
      case 1:
        return __builtin_inff();
      case 2: {
        const uint32_t bits = u32();
        float f;
        std::memcpy(&f, &bits, sizeof f);
        return f;
      }
      default:
        return float(int(u8()) - 128) / 16.0f;
    }
  }
  template <class Enum>
  Enum choice(int count) {  // sometimes past the enum's last value
    return Enum(int(u8() % (count + 2)) - 1);
  }
  // null, one of four buffers 2^40 bytes apart, or an address inside one of them
  const void* pointer() {
    const uint8_t v = u8();
    if (v % 5 == 0) return nullptr;
    return reinterpret_cast<const void*>((uintptr_t(v % 4 + 1) << 40) + (v / 64) * 64);
  }

 private:
  const uint8_t* data_;
  size_t size_, at_ = 0;
};

void fuzz_validate(Bytes& in) {
  using namespace tilegemm;
  GemmProblem p;
  p.m = in.size();
  p.n = in.size();
  p.k = in.size();
  p.batch_count = in.size();
  for (MatrixInput* x : {&p.a, &p.b, &p.c}) {
    *x = {in.pointer(), in.choice<DType>(6), in.choice<Layout>(2), in.size(), in.size()};
  }
  p.d = {const_cast<void*>(in.pointer()), in.choice<DType>(6), in.choice<Layout>(2), in.size(),
         in.size()};
  p.epilogue.alpha = in.scalar();
  p.epilogue.beta = in.u8() % 2 ? 0.0f : in.scalar();
  p.epilogue.bias = in.pointer();
  p.epilogue.bias_dtype = in.choice<DType>(6);
  p.epilogue.bias_batch_stride = in.size();
  p.epilogue.activation = in.choice<Activation>(5);
  p.epilogue.leaky_relu_slope = in.scalar();
  p.scales = {in.choice<ScaleMode>(4), static_cast<const float*>(in.pointer()),
              static_cast<const float*>(in.pointer())};
  p.groups = {in.choice<GroupForm>(4), static_cast<const int32_t*>(in.pointer())};
  p.fast_accumulation = in.u8() % 2;
  p.d.scale = static_cast<const float*>(in.pointer());  // last: the corpus keeps its meaning
  p.d.amax = static_cast<float*>(const_cast<void*>(in.pointer()));
  const Status s = validate(p);
  if (s.ok() != s.message.empty()) __builtin_trap();  // an error always says why
}

void fuzz_groups(Bytes& in) {
  using namespace tilegemm;
  const GroupForm kind = in.u8() % 2 ? GroupForm::offsets : GroupForm::counts;
  const int groups = 1 + in.u8() % 24;
  const int64_t m = in.u8() * 4 + in.u8() % 4;
  const int32_t block_m = in.u8() % 2 ? 64 : 128, block_n = 64;
  const int64_t n = 1 + in.u8() % 300;
  std::vector<int32_t> sizes(groups);
  for (int32_t& s : sizes) s = in.u8() % 4 == 0 ? int32_t(in.u32()) : int32_t(in.u8()) * 3;
  // The ranges: inside [0, m]; the offsets form's one after the other. The same sizes read as
  // k_offsets (with K = m): K ranges inside [0, K], one after the other, each group all M rows.
  std::vector<GroupRowRange> ranges;
  int64_t end = 0, tiles = 0, k_end = 0;
  for (int g = 0; g < groups; ++g) {
    const GroupKRange ks = group_k_after(GroupForm::k_offsets, sizes.data(), g, m, k_end);
    if (ks.begin != k_end || ks.end < ks.begin || ks.end > m) __builtin_trap();
    const GroupKRange ks_again = group_k(GroupForm::k_offsets, sizes.data(), g, m);
    if (ks_again.begin != ks.begin || ks_again.end != ks.end) __builtin_trap();
    const GroupRowRange all = group_rows_after(GroupForm::k_offsets, sizes.data(), g, m, 0);
    if (all.batch != g || all.begin != 0 || all.end != m) __builtin_trap();
    k_end = ks.end;
    const GroupRowRange r = group_rows_after(kind, sizes.data(), g, m, end);
    if (r.begin < 0 || r.begin > r.end || r.end > m) __builtin_trap();
    if (kind == GroupForm::offsets && r.begin != end) __builtin_trap();
    if (kind == GroupForm::counts && (r.begin != 0 || r.batch != g)) __builtin_trap();
    const GroupRowRange again = group_rows(kind, sizes.data(), g, m);
    if (again.begin != r.begin || again.end != r.end) __builtin_trap();
    end = r.end;
    tiles += cdiv(r.rows(), block_m) * cdiv(n, block_n);
    ranges.push_back(r);
  }
  if (tiles > grouped_items_bound(kind, groups, m, n, block_m, block_n)) __builtin_trap();
  const GroupedTiles walk{kind, sizes.data(), groups,  m,
                          n,    block_m,      block_n, int32_t(1 + in.u8() % 8)};
  const int programs = 1 + in.u8() % 140;
  std::vector<uint8_t> seen(size_t(tiles), 0);
  int64_t first_of_group = 0;
  std::vector<int64_t> first(groups);
  for (int g = 0; g < groups; ++g) {
    first[g] = first_of_group;
    first_of_group += cdiv(ranges[g].rows(), block_m) * cdiv(n, block_n);
  }
  for (int p = 0; p < programs; ++p) {
    GroupCursor cursor;
    for (int32_t item = p; walk.seek(cursor, item); item += programs) {
      if (item >= tiles) __builtin_trap();
      const GroupedTile t = walk.tile(cursor, item);
      const GroupRowRange& r = ranges[t.group];
      if (t.rows.begin != r.begin || t.rows.end != r.end) __builtin_trap();
      if (t.row0(block_m) < r.begin || t.row0(block_m) >= r.end) __builtin_trap();
      if (t.tile.pid_n * block_n >= n) __builtin_trap();
      const int64_t index = first[t.group] + t.tile.pid_m * cdiv(n, block_n) + t.tile.pid_n;
      if (index >= tiles || seen[size_t(index)]++) __builtin_trap();
    }
  }
  for (uint8_t s : seen) {
    if (s != 1) __builtin_trap();
  }
}

void fuzz_config(Bytes& in) {
  using namespace tilegemm;
  // Mostly the parser's own alphabet, so that inputs reach past the first field.
  static constexpr char kAlphabet[] = "0123456789x/gswtcpingo-+ ";
  std::string text;
  for (int length = in.u8() % 64; length > 0; --length) {
    const uint8_t c = in.u8();
    text += c < 224 ? kAlphabet[c % (sizeof(kAlphabet) - 1)] : char(c);
  }
  std::string error;
  const std::optional<KernelConfig> config = parse_kernel_config(text, &error);
  if (config.has_value() == !error.empty()) __builtin_trap();  // a failure always says why
  if (config && parse_kernel_config(to_string(*config)) != config) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  switch (in.u8() % 3) {
    case 0:
      fuzz_validate(in);
      break;
    case 1:
      fuzz_groups(in);
      break;
    default:
      fuzz_config(in);
  }
  return 0;
}
