// The k_offsets form's tensor maps (tilegemm.hpp: Groups). A group's K values end anywhere, and
// its last K step must not read the next group's: for each group, A's and B's maps of the whole
// matrices with their K extent cut where the group's K values end, so that TMA fills the K values
// past them with zeros, as it fills the matrices' edges. The offsets are in device memory, so the
// maps are made there, by a small kernel that runs before the grouped kernel (tensormap.replace on
// copies of the host's maps), and the grouped kernel's producer reads group g's from entry g.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "tilegemm/tilegemm.hpp"

namespace tilegemm::sm90 {

// One group's maps (TMA reads a map in global memory from a 64-byte aligned address).
struct alignas(128) GroupMaps {
  CUtensorMap a, b;
};

// Writes `groups` entries of `out` (device memory), in stream order: copies of `a` and `b` whose
// K extent (their first dimension where K is innermost, `a_k_inner`/`b_k_inner`, else their second)
// ends where group g's K values end, the offsets clamped as group_k_after clamps them.
Status make_group_maps(const CUtensorMap& a, const CUtensorMap& b, bool a_k_inner, bool b_k_inner,
                       const int32_t* offsets, int64_t groups, int64_t k, GroupMaps* out,
                       cudaStream_t stream);

}  // namespace tilegemm::sm90
