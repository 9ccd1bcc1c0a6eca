"""tilegemm.scaled_mm on torch fp8 tensors, as torch._scaled_mm: every scale mode (per tensor, per
row and column, 1 x 128 and 128 x 128 blocks), both fp8 types, b column- and row-major, accurate
and fast accumulation, against a float64 reference on fresh random data, and beside
torch._scaled_mm where torch runs the same mode; an fp8 out with its scale and amax; bad
arguments raise naming them, out left as it was. The CPU backend's cases are host tests, CUDA
tensors' gpu tests. Skipped without torch."""

import pytest

torch = pytest.importorskip("torch")
import tilegemm  # noqa: E402
from conftest import TOLERANCE  # noqa: E402

DEVICES = [
    pytest.param("cpu", marks=pytest.mark.host),
    pytest.param("cuda", marks=[pytest.mark.gpu, pytest.mark.skipif(
        not torch.cuda.is_available(), reason="no CUDA device")]),
]
E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2
# A float32 D's error (and the amax's, taken before D's rounding): the tensor cores add fp8
# products with fewer bits than float32's between two promotions of the sums into float32
# registers (about 1.2e-4 at K of 300-512 on the GPU, as cuBLASLt's accurate mode; the library's
# tolerance_for); the CPU backend sums in float32 throughout.
FP32_OUT = 1e-3


def rel(x, y):
    x = x.double()
    assert not torch.isnan(x).any(), "an element was left unwritten (NaN)"
    return ((x - y).norm() / y.norm().clamp_min(1e-30)).item()


def fp8_matrix(rows, cols, dtype, device, column_major=False):
    """Random values rounded to `dtype`; column-major as the transpose of a contiguous array."""
    if column_major:
        return torch.randn(cols, rows, device=device).to(dtype).t()
    return torch.randn(rows, cols, device=device).to(dtype)


def scales(mode, m, n, k, device):
    """scale_a, scale_b as scaled_mm takes them, and their float64 values per element of A
    (m x k) and B (k x n)."""
    kb, nb = -(-k // 128), -(-n // 128)
    if mode == "tensor":
        sa, sb = torch.rand((), device=device) + 0.5, torch.rand(1, device=device) + 0.5
        return sa, sb, sa.double(), sb.double()
    if mode == "channel":
        sa, sb = torch.rand(m, 1, device=device) + 0.5, torch.rand(1, n, device=device) + 0.5
        return sa, sb, sa.double(), sb.double()
    a_blocks = torch.rand(m, kb, device=device) + 0.5  # a's 1 x 128 blocks
    b_blocks = torch.rand(nb, kb, device=device) + 0.5  # as a weight's (N/128, K/128) are kept
    a_full = a_blocks.double().repeat_interleave(128, 1)[:, :k]
    b_full = b_blocks.t().double().repeat_interleave(128, 0)[:k].repeat_interleave(128, 1)[:, :n]
    return a_blocks.t().contiguous().t(), b_blocks.t(), a_full, b_full


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["tensor", "channel", "block", None])
@pytest.mark.parametrize("shape", [(70, 150, 300), (256, 384, 512)])
@pytest.mark.parametrize("types,b_column_major,fast,out_dtype", [
    ((E4M3, E4M3), True, False, torch.float32),
    ((E4M3, E4M3), True, True, torch.bfloat16),
    ((E5M2, E4M3), False, False, torch.bfloat16),
])
def test_every_scale_mode_against_float64(device, mode, shape, types, b_column_major, fast,
                                          out_dtype):
    m, n, k = shape
    a = fp8_matrix(m, k, types[0], device)
    b = fp8_matrix(k, n, types[1], device, b_column_major)
    bias = torch.randn(n, device=device)
    if mode is None:
        sa = sb = None
        a_full = b_full = torch.tensor(1.0, dtype=torch.float64, device=device)
    else:
        sa, sb, a_full, b_full = scales(mode, m, n, k, device)
    out = torch.full((m, n), float("nan"), device=device, dtype=out_dtype)
    d = tilegemm.scaled_mm(a, b, sa, sb, bias=bias, out_dtype=out_dtype, use_fast_accum=fast,
                           out=out)
    assert d is out
    expected = (a.double() * a_full) @ (b.double() * b_full) + bias.double()
    assert rel(d, expected) < (TOLERANCE["bfloat16"] if out_dtype == torch.bfloat16 else FP32_OUT)


@pytest.mark.parametrize("device", DEVICES)
def test_an_fp8_out_with_its_scale_and_amax(device):
    m, n, k = 130, 200, 384
    a, b = fp8_matrix(m, k, E4M3, device), fp8_matrix(k, n, E4M3, device, True)
    sa, sb, a_full, b_full = scales("channel", m, n, k, device)
    scale_result = torch.tensor(0.125, device=device)
    amax = torch.full((1,), float("nan"), device=device)
    d = tilegemm.scaled_mm(a, b, sa, sb, scale_result=scale_result, amax=amax)
    assert d.dtype == E4M3  # a's, as torch._scaled_mm's default
    x = (a.double() * a_full) @ (b.double() * b_full)
    assert abs(amax.item() - x.abs().max().item()) <= FP32_OUT * x.abs().max().item()
    # e4m3 keeps 3 bits of mantissa: each value within 1/16 of its own size
    assert rel(d.float(), 0.125 * x) < 0.05


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("mode,out_dtype", [("tensor", torch.float32), ("tensor", torch.bfloat16),
                                            ("channel", torch.bfloat16)])
def test_beside_torch_scaled_mm(mode, out_dtype):
    m, n, k = 512, 768, 1024
    a, b = fp8_matrix(m, k, E4M3, "cuda"), fp8_matrix(k, n, E4M3, "cuda", True)
    sa, sb, _, _ = scales(mode, m, n, k, "cuda")
    sa, sb = (sa.reshape(1), sb.reshape(1)) if mode == "tensor" else (sa, sb)
    theirs = torch._scaled_mm(a, b, sa, sb, out_dtype=out_dtype)
    mine = tilegemm.scaled_mm(a, b, sa, sb, out_dtype=out_dtype)
    assert rel(mine, theirs.double()) < (1e-5 if out_dtype == torch.float32 else 8e-3)


M, N, K = 6, 10, 8
BAD = [
    # (what, the call's arguments, exception, words the message must contain)
    ("a not fp8", dict(a=torch.ones(M, K)), TypeError, "a: scaled_mm takes fp8"),
    ("b of NumPy", dict(b=None), TypeError, "b: scaled_mm takes fp8"),
    ("a batched", dict(a=torch.ones(2, M, K).to(E4M3)), ValueError, "a, b: scaled_mm multiplies"),
    ("K differs", dict(b=torch.ones(K + 1, N).to(E4M3)), ValueError, "b: its shape"),
    ("one scale", dict(scale_b=None), ValueError, "scale_b: is None"),
    ("scale shapes", dict(scale_a=torch.ones(M, 2)), ValueError, "scale_a, scale_b: shapes"),
    ("row-major block scales of a", dict(a=torch.ones(M, 256).to(E4M3),
                                         b=torch.ones(N, 256).to(E4M3).t(),
                                         scale_a=torch.ones(M, 2), scale_b=torch.ones(2, 1)),
     ValueError, "scale_a, scale_b: shapes"),
    ("scale dtype", dict(scale_a=torch.ones((), dtype=torch.bfloat16)), ValueError,
     "scale_a: its dtype"),
    ("out_dtype", dict(out_dtype=torch.int8), TypeError, "out_dtype"),
    ("amax of two", dict(amax=torch.zeros(2), out_dtype=E4M3), ValueError, "amax: its shape"),
]


@pytest.mark.host
@pytest.mark.parametrize("what,args,exception,words", BAD, ids=[x[0] for x in BAD])
def test_bad_arguments_raise_naming_them_and_leave_out_alone(what, args, exception, words):
    args = dict(args)
    a = args.pop("a", torch.ones(M, K).to(E4M3))
    b = args.pop("b", torch.ones(N, K).to(E4M3).t())
    if b is None:
        import numpy as np
        b = np.ones((K, N), np.float32)
    call = dict(scale_a=torch.ones(()), scale_b=torch.ones(()), out_dtype=torch.float32)
    call.update(args)
    out = torch.full((M, N), 42.0, dtype=call["out_dtype"]) \
        if call["out_dtype"] in (torch.float32, E4M3) else None
    before = None if out is None else out.float().clone()
    with pytest.raises(exception) as raised:
        tilegemm.scaled_mm(a, b, out=out, **call)
    assert words in str(raised.value)
    if out is not None:
        assert torch.equal(out.float(), before)


@pytest.mark.parametrize("device", DEVICES)
def test_torch_compile_traces_it_and_opcheck_passes(device):
    m, n, k = 64, 96, 256
    a, b = fp8_matrix(m, k, E4M3, device), fp8_matrix(k, n, E4M3, device, True)
    sa, sb, _, _ = scales("block", m, n, k, device)
    bias = torch.randn(n, device=device, dtype=torch.bfloat16)
    scale_result = torch.tensor(0.5, device=device)

    def layer(a, b, sa, sb, bias, amax):  # an fp8 out and its amax, as a training recipe keeps
        d = tilegemm.scaled_mm(a, b, sa, sb, bias=bias, scale_result=scale_result, amax=amax)
        return torch.relu(d.float())

    amax_eager, amax_compiled = (torch.zeros(1, device=device) for _ in range(2))
    eager = layer(a, b, sa, sb, bias, amax_eager)
    compiled = torch.compile(layer, fullgraph=True)(a, b, sa, sb, bias, amax_compiled)
    assert torch.equal(eager, compiled) and torch.equal(amax_eager, amax_compiled)
    assert amax_eager.item() > 0
    # opcheck's schema check multiplies the op's fp8 arguments, which torch does not do: the
    # fake implementation and the traced graph are checked.
    torch.library.opcheck(torch.ops.tilegemm.scaled_mm.default,
                          (a, b, sa, sb, bias, E4M3, scale_result, amax_eager, False, "", "auto",
                           "auto"), test_utils=("test_faketensor", "test_aot_dispatch_dynamic"))
