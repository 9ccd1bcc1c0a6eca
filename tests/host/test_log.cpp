// The library's messages (tilegemm.hpp: LogLevel): levels filter, the callback receives, stderr
// is the default, and the environment picks the level.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "common/log.hpp"

namespace tilegemm {
namespace {

TEST(Log, TheLevelFiltersAndTheCallbackReceives) {
  const LogLevel before = log_level();
  std::vector<std::pair<LogLevel, std::string>> got;
  set_log_callback([&](LogLevel level, std::string_view m) { got.emplace_back(level, m); });
  set_log_level(LogLevel::warning);
  log_message(LogLevel::info, "an info");
  log_message(LogLevel::warning, "a warning");
  log_message(LogLevel::error, "an error");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], std::make_pair(LogLevel::warning, std::string("a warning")));
  EXPECT_EQ(got[1], std::make_pair(LogLevel::error, std::string("an error")));
  set_log_level(LogLevel::off);
  log_message(LogLevel::error, "not sent");
  EXPECT_EQ(got.size(), 2u);
  set_log_level(LogLevel::info);
  log_message(LogLevel::info, "sent");
  EXPECT_EQ(got.size(), 3u);
  set_log_callback({});
  set_log_level(before);
}

TEST(Log, WithoutACallbackMessagesGoToStderrWithTheirLevel) {
  const LogLevel before = log_level();
  set_log_level(LogLevel::warning);
  ::testing::internal::CaptureStderr();
  log_message(LogLevel::warning, "cache file unreadable");
  log_message(LogLevel::info, "not shown");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "tilegemm: warning: cache file unreadable\n");
  set_log_level(before);
}

TEST(Log, TheEnvironmentNamesTheLevel) {
  EXPECT_EQ(log_level_from(nullptr, nullptr), LogLevel::warning);
  EXPECT_EQ(log_level_from("off", nullptr), LogLevel::off);
  EXPECT_EQ(log_level_from("error", "1"), LogLevel::error);
  EXPECT_EQ(log_level_from("info", nullptr), LogLevel::info);
  EXPECT_EQ(log_level_from("loud", nullptr), LogLevel::warning);  // unknown: the default
  EXPECT_EQ(log_level_from(nullptr, "1"), LogLevel::info);        // the older switch
  EXPECT_EQ(log_level_from(nullptr, "0"), LogLevel::warning);
}

}  // namespace
}  // namespace tilegemm
