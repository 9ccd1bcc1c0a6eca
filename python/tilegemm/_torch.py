"""tilegemm.matmul, grouped_mm and gemm_grouped for torch tensors: on torch's current stream, with
the output and the workspace from torch's caching allocator, so that calls are safe to capture in
``torch.cuda.graph``; and the custom ops ``torch.ops.tilegemm.matmul``, ``.grouped_mm`` and
``.gemm_grouped`` (a fake implementation for tracing, autograd), which ``torch.compile`` sees.
Eager calls that need neither tracing nor gradients skip the dispatcher."""

from typing import List, Optional

import torch
import torch.nn.functional as F

from . import _tilegemm as _native
from ._arrays import Adapter, grouped_output_shape, output_shape


# DLPack capsules straight from torch's C++ (Tensor.__dlpack__ adds Python-level checks and
# stream handling that a call on torch's own current stream does not need), and the current
# stream's handle without making a torch.cuda.Stream object: both are per-call costs.
_to_dlpack = getattr(torch._C, "_to_dlpack", None) or torch.utils.dlpack.to_dlpack
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _requires_grad(x):
    return getattr(x, "requires_grad", False)


def _capsule(t):
    return _to_dlpack(t.detach() if t.requires_grad else t)


def _stream(like):
    if not like.is_cuda:
        return 0
    if _raw_stream is not None:
        return _raw_stream(like.get_device())
    return torch.cuda.current_stream(like.device).cuda_stream


def _workspace_alloc(like):
    if not like.is_cuda:
        return None
    return lambda size: torch.empty(size, dtype=torch.uint8, device=like.device)


def _run(a, b, out, c, bias, alpha, beta, activation, leaky_relu_slope, input_precision, config,
         kernel, backend, autotune):
    _native.run(_capsule(a), _capsule(b), _capsule(out), None if c is None else _capsule(c),
                None if bias is None else _capsule(bias), alpha, beta, activation,
                leaky_relu_slope, input_precision, config, kernel, backend, autotune, _stream(a),
                _workspace_alloc(a), False)


@torch.library.custom_op("tilegemm::matmul", mutates_args=())
def matmul_op(a: torch.Tensor, b: torch.Tensor, c: Optional[torch.Tensor],
              bias: Optional[torch.Tensor], alpha: float, beta: float, activation: str,
              leaky_relu_slope: float, out_dtype: Optional[torch.dtype], input_precision: str,
              config: str, kernel: str, backend: str, autotune: str) -> torch.Tensor:
    out = torch.empty(output_shape(a.shape, b.shape),
                      dtype=a.dtype if out_dtype is None else out_dtype, device=a.device)
    _run(a, b, out, c, bias, alpha, beta, activation, leaky_relu_slope, input_precision, config,
         kernel, backend, autotune)
    return out


@matmul_op.register_fake
def _(a, b, c, bias, alpha, beta, activation, leaky_relu_slope, out_dtype, input_precision, config,
      kernel, backend, autotune):
    return a.new_empty(output_shape(a.shape, b.shape),
                       dtype=a.dtype if out_dtype is None else out_dtype)


_ACTIVATIONS = {
    "relu": lambda z, slope: F.relu(z),
    "leaky_relu": lambda z, slope: F.leaky_relu(z, slope),
    "gelu": lambda z, slope: F.gelu(z, approximate="tanh"),
    "silu": lambda z, slope: F.silu(z),
}


def _through_activation(z, grad, activation, slope):
    """D's gradient through the activation, at z: the product before it, computed again in the
    backward pass rather than kept from the forward."""
    with torch.enable_grad():
        z = z.detach().requires_grad_()
        (grad,) = torch.autograd.grad(_ACTIVATIONS[activation](z, slope), z, grad)
    return grad


def _setup_context(ctx, inputs, output):
    a, b, c, bias, alpha, beta, activation, slope, out_dtype, precision, config, kernel, backend, \
        autotune = inputs
    ctx.save_for_backward(a, b, c, bias)
    ctx.options = (alpha, beta, activation, slope, out_dtype, precision, config, kernel, backend,
                   autotune)


def _backward(ctx, grad):
    a, b, c, bias = ctx.saved_tensors
    alpha, beta, activation, slope, out_dtype, precision, config, kernel, backend, autotune = \
        ctx.options
    if activation != "none":
        z = matmul_op(a, b, c, bias, alpha, beta, "none", slope, out_dtype, precision, config, kernel,
                      backend, autotune)
        grad = _through_activation(z, grad, activation, slope)
    grad_a = grad_b = grad_c = grad_bias = None
    if ctx.needs_input_grad[0]:
        g = grad.to(a.dtype)
        grad_a = (alpha * (g @ b.to(a.dtype).transpose(-1, -2))).sum_to_size(a.shape)
    if ctx.needs_input_grad[1]:
        g = grad.to(b.dtype)
        grad_b = (alpha * (a.to(b.dtype).transpose(-1, -2) @ g)).sum_to_size(b.shape)
    if c is not None and ctx.needs_input_grad[2]:
        grad_c = (beta * grad).sum_to_size(c.shape).to(c.dtype)
    if bias is not None and ctx.needs_input_grad[3]:
        per_entry = bias.dim() > 1
        grad_bias = (grad.sum(-2) if per_entry else grad.reshape(-1, grad.shape[-1]).sum(0))
        grad_bias = grad_bias.to(bias.dtype)
    return (grad_a, grad_b, grad_c, grad_bias) + (None,) * 10


matmul_op.register_autograd(_backward, setup_context=_setup_context)


@torch.library.custom_op("tilegemm::grouped_mm", mutates_args=())
def grouped_mm_op(a: torch.Tensor, b: torch.Tensor, sizes: torch.Tensor, form: str,
                  bias: Optional[torch.Tensor], alpha: float, activation: str,
                  leaky_relu_slope: float, out_dtype: Optional[torch.dtype], config: str,
                  kernel: str, backend: str) -> torch.Tensor:
    """grouped_mm in the form given ("offsets", "counts", "k_offsets"); rows no group takes are
    left as torch.empty gives them."""
    out = torch.empty(grouped_output_shape(form, a.shape, b.shape, sizes.shape),
                      dtype=a.dtype if out_dtype is None else out_dtype, device=a.device)
    _native.grouped(_capsule(a), _capsule(b), _capsule(out), _capsule(sizes), form,
                    None if bias is None else _capsule(bias), alpha, activation,
                    leaky_relu_slope, config, kernel, backend, _stream(a), _workspace_alloc(a))
    return out


@grouped_mm_op.register_fake
def _(a, b, sizes, form, bias, alpha, activation, leaky_relu_slope, out_dtype, config, kernel,
      backend):
    return a.new_empty(grouped_output_shape(form, a.shape, b.shape, sizes.shape),
                       dtype=a.dtype if out_dtype is None else out_dtype)


def _grouped_setup_context(ctx, inputs, output):
    a, b, sizes, form, bias, alpha, activation, slope, out_dtype, config, kernel, backend = inputs
    ctx.save_for_backward(a, b, sizes, bias)
    ctx.options = (form, alpha, activation, slope, out_dtype, config, kernel, backend)


def _rows_taken(sizes, rows, like):
    """(rows,) bool: which of the offsets form's rows a group takes (those before the last
    offset); worked out on the device, so that the backward pass never waits for the sizes."""
    if sizes.numel() == 0:
        return torch.zeros(rows, dtype=torch.bool, device=like.device)
    return torch.arange(rows, device=like.device) < sizes[-1].to(like.device)


def _grouped_backward(ctx, grad):
    a, b, sizes, bias = ctx.saved_tensors
    form, alpha, activation, slope, out_dtype, config, kernel, backend = ctx.options
    if activation != "none":
        z = grouped_mm_op(a, b, sizes, form, bias, alpha, "none", slope, out_dtype, config,
                          kernel, backend)
        grad = _through_activation(z, grad, activation, slope)
    zero = grad.new_zeros(())
    # Which rows of D (offsets, counts) or tokens along K (k_offsets) a group takes. D's other
    # rows are no function of the inputs: their gradient is dropped (torch.where, not a product:
    # an activation's gradient of an unwritten row may be NaN).
    if form == "counts":
        taken = (torch.arange(a.shape[1], device=a.device)[None, :] <
                 sizes.to(a.device)[:, None])[..., None]
    else:
        taken = _rows_taken(sizes, a.shape[0 if form == "offsets" else 1], a)[:, None]
    if form != "k_offsets":
        grad = torch.where(taken, grad, zero)
    g = grad.to(a.dtype).contiguous()  # a and b share a dtype, and so do the products below

    # alpha * the grouped product of x and y, no epilogue; its own config (its shape is not the
    # forward's).
    def grouped(x, y, form_of, scale=alpha):
        return grouped_mm_op(x, y, sizes, form_of, None, scale, "none", slope, None, "", kernel,
                             backend)

    grad_a = grad_b = grad_bias = None
    if form == "offsets":  # a (T, K), b (G, K, N), D (T, N)
        if ctx.needs_input_grad[0]:
            grad_a = torch.where(taken, grouped(g, b.transpose(-1, -2), "offsets"), zero)
        if ctx.needs_input_grad[1]:  # each group's a^T g: K split into groups
            grad_b = grouped(a.contiguous().t(), g, "k_offsets")
    elif form == "counts":  # a (G, R, K), b (G, K, N), D (G, R, N)
        if ctx.needs_input_grad[0]:
            grad_a = torch.where(taken, grouped(g, b.transpose(-1, -2), "counts"), zero)
        if ctx.needs_input_grad[1]:  # rows past a group's count are not read: they may be NaN
            grad_b = alpha * (torch.where(taken, a, zero).transpose(-1, -2) @ g)
    else:  # k_offsets: a (M, T), b (T, N), D (G, M, N); group g's tokens along T
        if ctx.needs_input_grad[0]:  # grad_a^T (T, M): each token's row of b times D's gradient^T
            grad_a = torch.where(taken, grouped(b.contiguous(), g.transpose(-1, -2), "offsets"),
                                 zero).t()
        if ctx.needs_input_grad[1]:
            grad_b = torch.where(taken, grouped(a.t().contiguous(), g, "offsets"), zero)
    if bias is not None and ctx.needs_input_grad[4]:
        if bias.dim() == 1:
            grad_bias = grad.sum(tuple(range(grad.dim() - 1)))
        elif form == "offsets":
            # Each group's rows summed by the grouped product itself (in order: the same sums
            # at every run, where index_add_'s atomics are not): ones times g, K split into the
            # groups. Eight rows of ones, column-major, as the GPU's k_offsets form reads A.
            ones = g.new_ones(g.shape[0], 8).t()
            grad_bias = grouped(ones, g, "k_offsets", 1.0)[:, 0]
        else:
            grad_bias = grad.sum(1)
        grad_bias = grad_bias.to(bias.dtype)
    return (grad_a, grad_b, None, None, grad_bias) + (None,) * 7


grouped_mm_op.register_autograd(_grouped_backward, setup_context=_grouped_setup_context)


@torch.library.custom_op("tilegemm::gemm_grouped", mutates_args=())
def gemm_grouped_op(a: List[torch.Tensor], b: List[torch.Tensor], c: List[Optional[torch.Tensor]],
                    bias: List[Optional[torch.Tensor]], alpha: List[float], beta: List[float],
                    activation: str, leaky_relu_slope: float, out_dtype: Optional[torch.dtype],
                    config: str, kernel: str, backend: str) -> List[torch.Tensor]:
    """gemm_grouped's problems, each D_i = act(alpha_i * a_i b_i + beta_i * c_i + bias_i)."""
    out = [torch.empty(output_shape(x.shape, y.shape),
                       dtype=x.dtype if out_dtype is None else out_dtype, device=x.device)
           for x, y in zip(a, b)]
    if a:
        _native.run_grouped([_capsule(x) for x in a], [_capsule(x) for x in b],
                            [_capsule(x) for x in out],
                            [None if x is None else _capsule(x) for x in c],
                            [None if x is None else _capsule(x) for x in bias], alpha, beta,
                            activation, leaky_relu_slope, config, kernel, backend,
                            _stream(a[0]), _workspace_alloc(a[0]))
    return out


@gemm_grouped_op.register_fake
def _(a, b, c, bias, alpha, beta, activation, leaky_relu_slope, out_dtype, config, kernel, backend):
    return [x.new_empty(output_shape(x.shape, y.shape),
                        dtype=x.dtype if out_dtype is None else out_dtype) for x, y in zip(a, b)]


def _gemm_grouped_setup_context(ctx, inputs, output):
    a, b, c, bias, alpha, beta, activation, slope, out_dtype, config, kernel, backend = inputs
    ctx.save_for_backward(*a, *b, *(x for x in c if x is not None),
                          *(x for x in bias if x is not None))
    ctx.given = ([x is not None for x in c], [x is not None for x in bias])
    ctx.options = (alpha, beta, activation, slope, out_dtype, config, kernel, backend)


def _gemm_grouped_backward(ctx, grads):
    alpha, beta, activation, slope, out_dtype, config, kernel, backend = ctx.options
    saved, (has_c, has_bias) = list(ctx.saved_tensors), ctx.given
    count = len(has_c)
    a, b = saved[:count], saved[count:2 * count]
    rest = iter(saved[2 * count:])
    c = [next(rest) if x else None for x in has_c]
    bias = [next(rest) if x else None for x in has_bias]
    if activation != "none":
        z = gemm_grouped_op(a, b, c, bias, alpha, beta, "none", slope, out_dtype, config, kernel,
                            backend)
        grads = [_through_activation(zi, g, activation, slope) for zi, g in zip(z, grads)]
    g = [x.to(y.dtype).contiguous() for x, y in zip(grads, a)]  # the products' dtype too
    none = [None] * count

    def products(x, y):  # alpha_i * x_i y_i, every problem in one call, each its own config
        return gemm_grouped_op(x, y, none, none, alpha, [0.0] * count, "none", slope, None, "",
                               kernel, backend)

    # needs_input_grad holds a flag per problem for a list of tensors; a list with a None in it
    # (a problem without c or bias) is no tensor to autograd, and gets no gradient (None).
    needs = ctx.needs_input_grad

    def per_problem(arg, grads_of):
        flags = needs[arg]
        if not isinstance(flags, (list, tuple)) or not any(flags):
            return None
        return [x if flag else None for x, flag in zip(grads_of(), flags)]

    grad_a = per_problem(0, lambda: products(g, [y.t() for y in b]))
    grad_b = per_problem(1, lambda: products([x.t() for x in a], g))
    grad_c = per_problem(2, lambda: [(s * gi).to(x.dtype) for x, s, gi in zip(c, beta, grads)])
    grad_bias = per_problem(3, lambda: [gi.sum(0).to(x.dtype) for x, gi in zip(bias, grads)])
    return (grad_a, grad_b, grad_c, grad_bias) + (None,) * 8


gemm_grouped_op.register_autograd(_gemm_grouped_backward,
                                  setup_context=_gemm_grouped_setup_context)


@torch.library.custom_op("tilegemm::scaled_mm", mutates_args=("amax",))
def scaled_mm_op(a: torch.Tensor, b: torch.Tensor, scale_a: Optional[torch.Tensor],
                 scale_b: Optional[torch.Tensor], bias: Optional[torch.Tensor],
                 out_dtype: torch.dtype, scale_result: Optional[torch.Tensor],
                 amax: Optional[torch.Tensor], use_fast_accum: bool, config: str, kernel: str,
                 backend: str) -> torch.Tensor:
    """scaled_mm as torch.compile sees it: amax, when given, is written."""
    out = torch.empty((a.shape[0], b.shape[1]), dtype=out_dtype, device=a.device)
    _native.scaled(*(None if x is None else _capsule(x)
                     for x in (a, b, out, scale_a, scale_b, bias, scale_result, amax)),
                   use_fast_accum, config, kernel, backend, _stream(a), _workspace_alloc(a))
    return out


@scaled_mm_op.register_fake
def _(a, b, scale_a, scale_b, bias, out_dtype, scale_result, amax, use_fast_accum, config, kernel,
      backend):
    return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype)


def _through_op(tensors, out, call):
    """Whether a grouped call goes through its custom op: under torch.compile, or where autograd
    records one of `tensors`. There out is refused, as torch refuses out= with gradients."""
    if not torch.compiler.is_compiling() and not (
            torch.is_grad_enabled() and any(_requires_grad(x) for x in tensors)):
        return False
    if out is not None:
        raise ValueError(f"out: not taken where gradients are recorded or under torch.compile; "
                         f"call {call} without out (or under torch.no_grad())")
    return True


class TorchAdapter(Adapter):
    library = "torch"
    dtypes = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}
    fp8_dtypes = {torch.float8_e4m3fn: "fp8_e4m3", torch.float8_e5m2: "fp8_e5m2"}

    def owns(self, x):
        return isinstance(x, torch.Tensor)

    def empty(self, shape, dtype, like):
        # a's device (and dtype, where it is out's): the fewer arguments torch parses, the less
        # the allocation costs a call.
        return like.new_empty(shape) if dtype == like.dtype else like.new_empty(shape, dtype=dtype)

    def dtype_of(self, value):
        if not isinstance(value, torch.dtype) or value not in self.dtypes:
            raise TypeError(f"out_dtype: {value!r} is not taken; tilegemm writes torch.float32, "
                            "torch.float16, torch.bfloat16")
        return value

    def stream(self, like):
        return _stream(like)

    def native(self, x):
        return _capsule(x)

    def workspace_alloc(self, like):
        return _workspace_alloc(like)

    def default_tf32(self, a):
        return a.dtype == torch.float32 and a.is_cuda and torch.backends.cuda.matmul.allow_tf32

    def grouped_mm(self, a, b, offs, counts, bias, alpha, activation, leaky_relu_slope, out_dtype,
                   out, config, kernel, backend):
        if not _through_op((a, b, bias), out, "grouped_mm"):
            return Adapter.grouped_mm(self, a, b, offs, counts, bias, alpha, activation,
                                      leaky_relu_slope, out_dtype, out, config, kernel, backend)
        form, sizes, bias, alpha, activation, slope, out_dtype = self.grouped_arguments(
            a, b, offs, counts, bias, alpha, activation, leaky_relu_slope, out_dtype, out)
        return grouped_mm_op(a, b, sizes, form, bias, alpha, activation, slope, out_dtype,
                             config or "", kernel or "auto", backend or "auto")

    def gemm_grouped(self, a, b, c, alpha, beta, bias, activation, leaky_relu_slope, out_dtype,
                     out, config, kernel, backend):
        tensors = [x for group in (a, b, c, bias) if isinstance(group, (list, tuple))
                   for x in group]
        if not _through_op(tensors, out, "gemm_grouped"):
            return Adapter.gemm_grouped(self, a, b, c, alpha, beta, bias, activation,
                                        leaky_relu_slope, out_dtype, out, config, kernel, backend)
        args, act, slope, out_dtype, _ = self.gemm_grouped_arguments(
            a, b, c, alpha, beta, bias, activation, leaky_relu_slope, out_dtype, out)
        if not args:
            return []
        return gemm_grouped_op(list(a), list(b), [x[0] for x in args], [x[1] for x in args],
                               [x[2] for x in args], [x[3] for x in args], act, slope, out_dtype,
                               config or "", kernel or "auto", backend or "auto")

    def scaled_mm(self, a, b, scale_a, scale_b, bias, out_dtype, scale_result, amax,
                  use_fast_accum, out, config, kernel, backend):
        if not torch.compiler.is_compiling():
            return Adapter.scaled_mm(self, a, b, scale_a, scale_b, bias, out_dtype, scale_result,
                                     amax, use_fast_accum, out, config, kernel, backend)
        if out is not None:
            raise ValueError("out: not taken under torch.compile; call scaled_mm without out")
        out_dtype = self.scaled_mm_arguments(a, b, scale_a, scale_b, bias, out_dtype,
                                             scale_result, amax, out)
        return scaled_mm_op(a, b, scale_a, scale_b, bias, out_dtype, scale_result, amax,
                            bool(use_fast_accum), config or "", kernel or "auto",
                            backend or "auto")

    def product(self, a, b, out):
        # Eager tensors (no subclass) of one dtype tilegemm takes, with no gradient to record:
        # what is left to check (shapes, devices, strides) the native call checks and names.
        # Anything else takes the general path, which names what is wrong.
        dtypes = self.dtypes
        if (torch.compiler.is_compiling()
                or type(a) is not torch.Tensor or type(b) is not torch.Tensor or b.dtype != a.dtype
                or a.dtype not in dtypes
                or (out is not None and (type(out) is not torch.Tensor or out.dtype not in dtypes))
                or (torch.is_grad_enabled() and (a.requires_grad or b.requires_grad))):
            return Adapter.product(self, a, b, out)
        if out is None:
            out = a.new_empty(output_shape(a.shape, b.shape))
        _run(a, b, out, None, None, 1.0, 0.0, "none", 0.01,
             "tf32" if self.default_tf32(a) else "ieee", "", "auto", "auto", "")
        return out

    def matmul(self, a, b, c, alpha, beta, bias, activation, leaky_relu_slope, out_dtype, out,
               config, kernel, backend, input_precision, autotune):
        traced = torch.compiler.is_compiling()
        needs_grad = torch.is_grad_enabled() and (
            _requires_grad(a) or _requires_grad(b) or _requires_grad(c) or _requires_grad(bias))
        if not traced and not needs_grad:
            return Adapter.matmul(self, a, b, c, alpha, beta, bias, activation, leaky_relu_slope,
                                  out_dtype, out, config, kernel, backend, input_precision,
                                  autotune)
        common, out_dtype = self.arguments(a, b, c, alpha, beta, bias, activation,
                                           leaky_relu_slope, input_precision, out_dtype, out)
        c, bias, alpha, beta, activation, slope, precision = common
        result = matmul_op(a, b, c, bias, alpha, beta, activation, slope, out_dtype, precision,
                           config or "", kernel or "auto", backend or "auto", autotune or "")
        if out is None:
            return result
        return out.copy_(result)
