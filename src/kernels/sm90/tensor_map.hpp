// TMA descriptors (CUtensorMap) for the sm90 kernel's operands, made on the host for each launch.
#pragma once

#include <cuda.h>  // CUtensorMap (a type only: the driver function is found at run time)

#include <string>

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
// D (row-major) in the same terms: M rows of N contiguous values.
OperandShape output_d(const GemmArgs& args);

// Whether the epilogue is D = alpha * AB (no beta*C, bias or activation) with D in fp16 or bf16.
bool scaled_16bit(const GemmArgs& args);
// Whether the epilogue can store D with TMA: scaled_16bit, D row-major, and a tensor map can
// describe it (tma_check).
bool tma_storable(const GemmArgs& args);

// Empty when TMA can describe the operand; else why not, naming the operand (`name`: "a", "b").
// TMA needs a 16-byte aligned base, leading dimension and batch stride, coordinates that fit in
// 32 bits, and batch entries that do not overlap.
std::string tma_check(const OperandShape& operand, const char* name);

// A 3-D tensor map (K or MN innermost, then the other, then batch) with the 128-byte swizzle,
// boxes of 64 x `box_rows` x 1, and zero fill outside the matrix (the masked edges).
Status encode_operand_map(const OperandShape& operand, int box_rows, CUtensorMap* map);

}  // namespace tilegemm::sm90
