// tilegemm: run, time, check and explain GEMMs from the command line.
#include <climits>
#include <cstdio>
#include <exception>
#include <fstream>
#include <new>
#include <regex>
#include <sstream>
#include <utility>

#include "commands.hpp"
#include "tune/tune_cache.hpp"

namespace tilegemm::cli {

void fail(const std::string& message, int exit_code) {
  std::fprintf(stderr, "tilegemm: error: %s\n", message.c_str());
  exit_with(exit_code);
}

DType dtype_option(const std::string& option, const std::string& value) {
  auto d = parse_dtype(value);
  if (!d) {
    fail(option + " '" + value +
         "' is not a dtype (fp32, fp16, bf16, tf32, tf32x3, fp8_e4m3 or fp8, fp8_e5m2)");
  }
  return *d;
}

Layout layout_option(const std::string& option, const std::string& value) {
  auto l = parse_layout(value);
  if (!l) fail(option + " '" + value + "' is not a layout (row, col)");
  return *l;
}

Backend backend_option(const std::string& value) {
  auto b = parse_backend(value);
  if (!b) fail("--backend '" + value + "' is not a backend (auto, gpu, cpu)");
  return *b;
}

void activation_option(const std::string& value, Activation* activation, float* slope) {
  std::string name = value, arg;
  if (auto colon = value.find(':'); colon != std::string::npos) {
    name = value.substr(0, colon);
    arg = value.substr(colon + 1);
  }
  for (Activation a : {Activation::none, Activation::relu, Activation::leaky_relu, Activation::gelu,
                       Activation::silu}) {
    if (name != to_string(a)) continue;
    *activation = a;
    if (!arg.empty()) {
      if (a != Activation::leaky_relu)
        fail("--activation '" + value + "': only leaky_relu takes a value");
      try {
        size_t used = 0;
        *slope = std::stof(arg, &used);
        if (used != arg.size()) throw std::invalid_argument(arg);
      } catch (const std::exception&) {
        fail("--activation '" + value + "': slope '" + arg + "' is not a number");
      }
    }
    return;
  }
  fail("--activation '" + value +
       "' is not an activation (none, relu, leaky_relu[:slope], gelu, silu)");
}

std::optional<KernelConfig> config_option(const std::string& value) {
  if (value.empty()) return std::nullopt;
  std::string error;
  auto config = parse_kernel_config(value, &error);
  if (!config) fail("--config: " + error);
  return config;
}

std::optional<AutotunePolicy> autotune_option(const std::string& value) {
  if (value.empty()) return std::nullopt;
  auto policy = parse_autotune_policy(value);
  if (!policy) fail("--autotune '" + value + "' must be off, on-miss or always");
  return policy;
}

GemmOptions timed_options(GemmOptions options) {
  if (autotune::policy_of(options) == AutotunePolicy::always) {
    options.autotune = AutotunePolicy::on_miss;
  }
  return options;
}

std::vector<BenchShape> shapes_option(const std::string& suite, const std::string& shapes_file) {
  if (!shapes_file.empty()) {
    std::ifstream in(shapes_file);
    if (!in) fail("--shapes '" + shapes_file + "' cannot be read");
    std::stringstream text;
    text << in.rdbuf();
    std::string error;
    auto shapes = parse_shapes(text.str(), &error);
    if (shapes.empty()) fail("--shapes '" + shapes_file + "': " + error);
    return shapes;
  }
  auto shapes = suite_shapes(suite);
  if (!shapes)
    fail("--suite '" + suite + "' is not a suite (square, unaligned, skinny, llm, longk, all)");
  return *shapes;
}

void check_types(DType input, DType input_b, DType output) {
  GemmProblem types;  // sizeless: validate() stops after the type checks
  types.a.dtype = input;
  types.b.dtype = input_b;
  types.c.dtype = types.d.dtype = output;
  if (Status s = validate(types); !s.ok()) fail(s.message);
}

std::vector<int32_t> group_rows_option(const std::string& option, const std::string& value) {
  std::vector<int32_t> rows;
  std::string field;
  std::istringstream in(value);
  while (std::getline(in, field, ',')) {
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(field, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != field.size() || v < 0 || v > INT32_MAX) {
      fail(option + " '" + value + "': '" + field + "' is not a row count (0 to 2^31 - 1)");
    }
    rows.push_back(int32_t(v));
  }
  if (rows.empty()) fail(option + " is empty");
  if (rows.size() > (size_t(1) << 24)) fail(option + ": more than 2^24 groups");
  return rows;
}

std::string with_option_names(const std::string& message) {
  // Field -> the option that sets it (run, bench and tune take these).
  static const std::pair<std::regex, const char*> kOptions[] = {
      {std::regex(R"((^|[^.\w])(a\.ld)\b)"), "$1--lda ($2)"},
      {std::regex(R"((^|[^.\w])(b\.ld)\b)"), "$1--ldb ($2)"},
      {std::regex(R"((^|[^.\w])([cd]\.ld)\b)"), "$1--ldc ($2)"},
      {std::regex(R"((^|[^.\w])(batch_count)\b)"), "$1--batch ($2)"},
      {std::regex(R"((^|[^.\w])(a\.dtype)\b)"), "$1--dtype ($2)"},
      {std::regex(R"((^|[^.\w])(b\.dtype)\b)"), "$1--dtype-b ($2)"},
      {std::regex(R"((^|[^.\w])(d\.dtype)\b)"), "$1--out-dtype ($2)"},
      {std::regex(R"((^|[^.\w])(epilogue\.alpha)\b)"), "$1--alpha ($2)"},
      {std::regex(R"((^|[^.\w])(epilogue\.beta)\b)"), "$1--beta ($2)"},
      {std::regex(R"((^|[^.\w])(epilogue\.leaky_relu_slope)\b)"),
       "$1--activation leaky_relu:SLOPE ($2)"},
      {std::regex(R"((^|[^.\w])(scales\.mode)\b)"), "$1--scale-mode ($2)"},
      {std::regex(R"((^|[^.\w])(group_rows)\b)"), "$1--group-rows ($2)"},
      {std::regex(R"((^|[^.\w])(groups\.form)\b)"), "$1--grouped ($2)"},
  };
  std::string out = message;
  for (const auto& [field, option] : kOptions) out = std::regex_replace(out, field, option);
  return out;
}

bool use_gpu(Backend asked) {
  const bool have_gpu = !devices().empty();
  if (asked == Backend::gpu && !have_gpu) {
    fail("--backend gpu: no CUDA device is available; use --backend cpu");
  }
  if (asked == Backend::cpu) return false;
  if (!have_gpu) {
    std::fprintf(stderr,
                 "note: no CUDA device found: running on the CPU backend (same tile schedule and "
                 "epilogue, on host threads)\n");
  }
  return have_gpu;
}

}  // namespace tilegemm::cli

int main(int argc, char** argv) {
  using namespace tilegemm::cli;
  CLI::App app{
      "tilegemm: fast, readable, tunable matrix multiplication (D = act(a*A*B + b*C + bias))"};
  app.require_subcommand(1);
  app.set_version_flag("--version",
                       std::string(tilegemm::version()) + " (source " + source_commit() + ")");
  add_info_command(app);
  add_run_command(app);
  add_explain_command(app);
  add_bench_command(app);
  add_tune_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitError;
  } catch (const CommandExit& f) {
    return f.exit_code;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "tilegemm: error: out of host memory\n");
    return kExitError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilegemm: error: %s\n", e.what());
    return kExitError;
  }
  return 0;
}
