#include "array_problem.hpp"

#include "problem/scales.hpp"

namespace tilegemm::python {
namespace {

std::string shape_text(const std::vector<int64_t>& shape, size_t begin = 0,
                       size_t end = size_t(-1)) {
  std::string text = "(";
  end = std::min(end, shape.size());
  for (size_t i = begin; i < end; ++i) {
    text += std::to_string(shape[i]);
    if (i + 1 < end || end - begin == 1) text += ",";
    if (i + 1 < end) text += " ";
  }
  return text + ")";
}

std::vector<int64_t> batch_dims(const std::vector<int64_t>& shape) {
  return shape.size() > 2 ? std::vector<int64_t>(shape.begin(), shape.end() - 2)
                          : std::vector<int64_t>{};
}

Status invalid(const std::string& message) { return {StatusCode::invalid_argument, message}; }

// The dimensions [0, end) of `array` as one batch: their count and the stride between entries.
// Evenly strided when each dimension's stride is the next one's stride times its size (dimensions
// of size 1 skipped); a single entry has stride 0.
Status collapse_batch(const ArrayRef& array, size_t end, int64_t* count, int64_t* stride) {
  *count = 1;
  *stride = 0;
  int64_t inner_stride = 0, inner_size = 0;  // the innermost dimension of size > 1 seen so far
  for (size_t i = end; i-- > 0;) {
    const int64_t size = array.shape[i], s = array.strides[i];
    *count *= size;
    if (size == 1) continue;
    if (inner_size == 0) {
      inner_stride = s;
    } else if (s != inner_stride * inner_size) {
      return invalid(std::string(array.name) + ": its batch dimensions " +
                     shape_text(array.shape, 0, end) + " with strides " +
                     shape_text(array.strides, 0, end) +
                     " are not evenly strided; make it contiguous");
    }
    inner_size = inner_size == 0 ? size : inner_size * size;
  }
  if (*count > 1) *stride = inner_stride;
  if (*stride < 0) {
    return invalid(std::string(array.name) + ": negative batch stride " + std::to_string(*stride));
  }
  return Status::success();
}

Status matrix_of(const ArrayRef& array, int64_t rows, int64_t cols, Layout* layout, int64_t* ld) {
  const size_t n = array.shape.size();
  std::string error;
  const auto found = matrix_layout(rows, cols, array.strides[n - 2], array.strides[n - 1], &error);
  if (!found) return invalid(std::string(array.name) + ": " + error);
  *layout = found->layout;
  *ld = found->ld;
  return Status::success();
}

std::string device_text(const ArrayRef& array) {
  return array.on_gpu ? "cuda:" + std::to_string(array.device_id) : std::string("the host");
}

// out has the product's `shape`, and every other array lies where a does (a grouped product's
// sizes too: the call reads them where it runs).
Status check_out_and_places(const MatmulArgs& args, const std::vector<int64_t>& shape) {
  if (args.out.shape != shape) {
    return invalid("out: its shape is " + shape_text(args.out.shape) + "; the product's is " +
                   shape_text(shape));
  }
  const auto given = [](const std::optional<ArrayRef>& x) { return x ? &*x : nullptr; };
  for (const ArrayRef* other :
       {&args.b, &args.out, given(args.c), given(args.bias), given(args.sizes), given(args.scale_a),
        given(args.scale_b), given(args.scale_result), given(args.amax)}) {
    if (other && (other->on_gpu != args.a.on_gpu || other->device_id != args.a.device_id)) {
      return invalid(std::string(other->name) + ": is on " + device_text(*other) +
                     ", while a is on " + device_text(args.a));
    }
  }
  return Status::success();
}

// bias: (N,), or one vector per batch entry (batch..., N).
Status take_bias(const MatmulArgs& args, const std::vector<int64_t>& batch, GemmProblem* p) {
  if (!args.bias) return Status::success();
  const ArrayRef& bias = *args.bias;
  const size_t n = bias.shape.size();
  const bool shared = n == 1;
  const bool per_entry =
      n >= 2 && std::vector<int64_t>(bias.shape.begin(), bias.shape.end() - 1) == batch;
  if ((!shared && !per_entry) || bias.shape.back() != p->n) {
    std::vector<int64_t> per_entry_shape = batch;
    per_entry_shape.push_back(p->n);
    return invalid("bias: its shape is " + shape_text(bias.shape) +
                   "; it must be (N,) = " + shape_text({p->n}) +
                   ", or one vector per batch entry " + shape_text(per_entry_shape));
  }
  if (p->n > 1 && bias.strides.back() != 1) {
    return invalid("bias: its values must be contiguous (stride 1, not " +
                   std::to_string(bias.strides.back()) + ")");
  }
  int64_t entries = 1;
  if (per_entry) {
    if (Status s = collapse_batch(bias, n - 1, &entries, &p->epilogue.bias_batch_stride); !s.ok()) {
      return s;
    }
  }
  p->epilogue.bias = bias.data;
  p->epilogue.bias_dtype = bias.dtype;
  return Status::success();
}

int64_t element_count(const ArrayRef& array) {
  int64_t count = 1;
  for (int64_t size : array.shape) count *= size;
  return count;
}

// Whether `array` is rows x cols with element (r, c) at r * row_stride + c * col_stride, for the
// dimensions of more than one element (a dimension of one has no stride that matters).
bool lies_as(const ArrayRef& array, int64_t rows, int64_t cols, int64_t row_stride,
             int64_t col_stride) {
  if (array.shape != std::vector<int64_t>{rows, cols}) return false;
  return (rows <= 1 || array.strides[0] == row_stride) &&
         (cols <= 1 || array.strides[1] == col_stride);
}

// fp8 scales (scaled_mm): float32, their mode from their shapes (array_problem.hpp), shared by
// every batch entry; an fp8 out's scale and amax, one float32 each. The library checks the rest
// (fp8 inputs, an fp8 out for scale_result and amax).
Status take_scales(const MatmulArgs& args, GemmProblem* p) {
  p->fast_accumulation = args.fast_accumulation;
  for (const auto* x : {&args.scale_a, &args.scale_b, &args.scale_result, &args.amax}) {
    if (*x && (*x)->dtype != DType::fp32) {
      return invalid(std::string((*x)->name) + ": its dtype is " +
                     std::string(to_string((*x)->dtype)) + "; it holds float32 values");
    }
  }
  for (const auto* x : {&args.scale_result, &args.amax}) {
    if (*x && element_count(**x) != 1) {
      return invalid(std::string((*x)->name) + ": its shape is " + shape_text((*x)->shape) +
                     "; it holds one value");
    }
  }
  if (args.scale_result) p->d.scale = static_cast<const float*>(args.scale_result->data);
  if (args.amax) p->d.amax = static_cast<float*>(args.amax->data);
  if (!args.scale_a && !args.scale_b) return Status::success();
  if (!args.scale_a || !args.scale_b) {
    return invalid(std::string(args.scale_a ? "scale_b" : "scale_a") + ": is None, while " +
                   (args.scale_a ? "scale_a" : "scale_b") +
                   " is given; give both scales or neither");
  }
  const ArrayRef &sa = *args.scale_a, &sb = *args.scale_b;
  const int64_t m = p->m, n = p->n, kb = scale_blocks(p->k), nb = scale_blocks(p->n);
  ScaleMode mode = ScaleMode::none;
  if (element_count(sa) == 1 && element_count(sb) == 1) {
    mode = ScaleMode::tensor;
  } else if (lies_as(sa, m, 1, 1, 1) && lies_as(sb, 1, n, n, 1)) {
    mode = ScaleMode::channel;
  } else if (lies_as(sa, m, kb, 1, m) && lies_as(sb, kb, nb, 1, kb)) {
    mode = ScaleMode::block;
  } else {
    return invalid(
        "scale_a, scale_b: shapes " + shape_text(sa.shape) + " and " + shape_text(sb.shape) +
        " with strides " + shape_text(sa.strides) + " and " + shape_text(sb.strides) +
        " are none of the scale modes: per tensor, one value each; per row and "
        "column, " +
        shape_text({m, 1}) + " and " + shape_text({1, n}) +
        " (contiguous); 1 x 128 and 128 x 128 blocks, " + shape_text({m, kb}) + " and " +
        shape_text({kb, nb}) + ", both column-major (x.t().contiguous().t() makes a scale so)");
  }
  p->scales = {mode, static_cast<const float*>(sa.data), static_cast<const float*>(sb.data)};
  return Status::success();
}

// A grouped GEMM's sizes: one int32 value per group, contiguous (check_out_and_places has
// checked that they lie beside a).
Status take_sizes(const MatmulArgs& args, int64_t groups, GemmProblem* p) {
  if (!args.sizes) return invalid("offs, counts: a grouped product needs its groups' sizes");
  const ArrayRef& sizes = *args.sizes;
  const std::string name = sizes.name;
  if (sizes.shape.size() != 1 || sizes.shape[0] != groups) {
    return invalid(name + ": its shape is " + shape_text(sizes.shape) +
                   "; it holds one value per group, " + shape_text({groups}));
  }
  if (groups > 1 && sizes.strides[0] != 1) {
    return invalid(name + ": its values must be contiguous (stride 1, not " +
                   std::to_string(sizes.strides[0]) + ")");
  }
  p->groups = {args.groups, static_cast<const int32_t*>(sizes.data)};
  return Status::success();
}

// A grouped product's start: out of `shape`, no c, the problem's sizes.
Status start_grouped(const MatmulArgs& args, const std::vector<int64_t>& shape, int64_t m,
                     int64_t n, int64_t k, int64_t groups, GemmProblem* p) {
  if (Status s = check_out_and_places(args, shape); !s.ok()) return s;
  if (args.c) return invalid("c: a grouped product takes no c");
  p->m = m;
  p->n = n;
  p->k = k;
  p->batch_count = groups;
  return Status::success();
}

// And its end: the epilogue (alpha, the activation, a bias per group) and the groups' sizes.
Status finish_grouped(const MatmulArgs& args, GemmProblem* p) {
  p->epilogue.alpha = args.alpha;
  p->epilogue.activation = args.activation;
  p->epilogue.leaky_relu_slope = args.leaky_relu_slope;
  if (Status s = take_bias(args, {p->batch_count}, p); !s.ok()) return s;
  return take_sizes(args, p->batch_count, p);
}

// The offsets form: a tokens x K, b groups x K x N, out tokens x N (C and D shared by the groups,
// batch stride 0); c is not taken.
Status make_offsets_problem(const MatmulArgs& args, GemmProblem* problem) {
  const ArrayRef &a = args.a, &b = args.b, &out = args.out;
  if (a.shape.size() != 2) {
    return invalid(
        "a: offs takes a (tokens, K) matrix, each group's rows one after the other; "
        "its shape is " +
        shape_text(a.shape));
  }
  if (b.shape.size() != 3) {
    return invalid("b: offs takes one K x N matrix per group, (groups, K, N); its shape is " +
                   shape_text(b.shape));
  }
  if (b.shape[1] != a.shape[1]) {
    return invalid("b: its shape " + shape_text(b.shape) + " has " + std::to_string(b.shape[1]) +
                   " rows per group, but a's shape " + shape_text(a.shape) + " has " +
                   std::to_string(a.shape[1]) + " columns (K)");
  }
  GemmProblem& p = *problem;
  if (Status s = start_grouped(args, {a.shape[0], b.shape[2]}, a.shape[0], b.shape[2], a.shape[1],
                               b.shape[0], &p);
      !s.ok()) {
    return s;
  }
  if (p.batch_count == 0) return Status::success();  // no group: nothing is read or written
  p.d = {out.data, out.dtype, Layout::row_major, 0, 0};
  if (Status s = matrix_of(out, p.m, p.n, &p.d.layout, &p.d.ld); !s.ok()) return s;
  p.a = {a.data, a.dtype, Layout::row_major, 0, 0};
  if (Status s = matrix_of(a, p.m, p.k, &p.a.layout, &p.a.ld); !s.ok()) return s;
  int64_t groups = 0;
  p.b.data = b.data;
  p.b.dtype = b.dtype;
  if (Status s = collapse_batch(b, 1, &groups, &p.b.batch_stride); !s.ok()) return s;
  if (Status s = matrix_of(b, p.k, p.n, &p.b.layout, &p.b.ld); !s.ok()) return s;
  return finish_grouped(args, &p);
}

// The k_offsets form: a M x K and b K x N, holding each group's K values one after the other; out
// groups x M x N, a D per group; c is not taken.
Status make_k_offsets_problem(const MatmulArgs& args, GemmProblem* problem) {
  const ArrayRef &a = args.a, &b = args.b, &out = args.out;
  if (b.shape[0] != a.shape[1]) {
    return invalid("b: its shape " + shape_text(b.shape) + " has " + std::to_string(b.shape[0]) +
                   " rows, but a's shape " + shape_text(a.shape) + " has " +
                   std::to_string(a.shape[1]) + " columns (K, which the groups share)");
  }
  if (!args.sizes) return invalid("offs: a grouped product needs its groups' sizes");
  if (args.sizes->shape.size() != 1) {
    return invalid(std::string(args.sizes->name) + ": its shape is " +
                   shape_text(args.sizes->shape) + "; it holds one value per group (1-D)");
  }
  const int64_t groups = args.sizes->shape[0];
  GemmProblem& p = *problem;
  if (Status s = start_grouped(args, {groups, a.shape[0], b.shape[1]}, a.shape[0], b.shape[1],
                               a.shape[1], groups, &p);
      !s.ok()) {
    return s;
  }
  if (groups == 0) return Status::success();  // no group: nothing is read or written
  int64_t count = 0;
  p.d = {out.data, out.dtype, Layout::row_major, 0, 0};
  if (Status s = collapse_batch(out, 1, &count, &p.d.batch_stride); !s.ok()) return s;
  if (count > 1 && p.d.batch_stride == 0) {
    return invalid("out: its batch entries overlap (batch stride 0); it must be writable apart");
  }
  if (Status s = matrix_of(out, p.m, p.n, &p.d.layout, &p.d.ld); !s.ok()) return s;
  p.a = {a.data, a.dtype, Layout::row_major, 0, 0};
  if (Status s = matrix_of(a, p.m, p.k, &p.a.layout, &p.a.ld); !s.ok()) return s;
  p.b = {b.data, b.dtype, Layout::row_major, 0, 0};
  if (Status s = matrix_of(b, p.k, p.n, &p.b.layout, &p.b.ld); !s.ok()) return s;
  return finish_grouped(args, &p);
}
}  // namespace

std::optional<MatrixLayout> matrix_layout(int64_t rows, int64_t cols, int64_t row_stride,
                                          int64_t col_stride, std::string* error) {
  // An empty matrix is read nowhere, and a dimension of size 1 has no stride that matters
  // (torch gives it any value).
  if (rows == 0 || cols == 0) return MatrixLayout{Layout::row_major, cols > 1 ? cols : 1};
  // A single row is row-major when its elements are adjacent and column-major with a leading
  // dimension of its element stride otherwise (a padded column-major view keeps ld > 1); the
  // same holds for a single column by symmetry.
  if (rows <= 1 && cols <= 1) return MatrixLayout{Layout::row_major, 1};
  if (rows <= 1) row_stride = col_stride == 1 ? cols : 1;
  if (cols <= 1) col_stride = row_stride == 1 ? rows : 1;
  if (col_stride == 1 && row_stride >= cols) return MatrixLayout{Layout::row_major, row_stride};
  if (row_stride == 1 && col_stride >= rows) return MatrixLayout{Layout::col_major, col_stride};
  *error = "strides (" + std::to_string(row_stride) + ", " + std::to_string(col_stride) +
           ") of a " + std::to_string(rows) + " x " + std::to_string(cols) +
           " matrix are neither row-major (last stride 1) nor column-major (second-to-last "
           "stride 1) without overlap; make it contiguous";
  return std::nullopt;
}

std::vector<int64_t> output_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                  std::string* error) {
  if (a.size() < 2) {
    *error = "a: needs 2 or more dimensions (a matrix, or a batch of them); its shape is " +
             shape_text(a);
    return {};
  }
  if (b.size() < 2) {
    *error = "b: needs 2 or more dimensions (a matrix, or a batch of them); its shape is " +
             shape_text(b);
    return {};
  }
  if (a[a.size() - 1] != b[b.size() - 2]) {
    *error = "b: its shape " + shape_text(b) + " has " + std::to_string(b[b.size() - 2]) +
             " rows, but a's shape " + shape_text(a) + " has " + std::to_string(a[a.size() - 1]) +
             " columns (K)";
    return {};
  }
  const std::vector<int64_t> batch_a = batch_dims(a), batch_b = batch_dims(b);
  if (!batch_a.empty() && !batch_b.empty() && batch_a != batch_b) {
    *error = "a, b: batch dimensions " + shape_text(batch_a) + " and " + shape_text(batch_b) +
             " differ; a 2-D operand is shared by every batch entry of the other, and no other "
             "broadcast is taken";
    return {};
  }
  std::vector<int64_t> shape = batch_a.empty() ? batch_b : batch_a;
  shape.push_back(a[a.size() - 2]);
  shape.push_back(b[b.size() - 1]);
  return shape;
}

Status make_problem(const MatmulArgs& args, GemmProblem* problem) {
  if (args.groups == GroupForm::offsets) return make_offsets_problem(args, problem);
  if (args.groups == GroupForm::k_offsets) return make_k_offsets_problem(args, problem);
  std::string error;
  const std::vector<int64_t> shape = output_shape(args.a.shape, args.b.shape, &error);
  if (shape.empty()) return invalid(error);
  if (Status s = check_out_and_places(args, shape); !s.ok()) return s;
  GemmProblem& p = *problem;
  const size_t rank = shape.size();
  p.m = shape[rank - 2];
  p.n = shape[rank - 1];
  p.k = args.a.shape.back();

  int64_t count = 0, stride = 0;
  if (Status s = collapse_batch(args.out, rank - 2, &count, &stride); !s.ok()) return s;
  if (count > 1 && stride == 0) {
    return invalid("out: its batch entries overlap (batch stride 0); it must be writable apart");
  }
  p.batch_count = count;
  p.d = {args.out.data, args.out.dtype, Layout::row_major, 0, stride};
  if (count == 0) return Status::success();  // no batch entry: nothing is read or written
  if (Status s = matrix_of(args.out, p.m, p.n, &p.d.layout, &p.d.ld); !s.ok()) return s;

  const auto input = [&](const ArrayRef& array, int64_t rows, int64_t cols, MatrixInput* in) {
    int64_t entries = 1;
    in->data = array.data;
    in->dtype = array.dtype;
    if (Status s = collapse_batch(array, array.shape.size() - 2, &entries, &in->batch_stride);
        !s.ok()) {
      return s;
    }
    return matrix_of(array, rows, cols, &in->layout, &in->ld);
  };
  if (Status s = input(args.a, p.m, p.k, &p.a); !s.ok()) return s;
  if (Status s = input(args.b, p.k, p.n, &p.b); !s.ok()) return s;
  if (args.precision != "ieee" && args.precision != "tf32" && args.precision != "tf32x3") {
    return invalid("input_precision: '" + args.precision + "' is not 'ieee', 'tf32' or 'tf32x3'");
  }
  if (args.precision != "ieee" && p.a.dtype == DType::fp32 && p.b.dtype == DType::fp32) {
    p.a.dtype = p.b.dtype = args.precision == "tf32" ? DType::tf32 : DType::tf32x3;
  }

  if (args.c) {
    const ArrayRef& c = *args.c;
    const std::vector<int64_t> matrix{p.m, p.n};
    if (c.shape != shape && c.shape != matrix) {
      return invalid("c: its shape is " + shape_text(c.shape) + "; it must be out's, " +
                     shape_text(shape) + ", or one M x N matrix " + shape_text(matrix) +
                     " for every batch entry (a vector per column goes in bias)");
    }
    if (Status s = input(c, p.m, p.n, &p.c); !s.ok()) return s;
  } else if (args.beta != 0.0f) {
    return invalid("c: beta is " + std::to_string(args.beta) + " but no c was given");
  }

  p.epilogue.alpha = args.alpha;
  p.epilogue.beta = args.beta;
  p.epilogue.activation = args.activation;
  p.epilogue.leaky_relu_slope = args.leaky_relu_slope;
  if (Status s = take_bias(args, std::vector<int64_t>(shape.begin(), shape.end() - 2), &p);
      !s.ok()) {
    return s;
  }
  if (Status s = take_scales(args, &p); !s.ok()) return s;
  if (args.groups == GroupForm::counts) return take_sizes(args, count, &p);
  return Status::success();
}

}  // namespace tilegemm::python
