// TMA descriptors (CUtensorMap) for the sm90 kernel's operands, made on the host for each launch.
#pragma once

#include <cuda.h>  // CUtensorMap (a type only: the driver function is found at run time)

#include <string>

#include "epilogue/sm90_store_route.hpp"
#include "kernels/gemm_args.hpp"
#include "tilegemm/tilegemm.hpp"

namespace tilegemm::sm90 {

// An operand as TMA sees it: `mn` rows (M for A, N for B) of `k` values, either K-major (the K
// values of a row are contiguous) or MN-major, `ld` elements between rows or columns.
struct OperandShape {
  const void* data = nullptr;
  DType dtype = DType::bf16;
  int64_t mn = 0, k = 0;
  bool mn_major = false;
  int64_t ld = 0;
  int64_t batch_count = 1, batch_stride = 0;
};
OperandShape operand_a(const GemmArgs& args);
OperandShape operand_b(const GemmArgs& args);
// tf32 with a row-major (MN-major) B and a row-major A: wgmma reads tf32 from shared memory
// K-major only, so the kernel runs the transposed product D^T = B^T A^T instead, whose A (B^T)
// it takes through registers and whose B (A^T) is K-major (mainloop.cuh: kRegisterA). Plain tf32
// only (not tf32x3's promoted sums, whose copies are K-major anyway); without a bias (it runs
// along D's columns, the transposed product's rows, which the epilogue does not take); and only
// where D^T goes out through the store buffers: a column-major D, or alpha * AB into a row-major
// D that TMA describes (tma_transposed).
bool runs_transposed(const GemmArgs& args, bool promoted);
// D (row-major) in the same terms: M rows of N contiguous values; C likewise when row-major.
OperandShape output_d(const GemmArgs& args);
// A column-major D as its transpose, row-major: N rows of M contiguous values (tma_transposed).
OperandShape output_d_transposed(const GemmArgs& args);
OperandShape source_c(const GemmArgs& args);

// D is row-major and every pair of adjacent columns starting at an even column is 4-byte aligned
// (8 for fp32), so a thread stores its pair at once.
bool aligned_pairs(const MatrixView& d);
// D's route from registers, where neither TMA nor the store buffers take it: `scaled` (D = alpha *
// AB into a 16-bit D whose column pairs are aligned: a thread stores its pair at once), else
// `general`.
StoreRoute register_route(const EpilogueParams& e);
// The epilogue's route to D (sm90_store_route.hpp) for tiles `block_n` wide. An fp8 D goes
// through TMA where its chunks (64 x 128 columns) fit the tile.
StoreRoute store_route(const GemmArgs& args, int block_n);
// Whether the tma_general route also loads C by TMA, into the buffers D leaves from: beta != 0,
// C in D's type, row-major, described by a tensor map. Else each thread loads its own values (and
// so do 256x128's consumers for an fp32 C; sm90_gemm's c_in_buffers).
bool c_by_tma(const GemmArgs& args, int block_n);

// Empty when TMA can describe the operand; else why not, naming the operand (`name`: "a", "b").
// TMA needs a 16-byte aligned base, leading dimension and batch stride, coordinates that fit in
// 32 bits, and batch entries that do not overlap.
std::string tma_check(const OperandShape& operand, const char* name);

// A 3-D tensor map (K or MN innermost, then the other, then batch) with the 128-byte swizzle,
// boxes of 128 bytes (one swizzle row) x `box_rows` x 1, and zero fill outside the matrix (the
// masked edges).
Status encode_operand_map(const OperandShape& operand, int box_rows, CUtensorMap* map);

}  // namespace tilegemm::sm90
