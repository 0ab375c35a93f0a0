#!/usr/bin/env python3
"""Independent reference implementation of the MPM soft robot of Fang et al.
"complex locomotion" (branch 2023: robot_mpm_1, 2D MLS-MPM on a grid window
that moves with the robot), in PyTorch with float64 and automatic
differentiation.

Source: the design note shared/design/MPM.md ONLY (sections "Bodies",
"Simulation (solver_mpm.py), f64" and "Controller, commands, losses"). It was
written without reading evoc's sources (compiler/, runtime/, stdlib/,
examples/, python/, tests/ other than the style of
tests/reference/mpm_reference.py) and without the authors' code, so that it
can check evoc's implementation. It is a test-data generator: nothing in the
build or in CI needs Python or torch.

The model (all f64):

- Bodies. A rectangle (anchor, shape, actuator id) in units of 0.05 squares;
  each 0.05 square holds 4 x 4 particles at (i + 0.5) * 0.0125 within it,
  i (x) outer, j (y) inner. robot_mpm_1 = body anchor (0, 2) shape (6, 2)
  id -1, then legs anchor (0, 0), (1, 0), (4, 0), (5, 0) shape (1, 2), ids
  0, 1, 2, 3, in that order: 320 particles, 4 actuators. Positions get
  + (0.1, 0.1), then x += 0.4.
- Grid window of 40 x 40 nodes, dx = 1/40, dt = 1e-3, gravity 10, mass 1,
  volume 1, mu = lambda = 40, boundary 3 nodes. Its x origin is
  ((int)(x0 / dx - 0.5) - 5) * dx, x0 = particle 0's x at the start of the
  step (int truncates toward zero), its y origin 0; the same origin serves
  the step's P2G, grid update and G2P.
- Step t (state t -> t + 1), in order: centre of mass, height statistic,
  controller inputs, controller -> actuation, clear grid, P2G, grid update,
  G2P (MPM.md "Simulation").
- P2G: X = (x - origin) / dx, base = (int)(X - 0.5), fx = X - base,
  w = [0.5 (1.5 - fx)^2, 0.75 - (fx - 1)^2, 0.5 (fx - 0.5)^2];
  F' = (I + dt C) F, J = det F', R = [[a + d, b - c], [c - b, a + d]] /
  sqrt((a + d)^2 + (c - b)^2) for F' = [[a, b], [c, d]];
  tau = 2 mu (F' - R) F'^T + lambda (J - 1) J I + F' diag(0, act) F'^T with
  act = 5 a_k (actuator k) or 0 (id -1); affine = -(dt vol 4 / dx^2) tau + m C;
  node (i, j) of the 3 x 3 stencil: momentum += w (m v + affine (node - fx) dx),
  mass += w m.
- Grid update: v = mv / (m + 1e-10); v_y -= dt * 10; v = 0 (both components)
  on window nodes i < 3 with v_x < 0, i > 37 with v_x > 0, j < 3 with v_y < 0,
  j > 37 with v_y > 0.
- G2P: v' = sum w v_node; C' = sum 4 w v_node (node - fx)^T / dx;
  x' = x + dt v'; the next F is F'.
- F = I, C = 0, v = 0 at the start. An episode of T states has T - 1 steps.

Controllers (--controller):

- open_loop: a_k = tanh(sum_j w1[k][j] sin(20 t dt + 2 pi j / 4) + b1[k]) for
  the step leaving state t; loss = -(mean x of all particles at state T - 1).
- multitask (MPM.md "Controller, commands, losses", the `_vh` config):
  h = sin(W1 s + b1) (64 hidden), a = sin(W2 h + b2) (4 outputs), with the
  390 inputs s of state t:
    s[0:10]    sin(2 pi t / 200 + 2 pi j / 10), j = 0..9;
    s[10:330]  for group g = 0..79 (particles 4g .. 4g + 3, one column of a
               0.05 square), INTERLEAVED PER GROUP:
               s[10 + 4g + 0] = mean_p (x_p - c_x) / 0.05,
               s[10 + 4g + 1] = mean_p (y_p - c_y) / 0.05,
               s[10 + 4g + 2] = mean_p v_x,p, s[10 + 4g + 3] = mean_p v_y,p;
    s[330:360] v* / 0.08 (30 copies); s[360:390] (h* - 0.1) / 0.1 * 2 - 1.
  c = mean position of all (non-object) particles of state t. Height
  H[t] = min_p y_p of state t if t % 500 == 0, else max(H[t - 1], min_p y_p).
  Losses (B = 1, so the 1/B factors are 1: velocity factor 100 / (B * 1000)
  = 0.1, height factor 50 / B = 50):
    velocity = 0.1 * sum_{t in windows} (c_x[t] - c_x[t - 200] - v* / (1 + c*))^2
      windows "clean" (default):  t in [201, 499] and [701, 998];
      windows "authors":          t in [201, 499] and [701, 999], with
                                  c_x[999] = 0 (never computed, MPM.md).
    height = 50 * sum_{t in {498, 998}} (H[t] - h*)^2 if h* > 0.1 + 1e-6, else 0.
    loss = velocity + height.
  For T != 1000 the windows generalise as t % 500 in [201, 499] with
  t <= T - 2 (clean) or t <= T - 1 with c_x[T - 1] = 0 (authors); the height
  terms are at t % 500 == 498, t <= T - 2.

Readings of MPM.md where it was not explicit (also in the README of
tests/data/reference_mpm_fang/):

 1. Square order within a rectangle: x-major, i.e. for sx in range(shape_x):
    for sy in range(shape_y): (then i, j of the 4 x 4 particles). MPM.md only
    fixes the order inside a square; this decides which group is which
    controller input (not the physics, except rounding order of sums).
    Position: x = (ax + sx) * 0.05 + (i + 0.5) * 0.0125 + 0.1, then + 0.4;
    y = (ay + sy) * 0.05 + (j + 0.5) * 0.0125 + 0.1 (left to right in f64).
 2. The group inputs are interleaved per group [dx, dy, vx, vy] ("for each
    group ...: mean (x - centre) / 0.05 (x and y), then mean v (x and y)").
    Velocities are not scaled. --group-layout blocked gives the other
    reading (all 160 offsets, x/y per group, then all 160 velocities).
 3. Divisions by dx are written as divisions (x / dx), as MPM.md writes them.
 4. The lowest particle: y[argmin y] (torch.argmin: the first index among
    ties), so its gradient goes to that one particle; running max: the new
    minimum replaces H[t - 1] only if strictly larger (ties keep H[t - 1]).
    Ties occur only in the initial state, which does not depend on the
    parameters.
 5. The window origin, base = (int)(X - 0.5) and the boundary conditions are
    piecewise constant: no gradient flows through them (as in any
    autodiff of these rules).
 6. The boundary checks zero both components if any of the four conditions
    holds on the velocity after gravity; applying them one after another
    gives the same result (a zeroed velocity fails every later strict test).
 7. The open_loop controller uses actuation strength 5 (robot_mpm's) and the
    320-particle robot, per the brief; its loss is -(mean x at state T - 1).

Commands:

    mpm_fang_reference.py --controller open_loop|multitask --steps T
        --params P.json [--vstar V --hstar H --cstar C] [--windows clean|authors]
        [--fdcheck K [--fd-eps 1e-6] [--fd-seed 0]] --out OUT.json
      -> {"loss", "terms", "grad": {"w1": [[..]], "b1": [..], ["w2", "b2"]},
          "steps", "controller", "vstar", "hstar", "cstar", "windows",
          "final_mean_x", "final_mean_y", "particles", "window": {...},
          ["fdcheck": [...]]}  (full double precision)

    mpm_fang_reference.py --make-params SEED --controller C --out P.json
      numpy default_rng(SEED): w1 = U(-sqrt(6 / fan_in), +sqrt(6 / fan_in)),
      shape [out][in], row-major, then b1 = U(-0.1, 0.1), then (multitask)
      w2 and b2 the same way; fan_in is the layer's input count (open_loop:
      4; multitask: 390 and 64).

    mpm_fang_reference.py --selftest
      the vectorised step against a plain per-particle Python loop.
"""
import argparse
import json
import math
import sys
import time

# ---------------------------------------------------------------------------
# Constants (MPM.md "Simulation")

N_GRID = 40
DX = 1.0 / N_GRID
DT = 1e-3
GRAVITY = 10.0
P_MASS = 1.0
P_VOL = 1.0
MU = 40.0
LAMBDA = 40.0
BOUND = 3
ACT_STRENGTH = 5.0
WINDOW_MARGIN = 5            # cells left of particle 0's cell

# Bodies (MPM.md "Bodies")
SQUARE = 0.05
PER_SIDE = 4                 # 4 x 4 particles per square
SPACING = 0.0125
OFFSET = (0.1, 0.1)
SHIFT_X = 0.4
ROBOT_MPM_1 = [  # (anchor, shape, actuator id), in this order
    ((0, 2), (6, 2), -1),
    ((0, 0), (1, 2), 0),
    ((1, 0), (1, 2), 1),
    ((4, 0), (1, 2), 2),
    ((5, 0), (1, 2), 3),
]
N_ACT = 4

# Controllers
OL_SINES = 4
OL_OMEGA = 20.0
MT_SINES = 10
MT_PERIOD = 200.0
MT_HIDDEN = 64
MT_CMD_COPIES = 30
GROUP = 4
EPISODE_HALF = 500           # commands / height reset period
SELFTEST_STEPS = 150         # enough to reach the sticky floor


# ---------------------------------------------------------------------------
# Bodies

def robot_particles(design=ROBOT_MPM_1):
    """Positions [[x, y], ...] and actuator ids (Python floats / ints).

    Reading (MPM.md fixes only the order inside a square): rectangles in
    order; within a rectangle squares x-major (sx outer, sy inner); within a
    square i (x) outer, j (y) inner.
    """
    pos, aid = [], []
    for (ax, ay), (sw, sh), act in design:
        for sx in range(sw):
            for sy in range(sh):
                for i in range(PER_SIDE):
                    for j in range(PER_SIDE):
                        x = (ax + sx) * SQUARE + (i + 0.5) * SPACING + OFFSET[0]
                        y = (ay + sy) * SQUARE + (j + 0.5) * SPACING + OFFSET[1]
                        pos.append([x + SHIFT_X, y])
                        aid.append(act)
    return pos, aid


# ---------------------------------------------------------------------------
# Simulation (torch, f64, autograd)

_TORCH = None


def _torch():
    global _TORCH
    if _TORCH is None:
        import torch
        torch.set_num_threads(1)
        _TORCH = torch
    return _TORCH


def window_origin(x0):
    """The window's x origin for particle 0's x (a Python float)."""
    return (int(x0 / DX - 0.5) - WINDOW_MARGIN) * DX


class Grid:
    """Constant tensors: stencil offsets and boundary masks of the dense
    40 x 40 window grid; node (i, j) is stored at i * N_GRID + j."""

    def __init__(self):
        torch = _torch()
        f64 = torch.float64
        self.off = torch.tensor([[a, b] for a in range(3) for b in range(3)], dtype=f64)  # (9, 2)
        self.off_i = self.off.long()
        gi = torch.arange(N_GRID).repeat_interleave(N_GRID)
        gj = torch.arange(N_GRID).repeat(N_GRID)
        self.left = gi < BOUND
        self.right = gi > N_GRID - BOUND         # i > 37
        self.bottom = gj < BOUND
        self.top = gj > N_GRID - BOUND           # j > 37
        self.gravity = torch.tensor([0.0, DT * GRAVITY], dtype=f64)
        self.eye = torch.eye(2, dtype=f64)


class WindowStats:
    """Extremes over the episode of particle positions in window grid units
    (X = (x - origin) / dx) and of the stencil nodes used."""

    def __init__(self):
        self.X_min = [math.inf, math.inf]
        self.X_max = [-math.inf, -math.inf]
        self.node_min = [10 ** 9, 10 ** 9]
        self.node_max = [-10 ** 9, -10 ** 9]
        self.origin_min = math.inf
        self.origin_max = -math.inf

    def add(self, X, base, origin):
        Xd = X.detach()
        for a in range(2):
            self.X_min[a] = min(self.X_min[a], float(Xd[:, a].min()))
            self.X_max[a] = max(self.X_max[a], float(Xd[:, a].max()))
            self.node_min[a] = min(self.node_min[a], int(base[:, a].min()))
            self.node_max[a] = max(self.node_max[a], int(base[:, a].max()) + 2)
        self.origin_min = min(self.origin_min, origin)
        self.origin_max = max(self.origin_max, origin)

    def json(self):
        return {"X_min": self.X_min, "X_max": self.X_max,
                "stencil_node_min": self.node_min, "stencil_node_max": self.node_max,
                "origin_x_min": self.origin_min, "origin_x_max": self.origin_max}


def stencil(g, x, origin):
    """Window coordinates of the particles: flat node indices (N, 9), weights
    (N, 9) and node - fx (N, 9, 2) in grid units, plus X and base."""
    torch = _torch()
    org = torch.tensor([origin, 0.0], dtype=torch.float64)
    X = (x - org) / DX                                       # (N, 2)
    base = torch.trunc(X.detach() - 0.5)                     # (int) truncates
    fx = X - base
    w = torch.stack([0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1.0) ** 2, 0.5 * (fx - 0.5) ** 2], dim=1)  # (N, 3, 2)
    weight = w[:, g.off_i[:, 0], 0] * w[:, g.off_i[:, 1], 1]  # (N, 9)
    bl = base.long()
    node = bl[:, None, :] + g.off_i[None, :, :]              # (N, 9, 2)
    if int(node.min()) < 0 or int(node.max()) > N_GRID - 1:
        raise RuntimeError("a particle's 3 x 3 stencil left the 40 x 40 window "
                           "(nodes %d..%d)" % (int(node.min()), int(node.max())))
    flat = node[..., 0] * N_GRID + node[..., 1]               # (N, 9)
    dpos = g.off[None, :, :] - fx[:, None, :]                 # (N, 9, 2) node - fx
    return flat, weight, dpos, X, bl


def mpm_step(g, state, act, stats=None):
    """One MLS-MPM step. state = (x (N, 2), v (N, 2), C (N, 2, 2), F (N, 2, 2));
    act (N,) the particles' actuation (5 a_k or 0). Returns the next state."""
    torch = _torch()
    x, v, C, F = state
    n = x.shape[0]
    origin = window_origin(float(x[0, 0].detach()))
    flat, weight, dpos, X, base = stencil(g, x, origin)
    if stats is not None:
        stats.add(X, base, origin)

    # P2G
    Fn = (g.eye + DT * C) @ F                                  # F' = (I + dt C) F
    a, b, c, d = Fn[:, 0, 0], Fn[:, 0, 1], Fn[:, 1, 0], Fn[:, 1, 1]
    J = a * d - b * c
    s, r = a + d, c - b
    norm = torch.sqrt(s * s + r * r)
    R = torch.stack([torch.stack([s, -r], -1), torch.stack([r, s], -1)], -2) / norm[:, None, None]
    Fn_T = Fn.transpose(1, 2)
    zero = torch.zeros_like(act)
    A = torch.stack([torch.stack([zero, zero], -1), torch.stack([zero, act], -1)], -2)  # diag(0, act)
    tau = (2.0 * MU * (Fn - R) @ Fn_T
           + (LAMBDA * (J - 1.0) * J)[:, None, None] * g.eye
           + Fn @ A @ Fn_T)
    affine = -(DT * P_VOL * 4.0 / (DX * DX)) * tau + P_MASS * C
    # momentum of node k: w (m v + affine (node - fx) dx)
    adp = torch.einsum("nab,nkb->nka", affine, dpos * DX)     # (N, 9, 2)
    mom = weight[..., None] * (P_MASS * v[:, None, :] + adp)
    idx = flat.reshape(-1)
    grid_mv = torch.zeros(N_GRID * N_GRID, 2, dtype=torch.float64).index_add(0, idx, mom.reshape(-1, 2))
    grid_m = torch.zeros(N_GRID * N_GRID, dtype=torch.float64).index_add(0, idx, (weight * P_MASS).reshape(-1))

    # Grid update
    gv = grid_mv / (grid_m + 1e-10)[:, None]
    gv = gv - g.gravity
    vd = gv.detach()
    stop = ((g.left & (vd[:, 0] < 0)) | (g.right & (vd[:, 0] > 0))
            | (g.bottom & (vd[:, 1] < 0)) | (g.top & (vd[:, 1] > 0)))
    gv = torch.where(stop[:, None], torch.zeros((), dtype=torch.float64), gv)

    # G2P
    vk = gv[flat]                                            # (N, 9, 2)
    wv = weight[..., None] * vk
    v_new = wv.sum(1)
    C_new = (4.0 / DX) * torch.einsum("nka,nkb->nab", wv, dpos)
    x_new = x + DT * v_new
    return (x_new, v_new, C_new, Fn)


def initial_state():
    torch = _torch()
    pos, aid = robot_particles()
    n = len(pos)
    x = torch.tensor(pos, dtype=torch.float64)
    v = torch.zeros(n, 2, dtype=torch.float64)
    C = torch.zeros(n, 2, 2, dtype=torch.float64)
    F = torch.eye(2, dtype=torch.float64).repeat(n, 1, 1)
    return (x, v, C, F), aid


# ---------------------------------------------------------------------------
# Controllers

def open_loop_action(P, t):
    """The 4 actions for the step leaving state t (open-loop sine controller)."""
    torch = _torch()
    ph = torch.tensor([math.sin(OL_OMEGA * t * DT + 2.0 * math.pi * j / OL_SINES)
                       for j in range(OL_SINES)], dtype=torch.float64)
    return torch.tanh(P["w1"] @ ph + P["b1"])


def multitask_inputs(t, x, v, centre, vstar, hstar, layout="interleaved"):
    """The 390 controller inputs of state t (see the module docstring)."""
    torch = _torch()
    n = x.shape[0]
    sines = torch.tensor([math.sin(2.0 * math.pi * t / MT_PERIOD + 2.0 * math.pi * j / MT_SINES)
                          for j in range(MT_SINES)], dtype=torch.float64)
    rel = ((x - centre) / SQUARE).reshape(n // GROUP, GROUP, 2).mean(1)   # (80, 2)
    vel = v.reshape(n // GROUP, GROUP, 2).mean(1)                           # (80, 2)
    if layout == "interleaved":
        groups = torch.cat([rel, vel], dim=1).reshape(-1)                  # [dx, dy, vx, vy] per group
    else:
        groups = torch.cat([rel.reshape(-1), vel.reshape(-1)])
    cmd = torch.tensor([vstar / 0.08] * MT_CMD_COPIES
                       + [(hstar - 0.1) / 0.1 * 2.0 - 1.0] * MT_CMD_COPIES, dtype=torch.float64)
    return torch.cat([sines, groups, cmd])


def multitask_action(P, s):
    torch = _torch()
    h = torch.sin(P["w1"] @ s + P["b1"])
    return torch.sin(P["w2"] @ h + P["b2"])


# ---------------------------------------------------------------------------
# Episode and losses

def velocity_window(T, windows):
    """The t of the velocity loss (see the module docstring)."""
    last = T - 2 if windows == "clean" else T - 1
    return [t for t in range(201, last + 1) if 201 <= t % EPISODE_HALF <= 499]


def rollout(P, controller, T, vstar=0.0, hstar=0.1, cstar=0.0, windows="clean",
            layout="interleaved", stats=None):
    """Run an episode of T states; returns (loss, terms dict of tensors,
    final state)."""
    torch = _torch()
    g = Grid()
    state, aid = initial_state()
    aid_t = torch.tensor(aid)
    active = (aid_t >= 0).to(torch.float64)       # id -1: no actuation
    gather = aid_t.clamp(min=0)                   # (id -2 would read actuator 0)
    n = len(aid)
    cx = [None] * T                               # centre x of states 0 .. T - 2
    H = [None] * T
    for t in range(T - 1):
        x, v, C, F = state
        if controller == "multitask":
            centre = x.mean(0)                        # all particles: no object here
            cx[t] = centre[0]
            y = x[:, 1]
            low = y[torch.argmin(y.detach())]
            if t % EPISODE_HALF == 0:
                H[t] = low
            else:
                H[t] = torch.where(low > H[t - 1], low, H[t - 1])
            s = multitask_inputs(t, x, v, centre, vstar, hstar, layout)
            a = multitask_action(P, s)
        else:
            a = open_loop_action(P, t)
        act = ACT_STRENGTH * a[gather] * active
        state = mpm_step(g, state, act, stats)

    xT = state[0]
    terms = {}
    if controller == "open_loop":
        loss = -xT[:, 0].mean()
        terms["neg_mean_x"] = loss
    else:
        zero = torch.zeros((), dtype=torch.float64)
        if windows == "authors":
            cx[T - 1] = zero                              # never computed (MPM.md)
        target = vstar / (1.0 + cstar)                    # constant commands
        vel = zero
        for t in velocity_window(T, windows):
            vel = vel + (cx[t] - cx[t - 200] - target) ** 2
        vel = (100.0 / (1 * 1000)) * vel                  # B = 1
        hgt = zero
        if hstar > 0.1 + 1e-6:
            for t in range(T - 1):
                if t % EPISODE_HALF == EPISODE_HALF - 2:
                    hgt = hgt + (50.0 / 1) * (H[t] - hstar) ** 2
        terms["velocity"] = vel
        terms["height"] = hgt
        loss = vel + hgt
    return loss, terms, state


# ---------------------------------------------------------------------------
# Parameters

def shapes(controller):
    if controller == "open_loop":
        return [("w1", (N_ACT, OL_SINES)), ("b1", (N_ACT,))]
    n_in = MT_SINES + 4 * (320 // GROUP) + 2 * MT_CMD_COPIES
    return [("w1", (MT_HIDDEN, n_in)), ("b1", (MT_HIDDEN,)),
            ("w2", (N_ACT, MT_HIDDEN)), ("b2", (N_ACT,))]


def make_params(seed, controller):
    import numpy as np
    rng = np.random.default_rng(seed)
    out = {}
    for name, shp in shapes(controller):
        if name.startswith("w"):
            lim = math.sqrt(6.0 / shp[1])
            out[name] = rng.uniform(-lim, lim, shp).tolist()
        else:
            out[name] = rng.uniform(-0.1, 0.1, shp).tolist()
    return out


def read_params(path, controller):
    torch = _torch()
    with open(path) as f:
        j = json.load(f)
    P = {}
    for name, shp in shapes(controller):
        t = torch.tensor(j[name], dtype=torch.float64)
        if tuple(t.shape) != shp:
            raise SystemExit("%s: %s has shape %s, expected %s" % (path, name, tuple(t.shape), shp))
        P[name] = t
    return P


# ---------------------------------------------------------------------------
# Commands

def run_episode(args, P, stats=None, grad=True):
    torch = _torch()
    kw = dict(vstar=args.vstar, hstar=args.hstar, cstar=args.cstar,
              windows=args.windows, layout=args.group_layout, stats=stats)
    if grad:
        return rollout(P, args.controller, args.steps, **kw)
    with torch.no_grad():
        return rollout(P, args.controller, args.steps, **kw)


def fd_check(args, P, grads, K):
    """Central finite differences of K random parameter entries."""
    import numpy as np
    torch = _torch()
    entries = []
    for name, shp in shapes(args.controller):
        for flat in range(int(np.prod(shp))):
            entries.append((name, flat))
    # one random entry of each parameter tensor first (so biases are always
    # exercised), then the rest drawn from the remaining entries
    rng = np.random.default_rng(args.fd_seed)
    pick, start = [], 0
    for name, shp in shapes(args.controller):
        size = int(np.prod(shp))
        if len(pick) < K:
            pick.append(start + int(rng.integers(size)))
        start += size
    rest = [k for k in range(len(entries)) if k not in pick]
    more = max(0, min(K, len(entries)) - len(pick))
    pick = sorted(pick + [rest[k] for k in rng.choice(len(rest), size=more, replace=False).tolist()])
    x_init = initial_state()[0][0][:, 0]

    def f(Pp):
        loss, _, st = run_episode(args, Pp, grad=False)
        if args.controller == "open_loop":
            # the loss less the constant -mean(x_init): same derivative, but
            # the difference of two nearby values is not lost to rounding
            return float(-(st[0][:, 0] - x_init).mean())
        return float(loss)

    out = []
    gmax = max(float(g.abs().max()) for g in grads.values())
    for k in pick:
        name, flat = entries[k]
        base = P[name].detach()
        vals = []
        for sgn in (1, -1):
            Pp = {q: P[q].detach().clone() for q in P}
            Pp[name].view(-1)[flat] = base.reshape(-1)[flat] + sgn * args.fd_eps
            vals.append(f(Pp))
        fd = (vals[0] - vals[1]) / (2 * args.fd_eps)
        ad = float(grads[name].reshape(-1)[flat])
        err = abs(fd - ad)
        idx = list(np.unravel_index(flat, tuple(P[name].shape)))
        label = "%s%s" % (name, "".join("[%d]" % int(i) for i in idx))
        rec = {"param": label, "autograd": ad, "fd": fd, "abs_err": err,
               "rel_err": err / max(abs(fd), abs(ad), 1e-300), "err_over_max_grad": err / gmax}
        out.append(rec)
        print("  %-14s autograd %+.16e  fd %+.16e  rel %.3e  err/max|g| %.3e"
              % (label, ad, fd, rec["rel_err"], rec["err_over_max_grad"]))
    return out


def cmd_run(args):
    torch = _torch()
    P = read_params(args.params, args.controller)
    for p in P.values():
        p.requires_grad_(True)
    stats = WindowStats()
    t0 = time.time()
    loss, terms, state = run_episode(args, P, stats=stats)
    t1 = time.time()
    loss.backward()
    t2 = time.time()
    grads = {k: P[k].grad.detach().clone() for k in P}
    xT = state[0].detach()
    vals = [float(loss.detach())] + [float(t.detach()) for t in terms.values()] + \
        [float(g.abs().max()) for g in grads.values()] + [float(xT.abs().max())]
    if not all(math.isfinite(q) for q in vals):
        raise SystemExit("non-finite values: %r" % vals)
    out = {"controller": args.controller, "steps": args.steps,
           "loss": float(loss.detach()), "terms": {k: float(v.detach()) for k, v in terms.items()},
           "grad": {k: g.tolist() for k, g in grads.items()},
           "final_mean_x": float(xT[:, 0].mean()), "final_mean_y": float(xT[:, 1].mean()),
           "particles": int(xT.shape[0]), "window": stats.json()}
    if args.controller == "multitask":
        out.update({"vstar": args.vstar, "hstar": args.hstar, "cstar": args.cstar,
                    "windows": args.windows, "group_layout": args.group_layout, "batch": 1})
        if args.windows == "clean" and args.steps == 1000:
            out["velocity_windows"] = [[201, 499], [701, 998]]
        elif args.steps == 1000:
            out["velocity_windows"] = [[201, 499], [701, 999]]
    gn = math.sqrt(sum(float((g * g).sum()) for g in grads.values()))
    print("%s T=%d loss=%r terms=%r |grad|=%.6e final_mean_x=%r"
          % (args.controller, args.steps, out["loss"], out["terms"], gn, out["final_mean_x"]))
    print("  forward %.2f s, backward %.2f s; window: %r" % (t1 - t0, t2 - t1, out["window"]))
    if args.fdcheck:
        t3 = time.time()
        out["fdcheck"] = fd_check(args, P, grads, args.fdcheck)
        out["fdcheck_eps"] = args.fd_eps
        print("  fdcheck: max rel err %.3e, max err/max|g| %.3e (%.1f s)"
              % (max(r["rel_err"] for r in out["fdcheck"]),
                 max(r["err_over_max_grad"] for r in out["fdcheck"]), time.time() - t3))
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


# ---------------------------------------------------------------------------
# Self-test: the vectorised step against a plain per-particle loop

def loop_step(state, act):
    """The same step rules as mpm_step, written per particle with Python
    floats and a dict grid (a second, independent transcription of MPM.md)."""
    xs, vs, Cs, Fs = state
    origin = (int(xs[0][0] / DX - 0.5) - 5) * DX
    grid = {}
    for p in range(len(xs)):
        X = [(xs[p][0] - origin) / DX, xs[p][1] / DX]
        base = [int(X[0] - 0.5), int(X[1] - 0.5)]
        fx = [X[0] - base[0], X[1] - base[1]]
        w = [[0.5 * (1.5 - f) ** 2, 0.75 - (f - 1) ** 2, 0.5 * (f - 0.5) ** 2] for f in fx]
        C, F = Cs[p], Fs[p]
        M = [[1 + DT * C[0][0], DT * C[0][1]], [DT * C[1][0], 1 + DT * C[1][1]]]
        Fn = [[sum(M[i][k] * F[k][j] for k in range(2)) for j in range(2)] for i in range(2)]
        a, b, c, d = Fn[0][0], Fn[0][1], Fn[1][0], Fn[1][1]
        J = a * d - b * c
        nr = math.sqrt((a + d) ** 2 + (c - b) ** 2)
        R = [[(a + d) / nr, (b - c) / nr], [(c - b) / nr, (a + d) / nr]]
        D = [[Fn[i][j] - R[i][j] for j in range(2)] for i in range(2)]
        tau = [[2 * MU * sum(D[i][k] * Fn[j][k] for k in range(2))
                + (LAMBDA * (J - 1) * J if i == j else 0.0)
                + Fn[i][1] * act[p] * Fn[j][1] for j in range(2)] for i in range(2)]
        aff = [[-(DT * P_VOL * 4 / DX ** 2) * tau[i][j] + P_MASS * C[i][j] for j in range(2)] for i in range(2)]
        for oi in range(3):
            for oj in range(3):
                wt = w[0][oi] * w[1][oj]
                dp = [(oi - fx[0]) * DX, (oj - fx[1]) * DX]
                key = (base[0] + oi, base[1] + oj)
                e = grid.setdefault(key, [0.0, 0.0, 0.0])
                for q in range(2):
                    e[q] += wt * (P_MASS * vs[p][q] + aff[q][0] * dp[0] + aff[q][1] * dp[1])
                e[2] += wt * P_MASS
    gv = {}
    for (i, j), (mx, my, m) in grid.items():
        vx, vy = mx / (m + 1e-10), my / (m + 1e-10) - DT * GRAVITY
        if i < 3 and vx < 0:
            vx = vy = 0.0
        if i > 37 and vx > 0:
            vx = vy = 0.0
        if j < 3 and vy < 0:
            vx = vy = 0.0
        if j > 37 and vy > 0:
            vx = vy = 0.0
        gv[(i, j)] = (vx, vy)
    nxs, nvs, nCs, nFs = [], [], [], []
    for p in range(len(xs)):
        X = [(xs[p][0] - origin) / DX, xs[p][1] / DX]
        base = [int(X[0] - 0.5), int(X[1] - 0.5)]
        fx = [X[0] - base[0], X[1] - base[1]]
        w = [[0.5 * (1.5 - f) ** 2, 0.75 - (f - 1) ** 2, 0.5 * (f - 0.5) ** 2] for f in fx]
        nv = [0.0, 0.0]
        nC = [[0.0, 0.0], [0.0, 0.0]]
        for oi in range(3):
            for oj in range(3):
                wt = w[0][oi] * w[1][oj]
                gvel = gv[(base[0] + oi, base[1] + oj)]
                dg = [oi - fx[0], oj - fx[1]]
                for q in range(2):
                    nv[q] += wt * gvel[q]
                    for r in range(2):
                        nC[q][r] += 4 * wt * gvel[q] * dg[r] / DX
        nxs.append([xs[p][0] + DT * nv[0], xs[p][1] + DT * nv[1]])
        nvs.append(nv)
        nCs.append(nC)
        C, F = Cs[p], Fs[p]
        M = [[1 + DT * C[0][0], DT * C[0][1]], [DT * C[1][0], 1 + DT * C[1][1]]]
        nFs.append([[sum(M[i][k] * F[k][j] for k in range(2)) for j in range(2)] for i in range(2)])
    return nxs, nvs, nCs, nFs


def cmd_selftest(args):
    import random
    torch = _torch()
    g = Grid()
    state, aid = initial_state()
    lstate = tuple(s.tolist() for s in state)
    rnd = random.Random(5)
    worst = 0.0
    for t in range(SELFTEST_STEPS):
        a4 = [rnd.uniform(-1, 1) for _ in range(4)]
        act_l = [0.0 if k < 0 else ACT_STRENGTH * a4[k] for k in aid]
        act = torch.tensor(act_l, dtype=torch.float64)
        state = mpm_step(g, state, act)
        lstate = loop_step(lstate, act_l)
        for s, ls in zip(state, lstate):
            d = float((s - torch.tensor(ls, dtype=torch.float64)).abs().max())
            scale = max(1.0, float(s.abs().max()))
            worst = max(worst, d / scale)
    print("selftest: %d randomly actuated steps, vectorised vs loop: max diff %.3e" % (SELFTEST_STEPS, worst))
    pos, aid = robot_particles()
    print("particles %d; first %r (id %d); last %r (id %d)" % (len(pos), pos[0], aid[0], pos[-1], aid[-1]))
    if worst > 1e-12:
        raise SystemExit("selftest failed")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--controller", choices=["open_loop", "multitask"])
    ap.add_argument("--steps", type=int, default=1000, help="states in the episode (T; T - 1 steps)")
    ap.add_argument("--params")
    ap.add_argument("--vstar", type=float, default=0.0)
    ap.add_argument("--hstar", type=float, default=0.1)
    ap.add_argument("--cstar", type=float, default=0.0)
    ap.add_argument("--windows", choices=["clean", "authors"], default="clean")
    ap.add_argument("--group-layout", choices=["interleaved", "blocked"], default="interleaved")
    ap.add_argument("--fdcheck", type=int, default=0, metavar="K", help="check K random gradient entries")
    ap.add_argument("--fd-eps", type=float, default=1e-6)
    ap.add_argument("--fd-seed", type=int, default=0)
    ap.add_argument("--make-params", type=int, metavar="SEED")
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    if args.selftest:
        return cmd_selftest(args)
    if args.controller is None or args.out is None:
        ap.error("--controller and --out are required")
    if args.make_params is not None:
        with open(args.out, "w") as f:
            json.dump(make_params(args.make_params, args.controller), f)
            f.write("\n")
        return
    if args.params is None:
        ap.error("--params is required")
    if args.steps < 2:
        ap.error("--steps must be at least 2 (one step)")
    cmd_run(args)


if __name__ == "__main__":
    main(sys.argv[1:])
