#include "cpu/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <thread>

#include "problem/dtype.hpp"
#include "problem/matrix_view.hpp"

namespace tilegemm::reference {
namespace {

double activation(const EpilogueDesc& e, double x) {
  switch (e.activation) {
    case Activation::relu:
      return std::max(x, 0.0);
    case Activation::leaky_relu:
      return x > 0 ? x : double(e.leaky_relu_slope) * x;
    case Activation::gelu:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case Activation::silu:
      return x / (1.0 + std::exp(-x));
    default:
      return x;
  }
}

// The scale of A[row, kk] and of B[kk, col] (tilegemm.hpp's ScaleMode), as doubles.
double scale_a(const GemmProblem& p, int64_t row, int64_t kk) {
  switch (p.scales.mode) {
    case ScaleMode::tensor:
      return p.scales.a[0];
    case ScaleMode::channel:
      return p.scales.a[row];
    case ScaleMode::block:
      return p.scales.a[(kk / 128) * p.m + row];
    default:
      return 1.0;
  }
}
double scale_b(const GemmProblem& p, int64_t kk, int64_t col) {
  switch (p.scales.mode) {
    case ScaleMode::tensor:
      return p.scales.b[0];
    case ScaleMode::channel:
      return p.scales.b[col];
    case ScaleMode::block:
      return p.scales.b[(col / 128) * ((p.k + 127) / 128) + kk / 128];
    default:
      return 1.0;
  }
}

std::vector<int64_t> all_rows_if_empty(const std::vector<int64_t>& rows, int64_t m) {
  if (!rows.empty()) return rows;
  std::vector<int64_t> all(m);
  std::iota(all.begin(), all.end(), 0);
  return all;
}

}  // namespace

std::vector<double> gemm(const GemmProblem& p, const std::vector<int64_t>& row_list,
                         int num_threads) {
  const std::vector<int64_t> rows = all_rows_if_empty(row_list, p.m);
  const int64_t r = int64_t(rows.size()), n = p.n, k = p.k;
  std::vector<double> out(size_t(p.batch_count * r * n), 0.0);
  if (r == 0 || n == 0) return out;
  const MatrixView a = view_of(p.a, p.m, p.k), b = view_of(p.b, p.k, p.n),
                   c = view_of(p.c, p.m, p.n);
  const double d_scale = p.d.scale != nullptr ? double(*p.d.scale) : 1.0;  // an fp8 D's
  const int threads =
      num_threads > 0 ? num_threads : int(std::max(1u, std::thread::hardware_concurrency()));

  // Runs body(t) for t in [0, count) on up to `threads` threads, each taking every used-th t.
  const auto parallel = [threads](int64_t count, const auto& body) {
    const int used = int(std::min<int64_t>(threads, count));
    const auto run = [&](int first) {
      for (int64_t t = first; t < count; t += used) body(t);
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < used; ++t) pool.emplace_back(run, t);
    run(0);
    for (auto& t : pool) t.join();
  };
  // Work items are blocks of 8 rows x 512 columns, so the accumulators stay in cache while B
  // streams past; items, not rows, are shared among the threads, so that a problem of few rows
  // (decode) keeps every core busy too.
  constexpr int64_t kRowBlock = 8, kColBlock = 512;
  const int64_t row_blocks = (r + kRowBlock - 1) / kRowBlock;
  const int64_t col_blocks = (n + kColBlock - 1) / kColBlock;
  std::vector<double> b_rows(size_t(k * n));
  for (int64_t batch = 0; batch < p.batch_count; ++batch) {
    // B once as row-major doubles, so the inner loop streams contiguous memory.
    parallel(k, [&](int64_t kk) {
      for (int64_t j = 0; j < n; ++j)
        b_rows[size_t(kk * n + j)] =
            double(load_as_float(b.data, b.dtype, b.offset(batch, kk, j))) * scale_b(p, kk, j);
    });
    double* out_batch = out.data() + batch * r * n;
    parallel(row_blocks * col_blocks, [&](int64_t item) {
      const int64_t i0 = item / col_blocks * kRowBlock, j0 = item % col_blocks * kColBlock;
      const int64_t ni = std::min(kRowBlock, r - i0), nj = std::min(kColBlock, n - j0);
      std::vector<double> a_block(size_t(ni * k));
      for (int64_t i = 0; i < ni; ++i)
        for (int64_t kk = 0; kk < k; ++kk)
          a_block[size_t(i * k + kk)] =
              double(load_as_float(a.data, a.dtype, a.offset(batch, rows[i0 + i], kk))) *
              scale_a(p, rows[i0 + i], kk);
      for (int64_t kk = 0; kk < k; ++kk) {
        const double* b_row = &b_rows[size_t(kk * n + j0)];
        for (int64_t i = 0; i < ni; ++i) {
          const double a_ik = a_block[size_t(i * k + kk)];
          double* o = out_batch + (i0 + i) * n + j0;
          for (int64_t j = 0; j < nj; ++j) o[j] += a_ik * b_row[j];
        }
      }
      for (int64_t i = 0; i < ni; ++i) {
        for (int64_t j = j0; j < j0 + nj; ++j) {
          double v = double(p.epilogue.alpha) * out_batch[(i0 + i) * n + j];
          if (p.epilogue.beta != 0.0f)
            v += double(p.epilogue.beta) *
                 load_as_float(c.data, c.dtype, c.offset(batch, rows[i0 + i], j));
          if (p.epilogue.bias) {
            v += load_as_float(p.epilogue.bias, p.epilogue.bias_dtype,
                               batch * p.epilogue.bias_batch_stride + j);
          }
          out_batch[(i0 + i) * n + j] = activation(p.epilogue, v) * d_scale;
        }
      }
    });
  }
  return out;
}

std::vector<double> grouped_gemm(const GemmProblem& p, const std::vector<int32_t>& sizes,
                                 const std::vector<int64_t>& only, int num_threads) {
  std::vector<char> wanted(size_t(p.m), only.empty() ? 1 : 0);
  for (int64_t r : only) wanted[size_t(r)] = 1;
  const bool offsets = p.groups.form == GroupForm::offsets;
  const bool k_form = p.groups.form == GroupForm::k_offsets;
  const int64_t entries = offsets ? 1 : p.batch_count;
  std::vector<double> out(size_t(entries * p.m * p.n), std::numeric_limits<double>::quiet_NaN());
  const auto advance = [](const void* data, DType dtype, int64_t elements) {
    return static_cast<const void*>(static_cast<const char*>(data) + elements * dtype_size(dtype));
  };
  int64_t begin = 0;    // offsets: where group g's rows start
  int64_t k_begin = 0;  // k_offsets: where its K values start
  for (int64_t g = 0; g < p.batch_count; ++g) {
    // offsets: rows begin .. sizes[g] - 1 of the one entry; counts: rows 0 .. sizes[g] - 1 of
    // entry g; k_offsets: every row of entry g, over K values k_begin .. sizes[g] - 1
    const int64_t first = offsets ? begin : 0, end = k_form ? p.m : sizes[size_t(g)];
    std::vector<int64_t> rows;
    for (int64_t r = first; r < end; ++r) {
      if (wanted[size_t(r)]) rows.push_back(r);
    }
    GemmProblem q = p;
    q.groups = {};
    q.batch_count = 1;
    const int64_t entry = offsets ? 0 : g;
    q.a.data = advance(p.a.data, p.a.dtype, entry * p.a.batch_stride);
    q.b.data = advance(p.b.data, p.b.dtype, g * p.b.batch_stride);
    if (k_form) {
      const int64_t k_end = sizes[size_t(g)];
      q.k = k_end - k_begin;
      q.a.ld = effective_ld(p.a.ld, p.a.layout, p.m, p.k);  // the whole matrix's, not q's
      q.b.ld = effective_ld(p.b.ld, p.b.layout, p.k, p.n);
      q.a.data = advance(q.a.data, p.a.dtype, k_begin * view_of(p.a, p.m, p.k).stride.col);
      q.b.data = advance(q.b.data, p.b.dtype, k_begin * view_of(p.b, p.k, p.n).stride.row);
      k_begin = k_end;
    }
    if (p.scales.mode != ScaleMode::none && !k_form) {
      // fp8 scales (tilegemm.hpp: Scales): each group's B has a set of its own, and so does each
      // group's A in the counts form; the offsets form's groups share A's M rows and their set.
      const int64_t k_blocks = (p.k + 127) / 128, n_blocks = (p.n + 127) / 128;
      const bool tensor = p.scales.mode == ScaleMode::tensor,
                 channel = p.scales.mode == ScaleMode::channel;
      const int64_t a_set = tensor ? 1 : channel ? p.m : p.m * k_blocks;
      const int64_t b_set = tensor ? 1 : channel ? p.n : n_blocks * k_blocks;
      q.scales.a = p.scales.a + (offsets ? 0 : g * a_set);
      q.scales.b = p.scales.b + g * b_set;
    }
    if (p.c.data) q.c.data = advance(p.c.data, p.c.dtype, entry * p.c.batch_stride);
    if (p.epilogue.bias) {
      q.epilogue.bias =
          advance(p.epilogue.bias, p.epilogue.bias_dtype, g * p.epilogue.bias_batch_stride);
    }
    if (!rows.empty()) {
      const std::vector<double> d = gemm(q, rows, num_threads);
      for (size_t i = 0; i < rows.size(); ++i)
        std::copy_n(d.begin() + int64_t(i) * p.n, p.n, out.begin() + (entry * p.m + rows[i]) * p.n);
    }
    begin = end;
  }
  return out;
}

double relative_error(const std::vector<double>& x, const std::vector<double>& ref) {
  if (x.size() != ref.size()) return std::numeric_limits<double>::infinity();
  double diff = 0.0, norm = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i])) return std::numeric_limits<double>::infinity();
    diff += (x[i] - ref[i]) * (x[i] - ref[i]);
    norm += ref[i] * ref[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

std::vector<double> read_output(const GemmProblem& p, const std::vector<int64_t>& row_list) {
  const std::vector<int64_t> rows = all_rows_if_empty(row_list, p.m);
  const MatrixView d = view_of(p.d, p.m, p.n);
  const int64_t entries = p.groups.form == GroupForm::offsets ? 1 : p.batch_count;
  std::vector<double> out;
  out.reserve(size_t(entries) * rows.size() * size_t(p.n));
  for (int64_t batch = 0; batch < entries; ++batch)
    for (int64_t i : rows)
      for (int64_t j = 0; j < p.n; ++j)
        out.push_back(load_as_float(d.data, d.dtype, d.offset(batch, i, j)));
  return out;
}

}  // namespace tilegemm::reference
