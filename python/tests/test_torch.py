"""tilegemm.matmul on torch tensors on the GPU: against torch.matmul / torch.addmm and a float64
reference, the custom op's checks (torch.library.opcheck), torch.compile, torch.cuda.graph, and
calls from many threads on many streams. Skipped without torch or a CUDA device."""

import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import tilegemm  # noqa: E402
import tilegemm._torch  # noqa: E402  (registers the custom ops that opcheck reads)
import tilegemm.nn  # noqa: E402
from conftest import TOLERANCE  # noqa: E402

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")]

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32,
          "tf32": torch.float32, "tf32x3": torch.float32}
TOL = {"bf16": TOLERANCE["bfloat16"], "fp16": TOLERANCE["float16"], "fp32": 1e-5, "tf32": 5e-3,
       "tf32x3": 1e-5}
ACT = {None: lambda z: z, "relu": torch.relu,
       "gelu": lambda z: torch.nn.functional.gelu(z, approximate="tanh"),
       "silu": torch.nn.functional.silu}


def rel(x, y):
    x, y = x.double(), y.double()
    assert not torch.isnan(x).any(), "an element was left unwritten (NaN)"
    return ((x - y).norm() / y.norm().clamp_min(1e-30)).item()


def operand(rows, cols, dtype, layout, batch=()):
    if layout == "N":
        return torch.randn(batch + (rows, cols), device="cuda").to(dtype)
    return torch.randn(batch + (cols, rows), device="cuda").to(dtype).transpose(-1, -2)


@pytest.mark.parametrize("kind", list(DTYPES))
@pytest.mark.parametrize("layouts", ["NN", "NT", "TN", "TT"])
@pytest.mark.parametrize("activation", [None, "relu", "gelu", "silu"])
@pytest.mark.parametrize("batch", [(), (3,)])
def test_matches_torch_and_float64(kind, layouts, activation, batch):
    dtype = DTYPES[kind]
    m, n, k = 257, 384, 320
    a = operand(m, k, dtype, layouts[0], batch)
    b = operand(k, n, dtype, layouts[1], batch)
    c = torch.randn(batch + (m, n), device="cuda").to(dtype)
    bias = torch.randn(n, device="cuda").to(dtype)
    d = tilegemm.matmul(a, b, c=c, alpha=0.75, beta=0.5, bias=bias, activation=activation,
                        input_precision=kind if kind.startswith("tf32") else "ieee")
    z64 = 0.75 * (a.double() @ b.double()) + 0.5 * c.double() + bias.double()
    expected = ACT[activation](z64)
    assert d.dtype == dtype and d.shape == batch + (m, n)
    assert rel(d, expected) < TOL[kind]
    # torch.addmm's own result, where torch has one (2-D; its epilogue unfused).
    if not batch:
        previous = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = kind == "tf32"
        try:
            torch_d = ACT[activation](torch.addmm(0.5 * c + bias, a, b, alpha=0.75))
        finally:
            torch.backends.cuda.matmul.allow_tf32 = previous
        assert rel(d, torch_d.double()) < 2 * TOL[kind]


def test_torch_tf32_setting_is_the_default_precision():
    a = torch.randn(512, 512, device="cuda")
    previous = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = True
        assert tilegemm.plan(a, a)["problem"]["dtype"] == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = False
        assert tilegemm.plan(a, a)["problem"]["dtype"] == "fp32"
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous


def test_errors_leave_out_untouched():
    a = torch.randn(64, 32, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(32, 48, device="cuda", dtype=torch.bfloat16)
    out = torch.full((64, 48), 3.0, device="cuda", dtype=torch.bfloat16)
    for kwargs, exception in [(dict(bias=torch.ones(7, device="cuda")), ValueError),
                              (dict(activation="tanh"), ValueError),
                              (dict(config="1x1x1"), ValueError),
                              (dict(c=torch.ones(64, 48)), ValueError),  # c on the host
                              (dict(out_dtype=torch.float64), TypeError)]:
        with pytest.raises(exception):
            tilegemm.matmul(a, b, out=out, **kwargs)
        assert (out == 3.0).all()
    # The plain product (out the only other argument) takes a shorter path: its errors as well.
    host_out = torch.full((64, 48), 3.0, dtype=torch.bfloat16)
    narrow = torch.full((64, 47), 3.0, device="cuda", dtype=torch.bfloat16)
    for x, y, result in [(a, b.half(), out), (a, b[:31], out), (a, b, narrow), (a, b, host_out),
                         (a, b, out.double())]:
        before = result.clone()
        with pytest.raises((TypeError, ValueError)):
            tilegemm.matmul(x, y, out=result)
        assert torch.equal(result, before)


@pytest.mark.parametrize("kind", ["bf16", "fp16", "fp32"])
@pytest.mark.parametrize("layouts", ["NN", "TT"])
@pytest.mark.parametrize("batch", [(), (2,)])
def test_the_plain_product_computes_what_the_general_path_does(kind, layouts, batch):
    """matmul(a, b) with every other argument at its default, with and without out, takes the
    torch adapter's shorter path; beta=0.0 given takes the general one. Same kernel, same bits."""
    dtype = DTYPES[kind]
    m, n, k = 200, 136, 264
    a = operand(m, k, dtype, layouts[0], batch)
    b = operand(k, n, dtype, layouts[1], batch)
    general = tilegemm.matmul(a, b, beta=0.0)
    plain = tilegemm.matmul(a, b)
    out = torch.full(batch + (m, n), float("nan"), device="cuda", dtype=dtype)
    assert tilegemm.matmul(a, b, out=out) is out
    assert torch.equal(plain, general) and torch.equal(out, general)
    tol = TOL["tf32"] if dtype == torch.float32 and torch.backends.cuda.matmul.allow_tf32 \
        else TOL[kind]
    assert rel(plain, a.double() @ b.double()) < tol


def test_the_plain_product_records_gradients_and_takes_parameters():
    a = torch.randn(48, 40, device="cuda", requires_grad=True)
    weight = torch.nn.Parameter(torch.randn(40, 24, device="cuda"))
    y = tilegemm.matmul(a, weight, input_precision="ieee")
    tilegemm.matmul(a, weight).square().sum().backward()  # the plain form, with gradients
    grads = (a.grad.clone(), weight.grad.clone())
    a.grad = weight.grad = None
    (a @ weight).square().sum().backward()
    for mine, theirs in zip(grads, (a.grad, weight.grad)):
        assert rel(mine, theirs) < TOL["tf32"]
    with torch.no_grad():  # tensors that require grad, where none is recorded
        assert rel(tilegemm.matmul(a, weight), y.detach().double()) < TOL["tf32"]


def test_opcheck():
    a = torch.randn(40, 24, device="cuda", dtype=torch.float16, requires_grad=True)
    b = torch.randn(24, 56, device="cuda", dtype=torch.float16, requires_grad=True)
    bias = torch.randn(56, device="cuda", dtype=torch.float16, requires_grad=True)
    for activation in ("none", "gelu"):
        torch.library.opcheck(torch.ops.tilegemm.matmul.default,
                              (a, b, None, bias, 1.0, 0.0, activation, 0.01, None, "ieee", "",
                               "auto", "auto", ""))


def test_gradients_match_torch():
    a = torch.randn(3, 33, 20, device="cuda", dtype=torch.float32, requires_grad=True)
    b = torch.randn(20, 28, device="cuda", dtype=torch.float32, requires_grad=True)
    bias = torch.randn(28, device="cuda", requires_grad=True)
    y = tilegemm.matmul(a, b, bias=bias, activation="silu", input_precision="ieee")
    y.square().sum().backward()
    grads = [x.grad.clone() for x in (a, b, bias)]
    for x in (a, b, bias):
        x.grad = None
    torch.nn.functional.silu(a @ b + bias).square().sum().backward()
    for mine, theirs in zip(grads, (a.grad, b.grad, bias.grad)):
        assert rel(mine, theirs) < 1e-4


def test_compile_fullgraph_mlp():
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(
        tilegemm.nn.Linear(256, 512, activation="gelu", device="cuda", dtype=torch.bfloat16),
        tilegemm.nn.Linear(512, 128, device="cuda", dtype=torch.bfloat16))
    x = torch.randn(4, 64, 256, device="cuda", dtype=torch.bfloat16)
    compiled = torch.compile(mlp, fullgraph=True)
    with torch.no_grad():
        y = compiled(x)
        h = torch.nn.functional.gelu(x.double() @ mlp[0].weight.double().T +
                                     mlp[0].bias.double(), approximate="tanh")
        expected = h @ mlp[1].weight.double().T + mlp[1].bias.double()
    assert y.shape == (4, 64, 128)
    assert rel(y, expected) < 2e-2


def test_compile_fullgraph_plain_product():
    """matmul(x, w) with no other argument, which eager calls send down the torch adapter's short
    path, traced whole by torch.compile (as the custom op)."""
    w = torch.randn(256, 96, device="cuda", dtype=torch.bfloat16)
    compiled = torch.compile(lambda x: tilegemm.matmul(x, w), fullgraph=True)
    x = torch.randn(64, 256, device="cuda", dtype=torch.bfloat16)
    assert rel(compiled(x), x.double() @ w.double()) < TOL["bf16"]


def test_cuda_graph_capture_replays_the_unaligned_shape():
    m, n, k = 4095, 4097, 4093
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    tilegemm.matmul(a, b)  # warm-up outside the capture, as torch.cuda.graph asks
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        d = tilegemm.matmul(a, b)
    for _ in range(2):
        a.copy_(torch.randn(m, k, device="cuda", dtype=torch.bfloat16))
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert rel(d, a.double() @ b.double()) < TOL["bf16"]


def test_eight_threads_on_eight_streams():
    shapes = [(128 * (i + 1), 96 * (i + 2), 64 * (i + 3)) for i in range(8)]
    results, errors = [None] * 8, []

    def work(i):
        try:
            stream = torch.cuda.Stream()
            m, n, k = shapes[i]
            with torch.cuda.stream(stream):
                a = torch.randn(m, k, device="cuda", dtype=torch.float16)
                b = torch.randn(k, n, device="cuda", dtype=torch.float16)
                for _ in range(20):
                    d = tilegemm.matmul(a, b)
                stream.synchronize()
                results[i] = rel(d, a.double() @ b.double())
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert all(r < TOL["fp16"] for r in results), results


def test_torch_cpu_tensors_run_on_the_cpu_backend():
    a = torch.randn(30, 20)
    b = torch.randn(20, 10)
    d = tilegemm.matmul(a, b)
    assert d.device.type == "cpu"
    assert rel(d, a.double() @ b.double()) < 1e-5
    assert tilegemm.plan(a, b)["backend"] == "cpu"


def test_python_layer_overhead_is_reported(capsys):
    """Not a speed target (those live in the benchmark, scripts/python-bench.py): only that the
    per-call path runs many times in a row without leaking or failing."""
    a = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)
    for _ in range(1000):
        d = tilegemm.matmul(a, a)
    torch.cuda.synchronize()
    assert rel(d, a.double() @ a.double()) < TOL["bf16"]


def test_tune_times_the_candidates_and_the_next_call_uses_the_winner(tmp_path):
    """In a process of its own, so that its tuning cache is a fresh folder."""
    import os
    import subprocess
    import sys

    script = (
        "import torch, tilegemm\n"
        "a = torch.randn(768, 512, device='cuda', dtype=torch.float16)\n"
        "b = torch.randn(512, 640, device='cuda', dtype=torch.float16)\n"
        "r = tilegemm.tune(a, b)\n"
        "timed = [c for c in r['candidates'] if not c['dropped']]\n"
        "assert len(timed) >= 2 and timed[0]['ms'] > 0, r\n"
        "assert timed[0]['ms'] <= timed[-1]['ms'] and r['cache_file'], r\n"
        "p = tilegemm.plan(a, b, autotune='on-miss')\n"
        "assert p['config_source'] == 'cache', p\n"
        "assert (p['kernel'], p['config']) == (timed[0]['kernel'], timed[0]['config']), (p, timed[0])\n"
        "d = tilegemm.matmul(a, b, autotune='on-miss')\n"
        "err = ((d.double() - a.double() @ b.double()).norm() / (a.double() @ b.double()).norm())\n"
        "assert err < 2e-3, err\n")
    env = dict(os.environ, TILEGEMM_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("layout_b", ["N", "T"])
def test_grouped_mm_offsets_and_counts_in_device_memory(dtype, layout_b):
    groups, k, n = 6, 256, 384
    rows = torch.randint(0, 300, (groups,))
    rows[1] = 0
    offs = torch.cumsum(rows, 0).to(torch.int32).cuda()
    tokens = int(offs[-1]) + 5
    a = torch.randn(tokens, k, device="cuda").to(dtype)
    b = operand(k, n, dtype, layout_b, batch=(groups,))
    bias = torch.randn(groups, n, device="cuda").to(dtype)
    out = torch.full((tokens, n), float("nan"), device="cuda", dtype=dtype)
    tilegemm.grouped_mm(a, b, offs, bias=bias, activation="silu", out=out)
    begin = 0
    for g, end in enumerate(offs.tolist()):
        if end > begin:
            z = a[begin:end].double() @ b[g].double() + bias[g].double()
            assert rel(out[begin:end], ACT["silu"](z)) < TOL["bf16"]
        begin = end
    assert torch.isnan(out[begin:]).all()

    counts = torch.tensor([0, 1, 77, 128], dtype=torch.int32, device="cuda")
    a3 = torch.randn(4, 128, k, device="cuda").to(dtype)
    b3 = operand(k, n, dtype, layout_b, batch=(4,))
    d = tilegemm.grouped_mm(a3, b3, counts=counts)
    for g, c in enumerate(counts.tolist()):
        if c > 0:
            assert rel(d[g, :c], a3[g, :c].double() @ b3[g].double()) < TOL["bf16"]


def grouped_reference(form, a, b, sizes, bias, alpha, activation):
    """grouped_mm group by group on float64 tensors (torch's autograd records it); rows no group
    takes are zeros, which depend on no input."""
    act, sizes, out, begin = ACT[activation], sizes.tolist(), [], 0
    bias_of = (lambda g: bias[g]) if bias.dim() == 2 else (lambda g: bias)
    for g, size in enumerate(sizes):
        if form == "offsets":
            out.append(act(alpha * (a[begin:size] @ b[g]) + bias_of(g)))
        elif form == "counts":
            rows = act(alpha * (a[g, :size] @ b[g]) + bias_of(g))
            out.append(torch.cat([rows, rows.new_zeros(a.shape[1] - size, b.shape[-1])]))
        else:
            out.append(act(alpha * (a[:, begin:size] @ b[begin:size]) + bias_of(g)))
        begin = size
    if form == "offsets":
        return torch.cat(out + [a.new_zeros(a.shape[0] - begin, b.shape[-1])])
    return torch.stack(out)


def grouped_operands(form, device, dtype):
    """Random operands of a grouped_mm form with an empty group, a one-row group and (offsets,
    k_offsets) rows or tokens past the last group; the layouts the GPU's kernels read."""
    groups, m, n, k = 5, 48, 40, 72
    rows = torch.randint(0, 30, (groups,))
    rows[1], rows[2] = 0, 1
    if form == "counts":
        sizes = torch.minimum(rows, torch.tensor(m))
        a = torch.randn(groups, m, k)
        b = torch.randn(groups, n, k).transpose(-1, -2)  # column-major entries
    else:
        sizes = torch.cumsum(rows, 0)
        tokens = int(sizes[-1]) + 3
        if form == "offsets":
            a, b = torch.randn(tokens, k), torch.randn(groups, k, n)
        else:  # k_offsets: a = x^T column-major (M, tokens), b = dy row-major (tokens, N)
            a, b = torch.randn(tokens, m).t(), torch.randn(tokens, n)
    return (a.to(device, dtype), b.to(device, dtype), sizes.to(device, torch.int32),
            torch.randn(groups, n).to(device, dtype))


@pytest.mark.parametrize("form", ["offsets", "counts", "k_offsets"])
@pytest.mark.parametrize("device,dtype", [("cuda", torch.float16), ("cuda", torch.bfloat16),
                                          ("cpu", torch.float32)])
@pytest.mark.parametrize("activation", [None, "silu"])
@pytest.mark.parametrize("bias_per_group", [True, False])
def test_grouped_mm_gradients_against_float64(form, device, dtype, activation, bias_per_group):
    a, b, sizes, bias = grouped_operands(form, device, dtype)
    if not bias_per_group:
        bias = bias[0].clone()
    leaves = [x.requires_grad_() for x in (a, b, bias)]
    kwargs = dict(counts=sizes) if form == "counts" else dict(offs=sizes)
    d = tilegemm.grouped_mm(a, b, bias=bias, alpha=0.5, activation=activation, **kwargs)
    weight = torch.randn(d.shape, device=device)  # also on rows no group takes: dropped
    torch.autograd.backward(d, weight.to(d.dtype))
    mine = [x.grad for x in leaves]
    copies = [x.detach().double().requires_grad_() for x in leaves]
    expected = grouped_reference(form, *copies[:2], sizes.cpu(), copies[2], 0.5, activation)
    torch.autograd.backward(expected, weight.double())
    tol = {torch.float16: 1e-2, torch.bfloat16: 3e-2, torch.float32: 1e-5}[dtype]
    for name, x, ref in zip("a b bias".split(), mine, copies):
        assert x is not None and x.shape == ref.shape and x.dtype == dtype, name
        assert rel(x, ref.grad) < tol, name
    with pytest.raises(ValueError, match="out"):
        tilegemm.grouped_mm(a, b, out=torch.empty_like(d), **kwargs)


def test_grouped_mm_opcheck():
    """torch.library's checks of the op, on sizes that take every row (no row left unwritten)."""
    a, b, _, bias = grouped_operands("offsets", "cuda", torch.float16)
    sizes = torch.tensor([8, 8, 20, a.shape[0]], dtype=torch.int32, device="cuda")
    for x in (a, b, bias):
        x.requires_grad_()
    for activation in ("none", "gelu"):
        torch.library.opcheck(torch.ops.tilegemm.grouped_mm.default,
                              (a, b[:4], sizes, "offsets", bias[:4], 0.5, activation, 0.01, None,
                               "", "auto", "auto"))


@pytest.mark.parametrize("device,dtype", [("cuda", torch.float16), ("cpu", torch.float32)])
@pytest.mark.parametrize("activation", [None, "gelu"])
def test_gemm_grouped_gradients_against_float64(device, dtype, activation):
    sizes = [(300, 200, 520), (0, 64, 64), (64, 0, 64), (17, 256, 0), (1, 136, 72), (96, 80, 40)]
    a = [torch.randn(m, k).to(device, dtype) for m, n, k in sizes]
    b = [torch.randn(n, k).to(device, dtype).t() for m, n, k in sizes]  # column-major
    c = [torch.randn(m, n).to(device, dtype) for m, n, k in sizes]
    bias = [torch.randn(n).to(device, dtype) for m, n, k in sizes]
    alpha, beta = [0.5 + 0.25 * i for i in range(len(sizes))], 0.75
    leaves = [x.requires_grad_() for group in (a, b, c, bias) for x in group]
    d = tilegemm.gemm_grouped(a, b, c=c, alpha=alpha, beta=beta, bias=bias, activation=activation)
    weights = [torch.randn(x.shape, device=device, dtype=dtype) for x in d]
    torch.autograd.backward(d, weights)
    mine = [x.grad for x in leaves]
    copies = [x.detach().double().requires_grad_() for x in leaves]
    n = len(sizes)
    for i in range(n):
        a64, b64, c64, bias64 = copies[i], copies[n + i], copies[2 * n + i], copies[3 * n + i]
        z = alpha[i] * (a64 @ b64) + beta * c64 + bias64
        torch.autograd.backward(ACT[activation](z), weights[i].double())
    tol = {torch.float16: 1e-2, torch.float32: 1e-5}[dtype]
    for i, (x, ref) in enumerate(zip(mine, copies)):
        assert x is not None and x.shape == ref.shape and x.dtype == dtype, i
        if ref.numel():
            assert rel(x, ref.grad) < tol, i
    # A problem without c: the list is no tensor to autograd; a and b still get their gradients.
    for x in leaves:
        x.grad = None
    d = tilegemm.gemm_grouped(a, b, c=[None] + c[1:], alpha=alpha)
    torch.autograd.backward(d, weights)
    assert all(x.grad is None for x in c)
    for i in range(n):
        expected = alpha[i] * (weights[i].double() @ b[i].detach().double().t())
        if expected.numel():
            assert rel(a[i].grad, expected) < tol, i
    with pytest.raises(ValueError, match="out"):
        tilegemm.gemm_grouped(a, b, out=[torch.empty_like(x) for x in d])


def test_gemm_grouped_opcheck():
    sizes = [(40, 24, 56), (8, 16, 24)]
    a = [torch.randn(m, k, device="cuda", dtype=torch.float16, requires_grad=True)
         for m, n, k in sizes]
    b = [torch.randn(k, n, device="cuda", dtype=torch.float16, requires_grad=True)
         for m, n, k in sizes]
    c = [torch.randn(m, n, device="cuda", dtype=torch.float16, requires_grad=True)
         for m, n, k in sizes]
    bias = [torch.randn(n, device="cuda", dtype=torch.float16, requires_grad=True)
            for m, n, k in sizes]
    for activation in ("none", "gelu"):
        torch.library.opcheck(torch.ops.tilegemm.gemm_grouped.default,
                              (a, b, c, bias, [1.0, 0.5], [0.5, 1.0], activation, 0.01, None, "",
                               "auto", "auto"))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_gemm_grouped_problems_in_one_launch_and_under_a_graph(dtype):
    sizes = [(300, 200, 520), (0, 64, 64), (64, 0, 64), (17, 256, 0), (1, 136, 72), (512, 384, 256)]
    a = [torch.randn(m, k, device="cuda").to(dtype) for m, n, k in sizes]
    b = [operand(k, n, dtype, "T") for m, n, k in sizes]
    bias = [torch.randn(n, device="cuda").to(dtype) for m, n, k in sizes]
    alpha = [0.5 + 0.25 * i for i in range(len(sizes))]
    d = tilegemm.gemm_grouped(a, b, alpha=alpha, bias=bias, activation="silu")
    for i, (m, n, k) in enumerate(sizes):
        assert d[i].shape == (m, n) and d[i].dtype == dtype
        if m and n:
            z = alpha[i] * (a[i].double() @ b[i].double()) + bias[i].double()
            assert rel(d[i], ACT["silu"](z)) < TOL["bf16"], i
    # Captured once (D = AB: the TMA route), replayed on new inputs.
    out = [torch.empty(m, n, device="cuda", dtype=dtype) for m, n, k in sizes]
    tilegemm.gemm_grouped(a, b, out=out)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tilegemm.gemm_grouped(a, b, out=out)
    for _ in range(2):
        for x in a:
            x.copy_(torch.randn(x.shape, device="cuda").to(dtype))
        for o in out:
            o.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        for i, (m, n, k) in enumerate(sizes):
            if m and n:
                assert rel(out[i], a[i].double() @ b[i].double()) < TOL["bf16"], i
