// Problem validation: every check gemm() makes before it touches D.
//
// Each failure names the argument and the value, so a caller can fix the call from the message
// alone. All size arithmetic is checked for int64 overflow.
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "problem/dtype.hpp"
#include "problem/groups.hpp"
#include "problem/matrix_view.hpp"
#include "problem/scales.hpp"

namespace tilegemm {
namespace {

Status invalid(const std::string& message) { return {StatusCode::invalid_argument, message}; }

std::optional<int64_t> checked_mul(int64_t x, int64_t y) {
  int64_t r;
  if (__builtin_mul_overflow(x, y, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> checked_add(int64_t x, int64_t y) {
  int64_t r;
  if (__builtin_add_overflow(x, y, &r)) return std::nullopt;
  return r;
}

bool is_storage_dtype(DType d) { return d == DType::fp32 || d == DType::fp16 || d == DType::bf16; }
bool is_known_dtype(DType d) { return int(d) >= 0 && int(d) <= int(DType::tf32x3); }
bool is_tf32_mode(DType d) { return d == DType::tf32 || d == DType::tf32x3; }

// A and B may be tf32 or tf32x3 (fp32 in memory, math on TF32 tensor cores) or fp8; D may be fp8
// (check_fp8_d says when); C and bias are storage types.
Status check_dtype(const char* name, DType d, bool input_operand, bool fp8_output = false) {
  if (!is_known_dtype(d)) {
    return invalid(std::string(name) + ".dtype is not a DType (value " + std::to_string(int(d)) +
                   ")");
  }
  if (is_storage_dtype(d) || (input_operand && (is_tf32_mode(d) || is_fp8(d))) ||
      (fp8_output && is_fp8(d))) {
    return Status::success();
  }
  if (is_tf32_mode(d)) {
    return {StatusCode::not_supported, std::string(name) + ".dtype " + std::string(to_string(d)) +
                                           " is a math mode of the inputs A and B, not a "
                                           "storage type; use fp32"};
  }
  return {StatusCode::not_supported, std::string(name) + ".dtype " + std::string(to_string(d)) +
                                         " is not supported as an output; use fp32, fp16 or bf16"};
}

// An fp8 D comes from fp8 inputs only (as cuBLASLt's); its scale and amax are for an fp8 D only.
Status check_fp8_d(const GemmProblem& p) {
  const std::string d_type(to_string(p.d.dtype));
  if (is_fp8(p.d.dtype) && !is_fp8(p.a.dtype)) {
    return {StatusCode::not_supported, "d.dtype " + d_type + " needs fp8 inputs (a.dtype is " +
                                           std::string(to_string(p.a.dtype)) + ")"};
  }
  if (!is_fp8(p.d.dtype) && (p.d.scale != nullptr || p.d.amax != nullptr)) {
    return invalid(std::string(p.d.scale != nullptr ? "d.scale" : "d.amax") +
                   " is for an fp8 D, and d.dtype is " + d_type + "; leave it null");
  }
  return Status::success();
}

// The number of scales each operand's pointer must hold (scale_count_a/b), and the scales' own
// rules: fp8 inputs only, pointers exactly when there are scales.
Status check_scales(const GemmProblem& p) {
  const Scales& s = p.scales;
  if (int(s.mode) < 0 || int(s.mode) > int(ScaleMode::block)) {
    return invalid("scales.mode is not a ScaleMode (value " + std::to_string(int(s.mode)) + ")");
  }
  if (s.mode == ScaleMode::none) {
    if (s.a != nullptr || s.b != nullptr) {
      return invalid("scales.a and scales.b must be null when scales.mode is none");
    }
    return Status::success();
  }
  if (!is_fp8(p.a.dtype)) {
    return {StatusCode::not_supported, "scales.mode " + std::string(to_string(s.mode)) +
                                           " needs fp8 inputs (a.dtype is " +
                                           std::string(to_string(p.a.dtype)) + ")"};
  }
  if (p.m > 0 && p.n > 0 && p.k > 0) {
    if (s.a == nullptr)
      return invalid("scales.a is null but scales.mode is " + std::string(to_string(s.mode)));
    if (s.b == nullptr)
      return invalid("scales.b is null but scales.mode is " + std::string(to_string(s.mode)));
  }
  return Status::success();
}

// One matrix operand as validation sees it.
struct Operand {
  const char* name;
  const void* data;
  DType dtype;
  Layout layout;
  int64_t ld;
  int64_t batch_stride;
  int64_t rows, cols;
};

// Checks the leading dimension and batch stride, and returns the number of elements from the
// first element of batch 0 to one past the last element of the last batch entry.
// A leading dimension below the row (or column) length describes no matrix, whether or not the
// call reads it (as cuBLAS refuses it): checked for every operand, empty ones too, once
// check_signs has refused a negative one.
Status check_ld(const Operand& op) {
  const std::string name = op.name;
  const int64_t min_ld = min_leading_dim(op.layout, op.rows, op.cols);
  if (op.ld != 0 && op.ld < min_ld) {
    return invalid(name + ".ld = " + std::to_string(op.ld) + " is smaller than the " +
                   (op.layout == Layout::row_major ? "row length" : "column length") + " " +
                   std::to_string(min_ld) + " of a " + std::to_string(op.rows) + "x" +
                   std::to_string(op.cols) + " " + std::string(to_string(op.layout)) +
                   "-major matrix");
  }
  return Status::success();
}

// The leading dimension and batch stride were checked before (check_signs, check_ld).
Status check_extent(const Operand& op, int64_t batch_count, int64_t* span_out) {
  std::string name = op.name;
  Strides s = strides_of(op.layout, effective_ld(op.ld, op.layout, op.rows, op.cols));
  auto overflow = [&] { return invalid(name + ": matrix extent overflows 64-bit indexing"); };
  auto last_row = checked_mul(op.rows - 1, s.row);
  auto last_col = checked_mul(op.cols - 1, s.col);
  if (!last_row || !last_col) return overflow();
  auto one = checked_add(*last_row, *last_col);
  if (!one || !(one = checked_add(*one, 1))) return overflow();
  auto batches = checked_mul(batch_count - 1, op.batch_stride);
  if (!batches) return overflow();
  auto span = checked_add(*batches, *one);
  if (!span || !checked_mul(*span, dtype_size(op.dtype))) return overflow();
  *span_out = *span;
  // The bytes of one matrix must fit in a batch stride for outputs; checked by the caller.
  return Status::success();
}

struct ByteRange {
  uintptr_t begin = 0, end = 0;
  bool overlaps(const ByteRange& o) const { return begin < o.end && o.begin < end; }
};

ByteRange bytes_of(const void* data, int64_t span, DType dtype) {
  auto begin = reinterpret_cast<uintptr_t>(data);
  return {begin, begin + static_cast<uintptr_t>(span) * static_cast<uintptr_t>(dtype_size(dtype))};
}

bool is_known_layout(Layout l) { return l == Layout::row_major || l == Layout::col_major; }

// What every matrix must satisfy whatever the sizes: a Layout, and a leading dimension and batch
// stride that are not negative.
Status check_signs(const char* name, Layout layout, int64_t ld, int64_t batch_stride) {
  const std::string n = name;
  if (!is_known_layout(layout)) {
    return invalid(n + ".layout is not a Layout (value " + std::to_string(int(layout)) + ")");
  }
  if (ld < 0) return invalid(n + ".ld must be >= 0 (got " + std::to_string(ld) + ")");
  if (batch_stride < 0) {
    return invalid(n + ".batch_stride must be >= 0 (got " + std::to_string(batch_stride) + ")");
  }
  return Status::success();
}

// alpha, beta and the leaky_relu slope must be finite numbers: a NaN or an infinity would write
// NaN or infinities into all of D (for beta even where C is finite), which is never what a call
// means.
Status check_scalars(const EpilogueDesc& e) {
  const auto finite = [](float x) { return x == x && x - x == 0.0f; };
  const auto text = [](float x) { return x == x ? (x > 0 ? "inf" : "-inf") : "NaN"; };
  if (!finite(e.alpha))
    return invalid(std::string("epilogue.alpha must be finite (got ") + text(e.alpha) + ")");
  if (!finite(e.beta))
    return invalid(std::string("epilogue.beta must be finite (got ") + text(e.beta) + ")");
  if (int(e.activation) < 0 || int(e.activation) > int(Activation::silu)) {
    return invalid("epilogue.activation is not an Activation (value " +
                   std::to_string(int(e.activation)) + ")");
  }
  if (e.activation == Activation::leaky_relu && !finite(e.leaky_relu_slope)) {
    return invalid(std::string("epilogue.leaky_relu_slope must be finite (got ") +
                   text(e.leaky_relu_slope) + ")");
  }
  return Status::success();
}

// A grouped GEMM's own rules (tilegemm.hpp: Groups): the sizes' pointer exactly when there are
// groups; in the offsets form the groups share the M rows of A, C and D, in the k_offsets form the
// K values of A and B; fp8 scales in the rows forms only.
Status check_groups(const GemmProblem& p) {
  const Groups& g = p.groups;
  if (int(g.form) < 0 || int(g.form) > int(GroupForm::ptr_array)) {
    return invalid("groups.form is not a GroupForm (value " + std::to_string(int(g.form)) + ")");
  }
  if (g.form == GroupForm::ptr_array) {
    return invalid(
        "groups.form ptr_array is gemm_grouped()'s form (problems of their own); a "
        "GemmProblem's groups are none, offsets, counts or k_offsets");
  }
  if (g.form == GroupForm::none) {
    if (g.sizes != nullptr) return invalid("groups.sizes must be null when groups.form is none");
    return Status::success();
  }
  const std::string form(to_string(g.form));
  if (g.sizes == nullptr) return invalid("groups.sizes is null but groups.form is " + form);
  if (g.form == GroupForm::k_offsets && p.scales.mode != ScaleMode::none) {
    return {StatusCode::not_supported,
            "groups.form k_offsets with scales.mode " + std::string(to_string(p.scales.mode)) +
                ": fp8 scales are taken by the rows forms (offsets, counts), not along K yet"};
  }
  const auto shared = [&](const char* name, int64_t stride, const char* what) {
    return invalid(std::string(name) + ".batch_stride must be 0 when groups.form is " + form +
                   " (the groups' " + what + " follow each other in one matrix; got " +
                   std::to_string(stride) + ")");
  };
  if (g.form == GroupForm::offsets) {
    if (p.a.batch_stride != 0) return shared("a", p.a.batch_stride, "rows");
    if (p.epilogue.beta != 0.0f && p.c.batch_stride != 0) {
      return shared("c", p.c.batch_stride, "rows");
    }
    if (p.d.batch_stride != 0) return shared("d", p.d.batch_stride, "rows");
  }
  if (g.form == GroupForm::k_offsets) {
    if (p.a.batch_stride != 0) return shared("a", p.a.batch_stride, "K values");
    if (p.b.batch_stride != 0) return shared("b", p.b.batch_stride, "K values");
  }
  return Status::success();
}

}  // namespace

Status validate(const GemmProblem& p) {
  if (p.m < 0) return invalid("m must be >= 0 (got " + std::to_string(p.m) + ")");
  if (p.n < 0) return invalid("n must be >= 0 (got " + std::to_string(p.n) + ")");
  if (p.k < 0) return invalid("k must be >= 0 (got " + std::to_string(p.k) + ")");
  if (p.batch_count < 1) {
    return invalid("batch_count must be >= 1 (got " + std::to_string(p.batch_count) + ")");
  }
  if (Status s = check_dtype("a", p.a.dtype, true); !s.ok()) return s;
  if (Status s = check_dtype("b", p.b.dtype, true); !s.ok()) return s;
  if (Status s = check_dtype("d", p.d.dtype, false, true); !s.ok()) return s;
  if (p.a.dtype != p.b.dtype && !(is_fp8(p.a.dtype) && is_fp8(p.b.dtype))) {
    return {StatusCode::not_supported, "a.dtype (" + std::string(to_string(p.a.dtype)) +
                                           ") and b.dtype (" + std::string(to_string(p.b.dtype)) +
                                           ") must be the same (or both fp8)"};
  }
  if (Status s = check_scales(p); !s.ok()) return s;
  if (Status s = check_fp8_d(p); !s.ok()) return s;
  const bool reads_c = p.epilogue.beta != 0.0f;
  if (reads_c) {
    if (Status s = check_dtype("c", p.c.dtype, false); !s.ok()) return s;
  }
  // An fp8 D's bias is fp32 or bf16, as cuBLASLt's.
  const DType bias_or = is_fp8(p.d.dtype) ? DType::bf16 : p.d.dtype;
  if (p.epilogue.bias != nullptr && p.epilogue.bias_dtype != DType::fp32 &&
      p.epilogue.bias_dtype != bias_or) {
    return {StatusCode::not_supported,
            "epilogue.bias_dtype (" + std::string(to_string(p.epilogue.bias_dtype)) +
                ") must be fp32 or " +
                (is_fp8(p.d.dtype) ? std::string("bf16 (d.dtype is fp8)")
                                   : "d.dtype (" + std::string(to_string(p.d.dtype)) + ")")};
  }
  if (Status s = check_scalars(p.epilogue); !s.ok()) return s;
  if (p.epilogue.bias_batch_stride < 0) {
    return invalid("epilogue.bias_batch_stride must be >= 0 (got " +
                   std::to_string(p.epilogue.bias_batch_stride) + ")");
  }
  if (Status s = check_groups(p); !s.ok()) return s;
  if (Status s = check_signs("a", p.a.layout, p.a.ld, p.a.batch_stride); !s.ok()) return s;
  if (Status s = check_signs("b", p.b.layout, p.b.ld, p.b.batch_stride); !s.ok()) return s;
  if (reads_c) {
    if (Status s = check_signs("c", p.c.layout, p.c.ld, p.c.batch_stride); !s.ok()) return s;
  }
  if (Status s = check_signs("d", p.d.layout, p.d.ld, p.d.batch_stride); !s.ok()) return s;
  if (!checked_mul(p.m, p.n) || !checked_mul(p.m, p.k) || !checked_mul(p.k, p.n)) {
    return invalid("m*n, m*k or k*n overflows 64-bit indexing");
  }
  for (const Operand& op : {Operand{"a", p.a.data, p.a.dtype, p.a.layout, p.a.ld, 0, p.m, p.k},
                            Operand{"b", p.b.data, p.b.dtype, p.b.layout, p.b.ld, 0, p.k, p.n},
                            Operand{"d", p.d.data, p.d.dtype, p.d.layout, p.d.ld, 0, p.m, p.n}}) {
    if (Status s = check_ld(op); !s.ok()) return s;
  }
  if (reads_c) {
    if (Status s = check_ld({"c", p.c.data, p.c.dtype, p.c.layout, p.c.ld, 0, p.m, p.n}); !s.ok()) {
      return s;
    }
  }
  if (p.m == 0 || p.n == 0) return Status::success();  // nothing to compute or write

  // Pointers: A and B only matter when there is a K loop; C only when beta != 0.
  const bool reads_ab = p.k > 0;
  if (reads_ab && p.a.data == nullptr) return invalid("a.data is null but m*k > 0");
  if (reads_ab && p.b.data == nullptr) return invalid("b.data is null but k*n > 0");
  if (reads_c && p.c.data == nullptr) return invalid("c.data is null but beta != 0");
  if (p.d.data == nullptr) return invalid("d.data is null but m*n > 0");

  Operand a{"a", p.a.data, p.a.dtype, p.a.layout, p.a.ld, p.a.batch_stride, p.m, p.k};
  Operand b{"b", p.b.data, p.b.dtype, p.b.layout, p.b.ld, p.b.batch_stride, p.k, p.n};
  Operand c{"c", p.c.data, p.c.dtype, p.c.layout, p.c.ld, p.c.batch_stride, p.m, p.n};
  Operand d{"d", p.d.data, p.d.dtype, p.d.layout, p.d.ld, p.d.batch_stride, p.m, p.n};
  // The batch entries of each matrix (one where the groups share it).
  const GroupEntries entries = entries_in_memory(p.groups.form, p.batch_count);
  int64_t span_a = 0, span_b = 0, span_c = 0, span_d = 0;
  if (reads_ab) {
    if (Status s = check_extent(a, entries.a, &span_a); !s.ok()) return s;
    if (Status s = check_extent(b, entries.b, &span_b); !s.ok()) return s;
  }
  if (reads_c) {
    if (Status s = check_extent(c, entries.c_d, &span_c); !s.ok()) return s;
  }
  if (Status s = check_extent(d, entries.c_d, &span_d); !s.ok()) return s;

  // Each batch entry of D must have its own memory, or the entries would overwrite each other.
  if (entries.c_d > 1) {
    int64_t one_d = 0;
    check_extent(d, 1, &one_d);
    if (p.d.batch_stride < one_d) {
      return invalid("d.batch_stride = " + std::to_string(p.d.batch_stride) +
                     " makes batch entries of D overlap (one entry spans " + std::to_string(one_d) +
                     " elements)");
    }
  }

  ByteRange d_bytes = bytes_of(p.d.data, span_d, p.d.dtype);
  if (reads_ab && d_bytes.overlaps(bytes_of(p.a.data, span_a, p.a.dtype))) {
    return invalid("d overlaps a: the output may not share memory with an input of the product");
  }
  if (reads_ab && d_bytes.overlaps(bytes_of(p.b.data, span_b, p.b.dtype))) {
    return invalid("d overlaps b: the output may not share memory with an input of the product");
  }
  if (reads_c && d_bytes.overlaps(bytes_of(p.c.data, span_c, p.c.dtype))) {
    const bool in_place =
        p.c.data == p.d.data && p.c.dtype == p.d.dtype && p.c.layout == p.d.layout &&
        effective_ld(p.c.ld, p.c.layout, p.m, p.n) == effective_ld(p.d.ld, p.d.layout, p.m, p.n) &&
        p.c.batch_stride == p.d.batch_stride;
    if (!in_place) {
      return invalid(
          "d overlaps c but is not the same matrix: in-place use needs the same pointer, dtype, "
          "layout, ld and batch_stride");
    }
  }
  if (p.epilogue.bias != nullptr) {
    const auto biases = checked_mul(p.batch_count - 1, p.epilogue.bias_batch_stride);
    const auto span = biases ? checked_add(*biases, p.n) : std::nullopt;
    if (!span || !checked_mul(*span, dtype_size(p.epilogue.bias_dtype))) {
      return invalid("epilogue.bias: its extent overflows 64-bit indexing");
    }
    if (d_bytes.overlaps(bytes_of(p.epilogue.bias, *span, p.epilogue.bias_dtype))) {
      return invalid("d overlaps epilogue.bias");
    }
    if (bytes_of(p.d.amax, p.d.amax != nullptr ? 1 : 0, DType::fp32)
            .overlaps(bytes_of(p.epilogue.bias, *span, p.epilogue.bias_dtype))) {
      return invalid("d.amax overlaps epilogue.bias");
    }
  }
  if (p.groups.form != GroupForm::none &&
      d_bytes.overlaps(bytes_of(p.groups.sizes, p.batch_count, DType::fp32))) {
    return invalid("d overlaps groups.sizes");
  }
  if (reads_ab && p.scales.mode != ScaleMode::none) {
    const int64_t count_a = scale_count_a(p), count_b = scale_count_b(p);
    if (d_bytes.overlaps(bytes_of(p.scales.a, count_a, DType::fp32))) {
      return invalid("d overlaps scales.a");
    }
    if (d_bytes.overlaps(bytes_of(p.scales.b, count_b, DType::fp32))) {
      return invalid("d overlaps scales.b");
    }
  }
  // An fp8 D's scale is read and its amax written while D is: neither may share D's memory, and
  // the amax (written first, on the GPU) none of what the call reads (the bias: above).
  if (p.d.scale != nullptr && d_bytes.overlaps(bytes_of(p.d.scale, 1, DType::fp32))) {
    return invalid("d overlaps d.scale");
  }
  if (p.d.amax != nullptr) {
    const bool scaled = reads_ab && p.scales.mode != ScaleMode::none;
    const std::pair<const char*, ByteRange> others[] = {
        {"d", d_bytes},
        {"d.scale", bytes_of(p.d.scale, p.d.scale != nullptr ? 1 : 0, DType::fp32)},
        {"a", reads_ab ? bytes_of(p.a.data, span_a, p.a.dtype) : ByteRange{}},
        {"b", reads_ab ? bytes_of(p.b.data, span_b, p.b.dtype) : ByteRange{}},
        {"c", reads_c ? bytes_of(p.c.data, span_c, p.c.dtype) : ByteRange{}},
        {"scales.a", scaled ? bytes_of(p.scales.a, scale_count_a(p), DType::fp32) : ByteRange{}},
        {"scales.b", scaled ? bytes_of(p.scales.b, scale_count_b(p), DType::fp32) : ByteRange{}}};
    const ByteRange amax = bytes_of(p.d.amax, 1, DType::fp32);
    for (const auto& [name, bytes] : others) {
      if (amax.overlaps(bytes)) return invalid(std::string("d.amax overlaps ") + name);
    }
  }
  return Status::success();
}

}  // namespace tilegemm
