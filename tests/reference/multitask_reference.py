#!/usr/bin/env python3
"""Independent reference implementation of the multi-task experiment as
docs/multitask.md ("The experiment") writes it (the 2D mass-spring experiment
of Fang et al. 2022: command-conditioned sin MLP controller, velocity /
height / crawl losses, 54-case validation), in PyTorch with float64 and
automatic differentiation.

Written from docs/multitask.md (and, where it is silent, the facts of the authors'
code listed in MULTITASK_NOTES.md), not from evoc's sources. It is a test-data
generator: nothing in the build or in CI needs Python or torch.

    multitask_reference.py validate --design NAME --weights zero|formula --out OUT.json
        -> {"design", "weights", "means": {"total", "velocity", "height",
            "crawl", "task"}, "cases": [{"v", "h", "c", "velocity", "height",
            "crawl", "total"}, ...]}

    multitask_reference.py batchgrad --design NAME --weights formula \
        --commands CMDS.json --out OUT.json
        CMDS.json: {"episodes": [[{"v", "h", "c"}, {"v", "h", "c"}], ...]}
        (one command per 500-step segment, per batch element)
        -> {"design", "weights", "batch", "loss": {"total", "velocity",
            "height", "crawl"}, "grad": {"w1", "b1", "w2", "b2"}}
        each loss term is summed over the batch and divided by B.

    multitask_reference.py check --expected E.json --got G.json
        compares two result files of the same kind (largest relative error).

Designs come from fang_designs.json beside this file: for each design the
cells (i, j, template) in construction order.
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_common as common  # noqa: E402  (JSON files, flat; no torch at import)

# ---------------------------------------------------------------------------
# Constants (docs/multitask.md, 2D)
DT = 0.004
STEPS = 1000
GRAVITY = -1.8
GROUND = 0.1
ZETA = 0.2                  # spring dashpot
ACTUATION = 0.2             # actuation coefficient of an actuated spring
STIFFNESS = 3e4 / 10        # 3e4 in the design files, / 10 in the solver
CELL = 0.05
ORIGIN = 0.1
X_SHIFT = 0.4
HIDDEN = 64
N_SINES = 10
DUP = 30                    # copies of each command input
RUN_PERIOD = 100            # velocity window and sine period (steps)
SEGMENT = 500               # command segment / height period (steps)
MAX_SPEED = 0.08
MAX_HEIGHT = 0.1
OMEGA = 2 * math.pi / DT / RUN_PERIOD

VEL_COEF = 0.1              # 100 / steps
HEIGHT_COEF = 50.0          # 100 / (steps // 500)
CRAWL_COEF = 0.005          # 5 / steps

TEMPLATES = {               # over springs ab, ac, ad, bc, bd, cd
    "vertical":   (1, 0, 0, 0, 0, 1),
    "horizontal": (0, 1, 0, 0, 1, 0),
    "diagonal":   (0, 0, 1, 1, 0, 0),
    "all":        (1, 1, 1, 1, 1, 1),
    "none":       (0, 0, 0, 0, 0, 0),
}

# Validation grid, in the order of the authors' configuration files
# (itertools.product: velocity outermost, crawl innermost).
VAL_V = [-0.08, -0.06, -0.04, 0.0, -0.02, 0.02, 0.04, 0.06, 0.08]
VAL_H = [0.10, 0.15, 0.20]
VAL_C = [0.0, 1.0]

HERE = os.path.dirname(os.path.abspath(__file__))
DESIGNS = os.path.join(HERE, "fang_designs.json")


# ---------------------------------------------------------------------------
# Bodies

def load_design(name, path=DESIGNS):
    with open(path) as f:
        designs = json.load(f)
    if name not in designs:
        raise SystemExit("unknown design %r (have %s)" % (name, ", ".join(designs)))
    return designs[name]


def build_body(cells):
    """Points (shifted by +0.4 in x), springs (a, b, rest, actuation coef)."""
    grid, index = [], {}
    springs, seen = [], set()

    def point(i, j):
        if (i, j) not in index:
            index[(i, j)] = len(grid)
            grid.append((i, j))
        return index[(i, j)]

    for i, j, tmpl in cells:
        a = point(i, j)
        b = point(i, j + 1)
        c = point(i + 1, j)
        d = point(i + 1, j + 1)
        mask = TEMPLATES[tmpl]
        for k, (p, q) in enumerate(((a, b), (a, c), (a, d), (b, c), (b, d), (c, d))):
            key = (min(p, q), max(p, q))
            if key in seen:          # the first cell keeps a shared spring
                continue
            seen.add(key)
            springs.append((p, q, ACTUATION * mask[k]))
    unshifted = [(i * CELL + ORIGIN, j * CELL + ORIGIN) for i, j in grid]
    points = [(px + X_SHIFT, py) for px, py in unshifted]
    out = []
    for p, q, act in springs:
        rest = ((unshifted[p][0] - unshifted[q][0]) ** 2 +
                (unshifted[p][1] - unshifted[q][1]) ** 2) ** 0.5
        out.append((p, q, rest, act))
    return {"points": points, "springs": out}


def n_inputs(n_points):
    return N_SINES + 4 * n_points + 3 * DUP


# ---------------------------------------------------------------------------
# Weights

def formula_weights(n_in, n_out):
    w1 = [[math.sin(1 + 0.7 * i + 1.3 * j) / math.sqrt(n_in) for j in range(n_in)]
          for i in range(HIDDEN)]
    b1 = [0.1 * math.sin(2 + 0.9 * i) for i in range(HIDDEN)]
    w2 = [[math.sin(3 + 0.5 * i + 1.1 * j) / math.sqrt(HIDDEN) for j in range(HIDDEN)]
          for i in range(n_out)]
    b2 = [0.1 * math.sin(4 + 0.3 * i) for i in range(n_out)]
    return {"w1": w1, "b1": b1, "w2": w2, "b2": b2}


def zero_weights(n_in, n_out):
    return {"w1": [[0.0] * n_in for _ in range(HIDDEN)], "b1": [0.0] * HIDDEN,
            "w2": [[0.0] * HIDDEN for _ in range(n_out)], "b2": [0.0] * n_out}


def make_weights(kind, body):
    n_in, n_out = n_inputs(len(body["points"])), len(body["springs"])
    if kind == "zero":
        return zero_weights(n_in, n_out)
    if kind == "formula":
        return formula_weights(n_in, n_out)
    raise SystemExit("unknown weights %r" % kind)


# ---------------------------------------------------------------------------
# Commands

def segment_commands(episodes, steps=STEPS):
    """episodes: per batch element, one {"v","h","c"} per 500-step segment.
    Returns per-step lists cv, ch, cc of shape [steps][B]."""
    n_seg = (steps + SEGMENT - 1) // SEGMENT
    for e in episodes:
        if len(e) < n_seg:
            raise SystemExit("each episode needs %d segment commands" % n_seg)
    cv = [[float(e[t // SEGMENT]["v"]) for e in episodes] for t in range(steps)]
    ch = [[float(e[t // SEGMENT]["h"]) for e in episodes] for t in range(steps)]
    cc = [[float(e[t // SEGMENT]["c"]) for e in episodes] for t in range(steps)]
    return cv, ch, cc


def draw_episode(uniform):
    """One episode's commands from a source of U(0,1) numbers (docs/multitask.md,
    "Commands": task = floor(4u) still/run/jump/crawl; three numbers per segment)."""
    out = []
    for _ in range((STEPS + SEGMENT - 1) // SEGMENT):
        u0, u1, u2 = uniform(), uniform(), uniform()
        task = int(u0 * 4)
        v = (u1 * 2 - 1) * MAX_SPEED
        if task == 1:
            out.append({"v": v, "h": 0.1, "c": 0.0})
        elif task == 2:
            out.append({"v": v, "h": u2 * MAX_HEIGHT + 0.1, "c": 0.0})
        elif task == 3:
            out.append({"v": v, "h": 0.1, "c": 1.0})
        else:
            out.append({"v": 0.0, "h": 0.1, "c": 0.0})
    return out


# ---------------------------------------------------------------------------
# Rollout (torch, f64, autograd)

def _last_argext(y, largest):
    """Index of the minimum (or maximum) per row, the LAST one on ties: the
    authors' sequential h = min(h, y_i) passes the derivative to y_i on a tie."""
    import torch
    m = y.max(dim=1, keepdim=True).values if largest else y.min(dim=1, keepdim=True).values
    n = y.shape[1]
    ar = torch.arange(n, device=y.device).expand_as(y)
    return torch.where(y == m, ar, torch.full_like(ar, -1)).max(dim=1, keepdim=True).values


class Model:
    """A body with its springs as tensors; rollout() runs B episodes at once."""

    def __init__(self, body):
        import torch
        f64 = torch.float64
        self.torch = torch
        self.n = len(body["points"])
        self.s = len(body["springs"])
        self.n_in = n_inputs(self.n)
        self.x0 = torch.tensor(body["points"], dtype=f64)
        self.a = torch.tensor([s[0] for s in body["springs"]], dtype=torch.long)
        self.b = torch.tensor([s[1] for s in body["springs"]], dtype=torch.long)
        self.rest = torch.tensor([s[2] for s in body["springs"]], dtype=f64)
        self.alpha = torch.tensor([s[3] for s in body["springs"]], dtype=f64)
        self.sines = torch.tensor(
            [[math.sin(OMEGA * t * DT + 2 * math.pi / N_SINES * j) for j in range(N_SINES)]
             for t in range(STEPS)], dtype=f64)

    def rollout(self, w1, b1, w2, b2, cv, ch, cc, steps=STEPS, record=False):
        """cv, ch, cc: [steps, B] tensors of the commands at each step.
        Returns per-episode velocity, height and crawl terms ([B] tensors)."""
        torch = self.torch
        f64 = torch.float64
        B = cv.shape[1]
        n = self.n
        x = self.x0.unsqueeze(0).expand(B, n, 2).clone()
        v = torch.zeros(B, n, 2, dtype=f64)
        zeros_pv = torch.zeros(B, n, 2, dtype=f64)
        grav = torch.tensor([0.0, DT * GRAVITY], dtype=f64)
        zero = torch.zeros(B, dtype=f64)
        # command inputs, per step: [steps, B, 90]
        cmd_in = torch.cat([(cv / MAX_SPEED).unsqueeze(2).expand(-1, -1, DUP),
                            ((ch - 0.1) / MAX_HEIGHT * 2 - 1).unsqueeze(2).expand(-1, -1, DUP),
                            cc.unsqueeze(2).expand(-1, -1, DUP)], dim=2)
        rest = self.rest
        alpha = self.alpha
        ia, ib = self.a, self.b

        com_x = []
        vel = zero.clone()
        hgt = zero.clone()
        crl = zero.clone()
        H = None
        rec = {}
        for t in range(steps - 1):
            # ---- quantities of state t (the authors' pre_advance(t))
            com = (x / n).sum(dim=1)                      # [B, 2]
            y = x[:, :, 1]
            low = y.gather(1, _last_argext(y.detach(), False)).squeeze(1)
            up = y.gather(1, _last_argext(y.detach(), True)).squeeze(1)
            if t % SEGMENT == 0:
                H = low
            else:
                H = torch.where(H > low, H, low)
            com_x.append(com[:, 0])

            # ---- losses on state t
            if t % SEGMENT > RUN_PERIOD:                  # t in 101..499, 601..998
                tgt = cv[t - RUN_PERIOD] / (1 + cc[t - RUN_PERIOD])
                vel = vel + VEL_COEF * (com_x[t] - com_x[t - RUN_PERIOD] - tgt) ** 2
            if t % SEGMENT == SEGMENT - 2:                # t = 498, 998
                hit = ch[t] > 0.1 + 1e-6
                hgt = hgt + torch.where(hit, HEIGHT_COEF * (H - ch[t]) ** 2, zero)
            if t >= 1:                                    # crawl: t = 1..998
                over = up - 0.1
                over = torch.where(over > 0, over, zero)
                crl = crl + torch.where(cc[t] > 1 - 1e-4, CRAWL_COEF * over ** 2, zero)
            if record and t == steps - 2:
                rec = {"com": com.detach().tolist(), "highest": up.detach().tolist(),
                       "lowest": low.detach().tolist()}

            # ---- controller on state t
            rel = (x - com.unsqueeze(1)) / 0.2
            per_point = torch.cat([rel, zeros_pv], dim=2).reshape(B, 4 * n)
            inp = torch.cat([self.sines[t].expand(B, N_SINES), per_point, cmd_in[t]], dim=1)
            hid = torch.sin(inp @ w1.t() + b1)
            act = torch.sin(hid @ w2.t() + b2)
            act = torch.where(act < 1, act, torch.ones_like(act))
            act = torch.where(act > -1, act, -torch.ones_like(act))

            # ---- springs (state t, actuation t)
            d = x[:, ia] - x[:, ib]                        # [B, S, 2]
            dd = (d * d).sum(dim=2)
            L = torch.sqrt(dd + 1e-8) + 1e-4
            target = rest * (1.0 + alpha * act)
            imp = (DT * (L - target) * STIFFNESS / L).unsqueeze(2) * d
            u = d / torch.sqrt(dd).unsqueeze(2)
            vrel = ((v[:, ia] - v[:, ib]) * u).sum(dim=2)
            imp = imp + (ZETA * vrel).unsqueeze(2) * u
            vinc = torch.zeros_like(v).index_add(1, ia, -imp).index_add(1, ib, imp)

            # ---- integrate with sticky ground
            vo = v + grav + vinc
            xy, vy = x[:, :, 1], vo[:, :, 1]
            contact = (xy + DT * vy < GROUND) & (vy < -1e-4)
            vy_safe = torch.where(contact, vy, -torch.ones_like(vy))
            toi = torch.where(contact, -(xy - GROUND) / vy_safe, torch.zeros_like(vy))
            c2 = contact.unsqueeze(2)
            x = torch.where(c2, x + toi.unsqueeze(2) * vo, x + DT * vo)
            v = torch.where(c2, torch.zeros_like(vo), vo)

        out = {"velocity": vel, "height": hgt, "crawl": crl}
        if record:
            out["record"] = rec
        return out


def weights_tensors(weights, requires_grad=False):
    import torch
    return {k: torch.tensor(weights[k], dtype=torch.float64, requires_grad=requires_grad)
            for k in common.PARAMS}


# ---------------------------------------------------------------------------
# Subcommands

def validate(design, kind):
    import torch
    body = build_body(load_design(design))
    model = Model(body)
    w = weights_tensors(make_weights(kind, body))
    cases = [(vv, hh, c) for vv in VAL_V for hh in VAL_H for c in VAL_C]
    B = len(cases)
    cv = torch.tensor([[c[0] for c in cases]] * STEPS, dtype=torch.float64)
    ch = torch.tensor([[c[1] for c in cases]] * STEPS, dtype=torch.float64)
    cc = torch.tensor([[c[2] for c in cases]] * STEPS, dtype=torch.float64)
    with torch.no_grad():
        r = model.rollout(w["w1"], w["b1"], w["w2"], w["b2"], cv, ch, cc, record=True)
    rows = []
    for k, (vv, hh, c) in enumerate(cases):
        lv, lh, lc = (float(r[name][k]) for name in ("velocity", "height", "crawl"))
        rows.append({"v": vv, "h": hh, "c": c, "velocity": lv, "height": lh, "crawl": lc,
                     "total": lv + lh + lc})
    means = {name: sum(row[name] for row in rows) / B
             for name in ("total", "velocity", "height", "crawl")}
    means["task"] = means["total"] - means["crawl"]
    return {"design": design, "weights": kind, "means": means, "cases": rows,
            "state_998_case0": {"com": r["record"]["com"][0],
                                "highest": r["record"]["highest"][0],
                                "lowest": r["record"]["lowest"][0]}}


def batchgrad(design, kind, episodes):
    import torch
    body = build_body(load_design(design))
    model = Model(body)
    w = weights_tensors(make_weights(kind, body), requires_grad=True)
    cv, ch, cc = (torch.tensor(a, dtype=torch.float64) for a in segment_commands(episodes))
    B = len(episodes)
    r = model.rollout(w["w1"], w["b1"], w["w2"], w["b2"], cv, ch, cc)
    terms = {name: r[name].sum() / B for name in ("velocity", "height", "crawl")}
    total = terms["velocity"] + terms["height"] + terms["crawl"]
    total.backward()
    loss = {"total": total.item()}
    loss.update({k: t.item() for k, t in terms.items()})
    return {"design": design, "weights": kind, "batch": B, "loss": loss,
            "grad": {k: w[k].grad.tolist() for k in common.PARAMS}}


def _rel_err(e, g):
    """|g - e| relative to |e| (or to 1e-12 when |e| is smaller)."""
    return abs(g - e) / max(abs(e), 1e-12)


def check(expected, got):
    worst = 0.0
    report = []

    def all_terms(name):
        """Every term of expected[name] against got's, reported."""
        nonlocal worst
        for k, e in expected[name].items():
            g = got[name][k]
            err = _rel_err(e, g)
            report.append((name + "." + k, e, g, err))
            worst = max(worst, err)

    if "means" in expected:
        all_terms("means")
        for i, (ec, gc) in enumerate(zip(expected["cases"], got["cases"])):
            for k in ("velocity", "height", "crawl", "total"):
                err = _rel_err(ec[k], gc[k])
                if err > 1e-9:
                    report.append(("cases[%d].%s" % (i, k), ec[k], gc[k], err))
                worst = max(worst, err)
    if "loss" in expected:
        all_terms("loss")
        for k in common.PARAMS:
            e, g = list(common.flat(expected["grad"][k])), list(common.flat(got["grad"][k]))
            scale = max(max(abs(a) for a in e), 1e-300)
            err = max(abs(a - b) for a, b in zip(e, g)) / scale
            report.append(("grad." + k, scale, None, err))
            worst = max(worst, err)
    for name, e, g, err in report:
        if g is None:   # gradients: e is the largest |expected| entry
            print("%-24s max|expected| %-20r max err / max|expected| %.3e" % (name, e, err))
        else:
            print("%-24s expected %-24r got %-24r rel err %.3e" % (name, e, g, err))
    print("worst relative error %.3e" % worst)
    return worst


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("validate")
    p.add_argument("--design", required=True)
    p.add_argument("--weights", choices=("zero", "formula"), required=True)
    p.add_argument("--out", required=True)
    p = sub.add_parser("batchgrad")
    p.add_argument("--design", required=True)
    p.add_argument("--weights", choices=("zero", "formula"), default="formula")
    p.add_argument("--commands", required=True)
    p.add_argument("--out", required=True)
    p = sub.add_parser("check")
    p.add_argument("--expected", required=True)
    p.add_argument("--got", required=True)
    p.add_argument("--tol", type=float, default=1e-9)
    args = ap.parse_args(argv)

    if args.cmd == "check":
        with open(args.expected) as f:
            e = json.load(f)
        with open(args.got) as f:
            g = json.load(f)
        return 0 if check(e, g) <= args.tol else 1

    import torch
    torch.set_num_threads(1)
    if args.cmd == "validate":
        res = validate(args.design, args.weights)
    else:
        with open(args.commands) as f:
            res = batchgrad(args.design, args.weights, json.load(f)["episodes"])
    common.write_json(args.out, res, separators=None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
