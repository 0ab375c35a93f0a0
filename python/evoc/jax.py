"""evoc's rollout loss as a JAX function with a custom VJP (docs/python.md).

The forward pass runs evoc's rollout on the host through
``jax.pure_callback``; the VJP is evoc's adjoint (the gradient simulate
computes with the loss). Batched over robots like evoc.torch: every
parameter array has a leading dimension N. Use float64
(``jax.config.update("jax_enable_x64", True)``) to get evoc's f64 values.

    import jax, evoc, evoc.jax
    f = evoc.jax.rollout_loss(exp, bodies)         # params -> losses (N,)
    g = jax.grad(lambda p: f(p).sum())(params)     # params: {field: (N, ...)}
"""

from __future__ import annotations

from typing import Callable, Dict, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from . import Body, EvocError, Experiment
from ._batch import check_shapes as _check_shapes


def rollout_loss(
    experiment: Experiment, bodies: Sequence[Body], *, steps: Optional[int] = None, points: bool = False
) -> Callable[..., jax.Array]:
    """A function params -> losses (N,), differentiable with jax.grad / jax.vjp;
    with points=True, (params, points) -> losses, also differentiable in the
    initial positions points (N, P, dim) (the points after the lift onto the
    ground; bodies so rebuilt keep their springs but not their named parts).

    params: {field: array (N, *shape)}, every controller parameter, one row
    per body. The rollout runs on the host (jax.pure_callback)."""
    bodies = list(bodies)
    n = len(bodies)

    def host(params, pts):
        names = sorted(params)
        arrays = {k: np.asarray(params[k], dtype=np.float64) for k in names}
        for k, a in arrays.items():
            if a.ndim < 1 or a.shape[0] != n:
                raise ValueError(f"parameter '{k}': shape {a.shape} needs a leading dimension of {n}")
        bs = bodies
        if pts is not None:
            pts = np.asarray(pts, dtype=np.float64)
            bs = [Body(pts[i], b.springs, b.rest, b.stiffness, b.actuation) for i, b in enumerate(bodies)]
        res = experiment.simulate(
            bs, [{k: a[i] for k, a in arrays.items()} for i in range(n)], steps=steps, point_grads=pts is not None
        )
        if not res.valid.all():
            bad = int(np.flatnonzero(~res.valid)[0])
            raise EvocError(f"body {bad}: {res.errors[bad]}")
        dtype = np.asarray(params[names[0]]).dtype
        grads = {k: np.stack([g[k] for g in res.grads]).astype(dtype) for k in names}
        if pts is None:
            return res.losses.astype(dtype), grads
        return res.losses.astype(dtype), grads, np.stack(res.point_grads).astype(dtype)

    def call(params, pts=None):
        dtype = jnp.result_type(*params.values())
        shapes = [
            jax.ShapeDtypeStruct((n,), dtype),
            {k: jax.ShapeDtypeStruct(jnp.shape(v), dtype) for k, v in params.items()},
        ]
        if pts is None:
            return jax.pure_callback(lambda p: host(p, None), tuple(shapes), params)
        shapes.append(jax.ShapeDtypeStruct(jnp.shape(pts), dtype))
        return jax.pure_callback(host, tuple(shapes), params, pts)

    def scale(g, v):
        return g.reshape((-1,) + (1,) * (v.ndim - 1)) * v

    if points:

        @jax.custom_vjp
        def fp(params, pts):
            return call(params, pts)[0]

        def fwd_p(params, pts):
            losses, grads, pgrad = call(params, pts)
            return losses, (grads, pgrad)

        def bwd_p(res, g):
            grads, pgrad = res
            return ({k: scale(g, v) for k, v in grads.items()}, scale(g, pgrad))

        fp.defvjp(fwd_p, bwd_p)
        return fp

    @jax.custom_vjp
    def f(params):
        return call(params)[0]

    def fwd(params):
        losses, grads = call(params)
        return losses, grads

    def bwd(grads, g):
        return ({k: scale(g, v) for k, v in grads.items()},)

    f.defvjp(fwd, bwd)
    return f


def init_params(experiment: Experiment, bodies: Sequence[Body]) -> Dict[str, jax.Array]:
    """The controllers' initial weights stacked over bodies: {field: (N, *shape)}."""
    res = experiment.simulate(list(bodies), steps=2)
    _check_shapes(res.params)
    return {k: jnp.asarray(np.stack([p[k] for p in res.params])) for k in sorted(res.params[0])}

