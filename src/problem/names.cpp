// Names of the public enums, as the CLI and the messages write them.
#include "tilegemm/tilegemm.hpp"

namespace tilegemm {

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::fp32:
      return "fp32";
    case DType::fp16:
      return "fp16";
    case DType::bf16:
      return "bf16";
    case DType::tf32:
      return "tf32";
    case DType::fp8_e4m3:
      return "fp8_e4m3";
    case DType::fp8_e5m2:
      return "fp8_e5m2";
    case DType::tf32x3:
      return "tf32x3";
  }
  return "?";
}

std::string_view to_string(Layout layout) { return layout == Layout::row_major ? "row" : "col"; }

std::string_view to_string(Activation activation) {
  switch (activation) {
    case Activation::none:
      return "none";
    case Activation::relu:
      return "relu";
    case Activation::leaky_relu:
      return "leaky_relu";
    case Activation::gelu:
      return "gelu";
    case Activation::silu:
      return "silu";
  }
  return "?";
}

std::string_view to_string(Backend backend) {
  switch (backend) {
    case Backend::automatic:
      return "auto";
    case Backend::gpu:
      return "gpu";
    case Backend::cpu:
      return "cpu";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  for (DType d : {DType::fp32, DType::fp16, DType::bf16, DType::tf32, DType::tf32x3,
                  DType::fp8_e4m3, DType::fp8_e5m2}) {
    if (s == to_string(d)) return d;
  }
  if (s == "3xtf32") return DType::tf32x3;  // CUTLASS's name
  if (s == "fp8") return DType::fp8_e4m3;   // the usual fp8 of weights and activations
  return std::nullopt;
}

std::optional<Layout> parse_layout(std::string_view s) {
  if (s == "row" || s == "row_major") return Layout::row_major;
  if (s == "col" || s == "col_major") return Layout::col_major;
  return std::nullopt;
}

std::optional<Backend> parse_backend(std::string_view s) {
  for (Backend b : {Backend::automatic, Backend::gpu, Backend::cpu}) {
    if (s == to_string(b)) return b;
  }
  return std::nullopt;
}

std::string_view to_string(ScaleMode mode) {
  switch (mode) {
    case ScaleMode::none:
      return "none";
    case ScaleMode::tensor:
      return "tensor";
    case ScaleMode::channel:
      return "channel";
    case ScaleMode::block:
      return "block";
  }
  return "?";
}

std::optional<ScaleMode> parse_scale_mode(std::string_view s) {
  for (ScaleMode m : {ScaleMode::none, ScaleMode::tensor, ScaleMode::channel, ScaleMode::block}) {
    if (s == to_string(m)) return m;
  }
  return std::nullopt;
}

std::string_view to_string(GroupForm form) {
  switch (form) {
    case GroupForm::none:
      return "none";
    case GroupForm::offsets:
      return "offsets";
    case GroupForm::counts:
      return "counts";
    case GroupForm::k_offsets:
      return "k_offsets";
    case GroupForm::ptr_array:
      return "ptr_array";
  }
  return "?";
}

std::optional<GroupForm> parse_group_form(std::string_view s) {
  for (GroupForm f : {GroupForm::none, GroupForm::offsets, GroupForm::counts, GroupForm::k_offsets,
                      GroupForm::ptr_array}) {
    if (s == to_string(f)) return f;
  }
  if (s == "k-offsets") return GroupForm::k_offsets;
  if (s == "ptr-array") return GroupForm::ptr_array;
  return std::nullopt;
}

std::string_view to_string(AutotunePolicy policy) {
  switch (policy) {
    case AutotunePolicy::off:
      return "off";
    case AutotunePolicy::on_miss:
      return "on-miss";
    case AutotunePolicy::always:
      return "always";
  }
  return "?";
}

std::optional<AutotunePolicy> parse_autotune_policy(std::string_view s) {
  for (AutotunePolicy p : {AutotunePolicy::off, AutotunePolicy::on_miss, AutotunePolicy::always}) {
    if (s == to_string(p)) return p;
  }
  return std::nullopt;
}

int dtype_size(DType dtype) {
  switch (dtype) {
    case DType::fp16:
    case DType::bf16:
      return 2;
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
      return 1;
    default:
      return 4;
  }
}

std::string_view to_string(LogLevel level) {
  switch (level) {
    case LogLevel::off:
      return "off";
    case LogLevel::error:
      return "error";
    case LogLevel::warning:
      return "warning";
    case LogLevel::info:
      return "info";
  }
  return "unknown";
}

#define TILEGEMM_STRINGIZE_(x) #x
#define TILEGEMM_STRINGIZE(x) TILEGEMM_STRINGIZE_(x)
// The headers' version as this library was compiled with them.
std::string_view version() {
  return TILEGEMM_STRINGIZE(TILEGEMM_VERSION_MAJOR) "." TILEGEMM_STRINGIZE(
      TILEGEMM_VERSION_MINOR) "." TILEGEMM_STRINGIZE(TILEGEMM_VERSION_PATCH);
}

}  // namespace tilegemm
