#!/usr/bin/env python3
"""Independent reference implementation of evoc's terrain grounds, in PyTorch
with float64 and automatic differentiation: ELDiR's world and laws
(docs/evolution.md, "ELDiR simulation step") with both contact models, on a terrain
instead of the flat ground, as docs/language.md ("The world", terrain)
writes the semantics:

- 2D: a profile of (x, height) rows, linear between rows, flat beyond the
  ends. At a horizontal position `at` the segment under it (the last row
  with x_i <= at; beyond the ends the flat continuation) gives the height
  y_i + s (at - x_i), the unit normal (-s, 1) / sqrt(1 + s^2), a point's
  gap (its signed distance to the segment's line along the normal) and a
  velocity's normal speed.
- 3D: a height field on a grid, bilinear in each cell, the edge heights
  continued beyond the grid; at (x, y) the height h, the slopes h_x, h_y of
  the cell there (0 across the edges), the normal (-h_x, -h_y, 1) / norm,
  the gap to the tangent plane at (x, y) and the normal speed.

The contact rules are ELDiR's with that normal: noslip looks at where
the point would land (x + dt v'), friction at the new position x1 = x + dt v'
(and rests a hit point no lower than the ground under its final position).
The initial placement lifts the body until no point is below the ground
under it. Controller: ELDiR's MLP; loss: minus the mean x displacement.

Written from those docs/ sections only, not from evoc's
sources. It is a test-data generator: nothing in the build or in CI needs
Python or torch.

    terrain_reference.py terrain --dim {2,3} --seed S --out T.csv
        a random terrain: 2D rows x, height every 0.05 on [-0.5, 2];
        3D a 17 x 17 grid on [-0.5, 1.5]^2.

    terrain_reference.py sim --dim {2,3} --terrain T.csv --robots R.json \\
        --params P.json --steps T --model {noslip,friction} --out OUT.json

    terrain_reference.py check --expected E.json --got G.json

Random robots and parameters: eldir_reference.py gen (2D lattices) and
mass_spring3_reference.py gen (3D cube cells).
"""
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import eldir_reference as ref2  # noqa: E402  (controller, springs)
import reference_common as common  # noqa: E402  (friction, command line, sim, check)

DT = 0.004
DAMPING = 15.0
GRAVITY = -4.8
MU = 1.0


# ---------------------------------------------------------------------------
# Terrains

def read_terrain(path, dim):
    rows = []
    for line in open(path):
        t = line.strip()
        if not t or t.startswith("#"):
            continue
        try:
            rows.append([float(v) for v in t.split(",")])
        except ValueError:
            continue  # the header
    if dim == 2:
        return {"xs": [r[0] for r in rows], "hs": [r[1] for r in rows]}
    xs = sorted(set(r[0] for r in rows))
    ys = sorted(set(r[1] for r in rows))
    h = [[0.0] * len(xs) for _ in ys]
    for x, y, z in rows:
        h[ys.index(y)][xs.index(x)] = z
    return {"xs": xs, "ys": ys, "h": h}


def random_terrain(rng, dim):
    if dim == 2:
        xs = [-0.5 + 0.05 * i for i in range(51)]
        hs, y = [], 0.1
        for _ in xs:
            hs.append(round(y, 4))
            y = max(0.1, y + rng.uniform(-0.012, 0.012))
        return [(round(x, 4), h) for x, h in zip(xs, hs)]
    n = 17
    g = [-0.5 + 2.0 * i / (n - 1) for i in range(n)]
    h = [[0.1] * n for _ in range(n)]
    for j in range(n):
        for i in range(n):
            base = 0.1 if i == 0 and j == 0 else (
                h[j][i - 1] if j == 0 else h[j - 1][i] if i == 0 else 0.5 * (h[j][i - 1] + h[j - 1][i]))
            h[j][i] = round(max(0.1, base + rng.uniform(-0.02, 0.02)), 4)
    return [(round(g[i], 4), round(g[j], 4), h[j][i]) for j in range(n) for i in range(n)]


class Profile:
    """2D: the segment under `at` as constants (start x0, y0, slope s)."""

    def __init__(self, t):
        import torch
        self.xs = torch.tensor(t["xs"])
        hs = t["hs"]
        slopes = [(hs[i + 1] - hs[i]) / (t["xs"][i + 1] - t["xs"][i]) for i in range(len(hs) - 1)]
        self.hs = torch.tensor(hs)
        self.slopes = torch.tensor(slopes + [0.0])

    def segment(self, at):
        import torch
        i = torch.searchsorted(self.xs, at.detach(), right=True) - 1
        below = i < 0
        i = torch.clamp(i, min=0)
        s = torch.where(below, torch.zeros_like(at), self.slopes[i])
        return self.xs[i], self.hs[i], s

    def height(self, at):
        x0, y0, s = self.segment(at)
        return y0 + s * (at - x0)

    def ground(self, at):
        """(slope s, 1 / sqrt(1 + s^2)) and the height function's pieces."""
        import torch
        x0, y0, s = self.segment(at)
        inv = 1.0 / torch.sqrt(1.0 + s * s)
        return x0, y0, s, inv


def cell(grid, v):
    """Index of the cell holding v and v's fraction across it, clamped: the
    fraction is 0 below the grid and 1 beyond it (the edge continued)."""
    import torch
    g = grid
    i = torch.clamp(torch.searchsorted(g, v.detach(), right=True) - 1, 0, len(g) - 2)
    f = (v - g[i]) / (g[i + 1] - g[i])
    inside = (f >= 0) & (f <= 1)
    f = torch.where(inside, f, torch.where(f < 0, torch.zeros_like(f), torch.ones_like(f)))
    return i, f, inside


class Field:
    """3D: bilinear height, slopes and normal under (x, y)."""

    def __init__(self, t):
        import torch
        self.xs = torch.tensor(t["xs"])
        self.ys = torch.tensor(t["ys"])
        self.h = torch.tensor(t["h"])  # h[j][i]

    def at(self, x, y):
        import torch
        i, u, inx = cell(self.xs, x)
        j, w, iny = cell(self.ys, y)
        h00, h10 = self.h[j, i], self.h[j, i + 1]
        h01, h11 = self.h[j + 1, i], self.h[j + 1, i + 1]
        dx = self.xs[i + 1] - self.xs[i]
        dy = self.ys[j + 1] - self.ys[j]
        h = (1 - u) * (1 - w) * h00 + u * (1 - w) * h10 + (1 - u) * w * h01 + u * w * h11
        hx = torch.where(inx, ((1 - w) * (h10 - h00) + w * (h11 - h01)) / dx, torch.zeros_like(x))
        hy = torch.where(iny, ((1 - u) * (h01 - h00) + u * (h11 - h10)) / dy, torch.zeros_like(y))
        return h, hx, hy


# ---------------------------------------------------------------------------
# Simulation (shared with scene_reference.py)

def contact_update(model, x, v1, x1, inside, gap, speed, nrm, rest):
    """ELDiR's contact rules with a contact plane chosen at the new
    position x1: `inside` says x1 is in the solid, gap(p) and speed(v) are
    measured along the plane's unit normal `nrm`, and rest(q2) is where a
    friction hit ends (no lower than the solid). Returns (x', v', hit)."""
    import torch
    vn = speed(v1)
    if model == "noslip":
        hit = inside & (vn < -1e-4)
        toi = -gap(x) / torch.where(hit, vn, -torch.ones_like(vn))
        x_new = torch.where(hit.unsqueeze(1), x + toi.unsqueeze(1) * v1, x1)
        return x_new, torch.where(hit.unsqueeze(1), torch.zeros_like(v1), v1), hit
    hit = inside
    toi = torch.clamp(torch.abs(gap(x)) / (torch.abs(vn) + 1e-10), 0.0, DT)
    q = x + toi.unsqueeze(1) * v1
    vt = v1 - vn.unsqueeze(1) * nrm
    v2 = common.coulomb_friction(vt, vn, MU)
    q2 = torch.where((toi < DT).unsqueeze(1), q + (DT - toi).unsqueeze(1) * v2, q)
    x_new = torch.where(hit.unsqueeze(1), rest(q2), x1)
    return x_new, torch.where(hit.unsqueeze(1), v2, v1), hit


def rollout(robot, params, steps, dim, lift_of, contact):
    """ELDiR's laws and controller from the body lifted by lift_of(points);
    contact(x, v1, x1) gives each step's (x', v'). Minus the mean x
    displacement."""
    import torch
    f64 = torch.float64
    pts, a, b, rest, stiff, actu = ref2.robot_tensors(robot)
    n = pts.shape[0]
    with torch.no_grad():
        lift = lift_of(pts)
    up = torch.zeros(dim, dtype=f64)
    up[dim - 1] = 1.0
    x = pts + lift * up
    v = torch.zeros_like(x)
    x0 = x
    springs = ref2.controlled_springs(params, a, b, rest, stiff, actu)
    decay = math.exp(-DT * DAMPING)
    grav = DT * GRAVITY * up

    for t in range(1, steps):
        v1 = decay * v + grav + springs(x, v, t)
        x, v = contact(x, v1, x + DT * v1)

    return -(x[:, 0] - x0[:, 0]).sum() / n


def rollout_loss(robot, params, steps, model, terrain, dim):
    import torch
    ground = Profile(terrain) if dim == 2 else Field(terrain)

    # The ground's pieces at horizontal position `at` (a column of x in 2D,
    # (x, y) in 3D): height at `at`, unit normal n, and gap(p) / speed(v).
    def pieces(at):
        if dim == 2:
            x0, y0, s, inv = ground.ground(at[:, 0])
            h = y0 + s * (at[:, 0] - x0)
            nrm = torch.stack([-s * inv, inv], dim=1)

            def gap(p):
                return (p[:, 1] - (y0 + s * (p[:, 0] - x0))) * inv
        else:
            h, hx, hy = ground.at(at[:, 0], at[:, 1])
            inv = 1.0 / torch.sqrt(1.0 + hx * hx + hy * hy)
            nrm = torch.stack([-hx * inv, -hy * inv, inv], dim=1)

            def gap(p):
                plane = h + hx * (p[:, 0] - at[:, 0]) + hy * (p[:, 1] - at[:, 1])
                return (p[:, 2] - plane) * inv

        def speed(v):
            return (v * nrm).sum(dim=1)
        return h, nrm, gap, speed

    def height_under(p):
        return pieces(p[:, :dim - 1])[0]

    def rest(q2):  # max(q2.up, the ground under q2)
        under = height_under(q2)
        top = torch.where(q2[:, dim - 1] < under, under, q2[:, dim - 1])
        return torch.cat([q2[:, :dim - 1], top.unsqueeze(1)], dim=1)

    def contact(x, v1, x1):
        h, nrm, gap, speed = pieces(x1[:, :dim - 1])
        return contact_update(model, x, v1, x1, x1[:, dim - 1] < h, gap, speed, nrm, rest)[:2]

    # Initial placement: lift the body until no point is below the ground.
    def lift_of(pts):
        return max(0.0, float((height_under(pts) - pts[:, dim - 1]).max()))
    return rollout(robot, params, steps, dim, lift_of, contact)


def add_sim_arguments(s):
    """The options `sim` shares with scene_reference.py's and objects_reference.py's."""
    s.add_argument("--dim", type=int, choices=(2, 3), required=True)
    common.add_sim_arguments(s, "--model", ("noslip", "friction"))


def main(argv):
    ap, sub = common.command_line(__doc__)
    t = sub.add_parser("terrain")
    t.add_argument("--dim", type=int, choices=(2, 3), required=True)
    t.add_argument("--seed", type=int, required=True)
    t.add_argument("--out", required=True)
    s = sub.add_parser("sim")
    add_sim_arguments(s)
    s.add_argument("--terrain", required=True)
    common.add_check_arguments(sub.add_parser("check"), 1e-8, 1e-6)
    args = ap.parse_args(argv)

    if args.cmd == "terrain":
        rows = random_terrain(random.Random(args.seed), args.dim)
        with open(args.out, "w") as f:
            f.write("# a random terrain: tests/reference/terrain_reference.py terrain --dim %d "
                    "--seed %d\n" % (args.dim, args.seed))
            f.write("x, height\n" if args.dim == 2 else "x, y, height\n")
            for r in rows:
                f.write(", ".join("%.4f" % v for v in r) + "\n")
    elif args.cmd == "sim":
        terrain = read_terrain(args.terrain, args.dim)
        common.run_sim(args, args.dim, lambda rob, leaves, i: rollout_loss(
            rob, leaves, args.steps, args.model, terrain, args.dim))
    else:
        return common.check(args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
