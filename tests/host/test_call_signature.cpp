// A call's signature (dispatch/call_signature.hpp): equal for calls the choice cannot tell apart,
// different wherever a field the choice reads differs.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/call_signature.hpp"

namespace tilegemm::dispatch {
namespace {

// Fake addresses: only compared and reduced modulo 256, never read.
const void* at(uintptr_t address) { return reinterpret_cast<const void*>(address); }

GemmProblem base_problem(uintptr_t origin) {
  GemmProblem p;
  p.m = 96;
  p.n = 80;
  p.k = 64;
  p.a = {at(origin + 0x1000), DType::bf16, Layout::row_major, 64, 0};
  p.b = {at(origin + 0x9000), DType::bf16, Layout::col_major, 64, 0};
  p.c = {at(origin + 0x11000), DType::bf16, Layout::row_major, 80, 0};
  p.d.data = const_cast<void*>(at(origin + 0x21000));
  p.d.dtype = DType::bf16;
  p.d.ld = 80;
  p.epilogue.beta = 0.5f;
  return p;
}

TEST(CallSignature, CallsThatDifferOnlyInAddressesOfTheSameAlignmentShareOne) {
  const GemmOptions options;
  const CallSignature first = call_signature(base_problem(0), options, AutotunePolicy::off, 0);
  const CallSignature second =
      call_signature(base_problem(0x7f0000), options, AutotunePolicy::off, 0);
  EXPECT_EQ(first, second);
  EXPECT_EQ(CallSignatureHash{}(first), CallSignatureHash{}(second));
  GemmProblem p = base_problem(0);
  p.stream = reinterpret_cast<void*>(0x1234);  // the stream is not the choice's
  EXPECT_EQ(call_signature(p, options, AutotunePolicy::off, 0), first);
}

TEST(CallSignature, EveryFieldTheChoiceReadsChangesIt) {
  using Change = std::function<void(GemmProblem&, GemmOptions&, AutotunePolicy&, int&)>;
  const auto offset = [](const void* x, uintptr_t bytes) {
    return at(reinterpret_cast<uintptr_t>(x) + bytes);
  };
  const std::vector<std::pair<std::string, Change>> changes = {
      {"m", [](GemmProblem& p, auto&, auto&, auto&) { p.m = 97; }},
      {"n", [](GemmProblem& p, auto&, auto&, auto&) { p.n = 81; }},
      {"k", [](GemmProblem& p, auto&, auto&, auto&) { p.k = 65; }},
      {"batch_count", [](GemmProblem& p, auto&, auto&, auto&) { p.batch_count = 2; }},
      {"a.data 2 bytes on",
       [&](GemmProblem& p, auto&, auto&, auto&) { p.a.data = offset(p.a.data, 2); }},
      {"a.data 128 bytes on",
       [&](GemmProblem& p, auto&, auto&, auto&) { p.a.data = offset(p.a.data, 128); }},
      {"a.dtype", [](GemmProblem& p, auto&, auto&, auto&) { p.a.dtype = DType::fp16; }},
      {"a.layout", [](GemmProblem& p, auto&, auto&, auto&) { p.a.layout = Layout::col_major; }},
      {"a.ld", [](GemmProblem& p, auto&, auto&, auto&) { p.a.ld = 72; }},
      {"a.batch_stride", [](GemmProblem& p, auto&, auto&, auto&) { p.a.batch_stride = 6144; }},
      {"b.data", [&](GemmProblem& p, auto&, auto&, auto&) { p.b.data = offset(p.b.data, 8); }},
      {"b.ld", [](GemmProblem& p, auto&, auto&, auto&) { p.b.ld = 65; }},
      {"c.data null", [](GemmProblem& p, auto&, auto&, auto&) { p.c.data = nullptr; }},
      {"c.layout", [](GemmProblem& p, auto&, auto&, auto&) { p.c.layout = Layout::col_major; }},
      {"d.data",
       [&](GemmProblem& p, auto&, auto&, auto&) { p.d.data = const_cast<void*>(offset(p.d.data, 4)); }},
      {"d.dtype", [](GemmProblem& p, auto&, auto&, auto&) { p.d.dtype = DType::fp32; }},
      {"d.ld", [](GemmProblem& p, auto&, auto&, auto&) { p.d.ld = 88; }},
      {"d.batch_stride", [](GemmProblem& p, auto&, auto&, auto&) { p.d.batch_stride = 7680; }},
      {"d.scale", [](GemmProblem& p, auto&, auto&, auto&) { p.d.scale = reinterpret_cast<const float*>(64); }},
      {"d.amax", [](GemmProblem& p, auto&, auto&, auto&) { p.d.amax = reinterpret_cast<float*>(64); }},
      {"alpha", [](GemmProblem& p, auto&, auto&, auto&) { p.epilogue.alpha = 2.0f; }},
      {"beta", [](GemmProblem& p, auto&, auto&, auto&) { p.epilogue.beta = 0.0f; }},
      {"bias", [](GemmProblem& p, auto&, auto&, auto&) { p.epilogue.bias = at(0x5000); }},
      {"bias_dtype", [](GemmProblem& p, auto&, auto&, auto&) { p.epilogue.bias_dtype = DType::bf16; }},
      {"bias_batch_stride",
       [](GemmProblem& p, auto&, auto&, auto&) { p.epilogue.bias_batch_stride = 80; }},
      {"activation",
       [](GemmProblem& p, auto&, auto&, auto&) { p.epilogue.activation = Activation::gelu; }},
      {"leaky_relu_slope",
       [](GemmProblem& p, auto&, auto&, auto&) { p.epilogue.leaky_relu_slope = 0.2f; }},
      {"scales.mode", [](GemmProblem& p, auto&, auto&, auto&) { p.scales.mode = ScaleMode::tensor; }},
      {"scales.a", [](GemmProblem& p, auto&, auto&, auto&) { p.scales.a = reinterpret_cast<const float*>(64); }},
      {"scales.b", [](GemmProblem& p, auto&, auto&, auto&) { p.scales.b = reinterpret_cast<const float*>(64); }},
      {"groups.form", [](GemmProblem& p, auto&, auto&, auto&) { p.groups.form = GroupForm::counts; }},
      {"groups.sizes",
       [](GemmProblem& p, auto&, auto&, auto&) { p.groups.sizes = reinterpret_cast<const int32_t*>(64); }},
      {"fast_accumulation", [](GemmProblem& p, auto&, auto&, auto&) { p.fast_accumulation = true; }},
      {"options.backend",
       [](GemmProblem&, GemmOptions& o, auto&, auto&) { o.backend = Backend::gpu; }},
      {"options.kernel", [](GemmProblem&, GemmOptions& o, auto&, auto&) { o.kernel = "sm80"; }},
      {"options.config",
       [](GemmProblem&, GemmOptions& o, auto&, auto&) { o.config = KernelConfig{}; }},
      {"options.config's GROUP_SIZE_M",
       [](GemmProblem&, GemmOptions& o, auto&, auto&) {
         o.config = KernelConfig{};
         o.config->group_size_m = 4;
       }},
      {"options.aligned_copies",
       [](GemmProblem&, GemmOptions& o, auto&, auto&) { o.aligned_copies = false; }},
      {"policy",
       [](GemmProblem&, GemmOptions&, AutotunePolicy& a, auto&) { a = AutotunePolicy::on_miss; }},
      {"device", [](GemmProblem&, GemmOptions&, auto&, int& device) { device = 1; }},
  };
  const GemmProblem p0 = base_problem(0);
  const GemmOptions o0;
  const CallSignature base = call_signature(p0, o0, AutotunePolicy::off, 0);
  GemmOptions with_config;
  with_config.config = KernelConfig{};
  const CallSignature base_with_config = call_signature(p0, with_config, AutotunePolicy::off, 0);
  for (const auto& [name, change] : changes) {
    GemmProblem p = p0;
    GemmOptions o = o0;
    AutotunePolicy policy = AutotunePolicy::off;
    int device = 0;
    change(p, o, policy, device);
    const CallSignature changed = call_signature(p, o, policy, device);
    EXPECT_NE(changed, base) << name;
    EXPECT_NE(CallSignatureHash{}(changed), CallSignatureHash{}(base)) << name;
    if (name == "options.config's GROUP_SIZE_M") EXPECT_NE(changed, base_with_config) << name;
  }
}

}  // namespace
}  // namespace tilegemm::dispatch
