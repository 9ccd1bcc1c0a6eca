// The library's own messages (tilegemm.hpp: LogLevel, set_log_callback): one function that
// every part calls, which applies the level and sends the message to the caller's callback or
// to stderr.
#pragma once

#include <string>

#include "tilegemm/tilegemm.hpp"

namespace tilegemm {

void log_message(LogLevel level, const std::string& message);

// The level the environment asks for: `log_level` ($TILEGEMM_LOG_LEVEL) when it names one, else
// info when `print_autotuning` ($TILEGEMM_PRINT_AUTOTUNING) is "1", else warning (null = unset).
LogLevel log_level_from(const char* log_level, const char* print_autotuning);

}  // namespace tilegemm
