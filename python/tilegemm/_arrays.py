"""How tilegemm.matmul meets each array library: which dtypes it takes, where the output and the
workspace come from, and which stream the call runs on. The arrays themselves go to the native
module through DLPack, which maps their strides (python/src/array_problem.hpp)."""

import math

from . import _tilegemm as _native

_ACTIVATIONS = {None: "none", "none": "none", "relu": "relu", "leaky_relu": "leaky_relu",
                "gelu": "gelu", "silu": "silu"}


def resolve_activation(activation):
    try:
        return _ACTIVATIONS[activation]
    except (KeyError, TypeError):
        raise ValueError(f"activation: {activation!r} is not one of None, 'relu', "
                         "'leaky_relu', 'gelu' (tanh), 'silu'") from None


def _number(name, value):
    if type(value) is float and value - value == 0.0:  # a finite Python float: the usual case
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value)  # NumPy and torch scalars
        except (TypeError, ValueError):
            raise TypeError(f"{name}: {value!r} is not a number") from None
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name}: {value!r} is not finite")
    return value


def _text(name, value, default=""):
    if value is None:
        return default
    if not isinstance(value, str):
        raise TypeError(f"{name}: {value!r} is not a string")
    return value


def _count(name, arrays):
    """How many arrays a sequence of them (gemm_grouped's a and b) holds."""
    if not isinstance(arrays, (list, tuple)):
        raise TypeError(f"{name}: a list or tuple of arrays, one per problem (got a "
                        f"{type(arrays).__module__}.{type(arrays).__name__})")
    return len(arrays)


def _each(name, value, count, number=False):
    """gemm_grouped's per-problem argument as a list of `count` values: a sequence of them, or
    one value for every problem (a number, for alpha and beta; None)."""
    if isinstance(value, (list, tuple)):
        if len(value) != count:
            raise ValueError(f"{name}: {len(value)} values for {count} problems")
        return list(value)
    if value is not None and not number:
        raise TypeError(f"{name}: a list or tuple, one per problem (or None)")
    return [value] * count


def output_shape(a_shape, b_shape):
    """torch.matmul's output shape for the batches tilegemm takes (array_problem.hpp)."""
    if len(a_shape) == 2 and len(b_shape) == 2:
        return (a_shape[0], b_shape[1])
    if len(a_shape) >= 2 and len(b_shape) >= 2:
        return tuple(a_shape[:-2] or b_shape[:-2]) + (a_shape[-2], b_shape[-1])
    return tuple(_native.output_shape(list(a_shape), list(b_shape)))  # raises with the reason


def grouped_output_shape(form, a_shape, b_shape, sizes_shape):
    """grouped_mm's output shape: (tokens, N) for offs over a 3-D b, (groups, rows, N) for counts,
    (groups, M, N) for offs over a 2-D b (K split into groups). The native call checks the rest."""
    if form == "k_offsets":
        groups = sizes_shape[0] if len(sizes_shape) == 1 else 0
        return (groups, a_shape[0], b_shape[1])
    return tuple(a_shape[:-1]) + (b_shape[-1],)


class Adapter:
    """One array library. Subclasses name its dtypes and how it allocates."""

    library = ""
    dtypes = {}  # the library's dtype -> tilegemm's name
    fp8_dtypes = {}  # the same for its fp8 types, which scaled_mm alone takes

    def owns(self, x):
        raise NotImplementedError

    def empty(self, shape, dtype, like):
        raise NotImplementedError

    def dtype_of(self, value):  # a dtype given by the caller (out_dtype), as the library's
        raise NotImplementedError

    def stream(self, like):
        return 0

    def workspace_alloc(self, like):
        return None

    def default_tf32(self, a):
        return False

    def finish(self, out, stream):
        return out

    def native(self, x):
        """What the native module takes for array x: the array itself, through DLPack."""
        return x

    # -- shared --------------------------------------------------------------------------------
    def check_array(self, name, x):
        if x is None:
            raise TypeError(f"{name}: is None")
        if not self.owns(x):
            raise TypeError(f"{name}: a {type(x).__module__}.{type(x).__name__}, while a is a "
                            f"{self.library} array")
        if x.dtype not in self.dtypes:
            raise TypeError(f"{name}: dtype {x.dtype} is not taken; tilegemm takes "
                            + ", ".join(str(d) for d in self.dtypes))

    def arguments(self, a, b, c, alpha, beta, bias, activation, leaky_relu_slope, input_precision,
                  out_dtype=None, out=None):
        """Checks what Python can check. Returns the native calls' arguments after a, b and out,
        in their order (c, bias, alpha, beta, activation, leaky_relu_slope, input_precision), and
        out_dtype as the library's dtype."""
        dtypes = self.dtypes
        # The usual a and b in one test (the per-call cost); check_array names what is wrong.
        if not (self.owns(a) and type(b) is type(a) and a.dtype in dtypes and b.dtype in dtypes):
            self.check_array("a", a)
            self.check_array("b", b)
        for name, x in (("c", c), ("bias", bias), ("out", out)):
            if x is not None:
                self.check_array(name, x)
        if out_dtype is not None:
            out_dtype = self.dtype_of(out_dtype)
            if out is not None and out.dtype != out_dtype:
                raise ValueError(f"out: its dtype is {out.dtype}, but out_dtype is {out_dtype}")
        alpha = _number("alpha", alpha)
        beta = (1.0 if c is not None else 0.0) if beta is None else _number("beta", beta)
        slope = _number("leaky_relu_slope", leaky_relu_slope)
        precision = input_precision
        if precision is None:
            precision = "tf32" if self.default_tf32(a) else "ieee"
        elif precision not in ("ieee", "tf32", "tf32x3"):
            raise ValueError(f"input_precision: {precision!r} is not None, 'ieee', 'tf32' or "
                             "'tf32x3'")
        return (c, bias, alpha, beta, resolve_activation(activation), slope, precision), out_dtype

    # Every argument positional, from tilegemm.matmul down to the native call: keywords cost a
    # dictionary and a match by name at each step, a few microseconds a call in all.
    def matmul(self, a, b, c, alpha, beta, bias, activation, leaky_relu_slope, out_dtype, out,
               config, kernel, backend, input_precision, autotune):
        common, out_dtype = self.arguments(a, b, c, alpha, beta, bias, activation,
                                           leaky_relu_slope, input_precision, out_dtype, out)
        given = out is not None
        if not given:
            out = self.empty(output_shape(a.shape, b.shape),
                             a.dtype if out_dtype is None else out_dtype, a)
        else:
            self.check_writable(out)
        stream = self.stream(a)
        native = self.native
        _native.run(native(a), native(b), native(out), None if c is None else native(c),
                    None if bias is None else native(bias), *common[2:],
                    _text("config", config), _text("kernel", kernel, "auto"),
                    _text("backend", backend, "auto"), _text("autotune", autotune), stream,
                    self.workspace_alloc(a), False)
        return self.finish(out, stream) if not given else out

    def product(self, a, b, out):
        """a @ b, written into out when given: matmul with every other argument at its default."""
        return self.matmul(a, b, None, 1.0, None, None, None, 0.01, None, out, None, "auto", "auto",
                           None, None)

    def scaled_mm_arguments(self, a, b, scale_a, scale_b, bias, out_dtype, scale_result, amax,
                            out):
        """Checks what Python can check of a scaled_mm call; returns out's dtype."""
        fp8 = self.fp8_dtypes
        for name, x in (("a", a), ("b", b)):
            if not self.owns(x) or x.dtype not in fp8:
                got = f"dtype {x.dtype}" if self.owns(x) else \
                    f"a {type(x).__module__}.{type(x).__name__}"
                taken = ", ".join(str(d) for d in fp8) or "none (fp8 arrays are torch's)"
                raise TypeError(f"{name}: scaled_mm takes fp8 {self.library} arrays ({taken}); "
                                f"got {got}")
        for name, x in (("scale_a", scale_a), ("scale_b", scale_b), ("bias", bias),
                        ("scale_result", scale_result), ("amax", amax), ("out", out)):
            if x is not None and not self.owns(x):
                raise TypeError(f"{name}: a {type(x).__module__}.{type(x).__name__}, while a is "
                                f"a {self.library} array")
        if len(a.shape) != 2 or len(b.shape) != 2:
            raise ValueError(f"a, b: scaled_mm multiplies two matrices, (M, K) @ (K, N); their "
                             f"shapes are {tuple(a.shape)} and {tuple(b.shape)}")
        if out_dtype is None:
            out_dtype = a.dtype if out is None else out.dtype
        elif out_dtype not in fp8 and out_dtype not in self.dtypes:
            raise TypeError(f"out_dtype: {out_dtype!r} is not taken; scaled_mm writes "
                            + ", ".join(str(d) for d in (*self.dtypes, *fp8)))
        if out is not None and out.dtype != out_dtype:
            raise ValueError(f"out: its dtype is {out.dtype}, but out_dtype is {out_dtype}")
        return out_dtype

    def scaled_mm(self, a, b, scale_a, scale_b, bias, out_dtype, scale_result, amax,
                  use_fast_accum, out, config, kernel, backend):
        out_dtype = self.scaled_mm_arguments(a, b, scale_a, scale_b, bias, out_dtype,
                                             scale_result, amax, out)
        given = out is not None
        if not given:
            out = self.empty((a.shape[0], b.shape[1]), out_dtype, a)
        else:
            self.check_writable(out)
        native = self.native
        stream = self.stream(a)
        _native.scaled(native(a), native(b), native(out),
                       *(None if x is None else native(x)
                         for x in (scale_a, scale_b, bias, scale_result, amax)),
                       bool(use_fast_accum), _text("config", config),
                       _text("kernel", kernel, "auto"), _text("backend", backend, "auto"), stream,
                       self.workspace_alloc(a))
        return self.finish(out, stream) if not given else out

    def grouped_arguments(self, a, b, offs, counts, bias, alpha, activation, leaky_relu_slope,
                          out_dtype, out):
        """Checks what Python can check of a grouped_mm call. Returns its form ("offsets",
        "counts" or "k_offsets"), the sizes, and the native call's bias, alpha, activation and
        leaky_relu_slope, and out_dtype as the library's dtype."""
        if (offs is None) == (counts is None):
            raise ValueError("offs, counts: give one of them (offs: a is (tokens, K), each "
                             "group's rows one after the other; counts: a is (groups, rows, K))")
        name, sizes = ("offs", offs) if offs is not None else ("counts", counts)
        if not self.owns(sizes):
            raise TypeError(f"{name}: a {type(sizes).__module__}.{type(sizes).__name__}, while a "
                            f"is a {self.library} array")
        (_, bias, alpha, _, activation, slope, _), out_dtype = self.arguments(
            a, b, None, alpha, None, bias, activation, leaky_relu_slope, "ieee", out_dtype, out)
        # offs over a 2-D b: K is the groups' (torch._grouped_mm's 2-D x 2-D, weight gradients)
        form = "counts" if offs is None else \
            "k_offsets" if len(a.shape) == 2 and len(b.shape) == 2 else "offsets"
        ranks = {"offsets": (2, 3), "counts": (3, 3), "k_offsets": (2, 2)}[form]
        if (len(a.shape), len(b.shape)) != ranks:
            want = "(tokens, K) and (groups, K, N), or (M, tokens) and (tokens, N)" \
                if form != "counts" else "(groups, rows, K) and (groups, K, N)"
            raise ValueError(f"a, b: {name} takes a and b of shapes {want}; theirs are "
                             f"{tuple(a.shape)} and {tuple(b.shape)}")
        return form, sizes, bias, alpha, activation, slope, out_dtype

    def grouped_mm(self, a, b, offs, counts, bias, alpha, activation, leaky_relu_slope, out_dtype,
                   out, config, kernel, backend):
        form, sizes, bias, alpha, activation, slope, out_dtype = self.grouped_arguments(
            a, b, offs, counts, bias, alpha, activation, leaky_relu_slope, out_dtype, out)
        given = out is not None
        if not given:
            out = self.empty(grouped_output_shape(form, a.shape, b.shape, sizes.shape),
                             a.dtype if out_dtype is None else out_dtype, a)
        else:
            self.check_writable(out)
        stream = self.stream(a)
        native = self.native
        _native.grouped(native(a), native(b), native(out), native(sizes), form,
                        None if bias is None else native(bias), alpha, activation, slope,
                        _text("config", config), _text("kernel", kernel, "auto"),
                        _text("backend", backend, "auto"), stream, self.workspace_alloc(a))
        return self.finish(out, stream) if not given else out

    def gemm_grouped_arguments(self, a, b, c, alpha, beta, bias, activation, leaky_relu_slope,
                               out_dtype, out):
        """Checks what Python can check of a gemm_grouped call, naming the problem. Returns each
        problem's (c, bias, alpha, beta), the activation, leaky_relu_slope, out_dtype as the
        library's dtype, and out as a list (None for each problem without one)."""
        count = _count("a", a)
        if _count("b", b) != count:
            raise ValueError(f"b: {len(b)} arrays, while a has {count}")
        cs, biases, outs = (_each(name, x, count) for name, x in
                            (("c", c), ("bias", bias), ("out", out)))
        alphas = _each("alpha", alpha, count, number=True)
        betas = _each("beta", beta, count, number=True)
        if not isinstance(beta, (list, tuple)):  # one beta: for the problems that have a c
            betas = [None if x is None else y for x, y in zip(cs, betas)]
        args, act, slope, dtype = [], "none", 0.01, None
        for i in range(count):
            try:
                if len(a[i].shape) != 2 or len(b[i].shape) != 2:
                    raise ValueError(f"a, b: each problem is (M, K) @ (K, N); these are "
                                     f"{tuple(a[i].shape)} and {tuple(b[i].shape)}")
                (c_i, bias_i, alpha_i, beta_i, act, slope, _), dtype = self.arguments(
                    a[i], b[i], cs[i], alphas[i], betas[i], biases[i], activation,
                    leaky_relu_slope, "ieee", out_dtype, outs[i])
                if outs[i] is not None:
                    self.check_writable(outs[i])
            except (TypeError, ValueError) as e:
                raise type(e)(f"problems[{i}]: {e}") from None
            args.append((c_i, bias_i, alpha_i, beta_i))
        return args, act, slope, dtype, outs

    def gemm_grouped(self, a, b, c, alpha, beta, bias, activation, leaky_relu_slope, out_dtype,
                     out, config, kernel, backend):
        args, act, slope, dtype, outs = self.gemm_grouped_arguments(
            a, b, c, alpha, beta, bias, activation, leaky_relu_slope, out_dtype, out)
        if not args:
            return []
        results = [x if x is not None else
                   self.empty(output_shape(a[i].shape, b[i].shape),
                              a[i].dtype if dtype is None else dtype, a[i])
                   for i, x in enumerate(outs)]
        native = self.native
        stream = self.stream(a[0])
        _native.run_grouped([native(x) for x in a], [native(x) for x in b],
                            [native(x) for x in results],
                            [None if x[0] is None else native(x[0]) for x in args],
                            [None if x[1] is None else native(x[1]) for x in args],
                            [x[2] for x in args], [x[3] for x in args], act, slope,
                            _text("config", config), _text("kernel", kernel, "auto"),
                            _text("backend", backend, "auto"), stream, self.workspace_alloc(a[0]))
        return [self.finish(x, stream) for x in results] if out is None else outs

    def plan(self, a, b, c, alpha, beta, bias, activation, out_dtype, config, kernel, backend,
             input_precision, autotune):
        common, out_dtype = self.arguments(a, b, c, alpha, beta, bias, activation, 0.01,
                                           input_precision, out_dtype)
        out = self.empty(output_shape(a.shape, b.shape),
                         a.dtype if out_dtype is None else out_dtype, a)
        return _native.plan(a, b, out, *common, _text("config", config),
                            _text("kernel", kernel, "auto"), _text("backend", backend, "auto"),
                            _text("autotune", autotune), self.stream(a))

    def tune(self, a, b, c, alpha, beta, bias, activation, out_dtype, kernel, input_precision):
        common, out_dtype = self.arguments(a, b, c, alpha, beta, bias, activation, 0.01,
                                           input_precision, out_dtype)
        out = self.empty(output_shape(a.shape, b.shape),
                         a.dtype if out_dtype is None else out_dtype, a)
        return _native.tune(a, b, out, *common, _text("kernel", kernel, "auto"), self.stream(a))

    def check_writable(self, out):
        pass


class NumpyAdapter(Adapter):
    library = "numpy"

    def __init__(self):
        import numpy
        self.np = numpy
        self.dtypes = {numpy.dtype(numpy.float32): "fp32", numpy.dtype(numpy.float16): "fp16"}

    def owns(self, x):
        return isinstance(x, self.np.ndarray)

    def empty(self, shape, dtype, like):
        return self.np.empty(shape, dtype=dtype)

    def dtype_of(self, value):
        try:
            dtype = self.np.dtype(value)
        except TypeError:
            raise TypeError(f"out_dtype: {value!r} is not a NumPy dtype") from None
        if dtype not in self.dtypes:
            raise TypeError(f"out_dtype: {dtype} is not taken; tilegemm writes float32, float16")
        return dtype

    def check_writable(self, out):
        if not out.flags.writeable:
            raise ValueError("out: is read-only")


class CupyAdapter(Adapter):
    library = "cupy"

    def __init__(self):
        import cupy
        self.cp = cupy
        self.dtypes = {cupy.dtype(cupy.float32): "fp32", cupy.dtype(cupy.float16): "fp16"}

    def owns(self, x):
        return isinstance(x, self.cp.ndarray)

    def empty(self, shape, dtype, like):
        with like.device:
            return self.cp.empty(shape, dtype=dtype)

    def dtype_of(self, value):
        dtype = self.cp.dtype(value)
        if dtype not in self.dtypes:
            raise TypeError(f"out_dtype: {dtype} is not taken; tilegemm writes float32, float16")
        return dtype

    def stream(self, like):
        with like.device:
            return self.cp.cuda.get_current_stream().ptr

    def workspace_alloc(self, like):
        device = like.device

        def alloc(size):
            with device:
                return self.cp.empty(size, dtype=self.cp.uint8)
        return alloc


class JaxAdapter(Adapter):
    """JAX arrays are immutable and JAX runs on streams of its own: the inputs are waited for,
    the result is a new array written on the default stream, waited for before it is returned."""

    library = "jax"

    def __init__(self):
        import jax
        import jax.numpy as jnp
        self.jax, self.jnp = jax, jnp
        self.dtypes = {jnp.dtype(jnp.float32): "fp32", jnp.dtype(jnp.float16): "fp16",
                       jnp.dtype(jnp.bfloat16): "bf16"}

    def owns(self, x):
        return isinstance(x, self.jax.Array)

    def empty(self, shape, dtype, like):
        (device,) = like.devices()
        return self.jax.device_put(self.jnp.zeros(shape, dtype=dtype), device).block_until_ready()

    def dtype_of(self, value):
        dtype = self.jnp.dtype(value)
        if dtype not in self.dtypes:
            raise TypeError(f"out_dtype: {dtype} is not taken; tilegemm writes float32, float16, "
                            "bfloat16")
        return dtype

    def matmul(self, a, b, c, alpha, beta, bias, activation, leaky_relu_slope, out_dtype, out,
               config, kernel, backend, input_precision, autotune):
        if out is not None:
            raise ValueError("out: JAX arrays are immutable; matmul returns a new one")
        for x in (a, b, c, bias):
            if x is not None and self.owns(x):
                x.block_until_ready()
        return super().matmul(a, b, c, alpha, beta, bias, activation, leaky_relu_slope,
                              out_dtype, None, config, kernel, backend, input_precision, autotune)

    def grouped_mm(self, a, b, offs, counts, bias, alpha, activation, leaky_relu_slope, out_dtype,
                   out, config, kernel, backend):
        if out is not None:
            raise ValueError("out: JAX arrays are immutable; grouped_mm returns a new one")
        for x in (a, b, offs, counts, bias):
            if x is not None and self.owns(x):
                x.block_until_ready()
        return super().grouped_mm(a, b, offs, counts, bias, alpha, activation, leaky_relu_slope,
                                  out_dtype, None, config, kernel, backend)

    def gemm_grouped(self, a, b, c, alpha, beta, bias, activation, leaky_relu_slope, out_dtype,
                     out, config, kernel, backend):
        if out is not None:
            raise ValueError("out: JAX arrays are immutable; gemm_grouped returns new ones")
        for group in (a, b, c, bias):
            for x in group if isinstance(group, (list, tuple)) else ():
                if x is not None and self.owns(x):
                    x.block_until_ready()
        return super().gemm_grouped(a, b, c, alpha, beta, bias, activation, leaky_relu_slope,
                                    out_dtype, None, config, kernel, backend)

    def finish(self, out, stream):
        _native.synchronize(stream)
        return out


_ADAPTERS = {}  # by the array's type, and by its library's module name


def adapter_of(a):
    """The adapter of a's library, made on first use (importing the library only then)."""
    adapter = _ADAPTERS.get(type(a))
    if adapter is not None:
        return adapter
    module = type(a).__module__.split(".")[0]
    adapter = _ADAPTERS.get(module)
    if adapter is not None:
        _ADAPTERS[type(a)] = adapter
        return adapter
    if module == "torch":
        from ._torch import TorchAdapter
        adapter = TorchAdapter()
    elif module == "numpy":
        adapter = NumpyAdapter()
    elif module == "cupy":
        adapter = CupyAdapter()
    elif module in ("jax", "jaxlib"):
        adapter = JaxAdapter()
    else:
        raise TypeError(f"a: a {type(a).__module__}.{type(a).__name__}; tilegemm takes torch "
                        "tensors and NumPy, CuPy and JAX arrays")
    _ADAPTERS[module] = _ADAPTERS[type(a)] = adapter
    return adapter
