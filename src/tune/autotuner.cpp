#include "tune/autotuner.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "common/log.hpp"
#include "kernels/cuda_check.hpp"
#include "problem/dtype.hpp"
#include "problem/groups.hpp"
#include "problem/matrix_view.hpp"
#include "problem/tolerance.hpp"
#include "tune/config_space.hpp"
#include "tune/gpu_timer.hpp"

namespace tilegemm::autotune {
namespace {

// Everything the tuner keeps for the process: per device its facts and its cache file's
// entries (read once), and the in-memory layers keyed by TuningKey.
class State {
 public:
  static State& get() {
    static State state;
    return state;
  }

  DeviceInfo facts(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    return device_locked(device).facts;
  }

  std::optional<CacheEntry> cached(const TuningKey& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = memory_.find(key); it != memory_.end()) return it->second;
    Device& d = device_locked(key.device);
    if (auto it = d.file_entries.find(to_string(key)); it != d.file_entries.end()) {
      memory_[key] = it->second;
      return it->second;
    }
    return std::nullopt;
  }

  std::optional<HeuristicChoice> heuristic(const TuningKey& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = heuristic_.find(key); it != heuristic_.end()) return it->second;
    return std::nullopt;
  }
  void remember(const TuningKey& key, const HeuristicChoice& choice) {
    std::lock_guard<std::mutex> lock(mutex_);
    heuristic_[key] = choice;
  }

  // Records a winner in memory and in the device's cache file; returns the file's path ("" when
  // there is no cache directory or the write failed, with a warning).
  std::string store(const TuningKey& key, const CacheEntry& entry) {
    std::lock_guard<std::mutex> lock(mutex_);
    memory_[key] = entry;
    Device& d = device_locked(key.device);
    d.file_entries[to_string(key)] = entry;
    if (!d.file) return {};
    if (Status s = d.file->store(to_string(key), entry); !s.ok()) {
      log_message(LogLevel::warning, s.message);
      return {};
    }
    return d.file->path();
  }

 private:
  struct Device {
    bool ready = false;
    DeviceInfo facts;  // from tilegemm::devices()
    std::unique_ptr<TuneFile> file;
    std::map<std::string, CacheEntry> file_entries;
  };

  Device& device_locked(int ordinal) {
    if (ordinal >= int(devices_.size())) devices_.resize(size_t(ordinal) + 1);
    Device& d = devices_[size_t(ordinal)];
    if (d.ready) return d;
    d.ready = true;
    if (const auto all = devices(); ordinal < int(all.size())) {
      d.facts = all[size_t(ordinal)];
    } else {
      d.facts.name = "unknown";
      d.facts.sm_count = 132;
      d.facts.shared_memory_per_block_optin = 48 * 1024;
    }
    if (const std::string dir = cache_directory(); !dir.empty()) {
      d.file =
          std::make_unique<TuneFile>(dir + "/" + cache_file_name(d.facts.name, d.facts.sm_count),
                                     d.facts.name, d.facts.sm_count, std::string(version()));
      std::string warning;
      d.file_entries = d.file->load(&warning);
      if (!warning.empty()) log_message(LogLevel::warning, warning + " (it will be rewritten)");
    }
    return d;
  }

  std::mutex mutex_;
  std::vector<Device> devices_;
  std::unordered_map<TuningKey, CacheEntry, TuningKeyHash> memory_;
  std::unordered_map<TuningKey, HeuristicChoice, TuningKeyHash> heuristic_;
};

// Elements from D's first element to one past its last (all batch entries).
int64_t output_span(const GemmProblem& p) {
  const MatrixView d = view_of(p.d, p.m, p.n);
  return (p.batch_count - 1) * d.batch_stride + (p.m - 1) * d.stride.row +
         (p.n - 1) * d.stride.col + 1;
}

// Up to ~2^20 elements of D, from evenly spaced rows of every batch entry, as doubles.
std::vector<double> sample_output(const GemmProblem& p, const std::vector<uint8_t>& bytes) {
  const MatrixView d = view_of(p.d, p.m, p.n);
  const int64_t row_step = std::max<int64_t>(1, p.m * p.n * p.batch_count / (1 << 20));
  std::vector<double> out;
  for (int64_t b = 0; b < p.batch_count; ++b)
    for (int64_t i = 0; i < p.m; i += row_step)
      for (int64_t j = 0; j < p.n; ++j) {
        out.push_back(load_as_float(bytes.data(), p.d.dtype, d.offset(b, i, j)));
      }
  return out;
}

double relative_difference(const std::vector<double>& x, const std::vector<double>& reference) {
  double diff = 0.0, norm = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i])) return INFINITY;
    diff += (x[i] - reference[i]) * (x[i] - reference[i]);
    norm += reference[i] * reference[i];
  }
  return norm > 0.0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

// The kernels a tuning may consider: the one named, or every kernel that takes the problem.
Status tunable_kernels(const GemmProblem& p, const std::string& name,
                       std::vector<const gpu::Kernel*>* out) {
  if (automatic(name)) {
    for (const gpu::Kernel& k : gpu::kernels()) {
      if (k.can_implement(p, k.default_for(p.a.dtype)).empty()) out->push_back(&k);
    }
    if (out->empty()) return {StatusCode::not_supported, "no kernel takes this problem"};
    return Status::success();
  }
  const gpu::Kernel* k = gpu::find_kernel(name);
  if (k == nullptr) return {StatusCode::invalid_argument, "kernel '" + name + "' does not exist"};
  if (std::string why = k->can_implement(p, k->default_for(p.a.dtype)); !why.empty()) {
    return {StatusCode::invalid_argument, why};
  }
  out->push_back(k);
  return Status::success();
}

}  // namespace

int current_device() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) cudaGetLastError();
  return device;
}

DeviceInfo device_facts(int device) { return State::get().facts(device); }

std::optional<CacheEntry> cached(const TuningKey& key) { return State::get().cached(key); }

HeuristicChoice remembered_heuristic(const TuningKey& key, const GemmProblem& p,
                                     const gpu::Kernel& kernel, const std::string& kernel_request) {
  if (auto h = State::get().heuristic(key)) return *h;
  const DeviceInfo facts = device_facts(key.device);
  const HeuristicChoice h = heuristic(p, kernel, kernel_request, facts.name, facts.sm_count);
  State::get().remember(key, h);
  return h;
}

Status tune_problem(const GemmProblem& p, const GemmOptions& options,
                    const HeuristicPick& heuristic_pick, TuneResult* result,
                    const std::function<void(int, int)>& progress, CacheEntry* winner) {
  const auto t0 = std::chrono::steady_clock::now();
  const int device = current_device();
  const DeviceInfo facts = State::get().facts(device);
  const TuningKey key = make_tuning_key(p, options.kernel, device);
  *result = {};
  result->tuning_key = to_string(key);

  std::vector<const gpu::Kernel*> kernels;
  if (Status s = tunable_kernels(p, options.kernel, &kernels); !s.ok()) return s;
  std::vector<KernelChoices> choices;
  for (const gpu::Kernel* k : kernels) {
    choices.push_back(
        {k->info.name, k->info.configs, k->tensor_cores, k->production, k->shared_bytes});
  }
  const std::vector<Candidate> candidates =
      config_space(choices, p, {facts.shared_memory_per_block_optin}, &result->pruned);
  if (candidates.empty()) return {StatusCode::not_supported, "every config was pruned"};

  // Scratch output: the user's D is never written; C is still read from where it lives.
  const int64_t span = output_span(p);
  const size_t bytes = size_t(span) * size_t(dtype_size(p.d.dtype));
  void* scratch = nullptr;
  if (Status s = cuda_status(cudaMalloc(&scratch, bytes), "autotuner: cudaMalloc of scratch D");
      !s.ok()) {
    return s;
  }
  // Zeros where no candidate writes (a grouped problem's rows that no group takes), so that the
  // candidates' samples agree there.
  if (Status s =
          cuda_status(cudaMemsetAsync(scratch, 0, bytes, static_cast<cudaStream_t>(p.stream)),
                      "autotuner: cudaMemset of scratch D");
      !s.ok()) {
    cudaFree(scratch);
    return s;
  }
  GemmProblem q = p;
  q.d.data = scratch;
  std::vector<uint8_t> host(bytes);
  std::vector<double> reference;
  const auto stream = static_cast<cudaStream_t>(p.stream);
  GpuTimer timer(p.stream);
  int done = 0;
  for (const Candidate& c : candidates) {
    TuneCandidate tc;
    tc.kernel = c.kernel;
    tc.config = c.config;
    tc.heuristic =
        heuristic_pick.kernel == c.kernel && same_instantiation(heuristic_pick.config, c.config);
    GemmOptions run;
    run.backend = Backend::gpu;
    run.kernel = c.kernel;
    run.config = c.config;
    run.autotune = AutotunePolicy::off;
    // `p` is the problem the kernel reads: copied already where gemm() copies, or left as it is
    // where the caller turned the copies off. A candidate copies nothing more, so each is timed
    // on what the winner will run on.
    run.aligned_copies = false;
    const auto once = [&] { return gemm(q, run); };
    Status s = once();
    if (s.ok()) {
      s = cuda_status(cudaMemcpyAsync(host.data(), scratch, bytes, cudaMemcpyDeviceToHost, stream),
                      "autotuner: copy of scratch D");
    }
    if (s.ok()) s = cuda_status(cudaStreamSynchronize(stream), "autotuner: candidate run");
    if (!s.ok()) {
      tc.dropped = s.message;
    } else {
      std::vector<double> values = sample_output(q, host);
      const double tolerance = 2.0 * tolerance_for(p.a.dtype, p.d.dtype, p.fast_accumulation);
      if (reference.empty()) {
        reference = std::move(values);
      } else if (double diff = relative_difference(values, reference); !(diff <= tolerance)) {
        tc.dropped = "result differs from the first candidate's (relative difference " +
                     std::to_string(diff) + ")";
        log_message(LogLevel::warning, "autotuner dropped " + c.kernel + " " + to_string(c.config) +
                                           ": " + tc.dropped);
      }
    }
    if (tc.dropped.empty()) {
      // Few reps for slow configs, more for fast ones: each candidate costs about as much.
      const double first = timer.median_ms({once}, 1, 0)[0];
      const int reps = first < 0.1 ? 20 : first < 1.0 ? 10 : 5;
      tc.ms = timer.median_ms({once}, reps, 1)[0];
      // A grouped problem's sizes are on the device: its figure counts every value of A in
      // memory times every column of B (all M rows of each of A's entries, all K values), the
      // most the groups can take.
      const int64_t entries = entries_in_memory(p.groups.form, p.batch_count).a;
      tc.tflops = 2.0 * double(p.m) * p.n * p.k * entries / (tc.ms * 1e-3) / 1e12;
    }
    result->candidates.push_back(tc);
    if (progress) progress(++done, int(candidates.size()));
  }
  cudaFree(scratch);
  std::stable_sort(result->candidates.begin(), result->candidates.end(),
                   [](const TuneCandidate& a, const TuneCandidate& b) {
                     if (a.dropped.empty() != b.dropped.empty()) return a.dropped.empty();
                     return a.ms < b.ms;
                   });
  const TuneCandidate& best = result->candidates.front();
  if (!best.dropped.empty()) {
    return {StatusCode::cuda_error, "autotuner: no candidate ran: " + best.dropped};
  }
  *winner = {best.kernel, best.config, best.ms};
  result->cache_file = State::get().store(key, *winner);
  result->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char text[96];
  std::snprintf(text, sizeof text, ", %.4f ms (%zu candidates, %.2f s)", best.ms,
                result->candidates.size(), result->seconds);
  log_message(LogLevel::info, "autotune: [" + result->tuning_key + "] -> " + best.kernel + " " +
                                  to_string(best.config) + text);
  return Status::success();
}

}  // namespace tilegemm::autotune
