#include "kernels/workspace.hpp"

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>

#include "kernels/cuda_check.hpp"
#include "kernels/tail_split_work.hpp"
#include "problem/aligned_copies.hpp"

namespace tilegemm::gpu {
namespace {

// The library's memory pool on `device`, made on first use (workspace.hpp says why its own).
Status library_pool(int device, cudaMemPool_t* pool) {
  static std::mutex mutex;
  static std::map<int, cudaMemPool_t> pools;
  std::lock_guard lock(mutex);
  if (auto it = pools.find(device); it != pools.end()) {
    *pool = it->second;
    return Status::success();
  }
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  if (Status s = cuda_status(cudaMemPoolCreate(pool, &props), "memory pool: cudaMemPoolCreate");
      !s.ok()) {
    return s;
  }
  uint64_t unlimited = UINT64_MAX;
  if (Status s =
          cuda_status(cudaMemPoolSetAttribute(*pool, cudaMemPoolAttrReleaseThreshold, &unlimited),
                      "memory pool: cudaMemPoolSetAttribute(ReleaseThreshold)");
      !s.ok()) {
    return s;
  }
  pools[device] = *pool;
  return Status::success();
}

std::string megabytes(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", double(bytes) / 1e6);
  return text;
}

}  // namespace

Workspace::Workspace(void* stream, void* given, size_t given_bytes)
    : stream_(stream), given_(static_cast<char*>(given)), given_bytes_(given ? given_bytes : 0) {
  // The caller's pointer need not be aligned: its first aligned byte is where parts start.
  if (given_) {
    const auto address = reinterpret_cast<uintptr_t>(given_);
    const size_t skip = (size_t(kWorkspaceAlignment) - address % size_t(kWorkspaceAlignment)) %
                        size_t(kWorkspaceAlignment);
    given_used_ = skip < given_bytes_ ? skip : given_bytes_;
  }
}

Workspace::~Workspace() {
  // A destructor has no one to report a failure to; the next CUDA call would see a sticky error.
  for (void* memory : pooled_) cudaFreeAsync(memory, static_cast<cudaStream_t>(stream_));
}

void Workspace::note(const std::string& text) {
  if (!shortfall_.empty()) shortfall_ += "; ";
  shortfall_ += text;
}

Status Workspace::take(size_t bytes, const char* what, void** memory) {
  *memory = nullptr;
  if (bytes == 0) return Status::success();
  if (given_) {
    const auto part = size_t(round_up(int64_t(bytes), kWorkspaceAlignment));
    if (given_bytes_ - given_used_ < part) {
      note(std::string(what) + " went without: they need " + megabytes(part) + ", " +
           megabytes(given_bytes_ - given_used_) + " of the given workspace was left");
      return Status::success();
    }
    *memory = given_ + given_used_;
    given_used_ += part;
    return Status::success();
  }
  if (pool_ == Pool::not_asked) {
    pool_ = stream_is_capturing(stream_) ? Pool::capturing : Pool::usable;
  }
  if (pool_ == Pool::capturing) {
    note(std::string(what) + " went without: the stream is capturing a CUDA graph and no " +
         "workspace was given (GemmOptions::workspace, sized by workspace_size())");
    return Status::success();
  }
  int device = 0;
  if (Status s = cuda_status(cudaGetDevice(&device), "workspace: cudaGetDevice"); !s.ok()) {
    return s;
  }
  cudaMemPool_t pool = nullptr;
  if (Status s = library_pool(device, &pool); !s.ok()) return s;
  const cudaError_t allocated =
      cudaMallocFromPoolAsync(memory, bytes, pool, static_cast<cudaStream_t>(stream_));
  if (allocated == cudaErrorMemoryAllocation) {
    // The error is cleared so that the launch checks after it do not report it.
    cudaGetLastError();
    *memory = nullptr;
    note(std::string(what) + " went without: no device memory for " + megabytes(bytes));
    return Status::success();
  }
  if (Status s = cuda_status(allocated, "workspace: cudaMallocFromPoolAsync"); !s.ok()) {
    *memory = nullptr;
    return s;
  }
  pooled_.push_back(*memory);
  return Status::success();
}

bool stream_is_capturing(void* stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &status) != cudaSuccess) {
    cudaGetLastError();
    return true;
  }
  return status != cudaStreamCaptureStatusNone;
}

Status zero_on_stream(void* data, size_t bytes, void* stream) {
  return cuda_status(cudaMemsetAsync(data, 0, bytes, static_cast<cudaStream_t>(stream)),
                     "zero_on_stream: cudaMemsetAsync");
}

namespace {

// A flag value for one launch's split (TailSplitWork): splitmix64 of a count of launches, so
// distinct for every launch of the process (splitmix64 is a bijection), and as unlike any other
// word left in the pool's memory (operand copies) as a random 64-bit value.
unsigned long long next_flag_key() {
  static std::atomic<uint64_t> launches{0};
  for (;;) {
    uint64_t z = launches.fetch_add(1) + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    if (z != 0) return z;  // fresh memory holds zeros
  }
}

}  // namespace

Status take_tail_split_memory(Workspace& workspace, size_t bytes, int tile_values,
                              TailSplitWork* work) {
  void* memory = nullptr;
  if (Status s = workspace.take(bytes, "the tail split", &memory); !s.ok() || memory == nullptr) {
    work->plan = no_tail_split(int64_t(work->plan.whole_items) + work->plan.tail_items);
    return s;
  }
  work->partials = static_cast<float4*>(memory);
  work->flags = reinterpret_cast<unsigned long long*>(static_cast<char*>(memory) +
                                                      size_t(work->plan.tails()) *
                                                          size_t(tile_values) * sizeof(float));
  work->key = next_flag_key();
  return Status::success();
}

}  // namespace tilegemm::gpu
