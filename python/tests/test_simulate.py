"""Experiment.simulate: equal to `evoc sim` bit for bit; bodies from every source; bad input."""

import json
import math
import subprocess

import numpy as np
import pytest

import evoc
from conftest import SMALL, FAST, set_args


def test_sample_bodies(small):
    bodies = small.sample(3)
    assert len(bodies) == 3
    b = bodies[0]
    assert b.points.shape[1] == 2 and b.springs.shape[1] == 2
    assert b.rest.shape == (b.springs.shape[0],) and b.genome is not None
    again = small.express(b.genome)
    assert np.array_equal(again.points, b.points)


def test_simulate_equals_evoc_sim(small, evoc_cli, tmp_path):
    bodies = small.sample(3, seed=7)
    robots = tmp_path / "robots.json"
    robots.write_text(json.dumps({"robots": [b.to_json() for b in bodies]}))
    out = tmp_path / "out.json"
    subprocess.run(
        [evoc_cli, "sim", str(SMALL), "--robots", str(robots), "--out", str(out)] + set_args(FAST),
        check=True,
    )
    cli = json.loads(out.read_text())["results"]
    res = small.simulate(bodies)
    assert len(res) == 3
    for i, r in enumerate(cli):
        assert res.losses[i] == r["loss"]  # bit for bit
        assert set(res.grads[i]) == set(r["grad"])
        for k, g in r["grad"].items():
            assert np.array_equal(res.grads[i][k], np.asarray(g, dtype=np.float64)), k
    # The same through JSON bodies, and with explicit weights (PARAMS.json).
    again, _ = evoc.bodies_from_json(str(robots), small)
    assert np.array_equal(small.simulate(again).losses, res.losses)
    params = tmp_path / "params.json"
    scaled = [{k: (v * 0.5).tolist() for k, v in p.items()} for p in res.params]
    params.write_text(json.dumps({"params": scaled}))
    subprocess.run(
        [evoc_cli, "sim", str(SMALL), "--robots", str(robots), "--params", str(params), "--out", str(out)]
        + set_args(FAST),
        check=True,
    )
    cli = json.loads(out.read_text())["results"]
    mine = small.simulate(bodies, [{k: np.asarray(v) for k, v in p.items()} for p in scaled])
    assert [r["loss"] for r in cli] == list(mine.losses)


def test_iterations_and_trajectory(small):
    body = small.sample(1)[0]
    r = small.simulate(body, steps=20, iterations=2, trajectory=True)
    assert r.curves[0].shape == (3,)
    assert r.trajectory[0].shape == (20, body.points.shape[0], 2)
    assert np.allclose(r.trajectory[0][0], body.points)
    t = small.train(body, iterations=2, steps=20)
    assert t["losses"].shape == (3,) and set(t["params"]) == set(r.grads[0])


def test_body_from_arrays(small):
    b0 = small.sample(1)[0]
    b = evoc.Body(b0.points, b0.springs, b0.rest, b0.stiffness, b0.actuation)
    assert small.simulate(b).losses[0] == small.simulate(b0).losses[0]


def test_bad_input_raises(small, tmp_path):
    b0 = small.sample(1)[0]
    with pytest.raises(ValueError):
        evoc.Body(b0.points[:, :1], b0.springs, b0.rest, b0.stiffness, b0.actuation)
    with pytest.raises(ValueError):
        evoc.Body(b0.points, b0.springs, b0.rest[:-1], b0.stiffness, b0.actuation)
    with pytest.raises(TypeError):
        evoc.Body(b0.points, b0.springs.astype(float), b0.rest, b0.stiffness, b0.actuation)
    pts = b0.points.copy()
    pts[0, 0] = math.nan
    with pytest.raises(ValueError, match="non-finite"):
        evoc.Body(pts, b0.springs, b0.rest, b0.stiffness, b0.actuation)
    bad = b0.springs.copy()
    bad[0, 0] = 10**6
    with pytest.raises(ValueError):
        evoc.Body(b0.points, bad, b0.rest, b0.stiffness, b0.actuation)
    with pytest.raises(ValueError):
        evoc.bodies_from_json('{"robots": [{"points": [[0, 0]], "springs": [[0, 5, 1, 1, 0]]}]}')
    with pytest.raises(ValueError):
        evoc.bodies_from_json("{not json")
    with pytest.raises(FileNotFoundError):
        evoc.bodies_from_json(str(tmp_path / "missing.json"))
    p = small.simulate(b0).params[0]
    k = sorted(p)[0]
    nan = dict(p)
    nan[k] = p[k] * math.nan
    with pytest.raises(ValueError, match="NaN"):
        small.simulate(b0, nan)
    wrong = dict(p)
    wrong[k] = np.zeros(p[k].shape + (2,))
    with pytest.raises(ValueError):
        small.simulate(b0, wrong)
    with pytest.raises(TypeError):
        small.simulate(["not a body"])


def test_body_gradients_equal_finite_differences(small):
    """simulate(body_grads=True): d loss / d the springs' rest lengths,
    stiffness and actuation, against central differences with a step
    relative to each value, and the interpreter's to 1e-12."""
    import evoc

    b = small.sample(1, seed=5)[0]
    ref = small.simulate(b, steps=60, body_grads=True)
    g = ref.body_grads[0]
    assert set(g) >= {"spring.rest", "spring.stiffness", "spring.actuation"}
    # The loss and parameter gradients are simulate's own.
    plain = small.simulate(b, ref.params[0], steps=60)
    assert plain.losses[0] == ref.losses[0]
    for attr in ("rest", "stiffness", "actuation"):
        got = g["spring." + attr]
        assert got.shape == b.rest.shape
        scale = np.abs(got).max()
        assert scale > 0, attr
        for s in range(0, len(b.rest), max(1, len(b.rest) // 5)):
            vals = {k: getattr(b, k).copy() for k in ("rest", "stiffness", "actuation")}
            h = 1e-6 * max(1.0, abs(vals[attr][s]))
            losses = []
            for sign in (1, -1):
                v = {k: a.copy() for k, a in vals.items()}
                v[attr][s] += sign * h
                body = evoc.Body(b.points, b.springs, v["rest"], v["stiffness"], v["actuation"])
                losses.append(small.simulate(body, ref.params[0], steps=60).losses[0])
            fd = (losses[0] - losses[1]) / (2 * h)
            assert abs(fd - got[s]) <= 1e-5 * scale, (attr, s, fd, got[s])
    interp = evoc.load(SMALL, set=FAST, backend="interp")
    other = interp.simulate(b, ref.params[0], steps=60, body_grads=True).body_grads[0]
    for k, v in g.items():
        assert np.abs(other[k] - v).max() <= 1e-12 * max(np.abs(v).max(), 1e-300), k
    with pytest.raises(ValueError, match="body_grads needs iterations = 0"):
        small.simulate(b, steps=60, iterations=1, body_grads=True)
