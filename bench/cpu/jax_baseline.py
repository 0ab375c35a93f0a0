#!/usr/bin/env python3
"""JAX baseline of the ELDiR rollout (bench/torch_baseline.py's workload, in JAX).

The robots of `evoc_cpu_bench --dump-robots DIR` (or any list of ROBOTS.json entries),
padded to the largest of the batch (bench/cpu/peers_common.py), ELDiR's step
(docs/evolution.md; MLP controller with 10 sine inputs, 4 inputs per point and 2
constants, 32 tanh units; springs; semi-implicit Euler) with the world and ground model
of --evo (default examples/eldir.evo: noslip; mass_spring_friction for e.g.
examples/grammar_walker.evo), T states: one robot's rollout is a lax.scan over the T - 1 updates,
its loss differentiated by value_and_grad, vmapped over the robots and jitted, in f64.
--remat wraps the scan body in jax.checkpoint (the backward recomputes each step from
its state instead of keeping its temporaries); --shard N splits the batch over N host
devices (XLA_FLAGS=--xla_force_host_platform_device_count=N, a 1-D jax.sharding mesh).

First checks that its per-robot losses equal `evoc sim EVO`'s on the same robots and
weights to 1e-9 relative, and its gradients to 1e-7 (exit 1 otherwise), then times one
jitted forward + backward (after a warm-up call that compiles it; best of --repeats).

    python3 bench/cpu/jax_baseline.py DIR/robots_6x10.json [--robots N] [--steps 1000]
        [--evo examples/eldir.evo] [--remat] [--shard N] [--check-steps 100] [--no-check]
        [--repeats 1]
"""
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers_common import (NSINE, OMEGA, Batch, World, best_of, check, force_host_devices,  # noqa: E402
                          peer_parser, report, tie_rules)


def add_jax_args(ap):
    """This baseline's own options: --remat and --shard."""
    ap.add_argument("--remat", action="store_true")
    ap.add_argument("--shard", type=int, default=1, help="host devices to split the batch over")


args = peer_parser(add_jax_args).parse_args()
force_host_devices(args.shard)  # before jax is imported

try:
    import jax
    import jax.numpy as jnp
    from jax import lax
except ImportError:
    print("jax_baseline: JAX is not installed (pip install jax)")
    sys.exit(0)
jax.config.update("jax_enable_x64", True)
import numpy as np

WORLD = World(args.evo)
DT = WORLD.dt

vmin, vmax, vabs = tie_rules(jnp.where)


def contact_noslip(x, v1):
    """stdlib's mass_spring_noslip on flat ground: a point that would pass below the
    ground while moving down stops at the time of impact with velocity 0."""
    g = WORLD.ground
    hit = (x[:, 1] + DT * v1[:, 1] < g) & (v1[:, 1] < -1e-4)
    # the divisor only where hit (where v1.y < -1e-4): no 0 divisor, no NaN gradient
    toi = -(x[:, 1] - g) / jnp.where(hit, v1[:, 1], -1.0)
    xn = x + jnp.where(hit, toi, DT)[:, None] * v1
    return xn, jnp.where(hit[:, None], 0.0, v1)


def contact_friction(x, v1):
    """stdlib's mass_spring_friction on flat ground (normal n = (0, 1), gap p.y - g,
    speed v.y), written as the .evo file writes it: time of impact, the normal velocity
    dropped, Coulomb friction on the tangential one, pushed out of the ground."""
    g, mu = WORLD.ground, WORLD.friction
    nrm = jnp.array([0.0, 1.0])
    x1 = x + DT * v1
    toi = vmin(vmax(vabs(x[:, 1] - g) / (vabs(v1[:, 1]) + 1e-10), 0.0), DT)
    q = x + toi[:, None] * v1
    vn = v1 @ nrm
    vt = v1 - vn[:, None] * nrm
    # norm(vt) and vt / norm(vt) where it is > 0, their derivatives 0 elsewhere (padded
    # points never move sideways: sqrt'(0) and 0 / 0 would make NaN)
    s2 = (vt * vt).sum(1)
    pos = s2 > 0
    speed = jnp.where(pos, jnp.sqrt(jnp.where(pos, s2, 1.0)), 0.0)
    dirn = jnp.where(pos[:, None], vt / jnp.where(pos, speed, 1.0)[:, None], 0.0)
    v2 = vt - dirn * mu * vmin(vabs(vn), speed)[:, None]
    q2 = jnp.where((toi < DT)[:, None], q + (DT - toi)[:, None] * v2, q)
    hit = x1[:, 1] < g
    pushed = jnp.stack([q2[:, 0], vmax(q2[:, 1], g)], 1)
    return jnp.where(hit[:, None], pushed, x1), jnp.where(hit[:, None], v2, v1)


CONTACT = {"noslip": contact_noslip, "friction": contact_friction}[WORLD.contact]


def robot_loss(params, body, T, remat):
    """One robot's loss: -(mean over its points of x[T-1].x - x[0].x)."""
    w1, b1, w2, b2 = params
    x0, pmask, a, b, rest, stiff, actu = body
    n = pmask.sum()
    m = pmask[:, None]
    phases = 2 * math.pi * jnp.arange(NSINE, dtype=jnp.float64) / NSINE
    damp = math.exp(-DT * WORLD.damping)
    gravity = jnp.array([0.0, DT * WORLD.gravity])
    ones = jnp.ones(2, dtype=jnp.float64)

    def step(carry, t):
        x, v = carry
        c = (x * m).sum(0) / n
        waves = jnp.sin(OMEGA * t * DT + phases)
        feats = jnp.concatenate([0.05 * (x - c), 0.05 * v], 1) * m  # [P, 4]
        inp = jnp.concatenate([waves, feats.reshape(-1), ones])
        h = jnp.tanh(w1 @ inp + b1)
        act = jnp.tanh(w2 @ h + b2)
        d = x[a] - x[b]
        L = jnp.sqrt((d * d).sum(1)) + 1e-4
        target = rest * (1 + actu * act)
        imp = (DT * (L - target) * stiff / L)[:, None] * d
        vinc = jnp.zeros_like(x).at[a].add(-imp).at[b].add(imp)
        v1 = damp * v + gravity + vinc  # free_velocity: damping, gravity, the springs
        return CONTACT(x, v1), None

    if remat:
        step = jax.checkpoint(step)
    ts = jnp.arange(T - 1, dtype=jnp.float64)
    (x, _), _ = lax.scan(step, (x0, jnp.zeros_like(x0)), ts)
    return -((x[:, 0] - x0[:, 0]) * pmask).sum() / n


def make(T, remat, sharding):
    vg = jax.vmap(jax.value_and_grad(lambda p, body: robot_loss(p, body, T, remat)))
    loss = jax.vmap(lambda p, body: robot_loss(p, body, T, remat))
    if sharding is None:
        return jax.jit(vg), jax.jit(loss)
    return (jax.jit(vg, in_shardings=sharding, out_shardings=sharding),
            jax.jit(loss, in_shardings=sharding, out_shardings=sharding))


def main():
    batch = Batch(args.robots, args.limit, WORLD)
    params_np = batch.init_params()
    body_np = (batch.x0, batch.pmask, batch.a, batch.b, batch.rest, batch.stiff, batch.actu)
    sharding = None
    if args.shard > 1:
        devs = jax.devices()[: args.shard]
        if len(devs) < args.shard or batch.B % args.shard:
            sys.exit(f"jax_baseline: --shard {args.shard}: {len(devs)} devices, {batch.B} robots "
                     "(the robots must divide evenly)")
        mesh = jax.sharding.Mesh(np.array(devs), ("robots",))
        sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("robots"))
    put = (lambda t: jax.device_put(t, sharding)) if sharding is not None else jnp.asarray
    params = tuple(put(p) for p in params_np)
    body = tuple(put(p) for p in body_np)

    if not args.no_check:
        cT = min(args.check_steps, args.steps)
        vgc, _ = make(cT, args.remat, sharding)

        def run(T):
            loss, grads = vgc(params, body)
            return np.asarray(loss), tuple(np.asarray(g) for g in grads)

        check("jax", batch, params_np, run, cT)

    vg, _ = make(args.steps, args.remat, sharding)
    t0 = time.perf_counter()
    out = vg(params, body)
    jax.block_until_ready(out)
    compile_s = time.perf_counter() - t0
    best, (_, grads) = best_of(args.repeats, lambda: jax.block_until_ready(vg(params, body)))
    gnorm = float(jnp.sqrt(sum((g * g).sum() for g in grads)))
    if not math.isfinite(gnorm):
        sys.exit("jax_baseline: the gradient is not finite")
    desc = (f"jax {jax.__version__} ({len(jax.devices())} cpu devices, shard {args.shard}, "
            f"remat {int(args.remat)}; first call with compile {compile_s:.2f} s; "
            f"{WORLD.describe()})")
    report("jax", desc, batch, args.steps, best, remat=int(args.remat), shard=args.shard)


if __name__ == "__main__":
    main()
