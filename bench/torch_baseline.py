#!/usr/bin/env python3
"""Batched PyTorch baseline of the ELDiR rollout (bench/cpu_bench.cpp's workload).

The same bodies as the C++ benchmark (written by `evoc_cpu_bench --dump-robots DIR`; or
any list of ROBOTS.json entries), padded to the largest robot of the batch
(bench/cpu/peers_common.py: the padding, the weights, the world), ELDiR's step
(docs/evolution.md; MLP controller with 10 sine inputs, 4 inputs per point and 2
constants, 32 tanh units; springs; semi-implicit Euler) with the world and ground model
of --evo (default examples/eldir.evo: noslip; mass_spring_friction for e.g.
examples/grammar_walker.evo), T states, one forward and one backward (autograd, full
tape) for the whole batch. Prints robot-steps per second.

First checks that its per-robot losses equal `evoc sim EVO`'s on the same robots and
weights to 1e-9 relative, and its gradients to 1e-7 (exit 1 otherwise), then times one
forward + backward (eager: nothing to compile; best of --repeats).

    python3 bench/torch_baseline.py DIR/robots_6x10.json [--robots N] [--steps 1000]
        [--evo examples/eldir.evo] [--threads N] [--check-steps 100] [--no-check]
        [--repeats 1]
"""
import math
import os
import sys

try:
    import torch
except ImportError:
    print("torch_baseline: PyTorch is not installed (Debian: apt-get install python3-torch)")
    sys.exit(0)
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpu"))
from peers_common import (NSINE, OMEGA, Batch, World, best_of, check, peer_parser,  # noqa: E402
                          report, require_gradient, tie_rules)

f64 = torch.float64
# min, max and abs as evoc differentiates them
vmin, vmax, vabs = tie_rules(torch.where)


def contact_noslip(world, x, v1):
    """stdlib's mass_spring_noslip on flat ground: a point that would pass below the
    ground while moving down stops at the time of impact with velocity 0."""
    dt, g = world.dt, world.ground
    vy = v1[..., 1]
    hit = (x[..., 1] + dt * vy < g) & (vy < -1e-4)
    # the divisor only where hit (where v1.y < -1e-4): no 0 divisor, no NaN gradient
    toi = -(x[..., 1] - g) / torch.where(hit, vy, torch.full_like(vy, -1.0))
    step = torch.where(hit, toi, torch.full_like(toi, dt))[..., None]
    return x + step * v1, torch.where(hit[..., None], torch.zeros_like(v1), v1)


def contact_friction(world, x, v1):
    """stdlib's mass_spring_friction on flat ground (normal n = (0, 1), gap p.y - g,
    speed v.y), written as the .evo file writes it: time of impact, the normal velocity
    dropped, Coulomb friction on the tangential one, pushed out of the ground."""
    dt, g, mu = world.dt, world.ground, world.friction
    nrm = torch.tensor([0.0, 1.0], dtype=f64)
    x1 = x + dt * v1
    toi = vmin(vmax(vabs(x[..., 1] - g) / (vabs(v1[..., 1]) + 1e-10), torch.zeros_like(x1[..., 1])),
               torch.full_like(x1[..., 1], dt))
    q = x + toi[..., None] * v1
    vn = (v1 * nrm).sum(-1)
    vt = v1 - vn[..., None] * nrm
    # norm(vt) and vt / norm(vt) where it is > 0, their derivatives 0 elsewhere (padded
    # points never move sideways: sqrt'(0) and 0 / 0 would make NaN)
    s2 = (vt * vt).sum(-1)
    pos = s2 > 0
    one = torch.ones_like(s2)
    speed = torch.where(pos, torch.sqrt(torch.where(pos, s2, one)), torch.zeros_like(s2))
    dirn = torch.where(pos[..., None], vt / torch.where(pos, speed, one)[..., None],
                       torch.zeros_like(vt))
    v2 = vt - dirn * mu * vmin(vabs(vn), speed)[..., None]
    q2 = torch.where((toi < dt)[..., None], q + (dt - toi)[..., None] * v2, q)
    hit = x1[..., 1] < g
    pushed = torch.stack([q2[..., 0], vmax(q2[..., 1], torch.full_like(q2[..., 1], g))], -1)
    return torch.where(hit[..., None], pushed, x1), torch.where(hit[..., None], v2, v1)


CONTACT = {"noslip": contact_noslip, "friction": contact_friction}


def rollout(world, T, x0, pmask, a, b, rest, stiff, actu, w1, b1, w2, b2):
    """Per-robot losses -(mean over its points of x[T-1].x - x[0].x), the batch at once."""
    B, P, _ = x0.shape
    n = pmask.sum(1, keepdim=True)  # [B, 1]
    m3 = pmask[..., None]
    x, v = x0, torch.zeros_like(x0)
    a2 = a[..., None].expand(-1, -1, 2)
    b2i = b[..., None].expand(-1, -1, 2)
    phases = 2 * math.pi * torch.arange(NSINE, dtype=f64) / NSINE
    ones = torch.ones(B, 2, dtype=f64)
    dt = world.dt
    damp = math.exp(-dt * world.damping)
    gravity = torch.tensor([0.0, dt * world.gravity], dtype=f64)
    contact = CONTACT[world.contact]
    for t in range(T - 1):
        c = (x * m3).sum(1) / n  # [B, 2]
        waves = torch.sin(OMEGA * t * dt + phases).expand(B, NSINE)
        feats = torch.cat([0.05 * (x - c[:, None, :]), 0.05 * v], 2) * m3
        inp = torch.cat([waves, feats.reshape(B, 4 * P), ones], 1)
        h = torch.tanh(torch.bmm(w1, inp[..., None])[..., 0] + b1)
        act = torch.tanh(torch.bmm(w2, h[..., None])[..., 0] + b2)
        d = torch.gather(x, 1, a2) - torch.gather(x, 1, b2i)
        L = torch.sqrt((d * d).sum(2)) + 1e-4
        target = rest * (1 + actu * act)
        imp = (dt * (L - target) * stiff / L)[..., None] * d
        vinc = torch.zeros_like(x).scatter_add(1, a2, -imp).scatter_add(1, b2i, imp)
        v1 = damp * v + gravity + vinc  # free_velocity: damping, gravity, the springs
        x, v = contact(world, x, v1)
    return -((x[..., 0] - x0[..., 0]) * pmask).sum(1) / n[:, 0]


def main():
    args = peer_parser(lambda ap: ap.add_argument("--threads", type=int, default=0)).parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    world = World(args.evo)
    batch = Batch(args.robots, args.limit, world)
    params_np = batch.init_params()
    body = [torch.from_numpy(t) for t in (batch.x0, batch.pmask)]
    body += [torch.from_numpy(t.astype(np.int64)) for t in (batch.a, batch.b)]
    body += [torch.from_numpy(t) for t in (batch.rest, batch.stiff, batch.actu)]

    def run(T):
        params = [torch.from_numpy(p.copy()).requires_grad_() for p in params_np]
        loss = rollout(world, T, *body, *params)
        loss.sum().backward()
        return loss.detach().numpy(), tuple(p.grad.numpy() for p in params)

    if not args.no_check:
        check("pytorch", batch, params_np, run, min(args.check_steps, args.steps))

    best, (_, grads) = best_of(args.repeats, lambda: run(args.steps))
    require_gradient("torch_baseline", grads)
    desc = f"pytorch {torch.__version__} ({torch.get_num_threads()} threads; {world.describe()})"
    report("pytorch", desc, batch, args.steps, best, threads=torch.get_num_threads())


if __name__ == "__main__":
    main()
