"""Particle bodies through Python (docs/mpm.md): Fang et al.'s robot_mpm_1 on
the moving window loads, simulates and differentiates as the independent
reference does (tests/reference/mpm_fang_reference.py), and gives particle
trajectories; the example's body is its particles with their actuators."""

import json

import numpy as np

import evoc
from conftest import ROOT

REF = ROOT / "tests" / "data" / "reference_mpm_fang"


def test_robot_mpm_1_equals_the_reference():
    e = evoc.load(str(REF / "open_loop.evo"), set={"world.steps": 64})
    (body,) = e.sample(1)
    assert body.points.shape == (320, 2) and body.springs.shape[0] == 0
    params = json.loads((REF / "params_open_loop_seed1.json").read_text())
    ref = json.loads((REF / "open_loop_T64.json").read_text())
    r = e.simulate(body, params, trajectory=True)
    assert r.valid[0]
    assert abs(r.losses[0] - ref["loss"]) <= 1e-9 * abs(ref["loss"])
    g = r.grads[0]
    scale = max(np.abs(np.asarray(ref["grad"][k])).max() for k in ("w1", "b1"))
    for k in ("w1", "b1"):
        assert np.abs(np.asarray(g[k]) - np.asarray(ref["grad"][k])).max() <= 1e-7 * scale
    traj = np.asarray(r.trajectory)
    assert traj.shape == (1, 64, 320, 2)
    assert np.array_equal(traj[0, 0], body.points)
    # The particles fall onto the floor: the lowest ends lower than it began.
    assert traj[0, -1, :, 1].min() < traj[0, 0, :, 1].min()
