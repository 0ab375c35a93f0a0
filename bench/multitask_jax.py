#!/usr/bin/env python3
"""JAX implementation of one training iteration of the multi-task experiment
(docs/multitask.md; examples/multitask_alpaca.evo): Alpaca, B episodes of T
steps sharing one sin-MLP controller, float64, forward (rollout + velocity,
height and crawl losses) and backward (the gradient of the batch loss with
respect to the controller's weights, through the whole rollout). The same
workload as bench/multitask_torch.py and build/bench/evoc_multitask_bench.

The model is written in JAX from docs/multitask.md and follows
tests/reference/multitask_reference.py formula for formula (its body, its
constants and its formula weights are reused from there). As a careful JAX
user would write it:
  - jax.jit over the whole iteration (jax.value_and_grad of the batch loss);
  - the batch as a leading axis, the controller as matrix-matrix products;
  - lax.scan over the T - 1 steps, whose body is only the controller and the
    physics: it emits each state's positions, and the losses (which read
    states 100 steps apart and running maxima) are computed after the scan,
    vectorised over time;
  - the first layer's loop-invariant part (the 10 sines, the 90 command
    inputs, which change once per 500-step segment, and b1) computed before
    the scan in one product; the controller's velocity inputs, always zero,
    left out of the product (their weight gradients are exactly zero);
  - --remat: the scan split into chunks of about sqrt(T) steps, each under
    jax.checkpoint (the backward recomputes a chunk from its first state);
  - --shard N: the batch split over N host CPU devices with jax.shard_map
    (XLA_FLAGS=--xla_force_host_platform_device_count=N, set before jax is
    imported), one psum of the losses and gradients at the end.

The episodes' commands are the ones evoc draws for training iteration i
(runtime/core/Commands.cpp drawCommands on the stream episodeStream(seed, 0,
i, b); the same xoshiro256** / SplitMix64 arithmetic is reproduced here), and
the weights are the formula weights of the reference. Before timing, the
script checks its batch loss and gradient for iteration 0 against
`evoc sim examples/multitask_alpaca.evo --params P.json` (which draws the same
iteration-0 episodes from train.seed and averages loss and gradient over
train.learn.batch episodes): the loss to 1e-9 relative, the gradient to 1e-7
of its largest entry (exit 1 otherwise; --no-check skips it). That call is
also the warm-up (compile) call; then --reps iterations (iterations 1, 2, ...,
new episodes each) are timed and one JSON line is printed last:

    {"system": "jax", "robot_steps_per_s": ..., "batch": 32, "steps": 1000,
     "threads": 2, "seconds": ..., "robot_steps_per_cpu_s": ..., "remat": 0,
     "shard": 1, ...}

seconds is the mean wall time of one iteration (the commands are put on the
devices before the clock starts, as multitask_torch.py builds its tensors
before), robot_steps_per_s = batch * steps / seconds, robot_steps_per_cpu_s
the same per CPU-second of this process. --threads N keeps the process on N
of the CPUs it may use (sched_setaffinity, before jax starts its thread pools).

    python3 bench/multitask_jax.py [--batch 32] [--steps 1000] [--reps 3]
        [--threads 2] [--remat] [--shard N] [--seed 1] [--evoc build/evoc]
        [--no-check] [--check-only]

--check-only runs the check and exits (0 pass, 1 fail, 77 when jax or numpy
is missing: a ctest skip); without it a missing jax prints a line and exits 0,
as the other baselines do.
"""
import argparse
import json
import math
import os
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EVO_FILE = os.path.join(REPO, "examples", "multitask_alpaca.evo")

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--batch", type=int, default=32)
ap.add_argument("--steps", type=int, default=1000)
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--threads", type=int, default=0, help="CPUs to run on (0: all this process may use)")
ap.add_argument("--remat", action="store_true", help="jax.checkpoint over chunks of ~sqrt(T) steps")
ap.add_argument("--shard", type=int, default=1, help="host CPU devices to split the batch over")
ap.add_argument("--seed", type=int, default=1, help="train.seed of the episodes' commands")
ap.add_argument("--evoc", default=os.environ.get("EVOC", os.path.join(REPO, "build", "evoc")))
ap.add_argument("--no-check", action="store_true")
ap.add_argument("--check-only", action="store_true")
args = ap.parse_args()

if args.threads > 0:  # before jax (and XLA's thread pools) start
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, cpus[: args.threads])

sys.path.insert(0, os.path.join(REPO, "bench", "cpu"))
try:
    import numpy as np
    import peers_common as peers  # numpy only: evoc sim, XLA's host devices, the JSON record
    peers.force_host_devices(args.shard)  # before jax is imported
    import jax
    import jax.numpy as jnp
    from jax import lax
    from jax.sharding import Mesh, PartitionSpec as P
except ImportError:
    print("multitask_jax: JAX (or numpy) is not installed")
    sys.exit(77 if args.check_only else 0)
jax.config.update("jax_enable_x64", True)

sys.path.insert(0, os.path.join(REPO, "tests", "reference"))
import multitask_reference as ref  # noqa: E402  (torch-free at import)


# ---------------------------------------------------------------------------
# evoc's episodes: runtime/core/Commands.cpp drawCommands on the stream
# runtime/core/Train.cpp episodeStream(seed, robot 0, iteration, episode), with
# the generators of compiler/support/Xoshiro.h and runtime/core/Rng.cpp.

M64 = (1 << 64) - 1


def _splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


def _rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M64


def _mix_seed(a, b):
    x = a ^ _rotl(b, 32) ^ 0x6A09E667F3BCC909
    x, r = _splitmix64(x)          # splitmix64 advances its state, as in Rng.cpp
    _, s = _splitmix64(x ^ b)
    return r ^ s


class _Xoshiro256:
    def __init__(self, seed):
        self.s, sm = [], seed
        for _ in range(4):
            sm, w = _splitmix64(sm)
            self.s.append(w)

    def uniform(self):
        s = self.s
        result = (_rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return float(result >> 11) * 2.0 ** -53


# examples/multitask_alpaca.evo's commands block: per task its probability and,
# per command (v, h, c), base + uniform(lo, hi) as the checker stores it.
TASKS = [(0.25, [(0.0, 0.0, 0.0), (0.1, 0.0, 0.0), (0.0, 0.0, 0.0)]),       # still
         (0.25, [(0.0, -0.08, 0.08), (0.1, 0.0, 0.0), (0.0, 0.0, 0.0)]),     # run
         (0.25, [(0.0, -0.08, 0.08), (0.1, 0.0, 0.1), (0.0, 0.0, 0.0)]),     # jump
         (0.25, [(0.0, -0.08, 0.08), (0.1, 0.0, 0.0), (1.0, 0.0, 0.0)])]     # crawl


def episode_stream(seed, robot, iteration, episode):
    s = _mix_seed(seed, 0xC0FFEE5EED)
    for w in (robot, iteration, episode):
        s = _mix_seed(s, w)
    return s


def evoc_episode(seed, iteration, episode, steps):
    """One episode's commands, one {"v", "h", "c"} per 500-step segment, as evoc draws them."""
    rng = _Xoshiro256(episode_stream(seed, 0, iteration, episode))
    out = []
    for _ in range(max(1, (steps + ref.SEGMENT - 1) // ref.SEGMENT)):
        u, acc, task = rng.uniform(), 0.0, len(TASKS) - 1
        for k, (p, _) in enumerate(TASKS):
            acc += p
            if u < acc:
                task = k
                break
        row = []
        for base, lo, hi in TASKS[task][1]:
            v = base
            if lo != hi:
                v += lo + (hi - lo) * rng.uniform()
            row.append(v)
        out.append(dict(zip(("v", "h", "c"), row)))
    return out


def segment_arrays(episodes):
    """[segments, B] arrays of v, h, c (one row per 500-step segment)."""
    return tuple(np.array([[e[s][k] for e in episodes] for s in range(len(episodes[0]))],
                          dtype=np.float64) for k in ("v", "h", "c"))


# ---------------------------------------------------------------------------
# The model


def _last_select(y, largest):
    """y's minimum (largest: maximum) along the last axis, its derivative going to the
    LAST extreme entry on ties (the reference's _last_argext; the authors' sequential
    min/max)."""
    ys = lax.stop_gradient(y)
    m = ys.max(-1, keepdims=True) if largest else ys.min(-1, keepdims=True)
    ar = jnp.arange(y.shape[-1])
    idx = jnp.where(ys == m, ar, -1).max(-1, keepdims=True)
    return jnp.where(ar == idx, y, 0.0).sum(-1)


def make_loss(body, steps, remat):
    """loss(params, cv, ch, cc, norm) -> (loss, (velocity, height, crawl)): each term summed
    over the episodes and divided by norm (the batch size), loss their sum; cv, ch, cc:
    [segments, B] commands, params = (w1, b1, w2, b2) as the reference lays them out. The
    loss windows are the reference's (t % 500), which are evoc's at steps = 1000."""
    N, S = len(body["points"]), len(body["springs"])
    n_upd = steps - 1                       # updates, from states 0 .. steps - 2
    x0 = np.array(body["points"], dtype=np.float64)
    ia = np.array([s[0] for s in body["springs"]])
    ib = np.array([s[1] for s in body["springs"]])
    rest = np.array([s[2] for s in body["springs"]], dtype=np.float64)
    alpha = np.array([s[3] for s in body["springs"]], dtype=np.float64)
    inc = np.zeros((S, N))                  # v_inc = inc^T imp: -imp at a, +imp at b
    inc[np.arange(S), ia] -= 1.0
    inc[np.arange(S), ib] += 1.0
    t_all = np.arange(n_upd)
    sines = np.sin(ref.OMEGA * t_all[:, None] * ref.DT +
                   2 * math.pi / ref.N_SINES * np.arange(ref.N_SINES)[None, :])
    seg_of_t = t_all // ref.SEGMENT
    grav = np.array([0.0, ref.DT * ref.GRAVITY])
    pos_cols = (ref.N_SINES + 4 * np.arange(N)[:, None] + np.arange(2)[None, :]).ravel()
    cmd0 = ref.N_SINES + 4 * N
    # loss windows (docs/multitask.md, "Losses"), on states 0 .. steps - 2
    vel_t = np.array([t for t in range(n_upd) if t % ref.SEGMENT > ref.RUN_PERIOD])
    hgt_t = [t for t in range(n_upd) if t % ref.SEGMENT == ref.SEGMENT - 2]
    crl_t = np.arange(1, n_upd)
    K = max(1, int(round(math.sqrt(n_upd))))  # remat chunk

    def step(w1p, w2, b2, carry, pre):
        x, v = carry                                            # [B, N, 2]
        B = x.shape[0]
        com = (x / N).sum(1)
        rel = ((x - com[:, None, :]) / 0.2).reshape(B, 2 * N)
        hid = jnp.sin(rel @ w1p.T + pre)
        act = jnp.sin(hid @ w2.T + b2)
        act = jnp.where(act < 1, act, 1.0)
        act = jnp.where(act > -1, act, -1.0)
        d = x[:, ia] - x[:, ib]                                 # [B, S, 2]
        dd = (d * d).sum(-1)
        L = jnp.sqrt(dd + 1e-8) + 1e-4
        target = rest * (1.0 + alpha * act)
        imp = (ref.DT * (L - target) * ref.STIFFNESS / L)[..., None] * d
        u = d / jnp.sqrt(dd)[..., None]
        vrel = ((v[:, ia] - v[:, ib]) * u).sum(-1)
        imp = imp + (ref.ZETA * vrel)[..., None] * u
        vinc = jnp.einsum("bsk,sn->bnk", imp, inc)
        vo = v + grav + vinc
        xy, vy = x[..., 1], vo[..., 1]
        contact = (xy + ref.DT * vy < ref.GROUND) & (vy < -1e-4)
        toi = jnp.where(contact, -(xy - ref.GROUND) / jnp.where(contact, vy, -1.0), 0.0)
        c2 = contact[..., None]
        xn = jnp.where(c2, x + toi[..., None] * vo, x + ref.DT * vo)
        vn = jnp.where(c2, 0.0, vo)
        return (xn, vn), x

    def rollout(w1p, w2, b2, pre):
        """States 0 .. steps - 2 ([steps - 1, B, N, 2]) from pre: [steps - 1, B, 64]."""
        B = pre.shape[1]
        body_fn = lambda c, p: step(w1p, w2, b2, c, p)  # noqa: E731
        carry = (jnp.broadcast_to(jnp.asarray(x0), (B, N, 2)), jnp.zeros((B, N, 2)))
        if not remat:
            _, xs = lax.scan(body_fn, carry, pre)
            return xs

        @jax.checkpoint
        def chunk(c, p):
            return lax.scan(body_fn, c, p)

        full = n_upd // K * K
        carry, xs = lax.scan(chunk, carry, pre[:full].reshape(n_upd // K, K, *pre.shape[1:]))
        xs = xs.reshape(full, *xs.shape[2:])
        if full < n_upd:
            _, tail = chunk(carry, pre[full:])
            xs = jnp.concatenate([xs, tail])
        return xs

    def loss(params, cv, ch, cc, norm):
        w1, b1, w2, b2 = params
        # per-step commands [steps - 1, B]
        cvt, cht, cct = cv[seg_of_t], ch[seg_of_t], cc[seg_of_t]
        # the first layer's loop-invariant part: sines (per step), commands (per segment), b1
        cmd_in = jnp.concatenate(
            [jnp.repeat((cv / ref.MAX_SPEED)[..., None], ref.DUP, -1),
             jnp.repeat(((ch - 0.1) / ref.MAX_HEIGHT * 2 - 1)[..., None], ref.DUP, -1),
             jnp.repeat(cc[..., None], ref.DUP, -1)], -1)         # [segments, B, 90]
        seg_pre = cmd_in @ w1[:, cmd0:].T                         # [segments, B, 64]
        pre = (jnp.asarray(sines) @ w1[:, :ref.N_SINES].T)[:, None, :] + seg_pre[seg_of_t] + b1
        xs = rollout(w1[:, pos_cols], w2, b2, pre)
        com_x = (xs[..., 0] / N).sum(-1)                          # [steps - 1, B]
        y = xs[..., 1]
        zero = jnp.zeros(cv.shape[1])
        vel = zero
        if len(vel_t):
            tb = vel_t - ref.RUN_PERIOD
            tgt = cvt[tb] / (1 + cct[tb])
            vel = ref.VEL_COEF * ((com_x[vel_t] - com_x[tb] - tgt) ** 2).sum(0)
        hgt = zero
        for t in hgt_t:   # the running max of the lowest point within the segment
            low = _last_select(y[t - t % ref.SEGMENT: t + 1], largest=False)  # [t', B]
            H = _last_select(low.T, largest=True)
            hgt = hgt + jnp.where(cht[t] > 0.1 + 1e-6, ref.HEIGHT_COEF * (H - cht[t]) ** 2, 0.0)
        up = _last_select(y[crl_t], largest=True)
        over = jnp.where(up - 0.1 > 0, up - 0.1, 0.0)
        crl = jnp.where(cct[crl_t] > 1 - 1e-4, ref.CRAWL_COEF * over ** 2, 0.0).sum(0)
        terms = (vel.sum() / norm, hgt.sum() / norm, crl.sum() / norm)
        return terms[0] + terms[1] + terms[2], terms

    return loss


def make_iteration(body, steps, remat, shard, batch):
    """A jitted (params, cv, ch, cc) -> ((loss, terms), grads); with shard > 1 the batch is
    split over `shard` devices (shard_map) and the results summed with one psum."""
    loss = make_loss(body, steps, remat)
    vg = jax.value_and_grad(lambda p, cv, ch, cc: loss(p, cv, ch, cc, batch), has_aux=True)
    if shard <= 1:
        return jax.jit(vg), None
    devs = jax.devices()[:shard]
    if len(devs) < shard or batch % shard:
        sys.exit(f"multitask_jax: --shard {shard}: {len(devs)} devices, batch {batch} "
                 "(the batch must divide evenly)")
    mesh = Mesh(np.array(devs), ("b",))

    def local(p, cv, ch, cc):
        out = vg(p, cv, ch, cc)
        return jax.tree_util.tree_map(lambda a: lax.psum(a, "b"), out)

    f = jax.shard_map(local, mesh=mesh, in_specs=(P(), P(None, "b"), P(None, "b"), P(None, "b")),
                      out_specs=P(), check_vma=False)
    return jax.jit(f), jax.sharding.NamedSharding(mesh, P(None, "b"))


# ---------------------------------------------------------------------------
# The check against evoc


def evoc_batch(weights, steps, batch, seed, threads, tmp):
    """evoc's batch loss and gradient for iteration 0: `evoc sim` on the example."""
    ppath = os.path.join(tmp, "params.json")
    with open(ppath, "w") as f:
        json.dump({"params": [weights]}, f)
    res, cmd = peers.evoc_sim(args.evoc, EVO_FILE,
                              ["--params", ppath, "--steps", str(steps), "--set", f"train.learn.batch={batch}",
                               "--set", f"train.seed={seed}", "--threads", str(threads)],
                              tmp, "multitask_jax: check")
    return res[0]["loss"], res[0]["grad"], cmd


def check(weights, loss, terms, grads, threads, tol=1e-9, grad_tol=1e-7):
    if not os.path.exists(args.evoc):
        sys.exit(f"multitask_jax: check: {args.evoc} is missing (--evoc PATH, or --no-check)")
    with tempfile.TemporaryDirectory() as tmp:
        e_loss, e_grad, cmd = evoc_batch(weights, args.steps, args.batch, args.seed, threads, tmp)
    rel = abs(loss - e_loss) / max(abs(e_loss), 1e-300)
    names = ("w1", "b1", "w2", "b2")
    e = {k: np.asarray(e_grad[k], dtype=np.float64) for k in names}
    scale = max(float(np.abs(e[k]).max()) for k in names)
    gerr = max(float(np.abs(np.asarray(g) - e[k]).max()) for k, g in zip(names, grads)) / scale
    ok = rel <= tol and gerr <= grad_tol and math.isfinite(rel) and math.isfinite(gerr)
    print(f"check vs `evoc sim {os.path.relpath(EVO_FILE, REPO)}` (iteration 0's {args.batch} "
          f"episodes x {args.steps} steps, formula weights): loss {loss:.17g} (jax) vs "
          f"{e_loss:.17g} (evoc), relative difference {rel:.3e} (tolerance {tol:g}); gradient: "
          f"largest difference / largest entry ({scale:.6g}) {gerr:.3e} (tolerance {grad_tol:g}): "
          f"{'PASS' if ok else 'FAIL'}  [terms: velocity {terms[0]:.12g}, height {terms[1]:.12g}, "
          f"crawl {terms[2]:.12g}]", flush=True)
    if not ok:
        print("  evoc command: " + " ".join(cmd))
        sys.exit(1)
    return rel, gerr


# ---------------------------------------------------------------------------


def main():
    body = ref.build_body(ref.load_design("Alpaca"))
    weights = ref.make_weights("formula", body)
    names = ("w1", "b1", "w2", "b2")
    params = tuple(jnp.asarray(np.array(weights[k], dtype=np.float64)) for k in names)
    threads = len(os.sched_getaffinity(0))
    it_fn, sharding = make_iteration(body, args.steps, args.remat, args.shard, args.batch)
    put = (lambda a: jax.device_put(a, sharding)) if sharding is not None else jnp.asarray

    def commands(iteration):
        eps = [evoc_episode(args.seed, iteration, b, args.steps) for b in range(args.batch)]
        return tuple(put(a) for a in segment_arrays(eps))

    def run(cmds):
        out = it_fn(params, *cmds)
        jax.block_until_ready(out)
        return out

    cmds = commands(0)
    t0 = time.perf_counter()
    (loss, terms), grads = run(cmds)             # warm-up: compiles
    compile_s = time.perf_counter() - t0
    checked = None
    if not args.no_check or args.check_only:
        checked = check(weights, float(loss), [float(t) for t in terms],
                        [np.asarray(g) for g in grads], threads)
        if args.check_only:
            return 0
    wall, cpu = [], []
    for r in range(args.reps):
        cmds = commands(r + 1)
        t0, c0 = time.perf_counter(), time.process_time()
        (loss, _), grads = run(cmds)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        if not all(bool(jnp.isfinite(g).all()) for g in grads) or not math.isfinite(float(loss)):
            sys.exit("multitask_jax: the loss or gradient is not finite")
    if not wall:
        return 0
    print(f"jax {jax.__version__}, {len(jax.devices())} cpu devices, shard {args.shard}, remat "
          f"{int(args.remat)}, {threads} CPUs: first call (compile + run) {compile_s:.2f} s; "
          f"iterations " + ", ".join(f"{w:.3f}" for w in wall) + " s")
    out = peers.iteration_record("jax", args.batch, args.steps, threads, wall, cpu)
    out.update({"remat": int(args.remat), "shard": args.shard, "compile_seconds": compile_s,
                "jax": jax.__version__})
    if checked:
        out["check"] = {"loss_rel": checked[0], "grad_rel_max": checked[1]}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
