// The sm90 kernel's mainloop: the producer's TMA loads of a K step, and a consumer's wgmma over
// the K steps of one piece of work. Both walk the stage ring through the Pipeline
// (pipeline.cuh); the kernel body (sm90_kernel.cuh) says which work items they take.
//
//   load_step   the operand tiles of one K step into a stage: this program's part of A's tile,
//               multicast to the programs of its cluster row (which share A), and its part of
//               B's, multicast to those of its cluster column. Edges cost nothing: TMA fills what
//               lies outside the matrix with zeros.
//   mma         per slab of a stage, 4 x (rows / 64) wgmma m64nBNk16 (k8 for tf32, k32 for fp8);
//               the stage's group is committed, and once only it may still run (wait_group 1)
//               the previous stage is freed. Two consumers that share a tile end its K loop
//               stagger() steps apart, so that each one's epilogue runs beside the other's wgmma.
//               Promotion (E::kPromotes: fp8 by default, tf32x3) instead runs each slab's wgmma
//               into separate sums, one unit of the tile at a time (an m64 tile's columns, 128 at
//               most), and adds each into the fp32 accumulators, times its block scales, once it is
//               done (add_unit; without block scales: a plain add, in a loop of its own). Where two
//               units of sums fit (one unit per K step: 128x128, 64x128, 128x64) a consumer looks a
//               step ahead: it issues the next step's unit before it adds this one's
//               (mma_lookahead). Otherwise two consumers issue their units in turn, so that the
//               tensor cores run the other consumer's unit while one adds.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <type_traits>

#include "kernels/gemm_args.hpp"
#include "kernels/sm90/block_scales.cuh"
#include "kernels/sm90/kernel_shape.hpp"
#include "kernels/sm90/named_barriers.cuh"
#include "kernels/sm90/operand_tile.hpp"
#include "kernels/sm90/pipeline.cuh"
#include "kernels/sm90/shared_storage.hpp"
#include "ptx/sm90.cuh"
#include "ptx/wgmma.cuh"
#include "schedule/tile_order.hpp"

namespace tilegemm::sm90 {

#ifdef TILEGEMM_SM90A_DEVICE_CODE

// Where a program stands in its cluster: its rank, and along M (its part of B) and N (its part of
// A). Read from the special register wherever needed: a value kept across setmaxnreg goes to
// local memory.
template <Sm90Shape kShape>
struct ClusterRank {
  __device__ __forceinline__ static int rank() {
    return kShape.cluster_size() > 1 ? int(cuda::ptx::get_sreg_cluster_ctarank()) : 0;
  }
  __device__ __forceinline__ static int m() {
    return kShape.cluster_m > 1 ? rank() % kShape.cluster_m : 0;
  }
  __device__ __forceinline__ static int n() {
    return kShape.cluster_n > 1 ? rank() / kShape.cluster_m : 0;
  }
};

// The TMA loads of an operand tile of rows mn0.. and K values k0.. of batch entry `batch`,
// completing on `full`: its boxes (tile.boxes()) `first`, `first` + `step`, ... With `multicast`
// (a mask of the cluster's programs) each box lands at the same offset in each of those programs'
// shared memory and completes on each one's `full` at that offset.
__device__ __forceinline__ void load_tile(const CUtensorMap& map, OperandTile tile,
                                          unsigned char* dst, int mn0, int k0, int batch,
                                          uint64_t* full, int first = 0, int step = 1,
                                          uint16_t multicast = 0) {
  for (int box = first; box < tile.boxes(); box += step) {
    const int32_t mn = mn0 + box * tile.box_mn();
    const int32_t coords[3] = {tile.mn_major ? mn : k0, tile.mn_major ? k0 : mn, batch};
    unsigned char* at = dst + box * tile.box_bytes();
    if (multicast != 0) {
      cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, at, &map,
                                      coords, full, multicast);
    } else {
      cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, at, &map,
                                      coords, full);
    }
  }
}

// E: the input element kind (element_traits.cuh); A_MN, B_MN: the operand is MN-major in memory
// (column-major A, row-major B).
template <class E, Sm90Shape kShape, bool A_MN, bool B_MN>
struct Sm90Mainloop {
  using T = typename E::Mma;
  using Storage = SharedStorage<kShape>;
  using Ring = PipelineState<kShape.num_stages>;
  static constexpr int BM = kShape.block_m, BN = kShape.block_n, kSlabs = kShape.k_slabs;
  static constexpr int BK = kShape.block_k(E::kBytes);
  static constexpr int kSlabK = block_k_for(E::kBytes);
  static constexpr int kMmaM = kShape.mma_m();
  static constexpr int kStagger = kShape.stagger();
  static constexpr OperandTile kTileA{BM, A_MN, 1, E::kBytes}, kTileB{BN, B_MN, 1, E::kBytes};
  static constexpr uint32_t kStageBytes = kSlabs * (kTileA.bytes() + kTileB.bytes());
  // wgmma reads tf32 K-major only, from shared memory; an MN-major tf32 A (a row-major B, swapped
  // into A's place: launch.cuh) goes through registers instead (mma_register_a).
  static constexpr bool kRegisterA = A_MN && !E::kMnMajorOperands;
  static_assert(E::kMnMajorOperands || !B_MN, "wgmma reads this type's B K-major only");
  static_assert(!kRegisterA || (E::kDType == DType::tf32 && !E::kPromotes),
                "A from registers: plain tf32 only");
  static_assert(E::kMmaK * kMmaPerSlab == kSlabK, "four wgmma per slab");
  // Promotion: units of kUnitN columns of one m64 tile (four wgmma k32 per slab) whose sums wait
  // in registers beside the accumulators (kernel_shape.hpp: promotion_unit_n). The block scales
  // multiply each unit's sums; a unit's columns lie in one 128-column scale block.
  static constexpr int kUnitN = kShape.promotion_unit_n();
  static constexpr int kUnitsAlongN = BN / kUnitN, kUnits = kMmaM * kUnitsAlongN;
  using Factors = StepScales<kMmaM, kUnitsAlongN>;
  using ScaleStream = BlockScaleStream<kMmaM, kUnitN, kUnitsAlongN>;
  static_assert(kScaleBlock % kUnitN == 0, "a unit's columns in one scale block");
  static_assert(!E::kPromotes || (kSlabs == 1 && (!E::kFp8 || BK == kScaleBlock)),
                "promotion: one slab per K step; fp8: one scale block per K step");
  // Two consumers that promote issue their units in turn (NamedBarrier::kTurn0): each issues its
  // unit's wgmma only once the other has issued all of its own, so that one unit runs while the
  // other consumer adds. Issued side by side, their wgmma interleave on the tensor cores and
  // finish together, and both consumers then add while the tensor cores idle. (Block scales are
  // loaded a pair of steps ahead, so that no wait for them is passed on with a turn: perf-notes,
  // fp8 v4 and v9.)
  static constexpr bool kLookahead = E::kPromotes && kShape.promotion_lookahead();
  static constexpr bool kTakesTurns = E::kPromotes && kShape.consumers() == 2 && !kLookahead;

  // Before a consumer's first unit and after its last: the first turn is consumer 0's, and
  // consumer 0 takes the turn that consumer 1 passes after its last unit, so that every arrival
  // on the turns' barriers is waited for.
  __device__ __forceinline__ static void start_turns(int consumer) {
    if (kTakesTurns && consumer == 1) pass_turn(consumer);
  }
  __device__ __forceinline__ static void end_turns(int consumer) {
    if (kTakesTurns && consumer == 0) await_turn(consumer);
  }

  // The loads of K step kt of `work` into `stage`, completing on `full` (armed by the caller with
  // the whole stage's bytes: the other programs' parts complete here too). A program below (right
  // of) the matrix loads from the last real tile row (column): only its part of the other operand
  // matters, and it writes nothing.
  __device__ __forceinline__ static void load_step(const CUtensorMap& map_a,
                                                   const CUtensorMap& map_b, Storage& smem,
                                                   const GemmArgs& args, const BatchedTile& work,
                                                   int kt, int stage, uint64_t* full) {
    constexpr OperandTile kTileAParts{BM, A_MN, kShape.cluster_n, E::kBytes};
    constexpr OperandTile kTileBParts{BN, B_MN, kShape.cluster_m, E::kBytes};
    using Rank = ClusterRank<kShape>;
    // The programs of its cluster row (A) and column (B); none where a tile is not shared.
    const uint16_t to_a =
        kShape.cluster_n > 1 ? multicast_a(Rank::rank(), kShape.cluster_m, kShape.cluster_n) : 0;
    const uint16_t to_b = kShape.cluster_m > 1 ? multicast_b(Rank::rank(), kShape.cluster_m) : 0;
    const int64_t tile_rows = cdiv(args.m, BM), tile_cols = cdiv(args.n, BN);
    const int64_t pid_m = work.tile.pid_m < tile_rows ? work.tile.pid_m : tile_rows - 1;
    const int64_t pid_n = work.tile.pid_n < tile_cols ? work.tile.pid_n : tile_cols - 1;
    const int m0 = int(pid_m * BM), n0 = int(pid_n * BN);
#pragma unroll
    for (int j = 0; j < kSlabs; ++j) {
      const int k0 = kt * BK + j * kSlabK;
      load_tile(map_a, kTileAParts, smem.a[stage][j], m0, k0, int(work.batch), full, Rank::n(),
                kShape.cluster_n, to_a);
      load_tile(map_b, kTileBParts, smem.b[stage][j], n0, k0, int(work.batch), full, Rank::m(),
                kShape.cluster_m, to_b);
    }
  }

  // The loads of K step kt into `stage` for a program with no cluster, from given places: A's
  // rows from a_row of batch entry a_batch, B's columns from b_col of entry b_batch, K values from
  // k_begin (the grouped kernel's: a group's rows, or its K values, start anywhere). Rows past
  // the matrix come in as zeros; rows of the next group are loaded and never stored.
  __device__ __forceinline__ static void load_step_at(const CUtensorMap& map_a,
                                                      const CUtensorMap& map_b, Storage& smem,
                                                      int a_row, int a_batch, int b_col,
                                                      int b_batch, int kt, int stage,
                                                      uint64_t* full, int k_begin = 0) {
    static_assert(kShape.cluster_size() == 1, "a program on its own");
#pragma unroll
    for (int j = 0; j < kSlabs; ++j) {
      const int k0 = k_begin + kt * BK + j * kSlabK;
      load_tile(map_a, kTileA, smem.a[stage][j], a_row, k0, a_batch, full);
      load_tile(map_b, kTileB, smem.b[stage][j], b_col, k0, b_batch, full);
    }
  }

  // Promotion: unit q of a slab (m64 tile q / kUnitsAlongN, columns kUnitN * (q % kUnitsAlongN)
  // on) into `part`, committed as one group.
  __device__ __forceinline__ static void issue_unit(float (&part)[kUnitN / 2], uint32_t a,
                                                    uint32_t b, int my_row, int q) {
    constexpr OperandTile tile_a = kTileA, tile_b = kTileB;
    const int i = q / kUnitsAlongN, c = q % kUnitsAlongN;
    const uint64_t slab_a = tile_a.descriptor(a, 0, 0), slab_b = tile_b.descriptor(b, 0, 0);
    wgmma_fence();  // part was read by the last add_unit
#pragma unroll
    for (int ks = 0; ks < kMmaPerSlab; ++ks) {
      Wgmma<T, kUnitN, A_MN, B_MN>::run(part, tile_a.descriptor_at(slab_a, my_row + i * 64, ks),
                                        tile_b.descriptor_at(slab_b, c * kUnitN, ks), ks > 0);
    }
    wgmma_commit();
  }

  // Unit q's sums, once its group is done, into acc (zeroed at the piece's start: zero_sums)
  // times (A's row scale * B's column scale); kOnes (no block scales): as they are. Registers
  // 4j + {0, 1} hold the thread's first row, 4j + {2, 3} the row 8 below it.
  template <bool kOnes>
  __device__ __forceinline__ static void add_unit(float (&acc)[kMmaM][BN / 2],
                                                  float (&part)[kUnitN / 2], int q,
                                                  const Factors& factors) {
    const int i = q / kUnitsAlongN, c = q % kUnitsAlongN;
    fence_registers(part);
    const float s0 = kOnes ? 1.0f : factors.a[i][0] * factors.b[c];
    const float s1 = kOnes ? 1.0f : factors.a[i][1] * factors.b[c];
#pragma unroll
    for (int r = 0; r < kUnitN / 2; ++r) {
      float& x = acc[i][c * (kUnitN / 2) + r];
      x = kOnes ? x + part[r] : fmaf(part[r], r % 4 < 2 ? s0 : s1, x);
    }
  }

  // Every unit is added to accumulators zeroed at a piece's start: a piece's first unit copied
  // into them instead made ptxas spill 200-1100 bytes in 128x256 and 128x128 (without block
  // scales), and took a branch in the K loop.
  __device__ __forceinline__ static void zero_sums(float (&acc)[kMmaM][BN / 2]) {
#pragma unroll
    for (int i = 0; i < kMmaM; ++i)
#pragma unroll
      for (int r = 0; r < BN / 2; ++r) acc[i][r] = 0.0f;
  }

  // The factors of a piece's K steps from k_step0, in order (block_scales.cuh): ones without
  // block scales (kOnes), which the adds fold away.
  template <bool kOnes>
  __device__ __forceinline__ static auto factor_stream(const BlockScaleTile* scales,
                                                       int64_t k_step0, int steps) {
    if constexpr (kOnes) {
      return FactorsOfOne<kMmaM, kUnitsAlongN>{};
    } else {
      return ScaleStream(scales->view, scales->row0, scales->n0, scales->n, k_step0, steps);
    }
  }

  // A consumer's wgmma over `steps` K steps from `ring`, into acc (its rows from my_row). The
  // first step of a piece overwrites acc (scale_d 0). `previous` is the stage to free once the
  // next step's group is in flight; the caller frees the last one after wgmma_wait<0> (drain).
  // After each step's wgmma are issued, at_step(kt) runs beside them. With promotion the piece's
  // first K step is `k_step0` (its block scales' place along K), and each stage is freed as soon
  // as its wgmma are done.
  template <class Pipe, class AtStep>
  __device__ __forceinline__ static void mma(const Pipe& pipeline, Storage& smem,
                                             float (&acc)[kMmaM][BN / 2], Ring& ring, int& previous,
                                             int steps, int consumer, int my_row, int lane,
                                             bool signals, AtStep at_step, int64_t k_step0 = 0,
                                             const BlockScaleTile* scales = nullptr) {
    // Promotion: the consumer's first row, the same in every thread, in a uniform register, so
    // that the descriptors of A's slices are worked out there too (the adds fill the issue slots).
    if constexpr (E::kPromotes) {
      my_row = __shfl_sync(0xffffffffu, my_row, 0);
      // Without block scales (fp8: a uniform branch; tf32x3: always) the units are added as they
      // are: fp8 ran 6-16 % faster than with its units multiplied by factors of one, tf32x3 2-4 %
      // (perf-notes, fp8 v7 and tf32x3's plain adds).
      const auto promote = [&](auto ones) {
        constexpr bool kOnes = decltype(ones)::value;
        if constexpr (kLookahead) {
          mma_lookahead<kOnes>(pipeline, smem, acc, ring, steps, my_row, lane, signals, at_step,
                               k_step0, scales);
        } else {
          mma_promoted<kOnes>(pipeline, smem, acc, ring, steps, consumer, my_row, lane, signals,
                              at_step, k_step0, scales);
        }
      };
      if constexpr (E::kFp8) {
        !scales->on() ? promote(std::true_type{}) : promote(std::false_type{});
      } else {
        promote(std::true_type{});
      }
      return;
    }
    if constexpr (kRegisterA) {
      mma_register_a(pipeline, smem, acc, ring, previous, steps, consumer, my_row, lane, signals,
                     at_step);
    } else {
      constexpr OperandTile tile_a = kTileA, tile_b = kTileB;  // device-side copies
      const bool staggered = kStagger > 0 && steps > kStagger;
      for (int kt = 0; kt < steps; ++kt) {
        if (staggered && consumer == 1 && kt == steps - kStagger) await_stagger();
        pipeline.wait(ring);
        wgmma_fence();
#pragma unroll
        for (int j = 0; j < kSlabs; ++j) {
          const uint32_t a = shared_address(smem.a[ring.stage][j]);
          const uint32_t b = shared_address(smem.b[ring.stage][j]);
#pragma unroll
          for (int ks = 0; ks < kMmaPerSlab; ++ks)
#pragma unroll
            for (int i = 0; i < kMmaM; ++i) {
              Wgmma<T, BN, A_MN, B_MN>::run(acc[i], tile_a.descriptor(a, my_row + i * 64, ks),
                                            tile_b.descriptor(b, 0, ks), kt + j + ks > 0);
            }
        }
        wgmma_commit();
        if (staggered && consumer == 0 && kt == steps - 1) pass_stagger();
        // This stage's group may still run; the previous stage's has finished reading.
        wgmma_wait<1>();
        if (kt > 0) pipeline.release(previous, lane, signals);
        previous = ring.stage;
        ring.advance();
        at_step(kt);
      }
    }
  }

  // mma with A from registers (kRegisterA): a stage's wgmma in kGroups groups (two with two
  // consumers: halves of its K; else the whole stage), each group from one of two sets of
  // fragments, which the groups take in turn, loaded from the stage just before the group is
  // issued. A set is refilled only once its group is done (wait_group 1 after the next group is
  // issued), so that one group runs while the consumer loads the next one's fragments; a stage is
  // freed once its last group is done. With one consumer a whole stage's group hides the loads'
  // latency, which halves left open (64x128 ran 20 % slower than by descriptors); with two, the
  // other consumer's wgmma fill that gap, and whole stages' sets take registers that 128x256
  // lacks. The loop takes stages in pairs, so that ptxas can tell which set each wgmma reads
  // (else it serialises them).
  template <class Pipe, class AtStep>
  __device__ __forceinline__ static void mma_register_a(const Pipe& pipeline, Storage& smem,
                                                        float (&acc)[kMmaM][BN / 2], Ring& ring,
                                                        int& previous, int steps, int consumer,
                                                        int my_row, int lane, bool signals,
                                                        AtStep at_step) {
    constexpr OperandTile tile_a = kTileA, tile_b = kTileB;
    constexpr int kGroups = kShape.consumers() > 1 ? 2 : 1;
    constexpr int kMmaPerGroup = kSlabs * kMmaPerSlab / kGroups;
    using Fragments = uint32_t[kMmaPerGroup][kMmaM][4];
    // The thread's four values of each m64 x k8 fragment, as offsets in a slab of A: those of the
    // slab's first wgmma; wgmma ks reads K values 8 * ks further, ks atoms on.
    const int thread = int(threadIdx.x % 128);
    uint32_t at[kMmaM][4];
#pragma unroll
    for (int i = 0; i < kMmaM; ++i)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        at[i][r] =
            tile_a.value_offset(my_row + 64 * i + fragment_row(thread, r), fragment_k(thread, r));
      }
    const bool staggered = kStagger > 0 && steps > kStagger;
    // Group h of stage kt, from `fragments`.
    const auto group = [&](int kt, int h, Fragments& fragments) {
      if (h == 0) {
        if (staggered && consumer == 1 && kt == steps - kStagger) await_stagger();
        pipeline.wait(ring);
      }
#pragma unroll
      for (int s = 0; s < kMmaPerGroup; ++s) {
        const int step = h * kMmaPerGroup + s;
        const unsigned char* slab =
            smem.a[ring.stage][step / kMmaPerSlab] + step % kMmaPerSlab * kAtomBytes;
#pragma unroll
        for (int i = 0; i < kMmaM; ++i)
#pragma unroll
          for (int r = 0; r < 4; ++r) {
            fragments[s][i][r] = *reinterpret_cast<const uint32_t*>(slab + at[i][r]);
          }
      }
      wgmma_fence();
#pragma unroll
      for (int s = 0; s < kMmaPerGroup; ++s) {
        const int step = h * kMmaPerGroup + s;
        const uint32_t b = shared_address(smem.b[ring.stage][step / kMmaPerSlab]);
#pragma unroll
        for (int i = 0; i < kMmaM; ++i) {
          WgmmaRegisterA<T, BN>::run(acc[i], fragments[s][i],
                                     tile_b.descriptor(b, 0, step % kMmaPerSlab), kt + step > 0);
        }
      }
      wgmma_commit();
      const bool last = h + 1 == kGroups;
      if (last && staggered && consumer == 0 && kt == steps - 1) pass_stagger();
      // The group before this one is done: its set is free, and so is its stage if this is a
      // stage's first group.
      wgmma_wait<1>();
      if (h == 0 && kt > 0) pipeline.release(previous, lane, signals);
      if (last) {
        previous = ring.stage;
        ring.advance();
        at_step(kt);
      }
    };
    Fragments even, odd;
    // Stage kt's groups, the first from `first` and the next from the other set.
    const auto stage = [&](int kt, Fragments& first, Fragments& second) {
      group(kt, 0, first);
      if constexpr (kGroups == 2) group(kt, 1, second);
    };
    int kt = 0;
    for (; kt + 1 < steps; kt += 2) {
      stage(kt, even, odd);
      kGroups == 2 ? stage(kt + 1, even, odd) : stage(kt + 1, odd, even);
    }
    if (kt < steps) stage(kt, even, odd);
  }

  // Promotion, units one at a time: each unit issued, waited for and added; two consumers issue
  // their units in turn (kTakesTurns). kOnes: without block scales.
  template <bool kOnes, class Pipe, class AtStep>
  __device__ __forceinline__ static void mma_promoted(const Pipe& pipeline, Storage& smem,
                                                      float (&acc)[kMmaM][BN / 2], Ring& ring,
                                                      int steps, int consumer, int my_row, int lane,
                                                      bool signals, AtStep at_step, int64_t k_step0,
                                                      const BlockScaleTile* scales) {
    // (Not with turns: the staggered consumer's wait would hold up the turn the other waits for.)
    const bool staggered = kStagger > 0 && steps > kStagger && !kTakesTurns;
    float part[kUnitN / 2];  // one unit's sums
    // K step kt with the factors f.
    const auto step = [&](int kt, const Factors& f) {
      if (staggered && consumer == 1 && kt == steps - kStagger) await_stagger();
      // While this consumer waits for a unit and adds it, the tensor cores run the unit the
      // other consumer issued after this one's (with one consumer they idle). The stage is
      // freed once its last unit is done.
      pipeline.wait(ring);
      const uint32_t a = shared_address(smem.a[ring.stage][0]);
      const uint32_t b = shared_address(smem.b[ring.stage][0]);
#pragma unroll
      for (int q = 0; q < kUnits; ++q) {
        if constexpr (kTakesTurns) await_turn(consumer);
        issue_unit(part, a, b, my_row, q);
        if constexpr (kTakesTurns) pass_turn(consumer);
        wgmma_wait<0>();
        if (q + 1 == kUnits) pipeline.release(ring.stage, lane, signals);
        add_unit<kOnes>(acc, part, q, f);
      }
      if (staggered && consumer == 0 && kt == steps - 1) pass_stagger();
      ring.advance();
      at_step(kt);
    };
    zero_sums(acc);
    if constexpr (kOnes) {
      const Factors ones = Factors::ones();
      for (int kt = 0; kt < steps; ++kt) step(kt, ones);
    } else {
      // Each step's block scales are loaded a pair of steps before its adds (from L2 or DRAM,
      // their latency would hold up the step's first add, and with turns the other consumer's
      // issue). The loop takes steps in pairs, so that the loads of the next pair are waited for
      // only at this pair's end.
      auto stream = factor_stream<kOnes>(scales, k_step0, steps);
      Factors f0 = stream.next(), f1 = stream.next();  // of steps kt and kt + 1
      int kt = 0;
      for (; kt + 1 < steps; kt += 2) {
        const Factors next0 = stream.next(), next1 = stream.next();
        step(kt, f0);
        step(kt + 1, f1);
        f0 = next0, f1 = next1;
      }
      if (kt < steps) step(kt, f0);
    }
  }

  // Promotion, one unit per K step (kLookahead): step kt + 1's unit is issued into the other set
  // of sums before step kt's is waited for (wait_group 1) and added, so that the tensor cores
  // hold one of this consumer's units while it adds; each stage is freed once its unit is done.
  // The loop takes steps in pairs and every branch that issues also waits, so that at each point
  // ptxas can tell which set of sums is in flight: where it cannot, it serialises every wgmma.
  template <bool kOnes, class Pipe, class AtStep>
  __device__ __forceinline__ static void mma_lookahead(const Pipe& pipeline, Storage& smem,
                                                       float (&acc)[kMmaM][BN / 2], Ring& ring,
                                                       int steps, int my_row, int lane,
                                                       bool signals, AtStep at_step,
                                                       int64_t k_step0,
                                                       const BlockScaleTile* scales) {
    static_assert(kMmaM == 1 && kUnits == 1 && kSlabs == 1, "one unit per K step");
    using Sums = float[kUnitN / 2];
    Sums sums0, sums1;
    // The next step's unit into `part`, once its stage has landed.
    const auto issue_next = [&](Sums& part) {
      pipeline.wait(ring);
      issue_unit(part, shared_address(smem.a[ring.stage][0]), shared_address(smem.b[ring.stage][0]),
                 my_row, 0);
      ring.advance();
    };
    // Step kt's unit, done, from the stage `ahead` stages behind the ring's: freed, and its sums
    // into acc.
    const auto add_step = [&](int kt, int ahead, Sums& part, const Factors& factors) {
      pipeline.release(ring.behind(ahead), lane, signals);
      add_unit<kOnes>(acc, part, 0, factors);
      at_step(kt);
    };
    if (steps <= 0) return;
    zero_sums(acc);
    // Each step's block scales are loaded a pair of steps before its adds: loaded one step ahead,
    // their latency from L2 held up every add (perf-notes, fp8 v8).
    auto stream = factor_stream<kOnes>(scales, k_step0, steps);
    Factors f0 = stream.next(), f1 = stream.next();  // of steps kt and kt + 1
    issue_next(sums0);
    int kt = 0;
    for (; kt + 2 < steps; kt += 2) {  // in flight here: step kt in sums0
      const Factors next0 = stream.next();
      issue_next(sums1);
      wgmma_wait<1>();
      add_step(kt, 2, sums0, f0);
      const Factors next1 = stream.next();
      issue_next(sums0);
      wgmma_wait<1>();
      add_step(kt + 1, 2, sums1, f1);
      f0 = next0, f1 = next1;
    }
    if (kt + 1 < steps) {  // the last two steps
      issue_next(sums1);
      wgmma_wait<1>();
      add_step(kt, 2, sums0, f0);
      wgmma_wait<0>();
      add_step(kt + 1, 1, sums1, f1);
    } else {
      wgmma_wait<0>();
      add_step(kt, 1, sums0, f0);
    }
  }

  // After a piece's last step: its wgmma done, its last stage freed, the accumulators readable.
  // (With promotion mma has done both.)
  template <class Pipe>
  __device__ __forceinline__ static void drain(const Pipe& pipeline, float (&acc)[kMmaM][BN / 2],
                                               int previous, int lane, bool signals) {
    if constexpr (!E::kPromotes) {
      wgmma_wait<0>();
      pipeline.release(previous, lane, signals);
    }
#pragma unroll
    for (int i = 0; i < kMmaM; ++i) fence_registers(acc[i]);
  }
};

#endif  // TILEGEMM_SM90A_DEVICE_CODE

}  // namespace tilegemm::sm90
