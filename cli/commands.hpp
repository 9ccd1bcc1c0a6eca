// The tilegemm command: one file per subcommand, each adding itself to the CLI11 app.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "bench_suites.hpp"
#include "harness/workload.hpp"

namespace tilegemm::cli {

void add_info_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_explain_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_tune_command(CLI::App& app);

// Exit codes: 0 ok, 1 check failed, 2 bad arguments or a library error.
constexpr int kExitCheckFailed = 1;
constexpr int kExitError = 2;

// Thrown to end a command with an exit code (caught in main).
struct CommandExit {
  int exit_code;
};
[[noreturn]] inline void exit_with(int exit_code) { throw CommandExit{exit_code}; }
// Ends the command with a message on stderr.
[[noreturn]] void fail(const std::string& message, int exit_code = kExitError);

// Parsers for the option values shared by several subcommands; each fails with a message that
// names the option and the value.
DType dtype_option(const std::string& option, const std::string& value);
// --group-rows "512,0,37": each group's rows (0 to 2^31 - 1 each), for `option`.
std::vector<int32_t> group_rows_option(const std::string& option, const std::string& value);
Layout layout_option(const std::string& option, const std::string& value);
Backend backend_option(const std::string& value);
// "none", "relu", "gelu", "silu", "leaky_relu" or "leaky_relu:SLOPE".
void activation_option(const std::string& value, Activation* activation, float* slope);

// "--config" (empty = the kernel's choice).
std::optional<KernelConfig> config_option(const std::string& value);
// "--autotune" (empty = $TILEGEMM_AUTOTUNE, else off).
std::optional<AutotunePolicy> autotune_option(const std::string& value);
// The options for the timed calls after a command's first call: under `always` (the option or
// $TILEGEMM_AUTOTUNE) that call has tuned and cached its winner, so they take it from the cache
// (on-miss) instead of timing the tuner at every rep.
GemmOptions timed_options(GemmOptions options);
// The shapes of "--shapes FILE" when given, else of "--suite NAME".
std::vector<BenchShape> shapes_option(const std::string& suite, const std::string& shapes_file);
// Refuses element types the library does not take yet (tf32, fp8, ...) before any data is drawn,
// with the library's own message.
void check_types(DType input, DType input_b, DType output);

// A library message with the CLI's names for the problem's fields: "a.ld = 3 ..." becomes
// "--lda (a.ld) = 3 ...", "epilogue.alpha" "--alpha (epilogue.alpha)", and so on.
std::string with_option_names(const std::string& message);

// Picks the backend for a command: GPU when present (or asked), else the CPU backend with a note
// on stderr. Fails when the GPU is asked for and absent.
bool use_gpu(Backend asked);

// The source tree's git commit the command was built from, "-dirty" when it had changes, or
// "unknown" (generated at build time by cmake/source_commit.cmake).
const char* source_commit();

}  // namespace tilegemm::cli
