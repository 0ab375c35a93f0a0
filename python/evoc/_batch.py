"""What the PyTorch and JAX wrappers share: checks on a batch of bodies, and
the host call that runs a batch through ``Experiment.simulate`` with the
gradients the wrappers return (docs/python.md)."""

from __future__ import annotations

from typing import Dict, List, Mapping, Sequence, Tuple

import numpy as np

from . import Body, EvocError, Experiment

#: The body inputs a wrapper can differentiate besides the parameters: the
#: initial positions (N, P, dim) and the springs' values (N, S).
SPRING_INPUTS = ("rest", "stiffness", "actuation")
BODY_INPUTS = ("points",) + SPRING_INPUTS


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


def rebuilt(bodies: Sequence[Body], inputs: Mapping[str, np.ndarray]) -> List[Body]:
    """The bodies with the given inputs (BODY_INPUTS, each (N, ...)) in
    place of their own; a body so rebuilt keeps its springs but not its
    named parts."""
    n = len(bodies)
    for k, a in inputs.items():
        if k not in BODY_INPUTS:
            raise ValueError(f"'{k}' is not a body input (known: {', '.join(BODY_INPUTS)})")
        if a.ndim < 1 or a.shape[0] != n:
            raise ValueError(f"{k}: shape {a.shape} needs a leading dimension of {n} (one row per body)")
    if not inputs:
        return list(bodies)
    out = []
    for i, b in enumerate(bodies):
        vals = {}
        for k in BODY_INPUTS:
            own = getattr(b, k)
            v = inputs[k][i] if k in inputs else own
            if v.shape != own.shape:
                raise ValueError(f"{k}[{i}] has shape {v.shape}, body {i}'s {own.shape}")
            vals[k] = v
        out.append(Body(vals["points"], b.springs, vals["rest"], vals["stiffness"], vals["actuation"]))
    return out


def simulate_batch(
    experiment: Experiment,
    bodies: Sequence[Body],
    params: Mapping[str, np.ndarray],
    inputs: Mapping[str, np.ndarray],
    steps,
) -> Tuple[np.ndarray, Dict[str, np.ndarray], Dict[str, np.ndarray]]:
    """One forward and backward pass of N bodies: (losses (N,), d loss / d
    params {field: (N, ...)}, d loss / d inputs {input: (N, ...)}). params
    and inputs are float64 arrays with a leading dimension N."""
    n = len(bodies)
    for k, a in params.items():
        if a.ndim < 1 or a.shape[0] != n:
            raise ValueError(f"parameter '{k}': shape {a.shape} needs a leading dimension of {n} (one row per body)")
    bs = rebuilt(bodies, inputs)
    res = experiment.simulate(
        bs,
        [{k: a[i] for k, a in params.items()} for i in range(n)],
        steps=steps,
        point_grads="points" in inputs,
        body_grads=any(k in inputs for k in SPRING_INPUTS),
    )
    if not res.valid.all():
        bad = int(np.flatnonzero(~res.valid)[0])
        raise EvocError(f"body {bad}: {res.errors[bad]}")
    grads = {k: np.stack([g[k] for g in res.grads]) for k in params}
    igrads = {}
    for k in inputs:
        if k == "points":
            igrads[k] = np.stack(res.point_grads)
        else:
            igrads[k] = np.stack([g["spring." + k] for g in res.body_grads])
    return res.losses, grads, igrads
