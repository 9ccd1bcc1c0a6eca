"""tilegemm.matmul on NumPy arrays: the CPU backend, every layout, stride, batch and epilogue,
against a float64 reference on fresh random data; bad arguments raise and leave out alone."""

import numpy as np
import pytest

import tilegemm
from conftest import TOLERANCE, reference64, relative_error

pytestmark = pytest.mark.host

rng = np.random.default_rng()


def operand(rows, cols, dtype, layout="row", pad=0, batch=()):
    """A rows x cols matrix (or batch of them) in `layout`, its lines `pad` elements apart more
    than packed: a view into a larger array, as a slice of one would be."""
    if layout == "row":
        full = rng.standard_normal(batch + (rows, cols + pad)).astype(dtype)
        return full[..., :, :cols]
    full = rng.standard_normal(batch + (cols, rows + pad)).astype(dtype)
    return np.swapaxes(full[..., :, :rows], -1, -2)


def poisoned(shape, dtype):
    return np.full(shape, np.nan, dtype=dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("layout_a", ["row", "col"])
@pytest.mark.parametrize("layout_b", ["row", "col"])
def test_layouts_match_the_float64_reference(dtype, layout_a, layout_b):
    m, n, k = rng.integers(1, 90, size=3)
    a = operand(m, k, dtype, layout_a)
    b = operand(k, n, dtype, layout_b)
    d = tilegemm.matmul(a, b)
    assert d.shape == (m, n) and d.dtype == np.dtype(dtype)
    assert relative_error(d, reference64(a, b)) < TOLERANCE[np.dtype(dtype).name]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_the_plain_product_computes_what_the_general_path_does(dtype):
    """matmul(a, b[, out=]) with every other argument at its default goes to the adapter's
    product(); with beta given, down the general path. The same call, the same bits."""
    m, n, k = rng.integers(1, 90, size=3)
    a = operand(m, k, dtype, "col", pad=3, batch=(2,))
    b = operand(k, n, dtype, "row")
    general = tilegemm.matmul(a, b, beta=0.0)
    out = poisoned((2, m, n), dtype)
    assert tilegemm.matmul(a, b, out=out) is out
    assert np.array_equal(tilegemm.matmul(a, b), general) and np.array_equal(out, general)
    assert relative_error(general, reference64(a, b)) < TOLERANCE[np.dtype(dtype).name]


@pytest.mark.parametrize("layout", ["row", "col"])
def test_leading_dimensions_from_strided_views(layout):
    a = operand(37, 29, np.float32, layout, pad=7)
    b = operand(29, 41, np.float32, layout, pad=3)
    out = poisoned((37, 41 + 5), np.float32)[:, :41]  # out itself a strided view
    tilegemm.matmul(a, b, out=out)
    assert relative_error(out, reference64(a, b)) < 1e-5
    info = tilegemm.plan(a, b)["problem"]
    assert info["a"] == layout
    assert info["lda"] == (29 + 7 if layout == "row" else 37 + 7)


@pytest.mark.parametrize("layout", ["row", "col"])
@pytest.mark.parametrize("m, n", [(1, 23), (23, 1), (1, 1)])
def test_a_single_row_or_column_in_a_padded_view(layout, m, n):
    """A 1 x K view of a padded column-major matrix has stride (1, ld) and a K x 1 view of a
    padded row-major one (ld, 1): neither is packed, and both are plain matrices."""
    k = int(rng.integers(1, 40))
    a = operand(m, k, np.float32, layout, pad=5)
    b = operand(k, n, np.float32, "row" if layout == "col" else "col", pad=4)
    out = poisoned((m, n), np.float32)
    tilegemm.matmul(a, b, out=out)
    assert relative_error(out, reference64(a, b)) < 1e-5


def test_tf32x3_keeps_fp32s_accuracy_and_the_plan_says_so():
    # input_precision="tf32x3" (Triton's name): three TF32 products on the GPU's tensor cores; the
    # CPU backend multiplies the float32 values themselves. 16-bit inputs keep their type.
    a, b = operand(45, 70, np.float32, "col"), operand(70, 33, np.float32)
    d = tilegemm.matmul(a, b, input_precision="tf32x3")
    assert relative_error(d, reference64(a, b)) < 1e-5
    assert tilegemm.plan(a, b, input_precision="tf32x3")["problem"]["dtype"] == "tf32x3"
    assert tilegemm.plan(a, b, input_precision="tf32")["problem"]["dtype"] == "tf32"
    assert tilegemm.plan(a, b)["problem"]["dtype"] == "fp32"
    h = operand(20, 30, np.float16)
    assert tilegemm.plan(h, h.T, input_precision="tf32x3")["problem"]["dtype"] == "fp16"


def test_the_columns_next_to_a_strided_out_are_left_alone():
    full = poisoned((20, 30), np.float32)
    full[:, 25:] = 7.0
    a, b = operand(20, 9, np.float32), operand(9, 25, np.float32)
    tilegemm.matmul(a, b, out=full[:, :25])
    assert (full[:, 25:] == 7.0).all()
    assert relative_error(full[:, :25], reference64(a, b)) < 1e-5


@pytest.mark.parametrize("shared", [None, "a", "b"])
def test_batches_and_a_shared_operand(shared):
    batch = (3, 2)
    a = operand(17, 12, np.float32, batch=() if shared == "a" else batch)
    b = operand(12, 19, np.float32, "col", batch=() if shared == "b" else batch)
    d = tilegemm.matmul(a, b)
    assert d.shape == batch + (17, 19)
    assert relative_error(d, reference64(a, b)) < 1e-5
    assert tilegemm.plan(a, b)["problem"]["batch_count"] == 6


@pytest.mark.parametrize("activation", [None, "relu", "leaky_relu", "gelu", "silu"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_epilogues(activation, dtype):
    m, n, k = 33, 47, 21
    a, b = operand(m, k, dtype), operand(k, n, dtype, "col")
    c = operand(m, n, dtype, "col")
    bias = rng.standard_normal(n).astype(np.float32)
    alpha, beta = float(rng.uniform(0.5, 2)), float(rng.uniform(-1, 1))
    d = tilegemm.matmul(a, b, c=c, alpha=alpha, beta=beta, bias=bias, activation=activation,
                        leaky_relu_slope=0.2)
    expected = reference64(a, b, c, alpha, beta, bias, activation, 0.2)
    assert relative_error(d, expected) < TOLERANCE[np.dtype(dtype).name]


def test_c_takes_beta_one_by_default_as_addmm_does():
    a, b, c = operand(8, 5, np.float32), operand(5, 6, np.float32), operand(8, 6, np.float32)
    assert relative_error(tilegemm.matmul(a, b, c=c), reference64(a, b, c, beta=1.0)) < 1e-5


def test_numpy_scalars_and_ints_as_alpha_and_beta():
    # Not Python floats: they take the checks' longer way, and mean the same numbers.
    a, b, c = operand(8, 5, np.float32), operand(5, 6, np.float32), operand(8, 6, np.float32)
    for alpha, beta in ((np.float32(0.5), np.float64(2.0)), (2, 0), (np.int64(3), np.float16(1))):
        d = tilegemm.matmul(a, b, c=c, alpha=alpha, beta=beta)
        assert relative_error(d, reference64(a, b, c, float(alpha), float(beta))) < 1e-5


def test_a_bias_per_batch_entry_and_c_shared_by_the_batch():
    a, b = operand(9, 7, np.float32, batch=(4,)), operand(7, 11, np.float32)
    c = operand(9, 11, np.float32)
    bias = rng.standard_normal((4, 11)).astype(np.float32)
    d = tilegemm.matmul(a, b, c=c, beta=0.5, bias=bias)
    assert relative_error(d, reference64(a, b, c, 1.0, 0.5, bias)) < 1e-5


def test_out_dtype_and_out():
    a, b = operand(16, 8, np.float16), operand(8, 24, np.float16)
    d = tilegemm.matmul(a, b, out_dtype=np.float32)
    assert d.dtype == np.float32
    assert relative_error(d, reference64(a, b)) < 1e-5
    out = poisoned((16, 24), np.float32)
    assert tilegemm.matmul(a, b, out=out) is out
    assert relative_error(out, reference64(a, b)) < 1e-5


def test_k_zero_writes_the_epilogue_alone():
    a, b = np.zeros((5, 0), np.float32), np.zeros((0, 4), np.float32)
    c = operand(5, 4, np.float32)
    d = tilegemm.matmul(a, b, c=c, beta=2.0, activation="relu")
    assert relative_error(d, np.maximum(2.0 * c.astype(np.float64), 0)) < 1e-6


def test_an_empty_batch_returns_an_empty_result():
    a, b = np.zeros((0, 3, 4), np.float32), np.zeros((0, 4, 5), np.float32)
    assert tilegemm.matmul(a, b).shape == (0, 3, 5)
    with pytest.raises(ValueError, match="nothing to plan"):
        tilegemm.plan(a, b)


BAD = [
    # (what, the call's arguments, exception, words the message must contain)
    ("a vector", dict(a=np.ones(4, np.float32)), ValueError, "a: needs 2 or more"),
    ("K differs", dict(b=np.ones((5, 6), np.float32)), ValueError, "b: its shape"),
    ("float64", dict(a=np.ones((3, 4))), TypeError, "a: dtype float64"),
    ("float64 b", dict(b=np.ones((4, 6))), TypeError, "b: dtype float64"),
    ("mixed libraries", dict(b=[[1.0]]), TypeError, "b: a builtins.list"),
    ("nan alpha", dict(alpha=float("nan")), ValueError, "alpha"),
    ("bad activation", dict(activation="tanh"), ValueError, "activation"),
    ("bad alpha", dict(alpha="two"), TypeError, "alpha"),
    ("infinite beta", dict(beta=float("inf"), c=np.ones((3, 6), np.float32)), ValueError, "beta"),
    ("beta without c", dict(beta=1.0), ValueError, "c: beta"),
    ("c's shape", dict(c=np.ones((6,), np.float32)), ValueError, "c: its shape"),
    ("bias's shape", dict(bias=np.ones((5,), np.float32)), ValueError, "bias: its shape"),
    ("bias's stride", dict(bias=np.ones((12,), np.float32)[::2]), ValueError, "bias: its values"),
    ("bad config", dict(config="128x"), ValueError, "config"),
    ("bad backend", dict(backend="tpu"), ValueError, "backend"),
    ("gpu on host arrays", dict(backend="gpu"), ValueError, "backend"),
    ("a GPU kernel on the CPU backend", dict(kernel="sm90"), ValueError, "kernel"),
    ("bad precision", dict(input_precision="fp64"), ValueError, "input_precision"),
    ("out's shape", dict(out_shape=(3, 7)), ValueError, "out: its shape"),
    ("out's dtype", dict(out_dtype=np.float16), ValueError, "out: its dtype"),
    ("out overlaps", dict(out_overlap=True), ValueError, "out"),
    ("batches differ", dict(a=np.ones((2, 3, 4), np.float32), b=np.ones((3, 4, 6), np.float32)),
     ValueError, "a, b: batch dimensions"),
    ("no unit stride", dict(a=np.ones((6, 8), np.float32)[::2, ::2]), ValueError, "a: strides"),
]


@pytest.mark.parametrize("what,args,exception,words", BAD, ids=[x[0] for x in BAD])
def test_bad_arguments_raise_naming_them_and_leave_out_alone(what, args, exception, words):
    args = dict(args)
    a = args.pop("a", np.ones((3, 4), np.float32))
    b = args.pop("b", np.ones((4, 6), np.float32))
    out_shape = args.pop("out_shape", (3, 6))
    if args.pop("out_overlap", False):
        out = np.lib.stride_tricks.as_strided(np.full(8, np.nan, np.float32), (3, 6), (4, 4))
        out = out.copy()
        out = np.lib.stride_tricks.as_strided(out, (2,) + out.shape, (0,) + out.strides)
        a = np.ones((2, 3, 4), np.float32)
    else:
        out = np.full(out_shape, 42.0, np.float32)
    before = out.copy()
    with pytest.raises(exception) as raised:
        tilegemm.matmul(a, b, out=out, **args)
    assert words in str(raised.value)
    np.testing.assert_array_equal(out, before)


def test_read_only_out_is_refused():
    out = np.zeros((3, 6), np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="out: is read-only"):
        tilegemm.matmul(np.ones((3, 4), np.float32), np.ones((4, 6), np.float32), out=out)


def test_plan_says_what_would_run():
    a, b = operand(64, 32, np.float32), operand(32, 48, np.float32)
    info = tilegemm.plan(a, b, config="64x64x16/g4/s1/w4")
    assert info["backend"] == "cpu" and info["config_source"] == "given"
    assert info["config"].startswith("64x64x16/g4")
    assert info["workspace_bytes"] == 0
    assert info["problem"]["m"] == 64 and info["problem"]["k"] == 32


def test_explain_walks_the_seeds_grouped_order():
    e = tilegemm.explain(1024, 768, 128, config="128x64x32/g8/s1/w4", pid=60)
    assert (e["num_pid_m"], e["num_pid_n"], e["num_pid_in_group"]) == (8, 12, 96)
    p = e["program"]
    # Worked by hand from the seeds' formulas: group 0, pid 60 -> pid_m 60 % 8, pid_n 60 // 8.
    assert (p["group_id"], p["first_pid_m"], p["group_size_m"]) == (0, 0, 8)
    assert (p["pid_m"], p["pid_n"]) == (4, 7)
    assert p["rows"] == (512, 640) and p["cols"] == (448, 512) and not p["masked"]
    assert e["order"][4][7] == 60 and e["k_iterations"] == 4
    seen = sorted(pid for row in e["order"] for pid in row)
    assert seen == list(range(e["programs"]))
    with pytest.raises(ValueError, match="pid"):
        tilegemm.explain(64, 64, 64, config="64x64x16/g8/s1/w4", pid=1)


def test_version_and_kernels():
    assert tilegemm.__version__.count(".") == 2
    kernels = tilegemm.available_kernels()
    assert isinstance(kernels, list)
    for k in kernels:
        assert k["name"] and k["configs"] and k["default_config"] in k["configs"]
    assert isinstance(tilegemm.devices(), list)
