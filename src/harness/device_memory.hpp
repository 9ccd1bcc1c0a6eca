// Device memory for the harness, through the CUDA runtime (device_memory.cpp); a build without
// CUDA (TILEGEMM_CUDA=OFF) links device_memory_none.cpp, whose every call fails with no_device.
#pragma once

#include <cstddef>
#include <memory>

#include "tilegemm/tilegemm.hpp"

namespace tilegemm::harness {

// Releases device memory on destruction (a null deleter on the CPU backend).
using DeviceBuffer = std::unique_ptr<void, void (*)(void*)>;

// A new device buffer of `bytes` holding a copy of `host`.
Status upload(const void* host, size_t bytes, DeviceBuffer* out);
// Copies between existing buffers; copy_to_host waits for the device's work first, and reports
// an error of that work as "kernel execution: ...".
Status copy_to_device(void* device, const void* host, size_t bytes);
Status copy_to_host(void* host, const void* device, size_t bytes);
// Waits for the device's work; an error of it comes back as "kernel execution: ...".
Status device_synchronize();

}  // namespace tilegemm::harness
