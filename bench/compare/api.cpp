// compare::base_gemm or compare::head_gemm (COMPARE_FUNCTION), against the public header of the
// build it is compiled with. The base build's is compiled with -Dtilegemm=tilegemm_base, as that
// build's library was, so that both libraries link into one program.
#include "compare_api.hpp"
#include "tilegemm/tilegemm.hpp"

namespace compare {

bool COMPARE_FUNCTION(const Case& c, std::string* ran, std::string* error) {
  using tilegemm::DType;
  using tilegemm::Layout;
  tilegemm::GemmProblem p;
  p.m = c.m, p.n = c.n, p.k = c.k, p.batch_count = c.batch;
  p.a = {c.a, DType(c.input), c.a_col ? Layout::col_major : Layout::row_major, c.lda, c.a_stride};
  p.b = {c.b, DType(c.input), c.b_col ? Layout::col_major : Layout::row_major, c.ldb, c.b_stride};
  p.d = {c.d, DType(c.output), Layout::row_major, c.ldd, c.d_stride};
  if (c.beta != 0.0f) p.c = {c.d, DType(c.output), Layout::row_major, c.ldd, c.d_stride};
  p.epilogue.alpha = c.alpha;
  p.epilogue.beta = c.beta;
  p.epilogue.bias = c.bias;
  p.epilogue.bias_dtype = DType(c.output);
  p.epilogue.activation = tilegemm::Activation(c.activation);
  tilegemm::GemmOptions options;
  options.backend = tilegemm::Backend::gpu;
  tilegemm::GemmReport report;
  const tilegemm::Status s = tilegemm::gemm(p, options, ran ? &report : nullptr);
  if (!s.ok()) {
    *error = s.message;
    return false;
  }
  if (ran) *ran = report.kernel + " " + tilegemm::to_string(report.config);
  return true;
}

}  // namespace compare
