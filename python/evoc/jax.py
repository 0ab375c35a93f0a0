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

from . import Body, Experiment
from ._batch import SPRING_INPUTS
from ._batch import check_shapes as _check_shapes
from ._batch import simulate_batch as _simulate_batch


def rollout_loss(
    experiment: Experiment,
    bodies: Sequence[Body],
    *,
    steps: Optional[int] = None,
    points: bool = False,
    springs: bool = False,
) -> Callable[..., jax.Array]:
    """A function params -> losses (N,), differentiable with jax.grad / jax.vjp.

    params: {field: array (N, *shape)}, every controller parameter, one row
    per body. With points=True the function is (params, points) -> losses,
    also differentiable in the initial positions points (N, P, dim) (the
    points after the lift onto the ground); with springs=True it takes a
    dict springs {"rest" | "stiffness" | "actuation": (N, S)} after them,
    (params, [points,] springs) -> losses, differentiable in those (the
    first call compiles the experiment once more, with body gradients).
    Bodies rebuilt from points or springs keep their springs' ends but not
    their named parts. The rollout runs on the host (jax.pure_callback)."""
    bodies = list(bodies)

    def host(params, inputs):
        dtype = np.asarray(next(iter(params.values()))).dtype
        losses, grads, igrads = _simulate_batch(
            experiment,
            bodies,
            {k: np.asarray(v, dtype=np.float64) for k, v in params.items()},
            {k: np.asarray(v, dtype=np.float64) for k, v in inputs.items()},
            steps,
        )
        cast = lambda d: {k: v.astype(dtype) for k, v in d.items()}
        return losses.astype(dtype), cast(grads), cast(igrads)

    def call(params, inputs):
        dtype = jnp.result_type(*params.values())
        like = lambda d: {k: jax.ShapeDtypeStruct(jnp.shape(v), dtype) for k, v in d.items()}
        shapes = (jax.ShapeDtypeStruct((len(bodies),), dtype), like(params), like(inputs))
        return jax.pure_callback(host, shapes, params, inputs)

    def scale(g, v):
        return g.reshape((-1,) + (1,) * (v.ndim - 1)) * v

    @jax.custom_vjp
    def f(params, inputs):
        return call(params, inputs)[0]

    def fwd(params, inputs):
        losses, grads, igrads = call(params, inputs)
        return losses, (grads, igrads)

    def bwd(res, g):
        grads, igrads = res
        return ({k: scale(g, v) for k, v in grads.items()}, {k: scale(g, v) for k, v in igrads.items()})

    f.defvjp(fwd, bwd)

    def unpack(args):
        args = list(args)
        want = int(points) + int(springs)
        if len(args) != want:
            raise TypeError(f"the function takes params and {want} more argument(s), got {len(args)}")
        inputs = {}
        if points:
            inputs["points"] = args.pop(0)
        if springs:
            sp = args.pop(0)
            for k in sp:
                if k not in SPRING_INPUTS:
                    raise ValueError(f"springs: '{k}' is not one of {', '.join(SPRING_INPUTS)}")
            inputs.update(sp)
        return inputs

    return lambda params, *args: f(params, unpack(args))


def init_params(experiment: Experiment, bodies: Sequence[Body]) -> Dict[str, jax.Array]:
    """The controllers' initial weights stacked over bodies: {field: (N, *shape)}."""
    res = experiment.simulate(list(bodies), steps=2)
    _check_shapes(res.params)
    return {k: jnp.asarray(np.stack([p[k] for p in res.params])) for k in sorted(res.params[0])}
