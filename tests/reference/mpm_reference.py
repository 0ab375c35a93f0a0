#!/usr/bin/env python3
"""Independent reference implementation of DiffTaichi's diffmpm robot (2D
MLS-MPM on a static grid, open-loop sine controller), in PyTorch with float64
and automatic differentiation.

Written from the design text shared/design/MPM.md only: its section "Second
anchor: DiffTaichi's examples/diffmpm.py" (grid, constants, particle layout,
controller, loss) and the MLS-MPM step of its section "Simulation" (P2G,
grid update, G2P), with DiffTaichi's constants in place of the complex-
locomotion ones. It was written without reading evoc's sources (compiler/,
runtime/, stdlib/, examples/, the .evo files); DiffTaichi's
examples/diffmpm.py was read only to cross-check the reading of MPM.md. It is
a test-data generator: nothing in the build or in CI needs Python or torch.

The model (all f64):

- Grid 128 x 128 nodes, dx = 1/128, dt = 1e-3, particle mass 1, volume 1,
  mu = lambda = 10, gravity 3.8, boundary 3 nodes (sticky floor and walls).
- Particles: rectangles (x, y, w, h, actuator) at offset (0.1, 0.03): body
  (0, 0.1, 0.3, 0.1, -1), legs (0, 0, 0.05, 0.1, 0), (0.05, 0, 0.05, 0.1, 1),
  (0.2, 0, 0.05, 0.1, 2), (0.25, 0, 0.05, 0.1, 3). A rectangle has
  nw = int(w / dx) * 2 columns and nh = int(h / dx) * 2 rows, particle (i, j)
  at (x + (i + 0.5) w / nw + ox, y + (j + 0.5) h / nh + oy), i outer, j inner:
  2976 particles. v = 0, C = 0, F = I at the start.
- Controller: the step from state s to s + 1 uses
  act_k = tanh(sum_j W[k][j] sin(20 s dt + (2 pi / 4) j) + b[k]); a particle
  of actuator k has actuation 4 act_k, a passive one (-1) 0.
- Step: P2G (quadratic B-spline weights, F' = (I + dt C) F, closed-form 2x2
  polar rotation R, stress tau = 2 mu (F' - R) F'^T + lambda (J - 1) J I +
  F' diag(0, act) F'^T, affine = -(dt vol 4 / dx^2) tau + m C, momentum and
  mass scattered to the 3 x 3 nodes); grid update (v = mv / (m + 1e-10),
  v_y -= dt g, then the four boundary checks in the order i < 3 (v_x < 0),
  i > 125 (v_x > 0), j < 3 (v_y < 0), j > 125 (v_y > 0), each zeroing both
  components); G2P (v' = sum w v_node, C' = sum 4 w v_node (node - fx)^T / dx,
  x' = x + dt v', next F = F').
- Episode of T states (T - 1 steps); loss = -(mean x of all particles at
  state T - 1).

The backward pass recomputes the steps (torch.utils.checkpoint over runs of
32 steps; DiffTaichi recomputes each step's grid likewise), so memory stays
near 2 GB at T = 1024 (a plain tape takes ~7 GB); the gradients are bitwise
the same either way. T = 1024 with its gradient takes ~20 s on one thread.
The vectorised step was checked against a plain per-particle loop version
of the same rules (agreement to rounding after 5 strongly actuated steps).

    mpm_reference.py diffmpm --steps T --params P.json --out OUT.json
        -> {"steps": T, "loss": L, "grad": {"w1": [[4 x 4]], "b1": [4]},
            "x_mean_last": [mx, my], "particles": 2976}   (full precision)

    mpm_reference.py gen --seed S --out P.json
        W = 0.01 * standard normal (numpy default_rng(S), row by row), each
        entry rounded to 6 significant digits; b = 0:
        {"w1": [[4 x 4]], "b1": [4]}

    mpm_reference.py fdcheck --steps T --params P.json [--eps 1e-6]
        central finite differences of the loss against autograd for every
        parameter; prints each and the largest relative error (per entry,
        and relative to the largest gradient entry). The differenced
        function is -mean(x[T-1].x - x[0].x), the loss less a constant, so
        that rounding near 0.25 does not swamp differences of ~1e-12.

    mpm_reference.py particles
        the particle count and the first and last 3 positions.
"""
import argparse
import json
import math
import sys
import time

# ---------------------------------------------------------------------------
# Constants (DiffTaichi's diffmpm.py, as MPM.md gives them)

N_GRID = 128
DX = 1.0 / N_GRID
INV_DX = float(N_GRID)
DT = 1e-3
P_VOL = 1.0
P_MASS = 1.0
MU = 10.0
LAMBDA = 10.0
GRAVITY = 3.8
BOUND = 3
N_ACT = 4
N_SIN = 4
OMEGA = 20.0
ACT_STRENGTH = 4.0
OFFSET = (0.1, 0.03)
RECTS = [  # (x, y, w, h, actuator id)
    (0.0, 0.1, 0.3, 0.1, -1),
    (0.0, 0.0, 0.05, 0.1, 0),
    (0.05, 0.0, 0.05, 0.1, 1),
    (0.2, 0.0, 0.05, 0.1, 2),
    (0.25, 0.0, 0.05, 0.1, 3),
]


def robot_particles():
    """The robot's particles: (positions [[x, y], ...], actuator ids), as Python floats."""
    ox, oy = OFFSET
    pos, aid = [], []
    for (x, y, w, h, act) in RECTS:
        nw = int(w / DX) * 2
        nh = int(h / DX) * 2
        sx = w / nw
        sy = h / nh
        for i in range(nw):
            for j in range(nh):
                pos.append([x + (i + 0.5) * sx + ox, y + (j + 0.5) * sy + oy])
                aid.append(act)
    return pos, aid


# ---------------------------------------------------------------------------
# Simulation (torch, f64, autograd)

def _torch():
    import torch
    torch.set_num_threads(1)
    return torch


def actuation_table(W, b, steps):
    """(steps - 1, 4): act_k for the step leaving state s, s = 0 .. steps - 2."""
    torch = _torch()
    phases = [[math.sin(OMEGA * s * DT + 2 * math.pi / N_SIN * j) for j in range(N_SIN)]
              for s in range(steps - 1)]
    S = torch.tensor(phases, dtype=torch.float64).reshape(steps - 1, N_SIN)
    return torch.tanh(S @ W.t() + b)


class Stencil:
    """Constant tensors of one run: the 3 x 3 node offsets and the boundary masks.

    Node k = 3 i + j of a particle's stencil is base + (i, j); grid node
    (i, j) is stored at i * N_GRID + j.
    """

    def __init__(self, torch):
        f64 = torch.float64
        self.oi = torch.tensor([[i for i in range(3) for j in range(3)]], dtype=f64)  # (1, 9)
        self.oj = torch.tensor([[j for i in range(3) for j in range(3)]], dtype=f64)
        self.oi_l = self.oi.long()
        self.oj_l = self.oj.long()
        gi = torch.arange(N_GRID).repeat_interleave(N_GRID)
        gj = torch.arange(N_GRID).repeat(N_GRID)
        self.left = gi < BOUND
        self.right = gi > N_GRID - BOUND
        self.bottom = gj < BOUND
        self.top = gj > N_GRID - BOUND
        self.zero = torch.zeros((), dtype=f64)


def bspline(fx):
    """The three quadratic B-spline weights of fractional positions fx."""
    return (0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1.0) ** 2, 0.5 * (fx - 0.5) ** 2)


def mpm_step(torch, st, state, act):
    """One MLS-MPM step. state = (x_x, x_y, v_x, v_y, C00, C01, C10, C11, F00, F01,
    F10, F11), each (N,) (matrix entries by row, column); act (N,) the
    particles' actuation. Returns the next state."""
    xx, xy, vx, vy, C00, C01, C10, C11, F00, F01, F10, F11 = state
    n = xx.shape[0]

    # Stencil: base = floor(X - 0.5), fx = X - base, weights, node indices
    Xx, Xy = xx * INV_DX, xy * INV_DX
    bx, by = torch.floor(Xx.detach() - 0.5), torch.floor(Xy.detach() - 0.5)
    fxx, fxy = Xx - bx, Xy - by
    wx = torch.stack(bspline(fxx), dim=1)                        # (N, 3)
    wy = torch.stack(bspline(fxy), dim=1)
    weight = wx[:, st.oi_l[0]] * wy[:, st.oj_l[0]]               # (N, 9): w_i.x * w_j.y
    ni = bx.long()[:, None] + st.oi_l
    nj = by.long()[:, None] + st.oj_l
    if int(ni.min()) < 0 or int(nj.min()) < 0 or int(ni.max()) >= N_GRID or int(nj.max()) >= N_GRID:
        raise RuntimeError("a particle's stencil left the grid")
    flat = (ni * N_GRID + nj).reshape(-1)
    dgx = st.oi - fxx[:, None]                                   # (N, 9): node - fx, grid units
    dgy = st.oj - fxy[:, None]

    # P2G: F' = (I + dt C) F
    a = (1.0 + DT * C00) * F00 + (DT * C01) * F10
    b = (1.0 + DT * C00) * F01 + (DT * C01) * F11
    c = (DT * C10) * F00 + (1.0 + DT * C11) * F10
    d = (DT * C10) * F01 + (1.0 + DT * C11) * F11
    J = a * d - b * c
    rs, rt = a + d, c - b                                        # R = [[rs, -rt], [rt, rs]] / |.|
    rn = torch.sqrt(rs * rs + rt * rt)
    r00, r01, r10, r11 = rs / rn, -rt / rn, rt / rn, rs / rn
    # tau = 2 mu (F' - R) F'^T + lambda (J - 1) J I + act (F' e_y)(F' e_y)^T
    m00, m01, m10, m11 = a - r00, b - r01, c - r10, d - r11
    vol = LAMBDA * (J - 1.0) * J
    t00 = 2.0 * MU * (m00 * a + m01 * b) + vol + act * b * b
    t01 = 2.0 * MU * (m00 * c + m01 * d) + act * b * d
    t10 = 2.0 * MU * (m10 * a + m11 * b) + act * d * b
    t11 = 2.0 * MU * (m10 * c + m11 * d) + vol + act * d * d
    k = -(DT * P_VOL * 4.0 * INV_DX * INV_DX)
    A00, A01 = k * t00 + P_MASS * C00, k * t01 + P_MASS * C01
    A10, A11 = k * t10 + P_MASS * C10, k * t11 + P_MASS * C11
    # momentum weight * (m v + affine @ dpos), dpos = (node - fx) dx
    dpx, dpy = dgx * DX, dgy * DX
    mom_x = weight * (P_MASS * vx[:, None] + A00[:, None] * dpx + A01[:, None] * dpy)
    mom_y = weight * (P_MASS * vy[:, None] + A10[:, None] * dpx + A11[:, None] * dpy)
    zeros = torch.zeros(N_GRID * N_GRID, dtype=torch.float64)
    g_mx = zeros.index_add(0, flat, mom_x.reshape(-1))
    g_my = zeros.index_add(0, flat, mom_y.reshape(-1))
    g_m = zeros.index_add(0, flat, (weight * P_MASS).reshape(-1))

    # Grid update: velocity, gravity, then the four boundary checks in order
    inv_m = 1.0 / (g_m + 1e-10)
    gvx = g_mx * inv_m
    gvy = g_my * inv_m - DT * GRAVITY
    for side, axis, sign in ((st.left, 0, -1), (st.right, 0, 1), (st.bottom, 1, -1), (st.top, 1, 1)):
        comp = (gvx if axis == 0 else gvy).detach()
        m = side & ((comp < 0) if sign < 0 else (comp > 0))
        gvx = torch.where(m, st.zero, gvx)
        gvy = torch.where(m, st.zero, gvy)

    # G2P
    gx = gvx.index_select(0, flat).reshape(n, 9)
    gy = gvy.index_select(0, flat).reshape(n, 9)
    wgx, wgy = weight * gx, weight * gy
    nvx, nvy = wgx.sum(1), wgy.sum(1)
    s = 4.0 * INV_DX
    nC00, nC01 = s * (wgx * dgx).sum(1), s * (wgx * dgy).sum(1)
    nC10, nC11 = s * (wgy * dgx).sum(1), s * (wgy * dgy).sum(1)
    return (xx + DT * nvx, xy + DT * nvy, nvx, nvy, nC00, nC01, nC10, nC11, a, b, c, d)


def rollout(W, b, steps, segment=32):
    """Loss and final positions (N, 2) of an episode of `steps` states with
    controller (W, b). With autograd on, each run of `segment` steps is
    checkpointed (recomputed in the backward pass), which keeps memory low."""
    torch = _torch()
    import torch.utils.checkpoint as cp
    f64 = torch.float64
    st = Stencil(torch)
    pos, aid = robot_particles()
    n = len(pos)
    p = torch.tensor(pos, dtype=f64)
    zero = torch.zeros(n, dtype=f64)
    one = torch.ones(n, dtype=f64)
    state = (p[:, 0].clone(), p[:, 1].clone(), zero, zero, zero, zero, zero, zero, one, zero, zero, one)
    aid_t = torch.tensor(aid)
    active = (aid_t >= 0).to(f64)
    gather = aid_t.clamp(min=0)
    table = actuation_table(W, b, steps)                         # (steps - 1, 4)

    def run(s0, s1, tab, *state):
        for s in range(s0, s1):
            act = ACT_STRENGTH * tab[s][gather] * active
            state = mpm_step(torch, st, state, act)
        return state

    s = 0
    while s < steps - 1:
        s1 = min(s + segment, steps - 1) if segment > 0 else steps - 1
        if segment and torch.is_grad_enabled():
            state = cp.checkpoint(run, s, s1, table, *state, use_reentrant=False)
        else:
            state = run(s, s1, table, *state)
        s = s1
    loss = -state[0].mean()
    return loss, torch.stack([state[0], state[1]], dim=1)


# ---------------------------------------------------------------------------
# Files and commands

def read_params(path):
    with open(path) as f:
        j = json.load(f)
    W, b = j["w1"], j["b1"]
    if len(W) != N_ACT or any(len(r) != N_SIN for r in W) or len(b) != N_ACT:
        raise SystemExit("%s: w1 must be 4 x 4 and b1 4 long" % path)
    return [[float(e) for e in r] for r in W], [float(e) for e in b]


def leaves(W, b):
    torch = _torch()
    return (torch.tensor(W, dtype=torch.float64, requires_grad=True),
            torch.tensor(b, dtype=torch.float64, requires_grad=True))


def loss_and_grad(W, b, steps):
    Wt, bt = leaves(W, b)
    loss, x = rollout(Wt, bt, steps)
    loss.backward()
    # x_mean_last[0] is -loss itself (the same sum), [1] the mean y
    xm = [-float(loss.detach()), float(x.detach()[:, 1].contiguous().mean())]
    return float(loss.detach()), Wt.grad.tolist(), bt.grad.tolist(), xm, x.shape[0]


def cmd_diffmpm(args):
    W, b = read_params(args.params)
    t0 = time.time()
    loss, gW, gb, xm, n = loss_and_grad(W, b, args.steps)
    secs = time.time() - t0
    out = {"steps": args.steps, "loss": loss, "grad": {"w1": gW, "b1": gb},
           "x_mean_last": xm, "particles": n}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    gn = math.sqrt(sum(e * e for r in gW for e in r) + sum(e * e for e in gb))
    print("T=%d loss=%r |grad|=%.6e x_mean_last=%r (%.1f s)" % (args.steps, loss, gn, xm, secs))


def cmd_gen(args):
    import numpy as np
    rng = np.random.default_rng(args.seed)
    Wr = 0.01 * rng.standard_normal((N_ACT, N_SIN))
    W = [[float("%.5e" % e) for e in row] for row in Wr.tolist()]
    out = {"w1": W, "b1": [0.0] * N_ACT}
    with open(args.out, "w") as f:
        json.dump(out, f)
        f.write("\n")


def cmd_fdcheck(args):
    torch = _torch()
    W, b = read_params(args.params)
    t0 = time.time()
    loss, gW, gb, _, _ = loss_and_grad(W, b, args.steps)
    t1 = time.time()
    ad = [e for r in gW for e in r] + list(gb)
    names = ["w1[%d][%d]" % (k, j) for k in range(N_ACT) for j in range(N_SIN)] + \
        ["b1[%d]" % k for k in range(N_ACT)]
    flat = [e for r in W for e in r] + list(b)

    x0 = torch.tensor([q[0] for q in robot_particles()[0]], dtype=torch.float64)

    def f(p):
        # The loss less its constant part -mean(x0): -mean(x[T-1].x - x0.x).
        # The same derivative, but the differences of two nearby losses are
        # not lost to the rounding of a sum of 2976 values near 0.25.
        Wp = torch.tensor(p[:16], dtype=torch.float64).reshape(N_ACT, N_SIN)
        bp = torch.tensor(p[16:], dtype=torch.float64)
        with torch.no_grad():
            x = rollout(Wp, bp, args.steps)[1]
        return float(-(x[:, 0] - x0).mean())

    gmax = max(abs(e) for e in ad)
    worst = worst_scaled = 0.0
    print("T=%d loss=%r (autograd %.1f s)" % (args.steps, loss, t1 - t0))
    print("%-9s %24s %24s %10s" % ("param", "autograd", "central fd", "rel err"))
    for k, name in enumerate(names):
        p = list(flat)
        p[k] = flat[k] + args.eps
        lp = f(p)
        p[k] = flat[k] - args.eps
        lm = f(p)
        fd = (lp - lm) / (2 * args.eps)
        err = abs(fd - ad[k])
        rel = err / max(abs(fd), abs(ad[k]), 1e-300)
        worst = max(worst, rel)
        worst_scaled = max(worst_scaled, err / gmax)
        print("%-9s %24.16e %24.16e %10.3e" % (name, ad[k], fd, rel))
    print("max relative error %.3e (per entry), %.3e (relative to max |grad| %.3e); %.1f s"
          % (worst, worst_scaled, gmax, time.time() - t0))


def cmd_particles(args):
    pos, aid = robot_particles()
    print("particles", len(pos))
    counts = {}
    for a in aid:
        counts[a] = counts.get(a, 0) + 1
    print("per actuator id", dict(sorted(counts.items())))
    for k in list(range(3)) + list(range(len(pos) - 3, len(pos))):
        print(k, repr(pos[k][0]), repr(pos[k][1]), aid[k])
    mx = sum(p[0] for p in pos) / len(pos)
    my = sum(p[1] for p in pos) / len(pos)
    print("mean", repr(mx), repr(my))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("diffmpm", help="loss and gradient of one episode")
    d.add_argument("--steps", type=int, default=1024, help="states in the episode (T; T - 1 steps)")
    d.add_argument("--params", required=True)
    d.add_argument("--out", required=True)
    g = sub.add_parser("gen", help="random controller parameters")
    g.add_argument("--seed", type=int, required=True)
    g.add_argument("--out", required=True)
    c = sub.add_parser("fdcheck", help="finite differences against autograd")
    c.add_argument("--steps", type=int, default=64)
    c.add_argument("--params", required=True)
    c.add_argument("--eps", type=float, default=1e-6)
    sub.add_parser("particles", help="print the particle layout")
    args = ap.parse_args(argv)
    if getattr(args, "steps", 2) < 2:
        raise SystemExit("--steps must be at least 2 (one step)")
    {"diffmpm": cmd_diffmpm, "gen": cmd_gen, "fdcheck": cmd_fdcheck, "particles": cmd_particles}[args.cmd](args)


if __name__ == "__main__":
    main(sys.argv[1:])
