"""What the JAX, Taichi and PyTorch baselines share (numpy only): the world, the robots,
the weights, the command line, XLA's host devices, the check against `evoc sim`, the
timing, the output lines. bench/multitask_jax.py and bench/multitask_torch.py use it too,
for running `evoc sim`, XLA's host devices and the multi-task benchmark's JSON record.

The world is read from the .evo file the peers mirror (World, --evo; default
examples/eldir.evo): dt, gravity, damping, the flat ground's height and friction, and
which of stdlib/physics/mass_spring.evo's contact models it selects, mass_spring_noslip
(ELDiR's reference rollout, docs/evolution.md) or mass_spring_friction (the public
framework's; examples/grammar_walker.evo, examples/eldir_small.evo). Anything else in the
file's world (a terrain, a scene, objects, f32, 3D) or another controller or loss than
stdlib's mlp and displacement is refused: the peers do not implement it.

The conventions are bench/torch_baseline.py's: robots from `evoc_cpu_bench --dump-robots
DIR` (DIR/robots_6x10.json, DIR/robots_13x22.json) or any bare list of ROBOTS.json entries
(bench/cpu/compare.sh's walker bodies), padded to the largest robot of the batch, the
controller's inputs ordered [10 sines, per point (0.05 (x - c), 0.05 v), 2 ones],
Xavier-normal weights (times 2 for W1, 3 for W2), biases 0, T states (T - 1 updates),
one forward + backward, robot-steps = robots * (T - 1).

Padding: a padded spring joins points 0 and 1 (stiffness 0, actuation 0, rest 1), not a
point with itself, so that |d| is never 0 (its derivative would be 0/0 = NaN under
autodiff); with stiffness 0 its impulse and every derivative through it are exactly 0.
Padded points sit at the origin, touch no spring and are masked out of the controller's
inputs, the centre and the loss; they fall through the ground model like any point, so
the ground models must not make NaN derivatives at them (they never move sideways).
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

UNITS, NSINE = 32, 10  # stdlib/controllers/mlp.evo: 32 tanh units, sin_waves(10, omega = 10)
OMEGA = 10.0

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EVOC = os.environ.get("EVOC", os.path.join(REPO, "build", "evoc"))
# The default .evo file: the paper's experiment, noslip ground. Its lattice size does not
# matter to `evoc sim --robots`: the bodies come from the JSON.
ELDIR_EVO = os.path.join(REPO, "examples", "eldir.evo")

CONTACT = {"mass_spring_noslip": "noslip", "mass_spring_friction": "friction"}


class World:
    """The world block of a .evo file, as far as the peers model it: dt, gravity,
    damping, ground (flat height), friction and contact ("noslip" or "friction").
    Settings are numbers (constant expressions other than a literal are refused);
    unset ones take docs/language.md's defaults."""

    def __init__(self, evo=ELDIR_EVO):
        self.evo = os.path.abspath(evo)
        text = re.sub(r"//[^\n]*", "", open(self.evo).read())
        m = re.search(r"\bworld\s*\{([^}]*)\}", text)
        if not m:
            sys.exit(f"peers: {evo} has no world block")
        settings = {}
        for item in m.group(1).split(";"):
            if item.strip():
                key, _, value = item.partition("=")
                settings[key.strip()] = value.strip()

        def num(key, default):
            v = settings.pop(key, None)
            try:
                return default if v is None else float(v)
            except ValueError:
                sys.exit(f"peers: {evo}: world.{key} = {v}: only a number is supported")

        self.dt = num("dt", 0.004)
        self.gravity = num("gravity", -9.8)
        self.damping = num("damping", 0.0)
        dim = num("dim", 2)
        settings.pop("steps", None)       # evoc sim --steps sets it
        settings.pop("checkpoint", None)  # how evoc keeps states: not the model
        settings.pop("state_limit", None)  # when evoc calls a rollout invalid: not the model
        precision = settings.pop("precision", "f64")
        ground = settings.pop("ground", "flat(height = 0)")
        g = re.fullmatch(r"flat\(\s*height\s*=\s*([-+.eE\d]+)\s*(?:,\s*friction\s*=\s*([-+.eE\d]+)\s*)?\)",
                         ground)
        physics = settings.pop("physics", None)
        if dim != 2 or precision != "f64" or not g or physics not in CONTACT or settings:
            sys.exit(f"peers: {evo}: the peers model a 2D f64 world on flat ground with "
                     f"{' or '.join(CONTACT)} physics and no other setting; this world has "
                     f"dim = {dim:g}, precision = {precision}, ground = {ground}, physics = "
                     f"{physics}{', ' + ', '.join(settings) if settings else ''}")
        self.ground = float(g.group(1))
        self.friction = float(g.group(2)) if g.group(2) else None
        self.contact = CONTACT[physics]
        if self.contact == "friction" and self.friction is None:
            sys.exit(f"peers: {evo}: mass_spring_friction needs ground = flat(height = H, friction = MU)")
        for key, want in (("controller", "mlp"), ("loss", "displacement")):
            got = re.findall(rf"\b{key}\s*=\s*(\w+)", text)
            if got != [want]:
                sys.exit(f"peers: {evo}: the peers implement {key} = {want} only (found {got})")

    def describe(self):
        mu = f", friction {self.friction:g}" if self.contact == "friction" else ""
        return (f"{os.path.relpath(self.evo, REPO)}: {self.contact} ground at {self.ground:g}{mu}, "
                f"dt {self.dt:g}, gravity {self.gravity:g}, damping {self.damping:g}")


def tie_rules(where):
    """min, max and abs as evoc differentiates them (compiler/autodiff/AdjointRules.cpp),
    written with an array library's `where` (jnp.where, torch.where): on a tie the first
    operand takes the adjoint (jnp.minimum / torch.minimum split it), abs'(0) = 0 (jnp.abs: 1).
    On the walker bodies no tie reached the gradient; these keep one from making a difference.
    Returns (vmin, vmax, vabs)."""

    def vmin(a, b):
        return where(b < a, b, a)

    def vmax(a, b):
        return where(b > a, b, a)

    def vabs(a):
        return where(a > 0, a, where(a < 0, -a, 0.0))

    return vmin, vmax, vabs


def add_world_arg(ap):
    """The --evo option: the .evo file whose world and rollout to mirror."""
    ap.add_argument("--evo", default=ELDIR_EVO,
                    help="the .evo file whose world and rollout to mirror (default examples/eldir.evo)")


def peer_parser(add_own):
    """The baselines' command line: robots file, --robots, --steps, add_own(ap)'s, the check's and --evo."""
    ap = argparse.ArgumentParser()
    ap.add_argument("robots")
    ap.add_argument("--robots", dest="limit", type=int, default=0, help="first N robots of the file")
    ap.add_argument("--steps", type=int, default=1000)
    add_own(ap)
    ap.add_argument("--check-steps", type=int, default=100)
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--repeats", type=int, default=1)
    add_world_arg(ap)
    return ap


def force_host_devices(n):
    """With n > 1, ask XLA for n host CPU devices (XLA_FLAGS): call it before jax is imported."""
    if n > 1:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   f" --xla_force_host_platform_device_count={n}")


class Batch:
    """Robots padded to P points and S springs (numpy, f64), in a world."""

    def __init__(self, path, limit=0, world=None):
        self.world = world = world or World()
        robots = json.load(open(path))
        if isinstance(robots, dict):  # evoc sim's ROBOTS.json: {"robots": [...]}
            robots = robots["robots"]
        if limit > 0:
            robots = robots[:limit]
        self.robots = robots
        B = self.B = len(robots)
        P = self.P = max(len(r["points"]) for r in robots)
        S = self.S = max(len(r["springs"]) for r in robots)
        self.npts = np.array([len(r["points"]) for r in robots], dtype=np.int64)
        self.nspr = np.array([len(r["springs"]) for r in robots], dtype=np.int64)
        self.x0 = np.zeros((B, P, 2))
        self.pmask = np.zeros((B, P))
        self.a = np.zeros((B, S), dtype=np.int32)
        self.b = np.ones((B, S), dtype=np.int32)
        self.rest = np.ones((B, S))
        self.stiff = np.zeros((B, S))
        self.actu = np.zeros((B, S))
        for i, r in enumerate(robots):
            pts = np.array(r["points"], dtype=np.float64)
            pts[:, 1] += max(0.0, world.ground - pts[:, 1].min())  # evoc's lift onto the ground
            self.x0[i, : len(pts)] = pts
            self.pmask[i, : len(pts)] = 1
            for s, (sa, sb, sr, sk, sact) in enumerate(r["springs"]):
                self.a[i, s], self.b[i, s] = sa, sb
                self.rest[i, s], self.stiff[i, s], self.actu[i, s] = sr, sk, sact
        self.nin = 12 + 4 * P

    def init_params(self, seed=1):
        """Padded weights [B, 32, 12 + 4P], [B, 32], [B, S, 32], [B, S]. The columns of
        padded points and the rows of padded springs are 0 (they are unused)."""
        rng = np.random.default_rng(seed)
        B, P, S = self.B, self.P, self.S
        w1 = np.zeros((B, UNITS, self.nin))
        w2 = np.zeros((B, S, UNITS))
        for i in range(B):
            n, s = int(self.npts[i]), int(self.nspr[i])
            nin = 12 + 4 * n
            w = rng.standard_normal((UNITS, nin)) * 2 * math.sqrt(2 / (UNITS + nin))
            w1[i, :, self.cols(i)] = w.T
            w2[i, :s] = rng.standard_normal((s, UNITS)) * 3 * math.sqrt(2 / (UNITS + s))
        return w1, np.zeros((B, UNITS)), w2, np.zeros((B, S))

    def cols(self, i):
        """The padded W1 columns of robot i's own inputs, in evoc's order."""
        n = int(self.npts[i])
        return np.r_[0 : NSINE + 4 * n, NSINE + 4 * self.P : NSINE + 4 * self.P + 2]

    def params_json(self, w1, b1, w2, b2):
        out = []
        for i in range(self.B):
            s = int(self.nspr[i])
            out.append({"w1": w1[i][:, self.cols(i)].tolist(), "b1": b1[i].tolist(),
                        "w2": w2[i, :s].tolist(), "b2": b2[i, :s].tolist()})
        return {"params": out}


def evoc_sim(evoc, evo, options, tmp, who):
    """The results of `evoc sim EVO OPTIONS --out TMP/out.json`, and the command; exits if it fails."""
    opath = os.path.join(tmp, "out.json")
    cmd = [evoc, "sim", evo, *options, "--out", opath]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{who}: `{' '.join(cmd)}` failed ({p.returncode}):\n{p.stderr}")
    with open(opath) as f:
        return json.load(f)["results"], cmd


def evoc_losses(batch, params, steps, tmp):
    """evoc's per-robot losses for these robots and weights: `evoc sim` (CPU back end)."""
    rpath, ppath = (os.path.join(tmp, f) for f in ("robots.json", "params.json"))
    json.dump({"robots": batch.robots}, open(rpath, "w"))
    json.dump(batch.params_json(*params), open(ppath, "w"))
    res, cmd = evoc_sim(EVOC, batch.world.evo, ["--robots", rpath, "--params", ppath, "--steps", str(steps)],
                        tmp, "check")
    losses = np.array([r["loss"] if r["loss"] is not None else np.nan for r in res])
    grads = [r["grad"] for r in res]
    return losses, grads, cmd


def flat_grad(batch, i, g):
    """Robot i's gradient (padded arrays gw1, gb1, gw2, gb2) as evoc lays it out, flat."""
    gw1, gb1, gw2, gb2 = (np.asarray(a[i]) for a in g)
    s = int(batch.nspr[i])
    return np.concatenate([gw1[:, batch.cols(i)].ravel(), gb1.ravel(), gw2[:s].ravel(),
                           gb2[:s].ravel()])


def check(name, batch, params, fn, steps, tol=1e-9, grad_tol=1e-7):
    """Compare fn(steps) = (per-robot losses, padded gradients) with `evoc sim`'s on the
    same robots and weights; exits 1 when the largest relative difference of a loss is
    above tol, or that of a robot's gradient (2-norm of the difference over the 2-norm of
    evoc's, all four parameter arrays together) above grad_tol."""
    with tempfile.TemporaryDirectory() as tmp:
        ref, ref_grads, cmd = evoc_losses(batch, params, steps, tmp)
    ours, grads = fn(steps)
    ours = np.asarray(ours, dtype=np.float64)
    rel = np.abs(ours - ref) / np.maximum(np.abs(ref), 1e-300)
    worst = float(np.max(rel)) if np.all(np.isfinite(rel)) else float("inf")
    grel = []
    for i in range(batch.B):
        e = np.concatenate([np.asarray(ref_grads[i][k], dtype=np.float64).ravel()
                            for k in ("w1", "b1", "w2", "b2")])
        o = flat_grad(batch, i, grads)
        grel.append(np.linalg.norm(o - e) / max(np.linalg.norm(e), 1e-300))
    gworst = float(np.max(grel)) if np.all(np.isfinite(grel)) else float("inf")
    ok = worst <= tol and gworst <= grad_tol
    print(f"check {name} vs evoc sim ({os.path.relpath(batch.world.evo, REPO)}, {batch.B} robots, T = {steps}): "
          f"max relative difference of the loss {worst:.3e} (tolerance {tol:g}), of the gradient "
          f"{gworst:.3e} (tolerance {grad_tol:g}): {'PASS' if ok else 'FAIL'}; "
          f"loss of robot 0 {ours[0]:.15g} (ours) vs {ref[0]:.15g} (evoc)")
    if not ok:
        for i in range(batch.B):
            print(f"  robot {i}: loss ours {ours[i]:.17g} evoc {ref[i]:.17g} rel {rel[i]:.3e}; "
                  f"gradient rel {grel[i]:.3e}")
        sys.exit(1)
    return worst, gworst


def best_of(repeats, fn):
    """The least wall time of max(1, repeats) calls of fn(), and the last call's result."""
    best, out = float("inf"), None
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def require_gradient(who, grads):
    """Exit unless the 2-norm of the gradient arrays grads is finite and not 0."""
    g = math.sqrt(sum(float((gr ** 2).sum()) for gr in grads))
    if not math.isfinite(g) or g == 0:
        sys.exit(f"{who}: the gradient norm is {g}")


def report(system, desc, batch, steps, seconds, **tags):
    rs = batch.B * (steps - 1) / seconds
    print(f"{desc}: {batch.B} robots (padded to {batch.P} points, {batch.S} springs), T = {steps}, "
          f"forward + backward: {seconds:.3f} s = {rs:.0f} robot-steps/s")
    extra = "".join(f" {k}={v}" for k, v in tags.items())
    print(f"RESULT system={system}{extra} robots={batch.B} steps={steps} seconds={seconds:.6f} "
          f"robot_steps_per_s={rs:.1f}")


def iteration_record(system, batch, steps, threads, wall, cpu):
    """The multi-task benchmark's JSON record (bench/multitask.sh) of iterations timed wall and cpu seconds."""
    seconds = sum(wall) / len(wall)
    return {"system": system, "robot_steps_per_s": batch * steps / seconds, "batch": batch,
            "steps": steps, "threads": threads, "seconds": seconds, "seconds_each": wall,
            "robot_steps_per_cpu_s": batch * steps / (sum(cpu) / len(cpu)), "cpu_seconds_each": cpu}
