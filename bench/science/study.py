#!/usr/bin/env python3
"""Do evolved bodies become more differentiable? One experiment, N seeds, conditions.

  python3 bench/science/study.py EXPERIMENT.evo --evoc build/evoc --out DIR \\
      --seeds 3 --generations 8 [--population P] [--conditions selected,drift] \\
      [--set KEY=VALUE ...] [--threads N]

Runs `evoc run` per condition and seed (runs.py), then writes DIR/designs.csv
(one row per design and scope), DIR/summary.csv (every number: per-generation
means and bootstrap intervals, trend tests, differences between conditions),
DIR/report.html (plots; each also as DIR/SCOPE_MEASURE.svg), DIR/tables.md
(the population's measures as one Markdown table) and DIR/study.json
(settings, machine, timings). A run already complete in DIR is read, not run
again. docs/science.md explains the conditions, the measures and the
statistics. Python 3 standard library only.
"""

import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import analyse  # noqa: E402
import report  # noqa: E402
import runs  # noqa: E402

DESIGN_COLUMNS = (
    "condition",
    "seed",
    "generation",
    "scope",
    "id",
    "born",
    "fitness",
    "learning_gain",
    "monotonicity",
    "grad_norm_cv",
    "points",
    "springs",
    "learning_gain_adj",
    "monotonicity_adj",
    "grad_norm_cv_adj",
)


def machine():
    """One line: the processor, the number of cores, the system."""
    cpu = platform.processor() or "unknown processor"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("experiment", help="the .evo file")
    p.add_argument("--evoc", required=True, help="the evoc binary")
    p.add_argument("--out", required=True, help="the study directory")
    p.add_argument("--seeds", type=int, default=3, help="seeds 1..N (evolve.seed)")
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--generations", type=int, default=8)
    p.add_argument(
        "--population", type=int, help="evolve.population (default: the file's; random needs it)"
    )
    p.add_argument(
        "--conditions",
        default="selected,drift",
        help="comma-separated, the first is the reference: " + ", ".join(runs.CONDITIONS),
    )
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="sets")
    p.add_argument("--threads", type=int, help="evoc --threads")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples")
    p.add_argument("--permutations", type=int, default=2000, help="slope permutations")
    args = p.parse_args(argv)
    args.conditions = [c.strip() for c in args.conditions.split(",") if c.strip()]
    for c in args.conditions:
        if c not in runs.CONDITIONS:
            p.error(f"unknown condition {c!r} (known: {', '.join(runs.CONDITIONS)})")
    for s in args.sets:
        if s.split("=", 1)[0].strip() in ("evolve.seed", "evolve.generations"):
            p.error(f"--set {s}: the study sets the seed and the generations itself")
    if args.generations < 2:
        p.error("--generations must be at least 2 (a trend needs two)")
    return args


def write_csv(path, columns, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({c: _cell(r.get(c, "")) for c in columns})


def _cell(v):
    if isinstance(v, float):
        return "nan" if v != v else repr(v)
    return v


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    evoc = os.path.abspath(args.evoc)
    population = args.population
    if population is None and "random" in args.conditions:
        sys.exit("study: the random condition needs --population")
    spec = {
        "evoc": evoc,
        "experiment": os.path.abspath(args.experiment),
        "out": args.out,
        "generations": args.generations,
        "population": population,
        "sets": args.sets,
        "threads": args.threads,
    }
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    started = time.monotonic()
    records, timing = [], {}

    def log(message):
        print(message, flush=True)

    # The untrained condition selects on first(-loss); its designs are
    # recorded with the experiment's own fitness, read from a run of another
    # condition with the same seed (run first: it is one of the conditions).
    order = sorted(args.conditions, key=lambda c: c == "untrained")
    if order == ["untrained"]:
        sys.exit("study: the untrained condition needs another condition to compare with")
    for cond in order:
        for seed in seeds:
            run_dir, seconds, ran = runs.run_one(spec, cond, seed, log=log)
            # evoc's wall time, kept with the run so that a study that reads a
            # finished run again still reports what it cost.
            timing_path = os.path.join(run_dir, "science_timing.json")
            before = 0.0
            if os.path.exists(timing_path):
                with open(timing_path, encoding="utf-8") as f:
                    before = json.load(f)["seconds"]
            if ran:
                with open(timing_path, "w", encoding="utf-8") as f:
                    json.dump({"seconds": before + seconds}, f)
            seconds = before + seconds if ran else before
            with open(os.path.join(run_dir, "state.json"), encoding="utf-8") as f:
                designs = json.load(f)["designs_evaluated"]
            t = timing.setdefault(cond, {"seconds": 0.0, "designs": 0})
            t["seconds"] += seconds
            t["designs"] += designs
            pop = population or _population_of(run_dir)
            own = None
            if cond == "untrained":
                sibling = os.path.join(args.out, "runs", f"{order[0]}_seed{seed}")
                own = runs.fitness_kind(sibling)
            records += runs.collect(run_dir, cond, seed, args.generations, pop, own)
    analysis_start = time.monotonic()
    rows = analyse.analyse(
        records, args.conditions, seeds, args.generations, args.bootstrap, args.permutations
    )
    version = subprocess.run([evoc, "--version"], stdout=subprocess.PIPE, text=True).stdout.strip()
    meta = {
        "experiment": args.experiment,
        "command": " ".join(["python3 bench/science/study.py"] + argv),
        "evoc": version,
        "machine": machine(),
        "conditions": args.conditions,
        "seeds": seeds,
        "generations": args.generations,
        "population": population if population is not None else "the file's",
        "settings": args.sets,
        "evoc_seconds": {c: round(t["seconds"], 1) for c, t in timing.items()},
        "designs_evaluated": {c: t["designs"] for c, t in timing.items()},
        "designs_per_second": {
            c: round(t["designs"] / t["seconds"], 2) if t["seconds"] > 0 else None
            for c, t in timing.items()
        },
        "analysis_seconds": round(time.monotonic() - analysis_start, 1),
        "wall_seconds_this_call": round(time.monotonic() - started, 1),
    }
    write_csv(os.path.join(args.out, "designs.csv"), DESIGN_COLUMNS, records)
    write_csv(os.path.join(args.out, "summary.csv"), analyse.COLUMNS, rows)
    with open(os.path.join(args.out, "report.html"), "w", encoding="utf-8") as f:
        f.write(report.page(rows, meta))
    with open(os.path.join(args.out, "tables.md"), "w", encoding="utf-8") as f:
        f.write(report.markdown_table(rows, args.conditions, args.generations))
    for scope, measures in analyse.SCOPE_MEASURES.items():  # the same plots, one file each
        for measure in measures:
            svg = report.plot_svg(rows, scope, measure, args.conditions, args.generations)
            with open(os.path.join(args.out, f"{scope}_{measure}.svg"), "w", encoding="utf-8") as f:
                f.write(svg + "\n")
    with open(os.path.join(args.out, "study.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1)
    print(f"study: {len(records)} design records, {len(rows)} summary rows -> {args.out}")
    return 0


def _population_of(run_dir):
    with open(os.path.join(run_dir, "state.json"), encoding="utf-8") as f:
        return json.load(f)["config"]["population"]


if __name__ == "__main__":
    sys.exit(main())
