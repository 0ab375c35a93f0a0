#!/usr/bin/env python3
"""Taichi baseline of the ELDiR rollout (bench/torch_baseline.py's workload, in Taichi).

Written in the style of the ELDiR authors' simulator (difftaichi's mass-spring robots):
global ti.fields holding every state x[r, t, i] of the rollout (a full tape), one
@ti.kernel per phase of a step (centre, the two layers, the springs, the advance with
the ground model of --evo's world: noslip for examples/eldir.evo, the default, or
mass_spring_friction's for e.g. examples/grammar_walker.evo), the layers as atomic
accumulations into fields, and ti.ad.Tape for the backward; CPU back end, f64. The robots
of `evoc_cpu_bench --dump-robots DIR` (or any list of ROBOTS.json entries), padded
to the largest of the batch (bench/cpu/peers_common.py); all robots of the batch run in
each kernel (the robot is the outermost index). Unlike the authors' code the hidden layer
is tanh(z) written to its own field (their `h += tanh(h) - h` in place differentiates
1 - tanh(tanh(z))^2, docs/evolution.md), so the gradient is the true one, as evoc's.

First checks that its per-robot losses equal `evoc sim EVO`'s on the same robots and
weights to 1e-9 relative, and its gradients to 1e-7 (exit 1 otherwise), then times one
forward + backward (after a warm-up that compiles the kernels; best of --repeats).

    python3 bench/cpu/taichi_baseline.py DIR/robots_6x10.json [--robots N] [--steps 1000]
        [--evo examples/eldir.evo] [--threads N] [--check-steps 100] [--no-check]
        [--repeats 1]
"""
import math
import os
import sys
import time

try:
    import taichi as ti
except ImportError:
    print("taichi_baseline: Taichi is not installed (pip install taichi)")
    sys.exit(0)
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers_common import (NSINE, OMEGA, UNITS, Batch, World, best_of, check,  # noqa: E402
                          peer_parser, report, require_gradient)

args = peer_parser(lambda ap: ap.add_argument("--threads", type=int, default=0)).parse_args()
WORLD = World(args.evo)
# the world's settings, constants of the kernels
DT, GRAVITY, DAMPING, GROUND = WORLD.dt, WORLD.gravity, WORLD.damping, WORLD.ground
FRICTION, MU = WORLD.contact == "friction", WORLD.friction or 0.0

real = ti.f64
init = dict(arch=ti.cpu, default_fp=real, default_ip=ti.i32, log_level=ti.WARN)
if args.threads > 0:
    init["cpu_max_num_threads"] = args.threads
ti.init(**init)

batch = Batch(args.robots, args.limit, WORLD)
B, P, S, H, NIN = batch.B, batch.P, batch.S, UNITS, batch.nin
max_steps = args.steps

scalar = lambda: ti.field(dtype=real)  # noqa: E731
vec = lambda: ti.Vector.field(2, dtype=real)  # noqa: E731

loss = scalar()
robot_loss = scalar()
x, v, v_inc, center = vec(), vec(), vec(), vec()
hidden_pre, hidden, actuation = scalar(), scalar(), scalar()
weights1, bias1, weights2, bias2 = scalar(), scalar(), scalar(), scalar()
n_points, n_springs = ti.field(ti.i32), ti.field(ti.i32)
spring_anchor_a, spring_anchor_b = ti.field(ti.i32), ti.field(ti.i32)
spring_length, spring_stiffness, spring_actuation = scalar(), scalar(), scalar()

ti.root.place(loss)
ti.root.dense(ti.i, B).place(robot_loss, n_points, n_springs)
ti.root.dense(ti.ijk, (B, max_steps, P)).place(x, v, v_inc)
ti.root.dense(ti.ij, (B, max_steps)).place(center)
ti.root.dense(ti.ijk, (B, max_steps, H)).place(hidden_pre, hidden)
ti.root.dense(ti.ijk, (B, max_steps, S)).place(actuation)
ti.root.dense(ti.ijk, (B, H, NIN)).place(weights1)
ti.root.dense(ti.ij, (B, H)).place(bias1)
ti.root.dense(ti.ijk, (B, S, H)).place(weights2)
ti.root.dense(ti.ij, (B, S)).place(bias2)
ti.root.dense(ti.ij, (B, S)).place(spring_anchor_a, spring_anchor_b, spring_length,
                                   spring_stiffness, spring_actuation)
ti.root.lazy_grad()


@ti.kernel
def compute_center(t: ti.i32):
    for r, i in ti.ndrange(B, P):
        if i < n_points[r]:
            center[r, t] += x[r, t, i] / n_points[r]


@ti.kernel
def nn1(t: ti.i32):
    for r, i in ti.ndrange(B, H):
        act = bias1[r, i] + weights1[r, i, NSINE + 4 * P] + weights1[r, i, NSINE + 4 * P + 1]
        for j in ti.static(range(NSINE)):
            act += weights1[r, i, j] * ti.sin(OMEGA * t * DT + 2 * math.pi / NSINE * j)
        hidden_pre[r, t, i] += act
    for r, i, k in ti.ndrange(B, H, P):
        if k < n_points[r]:
            offset = x[r, t, k] - center[r, t]
            hidden_pre[r, t, i] += 0.05 * (weights1[r, i, NSINE + 4 * k] * offset[0] +
                                           weights1[r, i, NSINE + 4 * k + 1] * offset[1] +
                                           weights1[r, i, NSINE + 4 * k + 2] * v[r, t, k][0] +
                                           weights1[r, i, NSINE + 4 * k + 3] * v[r, t, k][1])


@ti.kernel
def nn1_act(t: ti.i32):
    for r, i in ti.ndrange(B, H):
        hidden[r, t, i] = ti.tanh(hidden_pre[r, t, i])


@ti.kernel
def nn2(t: ti.i32):
    for r, s in ti.ndrange(B, S):
        if s < n_springs[r]:
            act = bias2[r, s]
            for j in ti.static(range(H)):
                act += weights2[r, s, j] * hidden[r, t, j]
            actuation[r, t, s] = ti.tanh(act)


@ti.kernel
def apply_spring_force(t: ti.i32):
    for r, s in ti.ndrange(B, S):
        if s < n_springs[r]:
            a = spring_anchor_a[r, s]
            b = spring_anchor_b[r, s]
            dist = x[r, t, a] - x[r, t, b]
            length = dist.norm() + 1e-4
            target = spring_length[r, s] * (1.0 + spring_actuation[r, s] * actuation[r, t, s])
            impulse = DT * (length - target) * spring_stiffness[r, s] / length * dist
            ti.atomic_add(v_inc[r, t + 1, a], -impulse)
            ti.atomic_add(v_inc[r, t + 1, b], impulse)


# min, max and abs as evoc differentiates them (compiler/autodiff/AdjointRules.cpp): on a
# tie the first operand takes the adjoint; abs'(0) = 0.
@ti.func
def vmin(a, b):
    return ti.select(b < a, b, a)


@ti.func
def vmax(a, b):
    return ti.select(b > a, b, a)


@ti.func
def vabs(a):
    return ti.select(a > 0, a, ti.select(a < 0, -a, 0.0))


@ti.kernel
def advance_toi(t: ti.i32):
    for r, i in ti.ndrange(B, P):
        if i < n_points[r]:
            s = ti.exp(-DT * DAMPING)
            old_v = s * v[r, t - 1, i] + ti.Vector([0.0, DT * GRAVITY]) + v_inc[r, t, i]
            old_x = x[r, t - 1, i]
            new_x = old_x + DT * old_v
            if ti.static(not FRICTION):
                # stdlib's mass_spring_noslip: stop at the time of impact, velocity 0
                hit = new_x[1] < GROUND and old_v[1] < -1e-4
                toi = -(old_x[1] - GROUND) / ti.select(hit, old_v[1], -1.0)
                step = ti.select(hit, toi, DT)
                v[r, t, i] = ti.select(hit, 0.0, 1.0) * old_v
                x[r, t, i] = old_x + step * old_v
            else:
                # stdlib's mass_spring_friction on flat ground (normal (0, 1), gap
                # p.y - g, speed v.y): time of impact, the normal velocity dropped,
                # Coulomb friction on the tangential one, pushed out of the ground
                toi = vmin(vmax(vabs(old_x[1] - GROUND) / (vabs(old_v[1]) + 1e-10), 0.0), DT)
                q = old_x + toi * old_v
                vn = old_v[1]
                vt = ti.Vector([old_v[0], old_v[1] - vn])
                # norm(vt) and vt / norm(vt) where it is > 0, their derivatives 0
                # elsewhere (sqrt'(0) and 0 / 0 would make NaN)
                s2 = vt.dot(vt)
                pos = s2 > 0
                speed = ti.select(pos, ti.sqrt(ti.select(pos, s2, 1.0)), 0.0)
                den = ti.select(pos, speed, 1.0)
                dirn = ti.Vector([ti.select(pos, vt[0] / den, 0.0), ti.select(pos, vt[1] / den, 0.0)])
                v2 = vt - dirn * MU * vmin(vabs(vn), speed)
                late = toi < DT
                q2 = q + ti.select(late, DT - toi, 0.0) * v2
                hit = new_x[1] < GROUND
                x[r, t, i] = ti.Vector([ti.select(hit, q2[0], new_x[0]),
                                        ti.select(hit, vmax(q2[1], GROUND), new_x[1])])
                v[r, t, i] = ti.Vector([ti.select(hit, v2[0], old_v[0]),
                                        ti.select(hit, v2[1], old_v[1])])


@ti.kernel
def compute_loss(t: ti.i32):
    for r, i in ti.ndrange(B, P):
        if i < n_points[r]:
            d = -(x[r, t, i][0] - x[r, 0, i][0]) / n_points[r]
            robot_loss[r] += d
            loss[None] += d


@ti.kernel
def clear_states():
    for r, t, i in ti.ndrange(B, max_steps, P):
        v_inc[r, t, i] = ti.Vector([0.0, 0.0])
        if t > 0:
            x[r, t, i] = ti.Vector([0.0, 0.0])
            v[r, t, i] = ti.Vector([0.0, 0.0])
    for r, t in ti.ndrange(B, max_steps):
        center[r, t] = ti.Vector([0.0, 0.0])
    for r, t, i in ti.ndrange(B, max_steps, H):
        hidden_pre[r, t, i] = 0.0
    for r in range(B):
        robot_loss[r] = 0.0


def forward(T):
    for t in range(1, T):
        compute_center(t - 1)
        nn1(t - 1)
        nn1_act(t - 1)
        nn2(t - 1)
        apply_spring_force(t - 1)
        advance_toi(t)
    compute_loss(T - 1)


def rollout(T, grad=True):
    clear_states()
    loss[None] = 0.0
    if grad:
        with ti.ad.Tape(loss=loss):
            forward(T)
    else:
        forward(T)
    return robot_loss.to_numpy()


def main():
    w1, b1, w2, b2 = batch.init_params()
    for f, a in ((weights1, w1), (bias1, b1), (weights2, w2), (bias2, b2),
                 (n_points, batch.npts.astype(np.int32)), (n_springs, batch.nspr.astype(np.int32)),
                 (spring_anchor_a, batch.a), (spring_anchor_b, batch.b), (spring_length, batch.rest),
                 (spring_stiffness, batch.stiff), (spring_actuation, batch.actu)):
        f.from_numpy(a)
    x0 = np.zeros((B, max_steps, P, 2))
    x0[:, 0] = batch.x0
    x.from_numpy(x0)  # state 0; clear_states() keeps it
    v.fill(0)

    if not args.no_check:
        cT = min(args.check_steps, args.steps)
        def run(T):
            losses = rollout(T)
            return losses, tuple(f.grad.to_numpy() for f in (weights1, bias1, weights2, bias2))

        check("taichi", batch, (w1, b1, w2, b2), run, cT)

    t0 = time.perf_counter()
    rollout(args.steps)  # warm-up: compiles the kernels and their adjoints
    compile_s = time.perf_counter() - t0
    best, _ = best_of(args.repeats, lambda: rollout(args.steps))
    require_gradient("taichi_baseline", [f.grad.to_numpy() for f in (weights1, bias1, weights2, bias2)])
    desc = (f"taichi {ti.__version__} (cpu, f64, {args.threads or os.cpu_count()} threads; "
            f"first call with compile {compile_s:.2f} s; {WORLD.describe()})")
    report("taichi", desc, batch, args.steps, best, threads=args.threads or os.cpu_count())


if __name__ == "__main__":
    main()
