import numpy as np
import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "host: needs no GPU (CI runs these)")
    config.addinivalue_line("markers", "gpu: needs a CUDA device; skips without one")


def activation64(z, activation, slope=0.01):
    """The epilogue's activations in float64, written out from their definitions."""
    if activation is None:
        return z
    if activation == "relu":
        return np.maximum(z, 0.0)
    if activation == "leaky_relu":
        return np.where(z > 0, z, slope * z)
    if activation == "gelu":  # the tanh form
        return 0.5 * z * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (z + 0.044715 * z ** 3)))
    if activation == "silu":
        return z / (1.0 + np.exp(-z))
    raise ValueError(activation)


def reference64(a, b, c=None, alpha=1.0, beta=0.0, bias=None, activation=None, slope=0.01):
    """D in float64 from float64 copies of the inputs (numpy arrays)."""
    z = alpha * np.matmul(a.astype(np.float64), b.astype(np.float64))
    if c is not None:
        z = z + beta * c.astype(np.float64)
    if bias is not None:
        bias64 = bias.astype(np.float64)
        z = z + (bias64 if bias64.ndim == 1 else bias64[..., None, :])
    return activation64(z, activation, slope)


def relative_error(result, expected):
    result = np.asarray(result, dtype=np.float64)
    assert not np.isnan(result).any(), "an element was left unwritten (NaN) or is NaN"
    scale = np.linalg.norm(expected)
    return np.linalg.norm(result - expected) / (scale if scale > 0 else 1.0)


# Relative Frobenius error allowed, by the output's dtype name.
TOLERANCE = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.2e-2}
