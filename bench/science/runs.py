"""Runs `evoc run` for one condition and seed, and reads the run directory back.

The conditions (docs/science.md, "Conditions"):
- selected: the experiment's own selection, one `evoc run`.
- drift: no selection. After every generation the population's fitness in
  state.json is set to -1e300 before `evoc run --resume` breeds the next,
  so under mu + lambda truncation with one child per parent every valid
  child replaces a parent: the bodies change by mutation (and repair)
  alone. No change to evoc is needed; the resume checks pass because only
  fitness values change, and the engine reads them as it would its own.
- neutral: `select = random`, the engine's neutral selection: survivors
  drawn uniformly from parents and children, fitness unused; one `evoc run`.
- random: bodies sampled afresh, no inheritance. One generation of
  population x generations samples, cut in birth order into `generations`
  groups of `population`; its "generations" are only labels.
- untrained: selection on the untrained performance, `fitness =
  first(-loss)` (the loss of the initial weights), so that learning is not
  selected for by construction. Its records carry the experiment's own
  fitness, computed from each design's curve (collect's fitness_kind), so
  that fitness means the same in every condition.
"""

import json
import math
import os
import subprocess
import time

CONDITIONS = ("selected", "drift", "neutral", "random", "untrained")
MEASURES = ("learning_gain", "monotonicity", "grad_norm_cv")
# A fitness below every real one (fitness is "higher is better" in evoc
# whatever the .evo writes: sema normalises it), and finite, as JSON needs.
SUNK_FITNESS = -1e300


def learning_metrics(losses):
    """learning_gain and monotonicity of a curve, as runtime/evolve/engine/Metrics.cpp.

    gain = loss[0] - min(loss); monotonicity = the fraction of steps
    i -> i+1 whose loss fell (strictly). NaN where undefined.
    """
    nan = math.nan
    if not losses or any(x is None or not math.isfinite(x) for x in losses):
        return nan, nan
    gain = losses[0] - min(losses)
    if len(losses) < 2:
        return gain, nan
    fell = sum(1 for a, b in zip(losses, losses[1:]) if b < a)
    return gain, fell / (len(losses) - 1)


def curve_fitness(kind, losses):
    """A fitness as evoc's `fitness = R(-loss)` / `R(loss)` reduces a curve.

    kind is state.json's config.fitness.kind, e.g. "max(-loss)"; fitness is
    "higher is better" whatever the sign written (sema normalises it).
    """
    reducers = {
        "max": max,
        "min": min,
        "mean": lambda xs: sum(xs) / len(xs),
        "first": lambda xs: xs[0],
        "last": lambda xs: xs[-1],
    }
    name, _, arg = kind.partition("(")
    if name not in reducers or arg not in ("-loss)", "loss)"):
        raise ValueError(f"unknown fitness kind {kind!r}")
    if not losses or any(x is None or not math.isfinite(x) for x in losses):
        return math.nan
    negated = arg == "-loss)"
    value = reducers[name]([-x for x in losses] if negated else list(losses))
    # R(loss) is minimised: evoc's fitness is its negation.
    return value if negated else -value


def fitness_kind(run_dir):
    """The fitness a run selected on (state.json's config.fitness.kind)."""
    return _read_json(os.path.join(run_dir, "state.json"))["config"]["fitness"]["kind"]


def _read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _write_json_atomic(path, data):
    tmp = f"{path}.science.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def completed_generations(run_dir):
    """Generations committed in run_dir (0 when it holds no state yet)."""
    path = os.path.join(run_dir, "state.json")
    if not os.path.exists(path):
        return 0
    return _read_json(path)["generation"] + 1


def _evoc(cmd, log):
    log(" ".join(cmd))
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"evoc failed ({done.returncode}): {' '.join(cmd)}\n{done.stdout}")


def _sink_population_fitness(run_dir):
    path = os.path.join(run_dir, "state.json")
    state = _read_json(path)
    config = state["config"]
    kind = config.get("selection", {}).get("kind")
    if kind != "truncation(mu_plus_lambda)" or "offspring" in config:
        raise RuntimeError(
            "the drift condition needs select = truncation(mu_plus_lambda) with one child "
            f"per parent (the run has selection {kind!r}"
            + (f", offspring {config['offspring']}" if "offspring" in config else "")
            + ")"
        )
    for member in state["population"]:
        member["fitness"] = SUNK_FITNESS
    _write_json_atomic(path, state)


def run_one(spec, condition, seed, log=print):
    """Runs (or finishes) one condition x seed; returns (run_dir, seconds, ran).

    spec: dict with evoc, experiment, out, generations, population (or
    None: the file's), sets (list of "KEY=VALUE"), threads (or None).
    A run that already holds every generation is not run again.
    """
    gens, pop = spec["generations"], spec["population"]
    run_dir = os.path.join(spec["out"], "runs", f"{condition}_seed{seed}")
    base = [spec["evoc"], "run", spec["experiment"]]
    sets = [f"evolve.seed={seed}"] + list(spec["sets"])
    if pop is not None and condition != "random":  # random sets its own size
        sets.append(f"evolve.population={pop}")
    tail = []
    for s in sets:
        tail += ["--set", s]
    if spec.get("threads") is not None:
        tail += ["--threads", str(spec["threads"])]
    start = time.monotonic()
    ran = False
    if condition in ("selected", "neutral", "untrained"):
        if condition == "neutral":
            tail += ["--set", "evolve.select=random"]
        if condition == "untrained":
            tail += ["--set", "evolve.fitness=first(-loss)"]
        done = completed_generations(run_dir)
        if done < gens:
            where = ["--resume", run_dir] if done else ["--out", run_dir]
            _evoc(base + where + tail + ["--set", f"evolve.generations={gens}"], log)
            ran = True
    elif condition == "drift":
        done = completed_generations(run_dir)
        if done == 0:
            _evoc(base + ["--out", run_dir] + tail + ["--set", "evolve.generations=1"], log)
            done, ran = 1, True
        while done < gens:
            _sink_population_fitness(run_dir)  # idempotent, so a rerun may redo it
            _evoc(
                base + ["--resume", run_dir] + tail + ["--set", f"evolve.generations={done + 1}"],
                log,
            )
            done, ran = done + 1, True
    elif condition == "random":
        if completed_generations(run_dir) < 1:
            if pop is None:
                raise RuntimeError("the random condition needs the population size (--population)")
            size = ["--set", f"evolve.population={pop * gens}", "--set", "evolve.generations=1"]
            _evoc(base + ["--out", run_dir] + tail + size, log)
            ran = True
    else:
        raise ValueError(f"unknown condition {condition!r}")
    return run_dir, time.monotonic() - start, ran


def _value(x):
    # A drift parent kept in place of an invalid child carries the sunk
    # fitness, which is no measurement.
    return x if x is not None and math.isfinite(x) and x != SUNK_FITNESS else math.nan


def collect(run_dir, condition, seed, generations, population, fitness_kind=None):
    """Per-design records of one run: a dict per design and scope.

    scope "population": the members after selection in each generation,
    with evoc's own metrics (what its log's medians summarise). scope
    "offspring": the children trained in each generation (not reused
    duplicates, not invalid ones), learning_gain and monotonicity from
    their curves in state.json's archive, grad_norm_cv from the child's
    own record (`metrics`; NaN in run directories older than that field).
    points and springs: the body's size where some generation's population
    holds it. fitness_kind: when given, every design's fitness is that
    reduction of its curve (curve_fitness) instead of the one it was
    selected on.
    """
    state = _read_json(os.path.join(run_dir, "state.json"))
    curves = {a[1]: a[3] for a in state["archive"] if a[2] is not None}
    gen_dirs = sorted(d for d in os.listdir(run_dir) if d.startswith("gen_"))
    records = []

    # Body sizes: population members carry their robot; a child that was
    # never a member has no size recorded (NaN).
    size = {}
    for d in gen_dirs:
        for m in _read_json(os.path.join(run_dir, d, "population.json"))["population"]:
            robot = m.get("robot") or {}
            if "springs" in robot:
                size[m["id"]] = (len(robot.get("points", [])), len(robot["springs"]))

    def add(scope, gen, member, gain, mono, cv):
        points, springs = size.get(member["id"], (math.nan, math.nan))
        fitness = member.get("fitness")
        if fitness_kind is not None:
            fitness = curve_fitness(fitness_kind, curves.get(member["id"]))
        records.append(
            {
                "condition": condition,
                "seed": seed,
                "generation": gen,
                "scope": scope,
                "id": member["id"],
                "born": member.get("born", gen),
                "fitness": _value(fitness),
                "learning_gain": _value(gain),
                "monotonicity": _value(mono),
                "grad_norm_cv": _value(cv),
                "points": float(points),
                "springs": float(springs),
            }
        )

    for d in gen_dirs:
        pj = _read_json(os.path.join(run_dir, d, "population.json"))
        g = pj["generation"]
        if condition == "random":  # one sampled generation, cut into groups by birth
            order = sorted(o["id"] for o in pj["offspring"])
            label = {i: k // population for k, i in enumerate(order)}
        for m in pj["population"]:
            met = m.get("metrics") or {}
            gen = label[m["id"]] if condition == "random" else g
            add(
                "population",
                gen,
                m,
                met.get("learning_gain"),
                met.get("monotonicity"),
                met.get("grad_norm_cv"),
            )
        for o in pj["offspring"]:
            if not o.get("valid") or "reused" in o or o["id"] not in curves:
                continue
            gain, mono = learning_metrics(curves[o["id"]])
            gen = label[o["id"]] if condition == "random" else g
            cv = (o.get("metrics") or {}).get("grad_norm_cv", math.nan)
            add("offspring", gen, dict(o, born=gen), gain, mono, cv)
    return [r for r in records if r["generation"] < generations]
