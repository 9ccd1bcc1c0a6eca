#include "kernels/sm90/tensor_map.hpp"

#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <utility>

#include "epilogue/sm90_store_chunk.hpp"
#include "kernels/sm90/operand_tile.hpp"
#include "problem/alignment.hpp"
#include "problem/groups.hpp"

namespace tilegemm::sm90 {

namespace {

GroupEntries entries(const GemmArgs& args) {
  return entries_in_memory(args.groups.form, args.batch_count);
}

}  // namespace

OperandShape operand_a(const GemmArgs& args) {  // M x K
  const bool k_major = args.a.stride.col == 1;
  return {args.a.data,     args.a.dtype,       args.m,
          args.k,          !k_major,           k_major ? args.a.stride.row : args.a.stride.col,
          entries(args).a, args.a.batch_stride};
}

OperandShape operand_b(const GemmArgs& args) {  // K x N
  const bool k_major = args.b.stride.row == 1;
  return {args.b.data,     args.b.dtype,       args.n,
          args.k,          !k_major,           k_major ? args.b.stride.col : args.b.stride.row,
          entries(args).b, args.b.batch_stride};
}

bool runs_transposed(const GemmArgs& args, bool promoted) {
  if (args.a.dtype != DType::tf32 || promoted || args.epilogue.bias != nullptr ||
      args.groups.form != GroupForm::none || !operand_b(args).mn_major ||
      operand_a(args).mn_major) {
    return false;
  }
  // D^T through the store buffers: from registers it is slower than B's transposed copy (8192 x
  // 8192 x 1024: 240 against 351 TFLOP/s on the H200). (An fp8 D, whose chunks' fit depends on
  // block_n, never comes from tf32 inputs.)
  const StoreRoute route = store_route(transposed_product(args, 64), 256);
  return route != StoreRoute::general && route != StoreRoute::scaled;
}

OperandShape output_d(const GemmArgs& args) {  // M x N, row-major
  const MatrixView& d = args.epilogue.d;
  return {d.data, d.dtype, args.m, args.n, false, d.stride.row, entries(args).c_d, d.batch_stride};
}

OperandShape output_d_transposed(const GemmArgs& args) {  // N x M, row-major
  const MatrixView& d = args.epilogue.d;
  return {d.data, d.dtype, args.n, args.m, false, d.stride.col, entries(args).c_d, d.batch_stride};
}

OperandShape source_c(const GemmArgs& args) {  // M x N, row-major
  const MatrixView& c = args.epilogue.c;
  return {c.data, c.dtype, args.m, args.n, false, c.stride.row, entries(args).c_d, c.batch_stride};
}

bool aligned_pairs(const MatrixView& d) {
  return d.stride.col == 1 && reinterpret_cast<uintptr_t>(d.data) % 8 == 0 &&
         d.stride.row % 2 == 0 && d.batch_stride % 2 == 0;
}

StoreRoute register_route(const EpilogueParams& e) {
  const bool sixteen_bit = e.d.dtype == DType::fp16 || e.d.dtype == DType::bf16;
  return scales_only(e) && sixteen_bit && aligned_pairs(e.d) ? StoreRoute::scaled
                                                             : StoreRoute::general;
}

StoreRoute store_route(const GemmArgs& args, int block_n) {
  const EpilogueParams& e = args.epilogue;
  const bool plain = scales_only(e);
  const bool row_major = e.d.stride.col == 1;
  const bool described = row_major && tma_check(output_d(args), "d").empty();
  // Every type of D (fp32, fp16, bf16, fp8) has chunks of 128 bytes a row: 128 columns of fp8.
  const bool chunks_fit = !is_fp8(e.d.dtype) || block_n % store_columns(1) == 0;
  if (described && chunks_fit) return plain ? StoreRoute::tma : StoreRoute::tma_general;
  // The staged routes' chunk origins are 32-bit, as TMA's coordinates.
  if (row_major && chunks_fit && args.m <= INT32_MAX && args.n <= INT32_MAX) {
    return plain ? StoreRoute::staged : StoreRoute::staged_general;
  }
  const bool transposable =
      e.d.dtype == DType::fp32 || e.d.dtype == DType::fp16 || e.d.dtype == DType::bf16;
  if (plain && !row_major && e.d.stride.row == 1 && transposable &&
      tma_check(output_d_transposed(args), "d").empty()) {
    return StoreRoute::tma_transposed;
  }
  return register_route(e);
}

bool c_by_tma(const GemmArgs& args, int block_n) {
  const EpilogueParams& e = args.epilogue;
  return store_route(args, block_n) == StoreRoute::tma_general && e.beta != 0.0f &&
         e.c.dtype == e.d.dtype && e.c.stride.col == 1 && tma_check(source_c(args), "c").empty();
}

std::string tma_check(const OperandShape& op, const char* name) {
  const std::string n(name);
  const int64_t outer = op.mn_major ? op.k : op.mn;  // rows of the 2-D matrix TMA walks
  if (op.mn > INT32_MAX || op.k > INT32_MAX) {
    return "operand " + n + " has a dimension past 2^31 (TMA coordinates are 32-bit)";
  }
  const int element_bytes = dtype_size(op.dtype);
  if (!vector_aligned(op.data, op.ld, op.batch_count > 1 ? op.batch_stride : 0, element_bytes)) {
    return "operand " + n +
           ": TMA needs a 16-byte aligned pointer, leading dimension and batch stride "
           "(multiples of " +
           std::to_string(16 / element_bytes) + " elements); ld" + n + " = " +
           std::to_string(op.ld);
  }
  if (op.batch_count > 1 && op.batch_stride < op.ld * outer) {
    return "operand " + n + ": batch entries overlap (batch stride " +
           std::to_string(op.batch_stride) + "), which a TMA descriptor cannot describe";
  }
  return {};
}

namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode_function() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      p = nullptr;
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

// tf32 operands load as TFLOAT32, for wgmma's tf32 inputs. Measured on the H100, the products are
// those of the fp32 values rounded to nearest, ties to even (the GPU test
// Tf32InputsAreRoundedToNearest; sm80 rounds ties away from zero, with cvt.rna). fp32 elsewhere.
CUtensorMapDataType map_type(DType dtype) {
  switch (dtype) {
    case DType::fp16:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DType::bf16:
      return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case DType::tf32:
      return CU_TENSOR_MAP_DATA_TYPE_TFLOAT32;
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
      return CU_TENSOR_MAP_DATA_TYPE_UINT8;  // bytes: wgmma's instruction names the type
    default:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  }
}

}  // namespace

Status encode_operand_map(const OperandShape& op, int box_rows, CUtensorMap* map) {
  const auto encode = encode_function();
  if (encode == nullptr) {
    return {StatusCode::cuda_error, "sm90: the driver has no cuTensorMapEncodeTiled"};
  }
  const int64_t inner = op.mn_major ? op.mn : op.k;
  const int64_t outer = op.mn_major ? op.k : op.mn;
  const cuuint64_t dims[3] = {cuuint64_t(inner), cuuint64_t(outer), cuuint64_t(op.batch_count)};
  // Bytes between rows, and between batch entries (any multiple of 16 when there is one entry).
  const int element_bytes = dtype_size(op.dtype);
  const int64_t row_bytes = op.ld * element_bytes;
  const int64_t batch_bytes =
      op.batch_count > 1 ? op.batch_stride * element_bytes : row_bytes * (outer > 0 ? outer : 1);
  const cuuint64_t strides[2] = {cuuint64_t(row_bytes), cuuint64_t(batch_bytes)};
  // The inner extent: one 128-byte swizzle row (64 values of a 16-bit type, 32 of a 32-bit one).
  const cuuint32_t box[3] = {cuuint32_t(block_k_for(element_bytes)), cuuint32_t(box_rows), 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUtensorMapDataType type = map_type(op.dtype);
  const CUresult r =
      encode(map, type, 3, const_cast<void*>(op.data), dims, strides, box, element_strides,
             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    return {StatusCode::cuda_error,
            "sm90: cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) + ")"};
  }
  return Status::success();
}

}  // namespace tilegemm::sm90
