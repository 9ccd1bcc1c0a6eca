"""tilegemm.grouped_mm on NumPy arrays (the CPU backend): the three forms of sizes (offs over a 3-D
b, counts, and offs over a 2-D b: K split into groups), layouts, a bias per group and activations,
against a float64 reference per group on fresh random data; rows outside the groups are left as
they were; bad arguments raise naming them. And gemm_grouped: problems of their own, each its own
sizes and epilogue."""

import numpy as np
import pytest

import tilegemm
from conftest import TOLERANCE, reference64, relative_error

pytestmark = pytest.mark.host

rng = np.random.default_rng()


def weights(groups, k, n, dtype, layout):
    """(groups, K, N): row-major entries, or column-major ones (a transposed view)."""
    if layout == "row":
        return rng.standard_normal((groups, k, n)).astype(dtype)
    return np.swapaxes(rng.standard_normal((groups, n, k)).astype(dtype), -1, -2)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("layout_b", ["row", "col"])
@pytest.mark.parametrize("activation", [None, "silu"])
def test_offsets_each_group_times_its_own_b(dtype, layout_b, activation):
    groups, k, n = 5, int(rng.integers(1, 70)), int(rng.integers(1, 70))
    rows = rng.integers(0, 40, size=groups)
    rows[1] = 0  # an empty group
    rows[2] = 1  # a one-row group
    offs = np.cumsum(rows).astype(np.int32)
    tokens = int(offs[-1]) + 3  # rows past the last group belong to none
    a = rng.standard_normal((tokens, k)).astype(dtype)
    b = weights(groups, k, n, dtype, layout_b)
    bias = rng.standard_normal((groups, n)).astype(dtype)
    out = np.full((tokens, n), np.nan, dtype)
    result = tilegemm.grouped_mm(a, b, offs, bias=bias, alpha=0.5, activation=activation,
                                 out=out)
    assert result is out
    begin = 0
    for g in range(groups):
        end = int(offs[g])
        if end > begin:
            expected = reference64(a[begin:end], b[g], alpha=0.5, bias=bias[g],
                                   activation=activation)
            assert relative_error(out[begin:end], expected) < TOLERANCE[np.dtype(dtype).name]
        begin = end
    assert np.isnan(out[begin:]).all()  # not written


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_counts_masked_rows_per_group(dtype):
    groups, m, k, n = 4, 24, int(rng.integers(1, 60)), int(rng.integers(1, 60))
    counts = np.array([0, 24, 1, 13], np.int32)
    a = rng.standard_normal((groups, m, k)).astype(dtype)
    b = weights(groups, k, n, dtype, "row")
    bias = rng.standard_normal(n).astype(dtype)
    out = np.full((groups, m, n), np.nan, dtype)
    tilegemm.grouped_mm(a, b, counts=counts, bias=bias, activation="relu", out=out)
    for g in range(groups):
        c = int(counts[g])
        if c > 0:
            expected = reference64(a[g, :c], b[g], bias=bias, activation="relu")
            assert relative_error(out[g, :c], expected) < TOLERANCE[np.dtype(dtype).name]
        assert np.isnan(out[g, c:]).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("layout_a", ["row", "col"])
def test_offs_over_a_2d_b_splits_k_into_groups(dtype, layout_a):
    """torch._grouped_mm's 2-D x 2-D form, a weight gradient: x.T @ dy per group of tokens."""
    groups, m, n = 5, int(rng.integers(1, 50)), int(rng.integers(1, 50))
    tokens = rng.integers(0, 30, size=groups)
    tokens[3] = 0  # an empty group: its product is zero, its result the epilogue alone
    offs = np.cumsum(tokens).astype(np.int32)
    total = int(offs[-1]) + 2  # tokens past the last group belong to none
    x = rng.standard_normal((total, m)).astype(dtype)
    a = x.T if layout_a == "col" else np.ascontiguousarray(x.T)
    dy = rng.standard_normal((total, n)).astype(dtype)
    bias = rng.standard_normal((groups, n)).astype(dtype)
    result = tilegemm.grouped_mm(a, dy, offs, bias=bias, activation="relu")
    assert result.shape == (groups, m, n) and result.dtype == dtype
    begin = 0
    for g in range(groups):
        end = int(offs[g])
        expected = reference64(a[:, begin:end], dy[begin:end], bias=bias[g], activation="relu")
        assert relative_error(result[g], expected) < TOLERANCE[np.dtype(dtype).name]
        begin = end


def test_the_result_is_allocated_with_the_product_shape():
    a = rng.standard_normal((7, 8)).astype(np.float32)
    b = rng.standard_normal((2, 8, 3)).astype(np.float32)
    d = tilegemm.grouped_mm(a, b, np.array([3, 7], np.int32))
    assert d.shape == (7, 3) and d.dtype == np.float32
    assert relative_error(d[:3], reference64(a[:3], b[0])) < TOLERANCE["float32"]
    assert relative_error(d[3:], reference64(a[3:], b[1])) < TOLERANCE["float32"]


OFFS = np.array([2, 5], np.int32)
BAD = [
    # (what, the call's arguments, exception, words the message must contain)
    ("neither form", dict(offs=None), ValueError, "offs, counts"),
    ("both forms", dict(counts=np.array([1, 1], np.int32)), ValueError, "offs, counts"),
    ("float sizes", dict(offs=np.array([2.0, 5.0], np.float32)), TypeError, "offs: its dtype"),
    ("sizes of another library", dict(offs=[2, 5]), TypeError, "offs: a builtins.list"),
    ("one size too few", dict(offs=np.array([5], np.int32)), ValueError, "offs: its shape"),
    ("sizes not contiguous", dict(offs=np.array([2, 0, 5, 0], np.int32)[::2]), ValueError,
     "offs: its values"),
    ("a batched for offs", dict(a=np.ones((2, 5, 4), np.float32)), ValueError, "a, b: offs"),
    ("K differs", dict(b=np.ones((2, 3, 6), np.float32)), ValueError, "b: its shape"),
    ("bias's shape", dict(bias=np.ones((3, 6), np.float32)), ValueError, "bias: its shape"),
    ("out's shape", dict(out_shape=(5, 7)), ValueError, "out: its shape"),
    ("bad activation", dict(activation="tanh"), ValueError, "activation"),
    ("K differs, offs over a 2-D b", dict(b=np.ones((3, 6), np.float32), out_shape=(2, 5, 6)),
     ValueError, "b: its shape"),
    ("out's shape, offs over a 2-D b", dict(b=np.ones((4, 6), np.float32)), ValueError,
     "out: its shape"),
]


@pytest.mark.parametrize("what,args,exception,words", BAD, ids=[x[0] for x in BAD])
def test_bad_arguments_raise_naming_them_and_leave_out_alone(what, args, exception, words):
    args = dict(args)
    a = args.pop("a", np.ones((5, 4), np.float32))
    b = args.pop("b", np.ones((2, 4, 6), np.float32))
    offs = args.pop("offs", OFFS)
    out = np.full(args.pop("out_shape", (5, 6)), 42.0, np.float32)
    before = out.copy()
    with pytest.raises(exception) as raised:
        tilegemm.grouped_mm(a, b, offs, out=out, **args)
    assert words in str(raised.value)
    np.testing.assert_array_equal(out, before)


def problems(count, dtype, layout_b="row"):
    """gemm_grouped's problems: random sizes each (no rows, no columns, no K among them)."""
    a, b = [], []
    for i in range(count):
        m, n, k = (int(x) for x in rng.integers(1, 60, size=3))
        m, n, k = (0 if i == 1 else m), (0 if i == 2 else n), (0 if i == 3 else k)
        a.append(rng.standard_normal((m, k)).astype(dtype))
        b.append(weights(1, k, n, dtype, layout_b)[0])
    return a, b


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("layout_b", ["row", "col"])
def test_gemm_grouped_problems_of_their_own(dtype, layout_b):
    a, b = problems(6, dtype, layout_b)
    c = [rng.standard_normal((x.shape[0], y.shape[1])).astype(dtype) if i % 2 else None
         for i, (x, y) in enumerate(zip(a, b))]
    bias = [rng.standard_normal(y.shape[1]).astype(dtype) if i % 3 else None
            for i, y in enumerate(b)]
    alpha = [0.5 + 0.25 * i for i in range(6)]
    out = [np.full((x.shape[0], y.shape[1]), np.nan, dtype) for x, y in zip(a, b)]
    result = tilegemm.gemm_grouped(a, b, c=c, alpha=alpha, beta=-0.5, bias=bias,
                                   activation="gelu", out=out)
    assert all(r is o for r, o in zip(result, out))
    for i in range(6):
        expected = reference64(a[i], b[i], c=c[i], alpha=alpha[i],
                               beta=-0.5 if c[i] is not None else 0.0, bias=bias[i],
                               activation="gelu")
        assert relative_error(out[i], expected) < TOLERANCE[np.dtype(dtype).name], i
    fresh = tilegemm.gemm_grouped(a, b)  # new results, each of its own shape
    for i in range(6):
        assert fresh[i].shape == (a[i].shape[0], b[i].shape[1])
        assert relative_error(fresh[i], reference64(a[i], b[i])) < \
            TOLERANCE[np.dtype(dtype).name], i
    assert tilegemm.gemm_grouped([], []) == []


def test_gemm_grouped_errors_name_the_problem():
    a, b = problems(3, np.float32)
    out = [np.full((x.shape[0], y.shape[1]), np.nan, np.float32) for x, y in zip(a, b)]
    with pytest.raises(TypeError, match="a list or tuple"):
        tilegemm.gemm_grouped(a[0], b)
    with pytest.raises(ValueError, match="b: 2 arrays, while a has 3"):
        tilegemm.gemm_grouped(a, b[:2])
    with pytest.raises(ValueError, match="alpha: 2 values for 3 problems"):
        tilegemm.gemm_grouped(a, b, alpha=[1.0, 2.0])
    with pytest.raises(ValueError, match=r"problems\[2\]: a, b: each problem is"):
        tilegemm.gemm_grouped(a, b[:2] + [b[2][None]], out=out)
    with pytest.raises(TypeError, match=r"problems\[1\]"):
        tilegemm.gemm_grouped(a, [b[0], b[1].astype(np.float64), b[2]], out=out)
    with pytest.raises(ValueError, match=r"problems\[1\]\.a\.dtype is fp16 but problems\[0\]"):
        tilegemm.gemm_grouped([a[0], a[1].astype(np.float16), a[2]],
                              [b[0], b[1].astype(np.float16), b[2]], out=out)
    assert all(np.isnan(o).all() for o in out)  # nothing was written
