#include "dispatch/call_signature.hpp"

#include <bit>
#include <functional>

namespace tilegemm::dispatch {
namespace {

// A field added to the problem or the options may change the choice: it must join the signature
// below before these sizes are moved to the new ones.
static_assert(sizeof(void*) != 8 || sizeof(GemmProblem) == 272,
              "GemmProblem changed: add the new field to call_signature()");
static_assert(sizeof(void*) != 8 || sizeof(GemmOptions) == 120,
              "GemmOptions changed: add the new field to call_signature()");

// Where an address lies modulo 256, or -1 for null (call_signature.hpp says why 256).
int64_t alignment_class(const void* address) {
  return address == nullptr ? -1 : int64_t(reinterpret_cast<uintptr_t>(address) % 256);
}

int64_t bits(float value) { return std::bit_cast<uint32_t>(value); }

class Words {
 public:
  explicit Words(CallSignature* signature) : signature_(signature) {}
  Words& operator<<(int64_t value) {
    signature_->words.at(next_++) = value;
    return *this;
  }
  Words& operator<<(const MatrixInput& x) {
    return *this << alignment_class(x.data) << int64_t(x.dtype) << int64_t(x.layout) << x.ld
                 << x.batch_stride;
  }

 private:
  CallSignature* signature_;
  size_t next_ = 0;
};

}  // namespace

CallSignature call_signature(const GemmProblem& p, const GemmOptions& options,
                             AutotunePolicy policy, int device) {
  CallSignature signature;
  Words words(&signature);
  words << p.m << p.n << p.k << p.batch_count << p.a << p.b << p.c;
  words << alignment_class(p.d.data) << int64_t(p.d.dtype) << int64_t(p.d.layout) << p.d.ld
        << p.d.batch_stride << alignment_class(p.d.scale) << alignment_class(p.d.amax);
  const EpilogueDesc& e = p.epilogue;
  words << bits(e.alpha) << bits(e.beta) << alignment_class(e.bias) << int64_t(e.bias_dtype)
        << e.bias_batch_stride << int64_t(e.activation) << bits(e.leaky_relu_slope);
  words << int64_t(p.scales.mode) << alignment_class(p.scales.a) << alignment_class(p.scales.b);
  words << int64_t(p.groups.form) << alignment_class(p.groups.sizes) << p.fast_accumulation;
  words << int64_t(options.backend) << int64_t(policy) << options.aligned_copies << device;
  signature.kernel = options.kernel;
  signature.config = options.config;
  return signature;
}

size_t CallSignatureHash::operator()(const CallSignature& s) const {
  // Each value folded in by a multiply (FNV-1a's step over words), the sum mixed once by
  // splitmix64's finaliser: a hash asked on every call, so one multiply a word.
  uint64_t h = std::hash<std::string>{}(s.kernel);
  const auto fold = [&](uint64_t value) { h = (h ^ value) * 0x100000001b3ull; };
  for (int64_t w : s.words) fold(uint64_t(w));
  if (s.config) {
    const KernelConfig& c = *s.config;
    for (int v : {c.block_m, c.block_n, c.block_k, c.group_size_m, c.num_stages, c.num_warps,
                  c.warp_m, c.warp_n, c.cluster_m, c.cluster_n, int(c.schedule)}) {
      fold(uint64_t(uint32_t(v)));
    }
  }
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  return size_t(h ^ (h >> 31));
}

}  // namespace tilegemm::dispatch
