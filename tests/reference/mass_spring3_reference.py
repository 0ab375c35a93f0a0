#!/usr/bin/env python3
"""Independent reference implementation of evoc's 3D mass-spring physics, in
PyTorch with float64 and automatic differentiation: the ELDiR laws of
docs/evolution.md ("ELDiR simulation step") in 3D (gravity and the ground on
z, both contact models with the plane's normal (0, 0, 1)) and the 3D physics
of Fang et al. 2022 in docs/multitask.md ("Simulation": dashpot, 3D contact
with horizontal friction), driven by ELDiR's MLP controller and scored by
ELDiR's displacement loss along x.

Written from those two docs/ sections only, not from evoc's sources. It is a
test-data generator: nothing in the build or in CI needs Python or torch.

    mass_spring3_reference.py sim --robots R.json --params P.json --steps T \\
        --model {noslip,friction,fang} --out OUT.json
        -> {"results": [{"loss": L, "grad": {"w1", "b1", "w2", "b2"}}, ...]}

    mass_spring3_reference.py gen --seed S --out-robots R.json --out-params P.json \\
        --spec CELLS:STIFFNESS [CELLS:STIFFNESS ...]
        random bodies of CELLS cube cells (grown face to face on a grid,
        random actuation per spring) and random non-zero controller
        parameters.

    mass_spring3_reference.py check --expected E.json --got G.json
        compares two result files: loss relative error and gradient error
        relative to the largest expected entry.

ROBOTS.json / PARAMS.json are exactly the formats `evoc sim` reads (3D points).
"""
import argparse
import json
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The controller, the ELDiR spring law, parameters and result files are
# eldir_reference.py's.
import eldir_reference as ref2  # noqa: E402
from eldir_reference import compare, write_results  # noqa: E402,F401

# ---------------------------------------------------------------------------
# The worlds. ELDiR's (docs/evolution.md) in 3D; Fang's 3D world (docs/multitask.md).
DT = 0.004
GROUND = 0.1
HIDDEN = 32
N_SINES = 10
WORLDS = {
    # model: (gravity, damping, dashpot, friction coefficient)
    "noslip": (-4.8, 15.0, 0.0, 1.0),
    "friction": (-4.8, 15.0, 0.0, 1.0),
    "fang": (-1.8, 0.0, 0.1, 0.4),
}


# ---------------------------------------------------------------------------
# Simulation (torch, f64, autograd)

def rollout_loss(robot, params, steps, model):
    """Loss of one robot's rollout of `steps` states; params are leaf tensors."""
    import torch
    f64 = torch.float64
    gravity, damping, zeta, mu = WORLDS[model]
    pts, a, b, rest, stiff, actu = ref2.robot_tensors(robot)
    n = pts.shape[0]

    # Initial placement: lift the whole body so that no point is below ground.
    lowest = float(pts[:, 2].min())
    if lowest < GROUND:
        pts = pts + torch.tensor([0.0, 0.0, GROUND - lowest], dtype=f64)

    x = pts.clone()
    v = torch.zeros_like(x)
    x0 = x
    phases = torch.tensor([2 * math.pi * j / N_SINES for j in range(N_SINES)], dtype=f64)
    ones2 = torch.ones(2, dtype=f64)
    decay = math.exp(-DT * damping)
    grav = torch.tensor([0.0, 0.0, DT * gravity], dtype=f64)
    zero = torch.zeros((), dtype=f64)
    up = torch.tensor([0.0, 0.0, 1.0], dtype=f64)

    for t in range(1, steps):
        act = ref2.controller_act(x, v, t, params, phases, ones2)
        if model == "fang":
            # docs/multitask.md: L = sqrt(d.d + 1e-8) + 1e-4, actuation clamped,
            # plus the dashpot zeta ((v_a - v_b) . u) u, u = d / |d|.
            d = x[a] - x[b]
            L = torch.sqrt((d * d).sum(dim=1) + 1e-8) + 1e-4
            target = rest * (1.0 + actu * torch.clamp(act, -1.0, 1.0))
            u = d / torch.sqrt((d * d).sum(dim=1)).unsqueeze(1)
            rel = ((v[a] - v[b]) * u).sum(dim=1)
            imp = (DT * (L - target) * stiff / L).unsqueeze(1) * d + (zeta * rel).unsqueeze(1) * u
            vinc = torch.zeros_like(v).index_add(0, a, -imp).index_add(0, b, imp)
        else:
            vinc = ref2.spring_velocity_change(x, v, a, b, rest, stiff, actu, act)
        # integrate
        v1 = decay * v + grav + vinc
        xn = x + DT * v1
        xz, vz = x[:, 2], v1[:, 2]
        if model in ("noslip", "fang"):
            hit = (xn[:, 2] < GROUND) & (vz < -1e-4)
            vz_safe = torch.where(hit, vz, -torch.ones_like(vz))
            toi = (-(xz - GROUND) / vz_safe).unsqueeze(1)
            if model == "noslip":
                v2 = torch.zeros_like(v1)
                xc = x + toi * v1
            else:
                # vertical part dropped; each horizontal component moved
                # toward 0 by mu |v_z| without crossing 0
                by = mu * -vz
                def toward0(w):
                    return torch.where(w < 0, torch.minimum(zero, w + by),
                                       torch.maximum(zero, w - by))
                v2 = torch.stack([toward0(v1[:, 0]), toward0(v1[:, 1]), torch.zeros_like(vz)],
                                 dim=1)
                xc = x + toi * v1 + (DT - toi) * v2
            x_new = torch.where(hit.unsqueeze(1), xc, xn)
            v_new = torch.where(hit.unsqueeze(1), v2, v1)
        else:
            # The framework's rule with the normal (0, 0, 1): time of impact,
            # the normal part dropped, Coulomb friction on the tangential
            # (horizontal) velocity, no penetration. Derivatives at ties are
            # torch's (d|u|/du = 0 at 0; max(p.z, g) passes to p.z at p.z == g).
            hit = xn[:, 2] < GROUND
            toi = torch.clamp(torch.abs(xz - GROUND) / (torch.abs(vz) + 1e-10), 0.0, DT)
            p = x + toi.unsqueeze(1) * v1
            vt = v1 - (v1 * up).sum(dim=1).unsqueeze(1) * up
            speed2 = (vt * vt).sum(dim=1)
            nz = speed2 > 0
            speed = torch.sqrt(torch.where(nz, speed2, torch.ones_like(speed2)))
            direction = torch.where(nz.unsqueeze(1), vt / speed.unsqueeze(1), torch.zeros_like(vt))
            speed = torch.where(nz, speed, torch.zeros_like(speed))
            v2 = vt - direction * (mu * torch.minimum(torch.abs(vz), speed)).unsqueeze(1)
            p = torch.where((toi < DT).unsqueeze(1), p + (DT - toi).unsqueeze(1) * v2, p)
            pz = torch.where(p[:, 2] < GROUND, zero + GROUND, p[:, 2])
            p = torch.stack([p[:, 0], p[:, 1], pz], dim=1)
            x_new = torch.where(hit.unsqueeze(1), p, xn)
            v_new = torch.where(hit.unsqueeze(1), v2, v1)
        x, v = x_new, v_new

    return -(x[:, 0] - x0[:, 0]).sum() / n


def simulate(robots, params, steps, model):
    import torch
    results = []
    for i, (rob, par) in enumerate(zip(robots, params)):
        leaves = {k: torch.tensor(par[k], dtype=torch.float64, requires_grad=True)
                  for k in ("w1", "b1", "w2", "b2")}
        n, s = len(rob["points"]), len(rob["springs"])
        ninp = N_SINES + 6 * n + 2
        assert tuple(leaves["w1"].shape) == (HIDDEN, ninp), (i, leaves["w1"].shape)
        assert tuple(leaves["b1"].shape) == (HIDDEN,)
        assert tuple(leaves["w2"].shape) == (s, HIDDEN)
        assert tuple(leaves["b2"].shape) == (s,)
        loss = rollout_loss(rob, leaves, steps, model)
        loss.backward()
        results.append({"loss": float(loss.item()),
                        "grad": {k: leaves[k].grad.tolist() for k in ("w1", "b1", "w2", "b2")}})
    return results


# ---------------------------------------------------------------------------
# Random bodies: cube cells grown face to face (every pair of a cube's 8
# corners is a spring, rest length the initial distance; each spring
# actuated with probability 1/2). Point and spring order is this file's own;
# evoc reads the robot as written.

def random_robot(rng, cells, stiffness, edge=0.05):
    grid = [(0, 0, 0)]
    while len(grid) < cells:
        i, j, k = rng.choice(grid)
        di = rng.choice([(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1)])
        c = (i + di[0], j + di[1], k + di[2])
        if c not in grid and c[2] >= 0:
            grid.append(c)
    index, points, springs, made = {}, [], [], set()
    origin = (0.1 + 0.3 * rng.random(), 0.1 * rng.random(), GROUND + 0.01 + 0.02 * rng.random())
    for (i, j, k) in grid:
        ids = []
        for dk in (0, 1):
            for dj in (0, 1):
                for di in (0, 1):
                    key = (i + di, j + dj, k + dk)
                    if key not in index:
                        index[key] = len(points)
                        points.append([origin[0] + edge * key[0], origin[1] + edge * key[1],
                                       origin[2] + edge * key[2]])
                    ids.append(index[key])
        for p in range(8):
            for q in range(p + 1, 8):
                e = (min(ids[p], ids[q]), max(ids[p], ids[q]))
                if e in made:
                    continue
                made.add(e)
                pa, pb = points[e[0]], points[e[1]]
                rest = math.sqrt(sum((pa[c] - pb[c]) ** 2 for c in range(3)))
                act = 0.15 if rng.random() < 0.5 else 0.0
                springs.append([e[0], e[1], rest, stiffness, act])
    return {"points": points, "springs": springs}


def random_params(rng, n_points, n_springs):
    return ref2.random_params(rng, n_points, n_springs, dim=3)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sim")
    s.add_argument("--robots", required=True)
    s.add_argument("--params", required=True)
    s.add_argument("--steps", type=int, default=1000)
    s.add_argument("--model", choices=sorted(WORLDS), required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--grad-digits", type=int, default=None,
                   help="round gradient entries to this many significant digits (loss stays exact)")
    s.add_argument("--perturb", type=float, default=0.0,
                   help="add uniform noise of this size to the initial positions (conditioning check)")
    g = sub.add_parser("gen")
    g.add_argument("--seed", type=int, required=True)
    g.add_argument("--spec", nargs="+", required=True, help="CELLS:STIFFNESS per robot")
    g.add_argument("--out-robots", required=True)
    g.add_argument("--out-params", required=True)
    c = sub.add_parser("check")
    c.add_argument("--expected", required=True)
    c.add_argument("--got", required=True)
    c.add_argument("--loss-tol", type=float, default=1e-8)
    c.add_argument("--grad-tol", type=float, default=1e-6)
    args = ap.parse_args(argv)

    if args.cmd == "sim":
        import torch
        torch.set_default_dtype(torch.float64)
        robots = json.load(open(args.robots))["robots"]
        params = json.load(open(args.params))["params"]
        if args.perturb:
            rng = random.Random(12345)
            for r in robots:
                r["points"] = [[p[0] + rng.uniform(-args.perturb, args.perturb),
                                p[1] + rng.uniform(-args.perturb, args.perturb),
                                p[2] + rng.uniform(0, args.perturb)] for p in r["points"]]
        res = simulate(robots, params, args.steps, args.model)
        write_results(args.out, res, args.grad_digits)
        for i, r in enumerate(res):
            print("robot %d: loss %.17g" % (i, r["loss"]))
    elif args.cmd == "gen":
        rng = random.Random(args.seed)
        robots, params = [], []
        for spec in args.spec:
            cells, stiffness = spec.split(":")
            rob = random_robot(rng, int(cells), float(stiffness))
            robots.append(rob)
            params.append(random_params(rng, len(rob["points"]), len(rob["springs"])))
            print("%s: %d points, %d springs, %d actuated" %
                  (spec, len(rob["points"]), len(rob["springs"]),
                   sum(1 for sp in rob["springs"] if sp[4] != 0)))
        with open(args.out_robots, "w") as f:
            json.dump({"robots": robots}, f, separators=(",", ":"))
            f.write("\n")
        with open(args.out_params, "w") as f:
            json.dump({"params": params}, f, separators=(",", ":"))
            f.write("\n")
    else:
        res = compare(json.load(open(args.expected)), json.load(open(args.got)))
        ok = True
        for i, (l, g) in enumerate(res):
            good = l <= args.loss_tol and g <= args.grad_tol
            ok &= good
            print("robot %d: loss rel err %.3e, grad err / max %.3e %s" %
                  (i, l, g, "ok" if good else "FAIL"))
        print("worst: loss %.3e, grad %.3e" % (max(r[0] for r in res), max(r[1] for r in res)))
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
