"""evoc's rollout loss as a PyTorch autograd function (docs/python.md).

The forward pass is evoc's rollout (``Experiment.simulate``: the compiled
physics, controller and loss), the backward pass evoc's adjoint: the
gradient simulate computes alongside the loss, scaled by the incoming
gradient. Batched over robots: every parameter tensor has a leading
dimension N, one row per body (the bodies must share parameter shapes, e.g.
copies of one design or a fixed body). Besides the controller's parameters,
the initial positions and the springs' rest lengths, stiffness and
actuation can be inputs, and differentiable.

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

from . import Body, Experiment
from ._batch import BODY_INPUTS
from ._batch import check_shapes as _check_shapes
from ._batch import simulate_batch as _simulate_batch


def _numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().to("cpu", torch.float64).numpy()


class RolloutLoss(torch.autograd.Function):
    """forward(experiment, bodies, names, steps, *tensors) -> losses (N,);
    names[i] names tensors[i]: a parameter field, or "input:" and a body
    input (points, rest, stiffness, actuation)."""

    @staticmethod
    def forward(ctx, experiment: Experiment, bodies: Sequence[Body], names: List[str], steps, *tensors):
        params = {k: _numpy(t) for k, t in zip(names, tensors) if not k.startswith("input:")}
        inputs = {k[6:]: _numpy(t) for k, t in zip(names, tensors) if k.startswith("input:")}
        losses, grads, igrads = _simulate_batch(experiment, bodies, params, inputs, steps)
        saved = [
            torch.from_numpy(igrads[k[6:]] if k.startswith("input:") else grads[k]).to(t.dtype)
            for k, t in zip(names, tensors)
        ]
        ctx.save_for_backward(*saved)
        dtype = tensors[0].dtype if tensors else torch.float64
        return torch.from_numpy(losses).to(dtype)

    @staticmethod
    def backward(ctx, grad_out):
        out = []
        for g in ctx.saved_tensors:
            scale = grad_out.reshape((-1,) + (1,) * (g.dim() - 1)).to(g.dtype)
            out.append(scale * g)
        return (None, None, None, None, *out)


def rollout_loss(
    experiment: Experiment,
    bodies: Sequence[Body],
    params: Mapping[str, torch.Tensor],
    *,
    points: Optional[torch.Tensor] = None,
    rest: Optional[torch.Tensor] = None,
    stiffness: Optional[torch.Tensor] = None,
    actuation: Optional[torch.Tensor] = None,
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
        the points after the lift onto the ground).
      rest, stiffness, actuation: optional (N, S) tensors replacing the
        springs' rest lengths, stiffness and actuation (differentiable: the
        first use compiles the experiment once more, with body gradients).
        Bodies rebuilt from points or springs keep their springs' ends but
        not their named parts.
      steps: states per rollout (default world.steps).

    Returns:
      losses: tensor (N,), of params' dtype. Its backward pass is evoc's
      adjoint (d loss_i / d params[field][i], and d loss_i / d each input's
      row i)."""
    names = sorted(params)
    tensors = [params[k] for k in names]
    given = dict(points=points, rest=rest, stiffness=stiffness, actuation=actuation)
    for k in BODY_INPUTS:
        if given[k] is not None:
            names.append("input:" + k)
            tensors.append(given[k])
    return RolloutLoss.apply(experiment, list(bodies), names, steps, *tensors)


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


def spring_tensors(
    bodies: Sequence[Body], *, dtype=torch.float64, requires_grad: bool = True
) -> Dict[str, torch.Tensor]:
    """The bodies' rest lengths, stiffness and actuation stacked: {"rest":
    (N, S), "stiffness": (N, S), "actuation": (N, S)}, to pass to
    rollout_loss(**springs) and optimise."""
    out = {}
    for k in ("rest", "stiffness", "actuation"):
        t = torch.from_numpy(np.stack([getattr(b, k) for b in bodies])).to(dtype)
        out[k] = t.requires_grad_(requires_grad)
    return out
