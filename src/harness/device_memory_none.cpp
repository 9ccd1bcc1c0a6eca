// Device memory in a build without CUDA (TILEGEMM_CUDA=OFF): there is none.
#include "harness/device_memory.hpp"

namespace tilegemm::harness {
namespace {

Status none() {
  return {StatusCode::no_device, "this build of tilegemm has no GPU backend (TILEGEMM_CUDA=OFF)"};
}

}  // namespace

Status upload(const void*, size_t, DeviceBuffer*) { return none(); }
Status copy_to_device(void*, const void*, size_t) { return none(); }
Status copy_to_host(void*, const void*, size_t) { return none(); }
Status device_synchronize() { return none(); }

}  // namespace tilegemm::harness
