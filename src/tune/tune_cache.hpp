// The persistent tuning cache: one JSON file per GPU type, shared by every process.
//
//   {"format": "tilegemm-tuning-cache", "version": "<library version>",
//    "gpu": "NVIDIA H100 80GB HBM3", "sms": 132,
//    "entries": {"<tuning key>": {"kernel": "sm80", "config": "128x128x32/g8/s4/w4/wt64x64",
//                                  "ms": 0.43}}}
//
// Writers take an exclusive lock on "<file>.lock", re-read the file, merge their entry, write a
// temporary file and rename it over the old one: concurrent writers lose no entries and readers
// (who take no lock) see the old file or the new one, never half of one. A file that does not
// parse, or was written by another library version or for another GPU, is ignored with one
// warning and replaced at the next store.
#pragma once

#include <map>
#include <string>

#include "tilegemm/tilegemm.hpp"

namespace tilegemm::autotune {

struct CacheEntry {
  std::string kernel;
  KernelConfig config;
  double ms = 0.0;
};

// The policy in force for a call: the option, else $TILEGEMM_AUTOTUNE, else off.
AutotunePolicy policy_of(const GemmOptions& options);

// $TILEGEMM_CACHE_DIR, else $XDG_CACHE_HOME/tilegemm, else $HOME/.cache/tilegemm ("" if none).
std::string cache_directory();

// "nvidia_h100_80gb_hbm3-132sm.json": the GPU name, lower case, other characters as '_'.
std::string cache_file_name(const std::string& gpu_name, int sms);

class TuneFile {
 public:
  TuneFile(std::string path, std::string gpu_name, int sms, std::string version);

  const std::string& path() const { return path_; }

  // The file's entries: empty when it is missing; empty with `*warning` set when it is corrupt
  // or foreign.
  std::map<std::string, CacheEntry> load(std::string* warning) const;

  // Adds or replaces one entry (see the protocol above). Creates the directory if needed.
  Status store(const std::string& key, const CacheEntry& entry) const;

 private:
  std::string path_, gpu_name_, version_;
  int sms_ = 0;
};

}  // namespace tilegemm::autotune
