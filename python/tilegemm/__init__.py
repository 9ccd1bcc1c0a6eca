"""tilegemm: fast, readable, tunable matrix multiplication on NVIDIA GPUs.

    D = activation(alpha * a @ b + beta * c + bias)

``matmul`` takes torch tensors, NumPy, CuPy and JAX arrays (through DLPack) and follows
``torch.matmul`` and ``torch.addmm``: the last two dimensions are the matrix, any before them a
batch; strides map to row- or column-major layouts and leading dimensions, so a transposed view
costs no copy. Device arrays run on the GPU backend, host arrays on the CPU backend.
"""

from . import _tilegemm as _native
from ._arrays import adapter_of, resolve_activation

__version__ = _native.version()

__all__ = [
    "matmul",
    "scaled_mm",
    "grouped_mm",
    "gemm_grouped",
    "plan",
    "tune",
    "explain",
    "available_kernels",
    "devices",
    "__version__",
]


def matmul(a, b, *, c=None, alpha=1.0, beta=None, bias=None, activation=None,
           leaky_relu_slope=0.01, out_dtype=None, out=None, config=None, kernel="auto",
           backend="auto", input_precision=None, autotune=None):
    """Returns ``activation(alpha * a @ b + beta * c + bias)``, written into ``out`` when given.

    a: (..., M, K) and b: (..., K, N), with equal batch dimensions, or one of them 2-D (shared by
    every batch entry of the other). c: out's shape, or (M, N) for every batch entry; beta
    defaults to 1 when c is given (as torch.addmm), else 0. bias: (N,), or one vector per batch
    entry (..., N), float32 or out's dtype. activation: None, "relu", "leaky_relu", "gelu" (tanh)
    or "silu". out_dtype: the result's dtype (default a's). config: a kernel config such as
    "128x256x64/g8/s4/w12/wt64x256" (tilegemm explain). input_precision: for float32 inputs,
    "ieee", "tf32" (TF32 tensor cores) or "tf32x3" (three TF32 products on the tensor cores, at
    fp32's accuracy: Triton's input_precision="tf32x3"; fp32 products on the CPU backend). The
    default: "tf32" for torch tensors on the GPU where torch.backends.cuda.matmul.allow_tf32 is
    set, else "ieee". autotune: None ($TILEGEMM_AUTOTUNE), "off", "on-miss" or "always".

    Every bad argument raises TypeError or ValueError naming it, with ``out`` left as it was.
    """
    adapter = adapter_of(a)
    # The plain product, every argument but out at its default (the call an eager model makes
    # most): the adapter may take it by a shorter path, as its checks reduce to a's and b's.
    if (c is None and bias is None and activation is None and beta is None and out_dtype is None
            and config is None and input_precision is None and autotune is None
            and type(alpha) is float and alpha == 1.0 and kernel == "auto" and backend == "auto"):
        return adapter.product(a, b, out)
    return adapter.matmul(a, b, c, alpha, beta, bias, activation, leaky_relu_slope, out_dtype, out,
                          config, kernel, backend, input_precision, autotune)


def scaled_mm(a, b, scale_a=None, scale_b=None, *, bias=None, out_dtype=None, scale_result=None,
              amax=None, use_fast_accum=False, out=None, config=None, kernel="auto",
              backend="auto"):
    """An fp8 product with scales, as ``torch._scaled_mm``: ``a`` (M, K) and ``b`` (K, N) of
    float8_e4m3fn or float8_e5m2 (either, or one of each), the product of a(m, k) * scale_a(m, k)
    and b(k, n) * scale_b(k, n) summed in float32, then ``+ bias``.

    scale_a, scale_b: float32, beside a; their shapes say the mode: one value each (per tensor);
    (M, 1) and (1, N) (per row of a and column of b, torch's row-wise scales); or (M, ceil(K/128))
    and (ceil(K/128), ceil(N/128)), both column-major (1 x 128 blocks of a, 128 x 128 blocks of
    b: DeepSeek-V3's recipe; a weight's (N/128, K/128) scales, transposed, are b's). Neither: no
    scales. out_dtype: default a's (an fp8 result, as torch's); bfloat16, float16, float32, or an
    fp8 type with ``scale_result`` (one float32: out = fp8(scale_result * x)) and ``amax`` (one
    float32, set to max |x| over out before the scale). use_fast_accum: skip the promotion of
    the tensor cores' sums into float32 every 128 values of K (faster, less accurate). b is read
    fastest column-major (``w.t()``); other layouts are copied first. torch tensors only; no
    gradients, as torch._scaled_mm; torch.compile traces it (``torch.ops.tilegemm.scaled_mm``,
    out not taken there). Errors name the argument, with out left as it was.
    """
    return adapter_of(a).scaled_mm(a, b, scale_a, scale_b, bias, out_dtype, scale_result, amax,
                                   use_fast_accum, out, config, kernel, backend)


def grouped_mm(a, b, offs=None, *, counts=None, bias=None, alpha=1.0, activation=None,
               leaky_relu_slope=0.01, out_dtype=None, out=None, config=None, kernel="auto",
               backend="auto"):
    """A grouped product for mixture-of-experts layers: group g's rows of a times b[g], as
    ``torch._grouped_mm(a, b, offs)``, with the epilogue of ``matmul`` (no c).

    offs: a is (tokens, K), each group's rows one after the other, b is (groups, K, N) and the
    result (tokens, N); offs (groups,) int32 holds each group's end row (cumulative: group g takes
    rows offs[g-1] .. offs[g]-1, offs[-1] = 0). Rows from offs[-1] on are not written.
    offs with a 2-D b (weight gradients): a is (M, tokens) and b (tokens, N), each group's tokens
    one after the other along K, and the result (groups, M, N): group g's product over tokens
    offs[g-1] .. offs[g]-1 (zero for a group with none).
    counts: a is (groups, rows, K), b (groups, K, N) and the result (groups, rows, N) (DeepGEMM's
    masked layout); group g takes rows 0 .. counts[g]-1 of its entry, and its other rows are not
    written. Either way the sizes lie beside a (device memory for device arrays) and are read when
    the call runs, so a captured CUDA graph takes new sizes at each replay; no group needs padding.
    bias: (N,), or (groups, N). Other arguments as ``matmul``. torch tensors record gradients
    for a, b and bias through the custom op ``torch.ops.tilegemm.grouped_mm`` (its backward pass
    runs grouped products, with the sizes read on the device only); out is not taken there, and
    the gradient of rows no group takes is dropped.
    """
    return adapter_of(a).grouped_mm(a, b, offs, counts, bias, alpha, activation,
                                    leaky_relu_slope, out_dtype, out, config, kernel, backend)


def gemm_grouped(a, b, *, c=None, alpha=1.0, beta=None, bias=None, activation=None,
                 leaky_relu_slope=0.01, out_dtype=None, out=None, config=None, kernel="auto",
                 backend="auto"):
    """Problems of their own in one call (CUTLASS's grouped GEMM over lists of tensors, cuBLAS's
    grouped batched GEMM): returns the list of ``activation(alpha[i] * a[i] @ b[i] + beta[i] *
    c[i] + bias[i])``, written into ``out[i]`` when given.

    a, b: lists (or tuples) of 2-D arrays, a[i] (M_i, K_i) and b[i] (K_i, N_i), every size its
    own; all of one library, dtype and device. c, bias, out: None, or a list with one entry per
    problem (each may be None). alpha, beta: one number for every problem (beta: for those with
    a c), or a list; beta defaults to 1 where c[i] is given. On the GPU (fp16 and bf16 on Hopper)
    they run in one launch; otherwise one call after another. Errors name the problem:
    "problems[3]: ...". The other arguments as ``matmul``. torch tensors record gradients
    through ``torch.ops.tilegemm.gemm_grouped`` (its backward pass: two gemm_grouped calls, for
    a and b); c and bias get theirs where every problem has one (a list with None in it is no
    tensor to autograd); out is not taken there.
    """
    if not isinstance(a, (list, tuple)) or not a:
        if isinstance(a, (list, tuple)):
            return []
        raise TypeError(f"a: a list or tuple of arrays, one per problem (got a "
                        f"{type(a).__module__}.{type(a).__name__})")
    return adapter_of(a[0]).gemm_grouped(a, b, c, alpha, beta, bias, activation,
                                          leaky_relu_slope, out_dtype, out, config, kernel,
                                          backend)


def plan(a, b, *, c=None, alpha=1.0, beta=None, bias=None, activation=None, out_dtype=None,
         config=None, kernel="auto", backend="auto", input_precision=None, autotune=None):
    """What ``matmul`` would run for these arguments, and why, without running or tuning.

    Returns a dict: backend, kernel, config, config_source ("given", "heuristic", "cache", ...),
    tuning_key, kernel_note (why faster kernels were passed over), aligned_copies,
    workspace_bytes, and the problem as tilegemm reads it (m, n, k, batch_count, layouts,
    leading dimensions). The arrays' values are never read.
    """
    return adapter_of(a).plan(a, b, c, alpha, beta, bias, activation, out_dtype, config, kernel,
                              backend, input_precision, autotune)


def tune(a, b, *, c=None, alpha=1.0, beta=None, bias=None, activation=None, out_dtype=None,
         kernel="auto", input_precision=None):
    """Times every candidate config for this product on the GPU (the output is scratch memory),
    stores the winner in the tuning cache that ``autotune="on-miss"`` reads, and returns a dict:
    tuning_key, candidates (kernel, config, ms, tflops, dropped, heuristic), fastest first,
    pruned, seconds, cache_file."""
    return adapter_of(a).tune(a, b, c, alpha, beta, bias, activation, out_dtype, kernel,
                              input_precision)


def explain(m, n, k, *, config="128x128x64/g8/s4/w8", pid=None):
    """The seeds' walkthrough of how a 1-D grid of programs covers an M x N output in
    GROUP_SIZE_M order: num_pid_m, num_pid_n, num_pid_in_group, the K loop's iterations, with
    ``pid`` every intermediate for that program (group_id, first_pid_m, group_size_m, pid_m,
    pid_n, its rows and columns, whether its tile is masked), and ``order[pid_m][pid_n]``, the pid
    of each tile, for grids of up to 4096 tiles. ``plan()`` says which config a call would use."""
    return _native.explain(int(m), int(n), int(k), str(config), None if pid is None else int(pid))


def available_kernels():
    """The GPU kernels of this build: name, description, default_config, configs,
    input_dtypes. Empty when it was built without CUDA."""
    return _native.available_kernels()


def devices():
    """The CUDA devices visible: index, name, sm_count, compute_capability, l2_bytes,
    global_memory_bytes. Empty without a GPU (every call then runs on the CPU backend)."""
    return _native.devices()
