#!/usr/bin/env python3
"""Independent reference implementation of the ELDiR reference experiment as
docs/evolution.md ("The ELDiR reference experiment", "Lattice bodies") writes
it (the ELDiR mass-spring rollout, its MLP controller and displacement loss),
in PyTorch with float64 and automatic differentiation.

Written from those docs/ sections only, not from evoc's sources. It is a test-data
generator: nothing in the build or in CI needs Python or torch.

    eldir_reference.py sim --robots R.json --params P.json --steps T \
        --contact {noslip,friction} --out OUT.json
        -> {"results": [{"loss": L, "grad": {"w1", "b1", "w2", "b2"}}, ...]}

    eldir_reference.py gen --seed S --out-robots R.json --out-params P.json \
        --spec ROWSxCOLS:P [ROWSxCOLS:P ...]
        random lattice robots (one per spec: mask density P, repaired) and
        random non-zero controller parameters.

    eldir_reference.py check --expected E.json --got G.json
        compares two result files: loss relative error and gradient error
        relative to the largest expected entry.

ROBOTS.json / PARAMS.json are exactly the formats `evoc sim` reads.
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The controller's sizes, the command line, `sim`'s and `gen`'s loops, result
# files and `check` are reference_common.py's.
import reference_common as common  # noqa: E402
from reference_common import HIDDEN, N_SINES, rounded  # noqa: E402

# ---------------------------------------------------------------------------
# Constants of the reference experiment (docs/evolution.md, "ELDiR simulation step").
DT = 0.004
DAMPING = 15.0
GRAVITY = -4.8
GROUND = 0.1
MU = 1.0
EDGE = 0.05
STIFFNESS = 3e4
ACTUATION = 0.1


# ---------------------------------------------------------------------------
# Simulation (torch, f64, autograd)

def controller_inputs():
    """controller_act's fixed inputs: the sines' phases 2 pi j / 10 and the two ones."""
    import torch
    phases = torch.tensor([2 * math.pi * j / N_SINES for j in range(N_SINES)], dtype=torch.float64)
    return phases, torch.ones(2, dtype=torch.float64)


def controller_act(x, v, t, params, phases, ones2):
    """ELDiR's MLP at step t: 10 sines, then per point 0.05 (x - c) and
    0.05 v, then 1, 1; tanh hidden and output layers (one output a spring)."""
    import torch
    c = x.mean(dim=0)
    sines = torch.sin(10.0 * (t - 1) * DT + phases)
    per_point = torch.cat([0.05 * (x - c), 0.05 * v], dim=1).reshape(-1)
    inp = torch.cat([sines, per_point, ones2])
    hid = torch.tanh(params["w1"] @ inp + params["b1"])
    return torch.tanh(params["w2"] @ hid + params["b2"])


def controlled_springs(params, a, b, rest, stiff, actu):
    """The springs' velocity change at step t under ELDiR's controller, as a function
    of (x, v, t): controller_act's actuation into spring_velocity_change."""
    phases, ones2 = controller_inputs()

    def springs(x, v, t):
        act = controller_act(x, v, t, params, phases, ones2)
        return spring_velocity_change(x, v, a, b, rest, stiff, actu, act)

    return springs


def spring_velocity_change(x, v, a, b, rest, stiff, actu, act):
    """The sum of ELDiR's spring impulses on every point (-j on a, +j on b)."""
    import torch
    d = x[a] - x[b]
    L = torch.sqrt((d * d).sum(dim=1)) + 1e-4
    target = rest * (1.0 + actu * act)
    imp = (DT * (L - target) * stiff / L).unsqueeze(1) * d
    return torch.zeros_like(v).index_add(0, a, -imp).index_add(0, b, imp)


def robot_tensors(robot):
    """A ROBOTS.json entry as tensors: points, then per spring its endpoints
    a and b, rest length, stiffness and actuation amplitude."""
    import torch
    f64 = torch.float64
    spr = robot["springs"]
    return (torch.tensor(robot["points"], dtype=f64),
            torch.tensor([int(s[0]) for s in spr], dtype=torch.long),
            torch.tensor([int(s[1]) for s in spr], dtype=torch.long),
            torch.tensor([float(s[2]) for s in spr], dtype=f64),
            torch.tensor([float(s[3]) for s in spr], dtype=f64),
            torch.tensor([float(s[4]) for s in spr], dtype=f64))


def rollout_loss(robot, params, steps, contact):
    """Loss of one robot's rollout of `steps` states; params are leaf tensors."""
    import torch
    f64 = torch.float64
    pts, a, b, rest, stiff, actu = robot_tensors(robot)
    n = pts.shape[0]

    # Initial placement: lift the whole body so that no point is below ground.
    lowest = float(pts[:, 1].min())
    if lowest < GROUND:
        pts = pts + torch.tensor([0.0, GROUND - lowest], dtype=f64)

    x = pts.clone()
    v = torch.zeros_like(x)
    x0 = x
    phases, ones2 = controller_inputs()
    decay = math.exp(-DT * DAMPING)
    grav = torch.tensor([0.0, DT * GRAVITY], dtype=f64)
    zero = torch.zeros((), dtype=f64)

    for t in range(1, steps):
        act = controller_act(x, v, t, params, phases, ones2)
        vinc = spring_velocity_change(x, v, a, b, rest, stiff, actu, act)
        # integrate
        v1 = decay * v + grav + vinc
        xn = x + DT * v1
        xy, vy = x[:, 1], v1[:, 1]
        if contact == "noslip":
            hit = (xn[:, 1] < GROUND) & (vy < -1e-4)
            vy_safe = torch.where(hit, vy, -torch.ones_like(vy))
            toi = -(xy - GROUND) / vy_safe
            xc = x + toi.unsqueeze(1) * v1
            x_new = torch.where(hit.unsqueeze(1), xc, xn)
            v_new = torch.where(hit.unsqueeze(1), torch.zeros_like(v1), v1)
        elif contact == "friction":
            # Derivatives at ties are torch's: d|u|/du = 0 at u = 0 (a point
            # resting exactly at the ground gets toi = 0 with no derivative),
            # and max(p.y, g) passes the derivative to p.y when p.y == g.
            # These reproduce the reference vectors (docs/evolution.md) to ~1e-13.
            hit = xn[:, 1] < GROUND
            toi = torch.clamp(torch.abs(xy - GROUND) / (torch.abs(vy) + 1e-10), 0.0, DT)
            p = x + toi.unsqueeze(1) * v1
            vt = v1[:, 0]                     # tangential part (normal (0, 1))
            vt_abs = torch.abs(vt)
            nz = vt_abs > 0
            direction = torch.where(nz, vt / torch.where(nz, vt_abs, torch.ones_like(vt_abs)),
                                    torch.zeros_like(vt))
            vtx = vt - direction * MU * torch.minimum(torch.abs(vy), vt_abs)
            v2 = torch.stack([vtx, torch.zeros_like(vtx)], dim=1)
            p = torch.where((toi < DT).unsqueeze(1), p + (DT - toi).unsqueeze(1) * v2, p)
            py = p[:, 1]
            py = torch.where(py < GROUND, zero + GROUND, py)    # p.y = max(p.y, g)
            p = torch.stack([p[:, 0], py], dim=1)
            x_new = torch.where(hit.unsqueeze(1), p, xn)
            v_new = torch.where(hit.unsqueeze(1), v2, v1)
        else:
            raise ValueError("unknown contact model " + contact)
        x, v = x_new, v_new

    return -(x[:, 0] - x0[:, 0]).sum() / n


# ---------------------------------------------------------------------------
# Lattice bodies (docs/evolution.md, "Lattice bodies": genotype -> phenotype)

def corners(i, cols):
    x, y = i % cols, i // cols
    if (x + y) % 2 == 1:      # points up
        return [(x - 1, y), (x + 1, y), (x, y + 1)]
    return [(x, y), (x - 1, y + 1), (x + 1, y + 1)]


def tri_edges(i, cols):
    c = corners(i, cols)
    return [tuple(sorted((c[0], c[1]))), tuple(sorted((c[0], c[2]))), tuple(sorted((c[1], c[2])))]


def lattice_edges(rows, cols):
    """All edges of the lattice, sorted by node pair: one actuation bit each."""
    es = set()
    for i in range(rows * cols):
        es.update(tri_edges(i, cols))
    return sorted(es)


def repair(mask, rows, cols):
    """Fill holes, then keep the largest 4-connected component (ties: the
    component met first in row-major order)."""
    mask = list(mask)
    present = set()
    for i in range(rows * cols):
        if mask[i]:
            present.update(tri_edges(i, cols))
    # A filled triangle adds no new edge, so one pass reaches the fixpoint.
    for i in range(rows * cols):
        if not mask[i] and all(e in present for e in tri_edges(i, cols)):
            mask[i] = 1
    seen = [False] * (rows * cols)
    best = []
    for s in range(rows * cols):
        if not mask[s] or seen[s]:
            continue
        comp, stack = [], [s]
        seen[s] = True
        while stack:
            k = stack.pop()
            comp.append(k)
            x, y = k % cols, k // cols
            for nx, ny in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)):
                if 0 <= nx < cols and 0 <= ny < rows:
                    j = ny * cols + nx
                    if mask[j] and not seen[j]:
                        seen[j] = True
                        stack.append(j)
        if len(comp) > len(best):
            best = comp
    keep = set(best)
    return [1 if i in keep else 0 for i in range(rows * cols)]


def phenotype(mask, act_bits, rows, cols):
    edge_index = {e: k for k, e in enumerate(lattice_edges(rows, cols))}
    nodes, edges = set(), set()
    for i in range(rows * cols):
        if mask[i]:
            nodes.update(corners(i, cols))
            edges.update(tri_edges(i, cols))
    nodes = sorted(nodes)                      # by x, then y
    minx = min(n[0] for n in nodes)
    miny = min(n[1] for n in nodes)
    idx = {n: k for k, n in enumerate(nodes)}
    points = [[(x - minx) * 0.025 + 0.025, (y - miny) * math.sqrt(3) * 0.025 + 0.1] for x, y in nodes]
    springs = []
    for e in sorted(edges, key=lambda e: (idx[e[0]], idx[e[1]])):
        ia, ib = idx[e[0]], idx[e[1]]
        if ia > ib:
            ia, ib = ib, ia
        springs.append([ia, ib, EDGE, STIFFNESS, ACTUATION if act_bits[edge_index[e]] else 0.0])
    springs.sort(key=lambda s: (s[0], s[1]))
    return {"points": points, "springs": springs}


def random_robot(rng, rows, cols, density):
    while True:
        mask = [1 if rng.random() < density else 0 for _ in range(rows * cols)]
        mask = repair(mask, rows, cols)
        if sum(mask) > 0:
            break
    bits = [rng.randrange(2) for _ in lattice_edges(rows, cols)]
    return phenotype(mask, bits, rows, cols), mask


def random_params(rng, n_points, n_springs, dim=2):
    """Xavier-normal weights (gain 2 for W1, 3 for W2), non-zero biases."""
    ninp = N_SINES + 2 * dim * n_points + 2

    def xavier(out, inp, gain):
        std = gain * math.sqrt(2.0 / (inp + out))
        return [[rounded(rng.gauss(0.0, std)) for _ in range(inp)] for _ in range(out)]

    def bias(k):
        # non-zero: uniform magnitude in [0.05, 0.3], random sign
        return [rounded(rng.choice((-1, 1)) * rng.uniform(0.05, 0.3)) for _ in range(k)]

    return {"w1": xavier(HIDDEN, ninp, 2.0), "b1": bias(HIDDEN),
            "w2": xavier(n_springs, HIDDEN, 3.0), "b2": bias(n_springs)}


def spec_robot(rng, spec):
    """`gen`'s random lattice robot for a spec ROWSxCOLS:DENSITY, and its line."""
    size, dens = spec.split(":")
    rows, cols = (int(v) for v in size.split("x"))
    rob, mask = random_robot(rng, rows, cols, float(dens))
    return rob, "%s: %d triangles, %d points, %d springs, %d actuated" % (
        spec, sum(mask), len(rob["points"]), len(rob["springs"]),
        sum(1 for sp in rob["springs"] if sp[4] != 0))


def main(argv):
    return common.sim_gen_check(argv, __doc__, 2, "--contact", ("noslip", "friction"),
                                "ROWSxCOLS:DENSITY per robot", rollout_loss, spec_robot, random_params)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
