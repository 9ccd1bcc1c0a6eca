"""torch.nn layers whose product is tilegemm's."""

import torch

from . import matmul
from ._arrays import resolve_activation


class Linear(torch.nn.Linear):
    """torch.nn.Linear, with the bias and an activation fused into tilegemm's epilogue:
    ``activation(x @ weight.T + bias)``. The weight's transpose is a view (column-major to
    tilegemm): no copy. ``activation``: None, "relu", "leaky_relu", "gelu" (tanh) or "silu"."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None, *,
                 activation=None, config=None):
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        resolve_activation(activation)
        self.activation = activation
        self.config = config

    def forward(self, x):
        # Every leading dimension as rows of one product: one GEMM, not a batch of small ones.
        y = matmul(x.reshape(-1, self.in_features), self.weight.t(), bias=self.bias,
                   activation=self.activation, config=self.config)
        return y.reshape(*x.shape[:-1], self.out_features)

    def extra_repr(self):
        return super().extra_repr() + f", activation={self.activation}"
