#include "common/log.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>

namespace tilegemm {
namespace {

struct Logger {
  std::atomic<LogLevel> level{
      log_level_from(std::getenv("TILEGEMM_LOG_LEVEL"), std::getenv("TILEGEMM_PRINT_AUTOTUNING"))};
  std::mutex mutex;  // guards callback, and orders the messages of concurrent calls
  LogCallback callback;

  static Logger& get() {
    static Logger logger;
    return logger;
  }
};

}  // namespace

LogLevel log_level_from(const char* log_level, const char* print_autotuning) {
  const std::pair<const char*, LogLevel> names[] = {{"off", LogLevel::off},
                                                    {"error", LogLevel::error},
                                                    {"warning", LogLevel::warning},
                                                    {"info", LogLevel::info}};
  for (const auto& [name, level] : names) {
    if (log_level && std::strcmp(log_level, name) == 0) return level;
  }
  if (print_autotuning && std::strcmp(print_autotuning, "1") == 0) return LogLevel::info;
  return LogLevel::warning;
}

void set_log_callback(LogCallback callback) {
  Logger& l = Logger::get();
  std::lock_guard<std::mutex> lock(l.mutex);
  l.callback = std::move(callback);
}

void set_log_level(LogLevel level) { Logger::get().level = level; }

LogLevel log_level() { return Logger::get().level; }

void log_message(LogLevel level, const std::string& message) {
  Logger& l = Logger::get();
  if (level == LogLevel::off || int(level) > int(l.level.load())) return;
  std::lock_guard<std::mutex> lock(l.mutex);
  if (l.callback) {
    l.callback(level, message);
  } else {
    std::fprintf(stderr, "tilegemm: %s: %s\n", std::string(to_string(level)).c_str(),
                 message.c_str());
  }
}

}  // namespace tilegemm
