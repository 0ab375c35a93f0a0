"""evoc's rollout loss as a PyTorch autograd function (docs/python.md).

The forward pass is evoc's rollout (``Experiment.simulate``: the compiled
physics, controller and loss), the backward pass evoc's adjoint: the
gradient simulate computes alongside the loss, scaled by the incoming
gradient. Batched over robots: every parameter tensor has a leading
dimension N, one row per body (the bodies must share parameter shapes, e.g.
copies of one design or a fixed body).

    import torch, evoc, evoc.torch
    exp = evoc.load("examples/eldir_small.evo", set={"world.steps": 100})
    bodies = exp.sample(2)
    params = evoc.torch.init_params(exp, bodies)       # {field: (N, ...) f64, requires_grad}
    opt = torch.optim.Adam(params.values(), lr=1e-2)
    for _ in range(10):
        opt.zero_grad()
        loss = evoc.torch.rollout_loss(exp, bodies, params).sum()
        loss.backward()
        opt.step()
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence

import numpy as np
import torch

from . import Body, EvocError, Experiment
from ._batch import check_shapes as _check_shapes


def _with_points(bodies: Sequence[Body], points: np.ndarray) -> List[Body]:
    out = []
    for i, b in enumerate(bodies):
        if points[i].shape != b.points.shape:
            raise ValueError(f"points[{i}] has shape {points[i].shape}, body {i} {b.points.shape}")
        out.append(Body(points[i], b.springs, b.rest, b.stiffness, b.actuation))
    return out


class RolloutLoss(torch.autograd.Function):
    """forward(experiment, bodies, names, steps, points, *tensors) -> losses (N,)."""

    @staticmethod
    def forward(ctx, experiment: Experiment, bodies: Sequence[Body], names: List[str], steps, points, *tensors):
        n = len(bodies)
        for name, t in zip(names, tensors):
            if t.dim() < 1 or t.shape[0] != n:
                raise ValueError(f"parameter '{name}': shape {tuple(t.shape)} needs a leading dimension of {n} (one row per body)")
        arrays = [t.detach().to("cpu", torch.float64).numpy() for t in tensors]
        params = [{name: a[i] for name, a in zip(names, arrays)} for i in range(n)]
        if points is not None:
            if points.dim() != 3 or points.shape[0] != n:
                raise ValueError(f"points: shape {tuple(points.shape)}, expected (N={n}, P, dim)")
            bodies = _with_points(bodies, points.detach().to("cpu", torch.float64).numpy())
        res = experiment.simulate(list(bodies), params, steps=steps, point_grads=points is not None)
        if not res.valid.all():
            bad = int(np.flatnonzero(~res.valid)[0])
            raise EvocError(f"body {bad}: {res.errors[bad]}")
        grads = [torch.from_numpy(np.stack([g[name] for g in res.grads])).to(t.dtype) for name, t in zip(names, tensors)]
        ctx.has_points = points is not None
        if points is not None:
            grads.append(torch.from_numpy(np.stack(res.point_grads)).to(points.dtype))
        ctx.save_for_backward(*grads)
        dtype = tensors[0].dtype if tensors else torch.float64
        return torch.from_numpy(res.losses).to(dtype)

    @staticmethod
    def backward(ctx, grad_out):
        out = []
        for g in ctx.saved_tensors:
            scale = grad_out.reshape((-1,) + (1,) * (g.dim() - 1)).to(g.dtype)
            out.append(scale * g)
        point_grad = out.pop() if ctx.has_points else None
        return (None, None, None, None, point_grad, *out)


def rollout_loss(
    experiment: Experiment,
    bodies: Sequence[Body],
    params: Mapping[str, torch.Tensor],
    *,
    points: Optional[torch.Tensor] = None,
    steps: Optional[int] = None,
) -> torch.Tensor:
    """The loss of each body under its controller parameters, differentiable.

    Args:
      experiment: from evoc.load.
      bodies: N bodies.
      params: {field: tensor (N, *shape)}: every controller parameter of the
        experiment (init_params gives them), one row per body.
      points: optional (N, P, dim) tensor of initial positions replacing
        the bodies' own (differentiable too: d loss / d initial positions,
        the points after the lift onto the ground; bodies so rebuilt keep
        their springs but not their named parts).
      steps: states per rollout (default world.steps).

    Returns:
      losses: tensor (N,), of params' dtype. Its backward pass is evoc's
      adjoint (d loss_i / d params[field][i], and d loss_i / d points[i])."""
    names = sorted(params)
    return RolloutLoss.apply(experiment, list(bodies), names, steps, points, *[params[k] for k in names])


def init_params(
    experiment: Experiment, bodies: Sequence[Body], *, dtype=torch.float64, requires_grad: bool = True
) -> Dict[str, torch.Tensor]:
    """The controllers' initial weights (drawn from evolve.seed, as evoc sim
    draws them) stacked over bodies: {field: (N, *shape)}."""
    res = experiment.simulate(list(bodies), steps=2)
    _check_shapes(res.params)
    out = {}
    for k in sorted(res.params[0]):
        t = torch.from_numpy(np.stack([p[k] for p in res.params])).to(dtype)
        out[k] = t.requires_grad_(requires_grad)
    return out

