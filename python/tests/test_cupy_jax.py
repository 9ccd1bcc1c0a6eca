"""CuPy and JAX arrays in and out through DLPack. Skipped without them or a CUDA device."""

import numpy as np
import pytest

import tilegemm
from conftest import TOLERANCE, reference64, relative_error

pytestmark = pytest.mark.gpu


def test_cupy_in_and_out():
    cp = pytest.importorskip("cupy")
    if cp.cuda.runtime.getDeviceCount() == 0:
        pytest.skip("no CUDA device")
    a = cp.random.standard_normal((300, 200)).astype(cp.float16)
    b = cp.random.standard_normal((500, 200)).astype(cp.float16).T  # column-major view
    bias = cp.random.standard_normal(500).astype(cp.float32)
    d = tilegemm.matmul(a, b, bias=bias, activation="relu")
    assert isinstance(d, cp.ndarray) and d.dtype == cp.float16
    expected = reference64(cp.asnumpy(a), cp.asnumpy(b), bias=cp.asnumpy(bias),
                           activation="relu")
    assert relative_error(cp.asnumpy(d), expected) < TOLERANCE["float16"]
    out = cp.full((300, 500), cp.nan, dtype=cp.float32)
    tilegemm.matmul(a, b, out=out)
    assert relative_error(cp.asnumpy(out), reference64(cp.asnumpy(a), cp.asnumpy(b))) < 1e-5


def test_jax_in_and_out():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX sees no GPU")
    key_a, key_b = jax.random.split(jax.random.PRNGKey(np.random.randint(1 << 30)))
    a = jax.random.normal(key_a, (2, 128, 96), dtype=jnp.bfloat16)
    b = jax.random.normal(key_b, (96, 160), dtype=jnp.bfloat16)
    d = tilegemm.matmul(a, b)
    assert isinstance(d, jax.Array) and d.dtype == jnp.bfloat16 and d.shape == (2, 128, 160)
    expected = reference64(np.asarray(a, np.float32), np.asarray(b, np.float32))
    assert relative_error(np.asarray(d, np.float32), expected) < TOLERANCE["bfloat16"]
    with pytest.raises(ValueError, match="out: JAX arrays are immutable"):
        tilegemm.matmul(a, b, out=d)
