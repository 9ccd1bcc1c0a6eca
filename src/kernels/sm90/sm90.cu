// The Hopper kernel's registry entry: config matching, the checks that decide whether TMA can
// take a problem, and the tail split's memory. The kernel is in sm90_kernel.cuh, its launcher
// in launch.cuh, its instantiations in sm90_<fp16|bf16|tf32>.cu and sm90_fp8_*.cu.
#include <algorithm>
#include <climits>
#include <optional>

#include "kernels/sm90/grouped_launch.cuh"
#include "problem/dtype.hpp"

namespace tilegemm::sm90 {
namespace {

// fp8 promotes its sums unless fast accumulation is asked for; block scales always promote (they
// are applied there). tf32 promotes unless fast accumulation is asked for too: the copies set it
// for plain tf32 and leave tf32x3's choice (problem/aligned_copies.hpp: with_aligned_copies).
// The promoting kernels are compiled for the tiles whose sums fit (compiled_shapes.hpp).
bool promotes(DType a, bool fast_accumulation, ScaleMode mode) {
  return (is_fp8(a) || a == DType::tf32) && (!fast_accumulation || mode == ScaleMode::block);
}

// go(element) for the element kind of args' inputs (fp8 and tf32: with promotion or without).
template <class Go>
decltype(auto) with_args_element(const GemmArgs& args, Go&& go) {
  const bool promoted = promotes(args.a.dtype, args.fast_accumulation, args.scales.mode);
  if (is_fp8(args.a.dtype)) return with_fp8_element(args.a.dtype, args.b.dtype, promoted, go);
  if (promoted) return go(Tf32Promoted{});
  return with_element(args.a.dtype, go);
}

Status launch(const GemmArgs& args, const KernelConfig& config, gpu::Workspace& workspace) {
  if (args.groups.form != GroupForm::none) {
    if (is_fp8(args.a.dtype)) {
      const bool promoted = promotes(args.a.dtype, args.fast_accumulation, args.scales.mode);
      return with_fp8_element(args.a.dtype, args.b.dtype, promoted, [&](auto element) {
        return launch_grouped_for_element<decltype(element)>(args, config, workspace);
      });
    }
    return args.a.dtype == DType::fp16 ? launch_grouped_for_element<Fp16>(args, config, workspace)
                                       : launch_grouped_for_element<Bf16>(args, config, workspace);
  }
  return with_args_element(args, [&](auto element) {
    return launch_for_element<decltype(element)>(args, config, workspace);
  });
}

Status launch_problems(std::span<const GemmArgs> problems, const KernelConfig& config,
                       gpu::Workspace& workspace) {
  return problems[0].a.dtype == DType::fp16
             ? launch_ptr_array_for_element<Fp16>(problems, config, workspace)
             : launch_ptr_array_for_element<Bf16>(problems, config, workspace);
}

size_t workspace_bytes(const GemmArgs& args, const KernelConfig& config) {
  // The grouped launches split no tail; they take their groups' tensor maps.
  if (args.groups.form != GroupForm::none) return grouped_workspace_bytes(args);
  int device = 0, sms = 0;
  if (!current_device_sms(&device, &sms).ok()) return 0;
  return with_args_element(args, [&](auto element) {
    return workspace_for_element<decltype(element)>(args, config, sms);
  });
}

// wgmma and setmaxnreg exist only on compute capability 9.0 and only in sm_90a machine code.
std::string device_check() {
  int major = 0, minor = 0;
  if (!current_compute_capability(&major, &minor)) {
    return "kernel sm90: cannot read the device's compute capability";
  }
  if (major != 9 || minor != 0) {
    return "kernel sm90 needs a Hopper GPU (compute capability 9.0; this device is " +
           std::to_string(major) + "." + std::to_string(minor) + "); use --kernel sm80";
  }
  static const int binary = compiled_binary_version();
  if (binary != 90) {
    return "kernel sm90: this build has no sm_90a code (configure with CMAKE_CUDA_ARCHITECTURES "
           "including 90a)";
  }
  return {};
}

// Empty when TMA can describe both operands (what the sm90 kernel needs beyond its config), and
// for tf32 both are K-major.
std::string problem_check(const GemmProblem& p) {
  if (p.k == 0) return "kernel sm90 needs K > 0 (K = 0 is the epilogue alone)";
  const GemmArgs args = make_gemm_args(p, 8);
  const OperandShape a = operand_a(args), b = operand_b(args);
  if (p.groups.form != GroupForm::none) {
    const bool fp8 = is_fp8(p.a.dtype);
    if (p.a.dtype != DType::fp16 && p.a.dtype != DType::bf16 && !fp8) {
      return "kernel sm90: grouped GEMMs take fp16, bf16 and fp8 inputs (a.dtype is " +
             std::string(to_string(p.a.dtype)) + "); the CPU backend takes the others";
    }
    // fp8 groups: wgmma reads fp8 K-major only, and the copies that make operands K-major know no
    // groups; an fp8 D's amax and scale are the dense kernel's alone.
    if (fp8 && (a.mn_major || b.mn_major)) {
      return "kernel sm90: grouped fp8 needs K-major operands (a row-major A and a column-major "
             "B, as an MoE layer's tokens and expert weights lie); here " +
             std::string(b.mn_major ? "B is row-major" : "A is column-major") +
             " (the CPU backend takes it)";
    }
    if (fp8 && is_fp8(p.d.dtype)) {
      return "kernel sm90: grouped fp8 writes a bf16, fp16 or fp32 D (d.dtype is " +
             std::string(to_string(p.d.dtype)) + "; the CPU backend takes it)";
    }
    // TMA reads a box from a 16-byte boundary of the operand's contiguous dimension only: a
    // group's first row (offsets) or K value (k_offsets), which may lie anywhere, must lie along
    // the other dimension.
    if (p.groups.form == GroupForm::offsets && a.mn_major) {
      return "kernel sm90: groups.form offsets needs a row-major A (a group's rows start "
             "anywhere, and TMA reads a column-major A's columns from 16-byte boundaries only)";
    }
    if (p.groups.form == GroupForm::k_offsets && (!a.mn_major || !b.mn_major)) {
      return std::string(
                 "kernel sm90: groups.form k_offsets needs a column-major A and a "
                 "row-major B (X^T and dY, as a weight gradient reads them): a group's K "
                 "values start anywhere, and TMA reads ") +
             (!a.mn_major ? "a row-major A's rows" : "a column-major B's columns") +
             " from 16-byte boundaries only";
    }
    if (grouped_items_bound(p.groups.form, p.batch_count, p.m, p.n, 64, 64) > INT32_MAX) {
      return "kernel sm90: more than 2^31 tiles the groups may have (M, N and the group count "
             "too large)";
    }
  }
  if (std::string why = tma_check(a, "a"); !why.empty()) return "kernel sm90: " + why;
  if (std::string why = tma_check(b, "b"); !why.empty()) return "kernel sm90: " + why;
  // Plain tf32 takes a column-major A through registers, and a row-major B through the
  // transposed product (runs_transposed).
  const bool promoted = promotes(p.a.dtype, p.fast_accumulation, p.scales.mode);
  const bool tf32 = p.a.dtype == DType::tf32;
  const bool tf32_takes = tf32 && !promoted && (!b.mn_major || runs_transposed(args, promoted));
  if ((tf32 || is_fp8(p.a.dtype)) && (a.mn_major || b.mn_major) && !tf32_takes) {
    const std::string type(to_string(p.a.dtype));
    return "kernel sm90: " + type +
           " needs K-major operands (row-major A, column-major B): " + "wgmma reads " + type +
           " K-major only" +
           (tf32 ? " (plain tf32 also takes a column-major A beside a column-major B, and a "
                   "row-major B beside a row-major A with no bias, where D^T goes out through "
                   "TMA)"
                 : "") +
           "; here " + (b.mn_major ? "B is row-major" : "A is column-major") +
           (tf32 ? " (larger problems get a transposed copy first)"
                 : " (gemm() copies it transposed first)");
  }
  if (p.a.dtype == DType::fp8_e5m2 && p.b.dtype == DType::fp8_e5m2) {
    return "kernel sm90: fp8_e5m2 x fp8_e5m2 is not compiled (as cuBLASLt, which refuses it); "
           "the CPU backend takes it";
  }
  // The kernel counts its work items (tiles of every batch entry) in 32 bits; 64 rows is the
  // smallest tile of any compiled config.
  if (p.groups.form == GroupForm::none && num_tiles(p.m, p.n, 64, 64) * p.batch_count > INT32_MAX) {
    return "kernel sm90: more than 2^31 tiles (M x N x batch_count too large)";
  }
  return {};
}

bool has_config(const std::vector<KernelConfig>& configs, const KernelConfig& c);
std::string grouped_config_check(const KernelConfig& c, const GemmProblem* p = nullptr);

// Empty when one launch of the grouped kernel (ptr_array) with config `c` takes every one of
// gemm_grouped()'s problems (validated: they share their types and storage orders); else why not,
// naming the problem.
std::string problems_check(std::span<const GemmProblem> problems, const KernelConfig& c) {
  if (std::string why = grouped_config_check(c); !why.empty()) return why;
  int64_t items = 0;
  struct Majors {
    bool a, b;
    size_t at;
  };
  std::optional<Majors> majors;  // of the first problem with tiles and K values
  for (size_t g = 0; g < problems.size(); ++g) {
    const GemmProblem& p = problems[g];
    const std::string at = "kernel sm90: problems[" + std::to_string(g) + "]";
    if (p.a.dtype != DType::fp16 && p.a.dtype != DType::bf16) {
      return at + ".a.dtype is " + std::string(to_string(p.a.dtype)) +
             ": one launch of grouped problems takes fp16 and bf16 inputs";
    }
    if (p.m > INT32_MAX || p.n > INT32_MAX || p.k > INT32_MAX) {
      return at + " has a size past 2^31 - 1 (the kernel reads them as 32-bit values)";
    }
    if (p.m == 0 || p.n == 0) continue;  // no tiles: nothing of it is read
    const GemmArgs args = make_gemm_args(p, 8);
    if (p.k > 0) {
      const OperandShape a = operand_a(args), b = operand_b(args);
      if (std::string why = tma_check(a, "a"); !why.empty()) return at + ": " + why;
      if (std::string why = tma_check(b, "b"); !why.empty()) return at + ": " + why;
      // One launch reads every problem's operands in one order (a storage order that only a
      // single row or column leaves open was taken as either).
      if (!majors) majors = {a.mn_major, b.mn_major, g};
      if (a.mn_major != majors->a || b.mn_major != majors->b) {
        return at + ": its operands' storage orders differ from problems[" +
               std::to_string(majors->at) + "]'s, which one launch reads alike";
      }
    }
    items += cdiv(p.m, c.block_m) * cdiv(p.n, c.block_n);
  }
  if (items > INT32_MAX) return "kernel sm90: more than 2^31 tiles in the problems together";
  return device_check();
}

// The 16-bit, tf32 and fp8 configs are compiled from the same shapes, with BLOCK_SIZE_K in slabs of
// 128 bytes of K (64 or 128 values of fp16 and bf16, 32 or 64 of tf32, 128 of fp8), so a config is
// told by the list that has it, not by its BLOCK_SIZE_K alone.
bool promotes(const GemmProblem& p) {
  return promotes(p.a.dtype, p.fast_accumulation, p.scales.mode);
}

const std::vector<KernelConfig>& compiled_for(const GemmProblem& p) {
  static const std::vector<KernelConfig> sixteen_bit = configs_of<CompiledShapes<Bf16>>();
  static const std::vector<KernelConfig> tf32 = configs_of<CompiledShapes<Tf32>>();
  static const std::vector<KernelConfig> tf32_promoted = configs_of<CompiledShapes<Tf32Promoted>>();
  static const std::vector<KernelConfig> fp8 = configs_of<CompiledShapes<Fp8E4m3E4m3<false>>>();
  static const std::vector<KernelConfig> fp8_promoted =
      configs_of<CompiledShapes<Fp8E4m3E4m3<true>>>();
  static const std::vector<KernelConfig> grouped = configs_of<GroupedShapes<Bf16>>();
  static const std::vector<KernelConfig> grouped_fp8 =
      configs_of<GroupedShapes<Fp8E4m3E4m3<false>>>();
  static const std::vector<KernelConfig> grouped_fp8_promoted =
      configs_of<GroupedShapes<Fp8E4m3E4m3<true>>>();
  if (p.groups.form != GroupForm::none) {
    if (is_fp8(p.a.dtype)) return promotes(p) ? grouped_fp8_promoted : grouped_fp8;
    return grouped;
  }
  if (is_fp8(p.a.dtype)) return promotes(p) ? fp8_promoted : fp8;
  if (p.a.dtype == DType::tf32) return promotes(p) ? tf32_promoted : tf32;
  return sixteen_bit;
}

bool has_config(const std::vector<KernelConfig>& configs, const KernelConfig& c) {
  return std::any_of(configs.begin(), configs.end(),
                     [&](const KernelConfig& x) { return same_instantiation(x, c); });
}

// `p`: a grouped problem (its input type and promotion pick the list); gemm_grouped()'s problems
// are 16-bit.
std::string grouped_config_check(const KernelConfig& c, const GemmProblem* p) {
  GemmProblem grouped_problem;
  grouped_problem.groups.form = GroupForm::counts;
  const std::vector<KernelConfig>& grouped = compiled_for(p != nullptr ? *p : grouped_problem);
  if (has_config(grouped, c)) return {};
  // (Built by appending: g++ 12 warns falsely (-Wrestrict) on chains of string operator+.)
  std::string why = "kernel sm90: grouped GEMMs have no compiled config ";
  why.append(to_string(c)).append("; compiled:");
  for (const KernelConfig& x : grouped) why.append(" ").append(to_string(x));
  return why;
}

std::string compiled_check(const GemmProblem& p, const KernelConfig& c) {
  if (has_config(compiled_for(p), c)) return {};
  const bool promoted = promotes(p);
  if (p.groups.form != GroupForm::none) return grouped_config_check(c, &p);
  const std::string type = promoted && p.a.dtype == DType::tf32 ? "tf32x3 (tf32 parts)"
                                                                : std::string(to_string(p.a.dtype));
  return "kernel sm90: " + type + (promoted ? " with promoted sums" : "") +
         " has no compiled config " + to_string(c) +
         " (BLOCK_SIZE_K is one or two slabs of 128 bytes of K, " +
         std::to_string(block_k_for(dtype_size(p.a.dtype))) + " values each" +
         (promoted ? "; promoted sums take the tiles whose accumulators and sums fit " +
                         std::to_string(sm90::kPromotionRegisters) + " registers per thread"
                   : "") +
         ")";
}

}  // namespace
}  // namespace tilegemm::sm90

namespace tilegemm::gpu {
namespace {
// The 16-bit configs first (the first is the kernel's default), then tf32's, then fp8's.
std::vector<KernelConfig> all_configs() {
  std::vector<KernelConfig> configs = configs_of<sm90::CompiledShapes<Bf16>>();
  for (const KernelConfig& c : configs_of<sm90::CompiledShapes<Tf32>>()) configs.push_back(c);
  for (const KernelConfig& c : configs_of<sm90::CompiledShapes<Fp8E4m3E4m3<false>>>()) {
    configs.push_back(c);
  }
  return configs;
}
}  // namespace

Kernel sm90_kernel() {
  Kernel kernel = compiled_configs_kernel(
      "sm90", "Hopper: TMA + wgmma, warp-specialised, persistent (fp16, bf16, tf32, fp8; sm_90a)",
      {DType::fp16, DType::bf16, DType::tf32, DType::fp8_e4m3, DType::fp8_e5m2}, all_configs(),
      sm90::launch, /*takes_groups=*/true);
  kernel.tensor_cores = true;
  kernel.persistent = true;
  kernel.tail_splits = true;
  kernel.workspace_bytes = sm90::workspace_bytes;
  kernel.can_implement_problems = sm90::problems_check;
  kernel.launch_problems = sm90::launch_problems;
  kernel.problems_workspace_bytes = [](size_t problems) {
    return sm90::PtrArrayTable(problems).bytes;
  };
  kernel.type_defaults[DType::tf32] = configs_of<sm90::CompiledShapes<Tf32>>().front();
  // fp8's default is the first tile the promoting kernels take: it serves both.
  const KernelConfig fp8_default = configs_of<sm90::CompiledShapes<Fp8E4m3E4m3<true>>>().front();
  kernel.type_defaults[DType::fp8_e4m3] = kernel.type_defaults[DType::fp8_e5m2] = fp8_default;
  kernel.shared_bytes = [](const KernelConfig& c, DType dtype) {
    if (is_fp8(dtype)) return sm90::compiled_shared_bytes<Fp8E4m3E4m3<false>>(c);
    return dtype == DType::tf32 ? sm90::compiled_shared_bytes<Tf32>(c)
                                : sm90::compiled_shared_bytes<Bf16>(c);
  };
  kernel.can_implement_anywhere = [config_check = kernel.can_implement](const GemmProblem& p,
                                                                        const KernelConfig& c) {
    if (std::string why = config_check(p, c); !why.empty()) return why;
    // The problem first: a config of the right list would not take it either.
    if (std::string why = sm90::problem_check(p); !why.empty()) return why;
    return sm90::compiled_check(p, c);
  };
  kernel.can_implement = [anywhere = kernel.can_implement_anywhere](const GemmProblem& p,
                                                                    const KernelConfig& c) {
    if (std::string why = anywhere(p, c); !why.empty()) return why;
    return sm90::device_check();
  };
  return kernel;
}
}  // namespace tilegemm::gpu
