// Aligned copies of A and B (the plan is problem/aligned_copies.hpp): a workspace from a memory
// pool the library keeps per device, and a copy kernel.
#include <cstdint>
#include <map>
#include <mutex>

#include "kernels/aligned_copies.hpp"
#include "kernels/cuda_check.hpp"

namespace tilegemm::gpu {
namespace {

// Elements move as bits (uint8/16/32_t). One 16-byte vector of the copy per thread: lines along
// grid y (and batch entries along z), vectors of a line along x. The source is read element by
// element (its lines are not 16-byte aligned, which is why it is copied; consecutive threads still
// read consecutive bytes), the copy written in 16-byte stores. The padding past `length` is
// written with zeros.
template <typename T>
__global__ void copy_lines(const T* __restrict__ source, int64_t source_ld, int64_t source_batch,
                           T* __restrict__ copy, int64_t ld, int64_t batch, int64_t lines,
                           int64_t length, int64_t entries) {
  constexpr int V = 16 / sizeof(T);
  const int64_t first = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * V;
  if (first >= ld) return;
  for (int64_t e = blockIdx.z; e < entries; e += gridDim.z) {
    for (int64_t line = blockIdx.y; line < lines; line += gridDim.y) {
      const T* from = source + e * source_batch + line * source_ld + first;
      alignas(16) T values[V];
#pragma unroll
      for (int j = 0; j < V; ++j) values[j] = first + j < length ? from[j] : T(0);
      *reinterpret_cast<uint4*>(copy + e * batch + line * ld + first) =
          *reinterpret_cast<const uint4*>(values);
    }
  }
}

template <typename T>
Status launch_copy(const void* source, void* workspace, const OperandCopy& c, cudaStream_t stream) {
  constexpr int kThreads = 128, V = 16 / sizeof(T);
  const int64_t vectors = c.ld / V;
  const dim3 grid(unsigned((vectors + kThreads - 1) / kThreads),
                  unsigned(c.lines < 65535 ? c.lines : 65535),
                  unsigned(c.entries < 65535 ? c.entries : 65535));
  copy_lines<T><<<grid, kThreads, 0, stream>>>(
      static_cast<const T*>(source), c.source_ld, c.source_batch_stride,
      reinterpret_cast<T*>(static_cast<char*>(workspace) + c.offset), c.ld, c.batch_stride,
      c.lines, c.length, c.entries);
  return check_launch("aligned copy (copy_lines)");
}

Status copy_operand(const MatrixInput& in, const OperandCopy& c, void* workspace,
                    cudaStream_t stream) {
  if (!c.needed) return Status::success();
  switch (dtype_size(in.dtype)) {
    case 1:
      return launch_copy<uint8_t>(in.data, workspace, c, stream);
    case 2:
      return launch_copy<uint16_t>(in.data, workspace, c, stream);
    default:
      return launch_copy<uint32_t>(in.data, workspace, c, stream);
  }
}

// The library's memory pool on `device`, made on first use. Its release threshold is unlimited,
// so memory freed back to it stays reserved for the next call instead of going back to the
// driver at each synchronisation (cudaMallocAsync is then a cheap stream-ordered bookkeeping
// step). Separate from the device's default pool, whose settings belong to the application.
Status pool_of(int device, cudaMemPool_t* pool) {
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
  if (Status s = cuda_status(cudaMemPoolCreate(pool, &props), "aligned copy: cudaMemPoolCreate");
      !s.ok()) {
    return s;
  }
  uint64_t unlimited = UINT64_MAX;
  if (Status s = cuda_status(cudaMemPoolSetAttribute(*pool, cudaMemPoolAttrReleaseThreshold,
                                                     &unlimited),
                             "aligned copy: cudaMemPoolSetAttribute(ReleaseThreshold)");
      !s.ok()) {
    return s;
  }
  pools[device] = *pool;
  return Status::success();
}

}  // namespace

Status AlignedCopies::make(const GemmProblem& p, const AlignedCopyPlan& plan) {
  problem_ = p;
  stream_ = p.stream;
  if (!plan.any()) return Status::success();
  int device = 0;
  if (Status s = cuda_status(cudaGetDevice(&device), "aligned copy: cudaGetDevice"); !s.ok()) {
    return s;
  }
  cudaMemPool_t pool = nullptr;
  if (Status s = pool_of(device, &pool); !s.ok()) return s;
  const auto stream = static_cast<cudaStream_t>(p.stream);
  void* workspace = nullptr;
  const cudaError_t allocated =
      cudaMallocFromPoolAsync(&workspace, size_t(plan.workspace_bytes), pool, stream);
  if (allocated == cudaErrorMemoryAllocation) {
    // No room for the copies: the GEMM still runs, on the operands as they are. The error is
    // cleared so that the launch checks after it do not report it.
    cudaGetLastError();
    return Status::success();
  }
  if (Status s = cuda_status(allocated, "aligned copy: cudaMallocFromPoolAsync of the workspace");
      !s.ok()) {
    return s;
  }
  workspace_ = workspace;
  if (Status s = copy_operand(p.a, plan.a, workspace_, stream); !s.ok()) return s;
  if (Status s = copy_operand(p.b, plan.b, workspace_, stream); !s.ok()) return s;
  problem_ = with_aligned_copies(p, plan, workspace_);
  plan_ = plan;
  return Status::success();
}

AlignedCopies::~AlignedCopies() {
  // Stream-ordered: the memory returns to the pool once the GEMM that reads it has run. (A
  // destructor has no one to report a failure to; the next CUDA call would see a sticky error.)
  if (workspace_) cudaFreeAsync(workspace_, static_cast<cudaStream_t>(stream_));
}

}  // namespace tilegemm::gpu
