#include "dispatch/kernel_choice.hpp"

#include <algorithm>

#include "problem/alignment.hpp"
#include "tune/tuning_key.hpp"

namespace tilegemm::dispatch {
namespace {

// The order "auto" tries kernels in: fastest first. tile2d takes the 16-bit inputs that warptile
// does not, on a GPU without the tensor-core kernels.
constexpr const char* kAutoPreference[] = {"sm90", "sm80", "warptile", "tile2d"};

bool takes_dtype(const gpu::Kernel& k, DType d) {
  for (DType x : k.info.input_dtypes)
    if (x == d) return true;
  return false;
}

// Whether one of the kernel's compiled configs takes the problem (decode's configs each take
// one copy path).
bool takes_with_some_config(const gpu::Kernel& k, const GemmProblem& p) {
  for (const KernelConfig& c : k.info.configs) {
    if (k.can_implement(p, c).empty()) return true;
  }
  return false;
}

}  // namespace

bool suits_decode(const GemmProblem& p) {
  const bool sixteen_bit = p.a.dtype == DType::fp16 || p.a.dtype == DType::bf16;
  if (!sixteen_bit || p.groups.form != GroupForm::none) return false;
  // Few columns run as the transposed product (decode/compiled_shapes.hpp: runs_transposed, not
  // with a bias): the tile's rows are then N, and A is the operand streamed.
  const bool transposed = p.m > kDecodeRows && p.n >= kDecodeMinColumns &&
                          p.n <= kDecodeMaxColumns && p.epilogue.bias == nullptr;
  if (p.m > kDecodeRows && !transposed) return false;
  const int64_t streamed = (transposed ? p.m : p.n) * p.k;
  const bool aligned = rows_aligned(p.a, p.m, p.k) && rows_aligned(p.b, p.k, p.n);
  return aligned ? streamed >= kDecodeMinValues || p.k >= kDecodeMinK
                 : streamed >= kDecodeStagedMinValues;
}

bool decode_as_it_lies(const GemmProblem& p) {
  if (!suits_decode(p)) return false;
  const gpu::Kernel* decode = gpu::find_kernel("decode");
  return decode != nullptr && takes_with_some_config(*decode, p);
}

const gpu::Kernel* auto_kernel(const GemmProblem& p) {
  if (decode_as_it_lies(p)) return gpu::find_kernel("decode");
  for (const char* name : kAutoPreference) {
    const gpu::Kernel* k = gpu::find_kernel(name);
    if (k && k->can_implement(p, k->default_for(p.a.dtype)).empty()) return k;
  }
  return gpu::find_kernel("warptile");
}

const gpu::Kernel* requested_kernel(const GemmProblem& p, const std::string& kernel_request) {
  return autotune::automatic(kernel_request) ? auto_kernel(p) : gpu::find_kernel(kernel_request);
}

std::string auto_kernel_note(const GemmProblem& p, const gpu::Kernel& chosen) {
  std::string note;
  if (chosen.info.name == "decode") return note;  // chosen first, by suits_decode
  for (const char* name : kAutoPreference) {
    const gpu::Kernel* k = gpu::find_kernel(name);
    if (k == &chosen) break;
    if (k == nullptr || !takes_dtype(*k, p.a.dtype)) continue;
    if (std::string why = k->can_implement(p, k->default_for(p.a.dtype)); !why.empty()) {
      note.append(note.empty() ? "" : "; ").append(name).append(" not used: ").append(why);
    }
  }
  return note;
}

}  // namespace tilegemm::dispatch
