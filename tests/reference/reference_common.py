"""What the reference implementations beside this file share: the result files
({"results": [{"loss": L, "grad": {"w1", "b1", "w2", "b2"}}, ...]}) and
`check`, the command line and the loops of `gen` and `sim` (`sim`: each
robot's loss differentiated with respect to ELDiR's MLP parameters), and the
Coulomb friction of ELDiR's friction contact rule.

Importing it does not import torch (the functions that need it import it):
multitask_reference.py uses it and must stay torch-free at import, for
bench/multitask_jax.py.
"""
import argparse
import json
import random

PARAMS = ("w1", "b1", "w2", "b2")   # the MLP controller's parameters, in file order
# ELDiR's MLP controller (docs/evolution.md): 32 tanh hidden units; its inputs
# are 10 sines, 2 * dim per point and 2 ones.
HIDDEN = 32
N_SINES = 10


# ---------------------------------------------------------------------------
# Files

def rounded(v, digits=4):
    """v to `digits` significant digits: short JSON text that both sides read as the same double."""
    return float("%.*e" % (digits - 1, v))


def write_json(path, obj, separators=(",", ":")):
    """Write obj to path as JSON (compact unless told otherwise), then a newline."""
    with open(path, "w") as f:
        json.dump(obj, f, separators=separators)
        f.write("\n")


def write_robots_and_params(robots_path, params_path, robots, params):
    """Write ROBOTS.json and PARAMS.json as `evoc sim` reads them."""
    write_json(robots_path, {"robots": robots})
    write_json(params_path, {"params": params})


def _round_nested(j, digits):
    """A nested list with every number rounded to `digits` significant digits."""
    if isinstance(j, list):
        return [_round_nested(x, digits) for x in j]
    return rounded(j, digits)


def write_results(path, results, grad_digits=None):
    """Write a result file, gradient entries rounded to grad_digits significant digits if given."""
    if grad_digits is not None:
        results = [{"loss": r["loss"],
                    "grad": {k: _round_nested(r["grad"][k], grad_digits) for k in PARAMS}}
                   for r in results]
    write_json(path, {"results": results})


def flat(j):
    """The numbers of a nested list (or of a gradient's w1, b1, w2, b2), in order."""
    if isinstance(j, list):
        for x in j:
            yield from flat(x)
    elif isinstance(j, dict):
        for k in PARAMS:
            yield from flat(j[k])
    else:
        yield float(j)


# ---------------------------------------------------------------------------
# `check`

def compare(expected, got):
    """Per robot: (loss relative error, max gradient error / max |expected|)."""
    out = []
    for e, g in zip(expected["results"], got["results"]):
        lrel = abs(e["loss"] - g["loss"]) / abs(e["loss"])
        scale = max(abs(x) for x in flat(e["grad"]))
        gerr = 0.0
        for k in PARAMS:
            fe, fg = list(flat(e["grad"][k])), list(flat(g["grad"][k]))
            assert len(fe) == len(fg), k
            gerr = max(gerr, max(abs(p - q) for p, q in zip(fe, fg)))
        out.append((lrel, gerr / scale))
    assert len(expected["results"]) == len(got["results"])
    return out


def add_check_arguments(c, loss_tol, grad_tol):
    """`check`'s options: the two result files and the tolerances (these defaults)."""
    c.add_argument("--expected", required=True)
    c.add_argument("--got", required=True)
    c.add_argument("--loss-tol", type=float, default=loss_tol)
    c.add_argument("--grad-tol", type=float, default=grad_tol)


def check(args):
    """`check`: prints each robot's errors and the worst; returns 0 when all are within tolerance, else 1."""
    res = compare(json.load(open(args.expected)), json.load(open(args.got)))
    ok = True
    for i, (lerr, gerr) in enumerate(res):
        good = lerr <= args.loss_tol and gerr <= args.grad_tol
        ok &= good
        print("robot %d: loss rel err %.3e, grad err / max %.3e %s" %
              (i, lerr, gerr, "ok" if good else "FAIL"))
    print("worst: loss %.3e, grad %.3e" % (max(r[0] for r in res), max(r[1] for r in res)))
    return 0 if ok else 1


# ---------------------------------------------------------------------------
# The command line, `gen` and `sim`

def command_line(doc):
    """A parser whose help is doc (as written), and its subcommands (args.cmd)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    return ap, ap.add_subparsers(dest="cmd", required=True)


def add_gen_arguments(g, spec_help):
    """`gen`'s options: --seed, --spec (one per robot: spec_help), --out-robots, --out-params."""
    g.add_argument("--seed", type=int, required=True)
    g.add_argument("--spec", nargs="+", required=True, help=spec_help)
    g.add_argument("--out-robots", required=True)
    g.add_argument("--out-params", required=True)


def run_gen(args, robot_of, params_of):
    """`gen`: per spec robot_of(rng, spec) -> (robot, line), then params_of(rng, points, springs)."""
    rng = random.Random(args.seed)
    robots, params = [], []
    for spec in args.spec:
        rob, line = robot_of(rng, spec)
        robots.append(rob)
        params.append(params_of(rng, len(rob["points"]), len(rob["springs"])))
        print(line)
    write_robots_and_params(args.out_robots, args.out_params, robots, params)


def add_sim_arguments(s, model_option, models):
    """`sim`'s options: inputs, steps, the physics (model_option), output, rounding, perturbation."""
    s.add_argument("--robots", required=True)
    s.add_argument("--params", required=True)
    s.add_argument("--steps", type=int, default=1000)
    s.add_argument(model_option, choices=models, required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--grad-digits", type=int, default=None,
                   help="round gradient entries to this many significant digits (loss stays exact)")
    s.add_argument("--perturb", type=float, default=0.0,
                   help="add uniform noise of this size to the initial positions (conditioning check)")


def perturb_points(robots, size, up_only):
    """Add uniform noise in [-size, size] to each coordinate (to the last, up, in [0, size] if up_only)."""
    rng = random.Random(12345)
    for r in robots:
        r["points"] = [[c + rng.uniform(0 if up_only and k == len(p) - 1 else -size, size)
                        for k, c in enumerate(p)] for p in r["points"]]


def simulate(robots, params, dim, loss_of):
    """Each robot's loss, loss_of(robot, leaves, index), and its gradient with respect to the MLP leaves."""
    import torch
    results = []
    for i, (rob, par) in enumerate(zip(robots, params)):
        leaves = {k: torch.tensor(par[k], dtype=torch.float64, requires_grad=True) for k in PARAMS}
        n, s = len(rob["points"]), len(rob["springs"])
        ninp = N_SINES + 2 * dim * n + 2
        assert tuple(leaves["w1"].shape) == (HIDDEN, ninp), (i, leaves["w1"].shape)
        assert tuple(leaves["b1"].shape) == (HIDDEN,), i
        assert tuple(leaves["w2"].shape) == (s, HIDDEN), i
        assert tuple(leaves["b2"].shape) == (s,), i
        loss = loss_of(rob, leaves, i)
        loss.backward()
        results.append({"loss": float(loss.item()),
                        "grad": {k: leaves[k].grad.tolist() for k in PARAMS}})
    return results


def run_sim(args, dim, loss_of, up_only=False):
    """`sim`: each robot's loss (loss_of) and gradient, written to args.out; prints the losses."""
    import torch
    torch.set_default_dtype(torch.float64)
    robots = json.load(open(args.robots))["robots"]
    params = json.load(open(args.params))["params"]
    if args.perturb:
        perturb_points(robots, args.perturb, up_only)
    res = simulate(robots, params, dim, loss_of)
    write_results(args.out, res, args.grad_digits)
    for i, r in enumerate(res):
        print("robot %d: loss %.17g" % (i, r["loss"]))


def sim_gen_check(argv, doc, dim, model_option, models, spec_help, rollout_loss, robot_of, params_of):
    """The whole command line of a reference with just `sim`, `gen` and `check`
    (tolerances 1e-8 on the loss, 1e-6 on the gradient): `sim` differentiates
    rollout_loss(robot, leaves, steps, model) with the model model_option names
    (the up-only perturbation), `gen` is run_gen(robot_of, params_of).
    Returns the exit status."""
    ap, sub = command_line(doc)
    add_sim_arguments(sub.add_parser("sim"), model_option, models)
    add_gen_arguments(sub.add_parser("gen"), spec_help)
    add_check_arguments(sub.add_parser("check"), 1e-8, 1e-6)
    args = ap.parse_args(argv)

    if args.cmd == "sim":
        model = getattr(args, model_option.lstrip("-"))
        run_sim(args, dim, lambda rob, leaves, i: rollout_loss(rob, leaves, args.steps, model), up_only=True)
    elif args.cmd == "gen":
        run_gen(args, robot_of, params_of)
    else:
        return check(args)
    return 0


# ---------------------------------------------------------------------------
# Physics

def unit_and_norm(w):
    """w / |w| and |w| along the last axis, both 0 (with derivative 0) where |w| = 0."""
    import torch
    s2 = (w * w).sum(dim=-1)
    nz = s2 > 0
    norm = torch.sqrt(torch.where(nz, s2, torch.ones_like(s2)))
    direction = torch.where(nz.unsqueeze(-1), w / norm.unsqueeze(-1), torch.zeros_like(w))
    return direction, torch.where(nz, norm, torch.zeros_like(norm))


def coulomb_friction(vt, vn, mu):
    """ELDiR's friction on the tangential velocity vt: vt - mu min(|vn|, |vt|) vt / |vt| (0 stays 0)."""
    import torch
    direction, speed = unit_and_norm(vt)
    return vt - direction * (mu * torch.minimum(torch.abs(vn), speed)).unsqueeze(-1)
