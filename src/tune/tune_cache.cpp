#include "tune/tune_cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace tilegemm::autotune {
namespace {

constexpr const char* kFormat = "tilegemm-tuning-cache";

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// Holds an exclusive flock on a lock file for its lifetime.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT, 0644)) {
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~FileLock() {
    if (fd_ >= 0) {
      ::flock(fd_, LOCK_UN);
      ::close(fd_);
    }
  }
  bool held() const { return fd_ >= 0; }

 private:
  int fd_;
};

}  // namespace

AutotunePolicy policy_of(const GemmOptions& options) {
  if (options.autotune) return *options.autotune;
  if (const char* v = std::getenv("TILEGEMM_AUTOTUNE")) {
    if (auto p = parse_autotune_policy(v)) return *p;
  }
  return AutotunePolicy::off;
}

std::string cache_directory() {
  if (std::string dir = env("TILEGEMM_CACHE_DIR"); !dir.empty()) return dir;
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/tilegemm";
  if (std::string home = env("HOME"); !home.empty()) return home + "/.cache/tilegemm";
  return {};
}

std::string cache_file_name(const std::string& gpu_name, int sms) {
  std::string name;
  for (char c : gpu_name) {
    name += std::isalnum(static_cast<unsigned char>(c))
                ? char(std::tolower(static_cast<unsigned char>(c)))
                : '_';
  }
  return name + "-" + std::to_string(sms) + "sm.json";
}

namespace {

// Whole files through C stdio: no iostreams (and their locale machinery, which a library loaded
// into another program shares with it) for a file of text.
bool read_file(const std::string& path, std::string* text) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return false;
  char buffer[1 << 14];
  size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0) text->append(buffer, got);
  const bool ok = !std::ferror(file);
  std::fclose(file);
  return ok;
}

bool write_file(const std::string& path, const std::string& text) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return false;
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  return std::fclose(file) == 0 && written;
}

}  // namespace

TuneFile::TuneFile(std::string path, std::string gpu_name, int sms, std::string version)
    : path_(std::move(path)),
      gpu_name_(std::move(gpu_name)),
      version_(std::move(version)),
      sms_(sms) {}

std::map<std::string, CacheEntry> TuneFile::load(std::string* warning) const {
  std::map<std::string, CacheEntry> entries;
  std::string text;
  if (!read_file(path_, &text)) return entries;  // no file yet
  const auto ignore = [&](const std::string& why) {
    if (warning) *warning = "ignoring tuning cache " + path_ + ": " + why;
    return std::map<std::string, CacheEntry>{};
  };
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return ignore("not valid JSON");
  if (j.value("format", "") != kFormat) return ignore("not a tilegemm tuning cache");
  if (j.value("version", "") != version_) {
    return ignore("written by tilegemm " + j.value("version", "?") + ", this is " + version_);
  }
  if (j.value("gpu", "") != gpu_name_ || j.value("sms", 0) != sms_) {
    return ignore("tuned for another GPU (" + j.value("gpu", "?") + ")");
  }
  if (!j.contains("entries") || !j["entries"].is_object()) return ignore("no entries object");
  for (const auto& [key, e] : j["entries"].items()) {
    if (!e.is_object()) return ignore("entry '" + key + "' is not an object");
    const auto config = parse_kernel_config(e.value("config", ""));
    if (!config || !e.contains("kernel") || !e["kernel"].is_string()) {
      return ignore("entry '" + key + "' has no kernel or config");
    }
    entries[key] = {e["kernel"].get<std::string>(), *config, e.value("ms", 0.0)};
  }
  return entries;
}

Status TuneFile::store(const std::string& key, const CacheEntry& entry) const {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path path(path_);
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec) {
    return {StatusCode::invalid_argument,
            "tuning cache: cannot create " + path.parent_path().string() + ": " + ec.message()};
  }
  FileLock lock(path_ + ".lock");
  if (!lock.held()) {
    return {StatusCode::invalid_argument, "tuning cache: cannot lock " + path_ + ".lock"};
  }
  auto entries = load(nullptr);  // under the lock: nobody writes between this read and rename
  entries[key] = entry;
  nlohmann::json j = {{"format", kFormat},
                      {"version", version_},
                      {"gpu", gpu_name_},
                      {"sms", sms_},
                      {"entries", nlohmann::json::object()}};
  for (const auto& [k, e] : entries) {
    j["entries"][k] = {{"kernel", e.kernel}, {"config", to_string(e.config)}, {"ms", e.ms}};
  }
  const std::string temp = path_ + ".tmp." + std::to_string(::getpid());
  if (!write_file(temp, j.dump(1) + "\n")) {
    return {StatusCode::invalid_argument, "tuning cache: cannot write " + temp};
  }
  fs::rename(temp, path, ec);
  if (ec) {
    fs::remove(temp, ec);
    return {StatusCode::invalid_argument, "tuning cache: cannot replace " + path_};
  }
  return Status::success();
}

}  // namespace tilegemm::autotune
