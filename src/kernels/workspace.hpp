// The device memory one gemm() call works in: the aligned copies of A and B
// (aligned_copies.hpp) and the partial sums of a split of K (tail_split_work.hpp: the sm90
// kernel's tail split, the decode kernel's split-K).
//
// It comes from the caller when GemmOptions::workspace is given -- taken from its start in order,
// never past workspace_bytes, never anything else -- and otherwise from the library's memory pool
// on the call's stream (a pool per device, separate from the device's default pool, whose
// settings belong to the application; its release threshold is unlimited, so memory given back
// stays reserved for the next call and cudaMallocAsync is a cheap stream-ordered step). While the
// stream is being captured into a CUDA graph nothing is allocated: with no workspace given, the
// parts that need memory go without it, as they do when the device has none left. Each part that
// goes without is named in shortfall() (GemmReport::workspace_note).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tilegemm/tilegemm.hpp"

namespace tilegemm::gpu {

// Parts start on kWorkspaceAlignment bytes (problem/aligned_copies.hpp), as the copies' do.

class Workspace {
 public:
  // `given`/`given_bytes`: the caller's workspace (null: none). Without one the pool serves,
  // unless the stream is capturing: asked at the first allocation, so that a call that needs no
  // memory pays no query.
  Workspace(void* stream, void* given, size_t given_bytes);
  ~Workspace();  // gives pool memory back, stream-ordered: after the work enqueued meanwhile
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // `bytes` of device memory for `what` (a phrase: "the aligned copies"), aligned to
  // kWorkspaceAlignment. *memory is null when there is none to have: the caller goes without
  // it, and shortfall() says so. Only CUDA errors other than a lack of memory fail.
  Status take(size_t bytes, const char* what, void** memory);

  void* stream() const { return stream_; }
  // What went without memory, and why ("" when nothing did).
  const std::string& shortfall() const { return shortfall_; }

 private:
  void note(const std::string& text);
  void* stream_ = nullptr;
  char* given_ = nullptr;
  size_t given_bytes_ = 0, given_used_ = 0;
  enum class Pool { not_asked, usable, capturing } pool_ = Pool::not_asked;
  std::vector<void*> pooled_;
  std::string shortfall_;
};

// Whether work enqueued on `stream` now would be captured into a CUDA graph rather than run. A
// query that fails (the legacy stream, while another thread captures in global mode) answers
// true: the answer that allocates and synchronises nothing.
bool stream_is_capturing(void* stream);

// Sets `bytes` of device memory at `data` to zero, in stream order (a memset node when captured).
Status zero_on_stream(void* data, size_t bytes, void* stream);

}  // namespace tilegemm::gpu
