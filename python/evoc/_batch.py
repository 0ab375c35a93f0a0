"""What the PyTorch and JAX wrappers share: checks on a batch of bodies."""

from __future__ import annotations


def check_shapes(params):
    """Raises ValueError unless every body's parameters have body 0's shapes
    (a batch is one array per parameter, with a leading body dimension)."""
    for i, p in enumerate(params[1:], 1):
        for k, v in p.items():
            if v.shape != params[0][k].shape:
                raise ValueError(
                    f"body {i}'s parameter '{k}' has shape {v.shape}, body 0's {params[0][k].shape}: "
                    "batched bodies must share the controller's shapes (same number of points and springs)"
                )
