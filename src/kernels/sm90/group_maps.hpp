// The grouped kernel's per-group tensor maps (tilegemm.hpp: Groups), made on the device: the sizes
// are in device memory, so a small kernel that runs before the grouped kernel copies the host's
// maps of the whole matrices and cuts one extent of each copy with tensormap.replace, where the
// group ends, so that TMA treats the group's end as the matrix's edge:
//   k_offsets          A's and B's K extent, where the group's K values end: TMA fills the K values
//                      past them with zeros (the group's last K step would otherwise read the next
//                      group's);
//   offsets, counts    D's rows, where the group's rows end: a TMA store clips the rows of a
//                      group's partial last tile (which would otherwise overwrite the next
//                      group's rows, or the rows past a count), so every tile of D can leave
//                      through the store buffers.
// The grouped kernel reads group g's maps from entry g, and acquires each before its first use.
// The ptr_array form's maps (each problem's A, B and D) are made on the host, which knows its
// problems, and copied to the device with the problems' epilogues and sizes.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "epilogue/epilogue.hpp"
#include "tilegemm/tilegemm.hpp"

namespace tilegemm::sm90 {

// One group's maps (TMA reads a map in global memory from a 64-byte aligned address). Only those
// of the group's form are written.
struct alignas(128) GroupMaps {
  CUtensorMap a, b, d;
};

// What the grouped kernel reads about its groups beside their sizes, in device memory.
struct GroupTable {
  const GroupMaps* maps = nullptr;  // entry g: group g's maps (null where there are none)
  // The ptr_array form (gemm_grouped()'s problems): entry g is problem g's epilogue, its C and D
  // one batch entry of its own.
  const EpilogueParams* epilogues = nullptr;
};

// The host's maps of the whole matrices, and where K lies in A's and B's (dimension 0 where K is
// innermost, `a_k_inner`/`b_k_inner`, else 1; D's rows are dimension 1). Only the form's maps need
// to be encoded.
struct WholeMaps {
  CUtensorMap a, b, d;
  bool a_k_inner = false, b_k_inner = false;
};

// Writes `groups` entries of `out` (device memory), in stream order, for the sizes of `form`
// (offsets or k_offsets: cumulative; counts: one per group), clamped as group_rows_after and
// group_k_after clamp them to an extent of `extent` (M for the rows forms, K for k_offsets).
Status make_group_maps(GroupForm form, const WholeMaps& whole, const int32_t* sizes, int64_t groups,
                       int64_t extent, GroupMaps* out, cudaStream_t stream);

// Copies `bytes` from host memory at `from` to device memory at `to` (16-byte aligned) in stream
// order, carried in kernel parameters: a captured graph holds them by value, so the host's
// memory may go as soon as the call returns, and nothing pages or synchronises (the ptr_array
// form's tables, which the host makes for each call).
Status copy_through_parameters(const void* from, size_t bytes, void* to, cudaStream_t stream);

}  // namespace tilegemm::sm90
