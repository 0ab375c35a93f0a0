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
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The controller, the ELDiR spring law and parameters are eldir_reference.py's;
# the command line, `sim`'s and `gen`'s loops, result files, `check` and the
# friction reference_common.py's.
import eldir_reference as ref2  # noqa: E402
import reference_common as common  # noqa: E402

# ---------------------------------------------------------------------------
# The worlds. ELDiR's (docs/evolution.md) in 3D; Fang's 3D world (docs/multitask.md).
DT = 0.004
GROUND = 0.1
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
    phases, ones2 = ref2.controller_inputs()
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
            v2 = common.coulomb_friction(vt, vz, mu)
            p = torch.where((toi < DT).unsqueeze(1), p + (DT - toi).unsqueeze(1) * v2, p)
            pz = torch.where(p[:, 2] < GROUND, zero + GROUND, p[:, 2])
            p = torch.stack([p[:, 0], p[:, 1], pz], dim=1)
            x_new = torch.where(hit.unsqueeze(1), p, xn)
            v_new = torch.where(hit.unsqueeze(1), v2, v1)
        x, v = x_new, v_new

    return -(x[:, 0] - x0[:, 0]).sum() / n


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


def spec_robot(rng, spec):
    """`gen`'s random body for a spec CELLS:STIFFNESS, and its line."""
    cells, stiffness = spec.split(":")
    rob = random_robot(rng, int(cells), float(stiffness))
    return rob, "%s: %d points, %d springs, %d actuated" % (
        spec, len(rob["points"]), len(rob["springs"]), sum(1 for sp in rob["springs"] if sp[4] != 0))


def main(argv):
    return common.sim_gen_check(argv, __doc__, 3, "--model", sorted(WORLDS),
                                "CELLS:STIFFNESS per robot", rollout_loss, spec_robot, random_params)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
