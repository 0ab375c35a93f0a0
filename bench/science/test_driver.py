#!/usr/bin/env python3
"""The study driver end to end on a tiny run (ctest: science_driver).

  python3 bench/science/test_driver.py EVOC

examples/eldir_small.evo, 2 seeds x 2 generations x population 4, 100
steps, 3 iterations, all five conditions: checks the CSVs and the page,
that the driver's copy of Metrics.cpp agrees with evoc's, that the drift
condition does what it says (every child replaces its parent, and the
first two generations' children are those of the selected run), that the
untrained condition selected on first(-loss) but records the experiment's
own fitness, and that offspring carry their gradient-norm CV. Exit
77 (skipped) without an evoc binary.
"""

import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import runs  # noqa: E402


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def population(study, cond, seed, gen):
    path = os.path.join(study, "runs", f"{cond}_seed{seed}", f"gen_{gen:04d}", "population.json")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def main():
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        print("science_driver: no evoc binary given; skipped")
        return 77
    evoc = sys.argv[1]
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="evoc-science-") as tmp:
        study = os.path.join(tmp, "study")
        cmd = [
            sys.executable,
            os.path.join(HERE, "study.py"),
            os.path.join(ROOT, "examples", "eldir_small.evo"),
            "--evoc",
            evoc,
            "--out",
            study,
            "--seeds",
            "2",
            "--generations",
            "2",
            "--population",
            "4",
            "--set",
            "world.steps=100",
            "--set",
            "evolve.learn.iterations=3",
            "--conditions",
            "selected,drift,neutral,random,untrained",
            "--bootstrap",
            "200",
            "--permutations",
            "200",
            "--threads",
            "2",
        ]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)

        designs = read_csv(os.path.join(study, "designs.csv"))
        summary = read_csv(os.path.join(study, "summary.csv"))
        with open(os.path.join(study, "report.html"), encoding="utf-8") as f:
            page = f.read()
        # 5 conditions x 2 seeds x 2 generations x 4 members (population) +
        # at most as many trained children (offspring).
        pop_rows = [d for d in designs if d["scope"] == "population"]
        check(len(pop_rows) == 80, f"{len(pop_rows)} population rows, not 80")
        kids = [d for d in designs if d["scope"] == "offspring"]
        check(kids, "no offspring rows")
        cv = [float(d["grad_norm_cv"]) for d in kids]
        check(all(x == x and x >= 0 for x in cv), "an offspring row without its gradient-norm CV")
        # Every member's body size, and its measures beyond fitness and size.
        for d in pop_rows:
            check(float(d["springs"]) > 0 and float(d["points"]) > 0, f"no body size: {d}")
            gain = float(d["learning_gain"])
            if gain == gain and float(d["fitness"]) == float(d["fitness"]):
                adj = float(d["learning_gain_adj"])
                check(adj == adj, f"no adjusted learning gain: {d}")
        means = [r for r in summary if r["kind"] == "mean"]
        # 5 conditions x (8 population + 4 offspring measures) x 2 generations
        check(len(means) == 120, f"{len(means)} mean rows, not 120")
        for r in means:
            if r["scope"] == "population" and r["measure"] == "learning_gain":
                check(r["n_seeds"] == "2", f"a mean over {r['n_seeds']} seeds: {r}")
                lo, est, hi = float(r["ci_low"]), float(r["estimate"]), float(r["ci_high"])
                check(lo <= est <= hi, f"estimate outside its interval: {r}")
        kinds = {r["kind"] for r in summary}
        for k in (
            "trend_mann_kendall",
            "trend_slope_permutation",
            "trend_slope_sign_flip",
            "difference",
            "slope_difference_sign_flip",
        ):
            check(k in kinds, f"no {k} rows")
        check(page.count("<svg") == 12, f"{page.count('<svg')} plots, not 12")
        # Holm's adjustment covers the sign-flip tests of the population's
        # differentiability measures, and never lowers a p.
        holm = [r for r in summary if r["p_holm"] != ""]
        check(holm, "no Holm-adjusted p")
        for r in holm:
            check(r["scope"] == "population" and "sign_flip" in r["kind"], f"Holm on {r}")
            if r["p"] != "nan":
                check(float(r["p_holm"]) >= float(r["p"]), f"Holm lowered a p: {r}")
        check(os.path.exists(os.path.join(study, "population_monotonicity.svg")), "no SVG file")
        with open(os.path.join(study, "tables.md"), encoding="utf-8") as f:
            table = f.read().splitlines()
        # A header, a rule, and a row per measure and condition (8 x 5).
        check(len(table) == 42, f"tables.md has {len(table)} lines, not 42")
        check(all(line.count("|") == 10 for line in table), "a ragged Markdown table")
        outside = page.replace("http://www.w3.org/2000/svg", "")
        check("http" not in outside, "the page is not self-contained")

        for cond in ("selected", "drift", "neutral"):
            for seed in (1, 2):
                for gen in (0, 1):
                    for m in population(study, cond, seed, gen)["population"]:
                        gain, mono = runs.learning_metrics(m["losses"])
                        met = m["metrics"]
                        check(math.isclose(gain, met["learning_gain"], abs_tol=1e-12), m["id"])
                        if met["monotonicity"] is not None:
                            check(math.isclose(mono, met["monotonicity"], abs_tol=1e-12), m["id"])
        # The neutral condition ran with the engine's random selection.
        with open(os.path.join(study, "runs", "neutral_seed1", "state.json"), encoding="utf-8") as f:
            kind = json.load(f)["config"]["selection"]["kind"]
        check(kind == "random", f"the neutral run selected by {kind}")
        # The untrained condition selected on the initial loss; its designs
        # carry the experiment's fitness, max(-loss), computed from the curve.
        untrained = os.path.join(study, "runs", "untrained_seed1")
        check(runs.fitness_kind(untrained) == "first(-loss)", "untrained: wrong fitness")
        un = population(study, "untrained", 1, 1)["population"]
        for m in un:
            check(math.isclose(m["fitness"], -m["losses"][0], abs_tol=1e-12), m["id"])
            want = -min(m["losses"])
            got = [
                float(d["fitness"])
                for d in pop_rows
                if d["condition"] == "untrained" and d["seed"] == "1" and d["id"] == str(m["id"])
            ]
            check(got and all(math.isclose(g, want, abs_tol=1e-12) for g in got), m["id"])
        for seed in (1, 2):
            sel, dri = population(study, "selected", seed, 1), population(study, "drift", seed, 1)
            key = [(o["id"], o["parent"], o.get("fitness")) for o in sel["offspring"]]
            check(
                key == [(o["id"], o["parent"], o.get("fitness")) for o in dri["offspring"]],
                "generation 1's children differ between selected and drift",
            )
            valid = {o["id"] for o in dri["offspring"] if o["valid"]}
            kept = {m["id"] for m in dri["population"]}
            check(valid <= kept, f"drift seed {seed}: a valid child was not kept")

        state = os.path.join(study, "runs", "selected_seed1", "state.json")
        before = os.stat(state).st_mtime_ns
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)  # reads, does not rerun
        check(os.stat(state).st_mtime_ns == before, "a finished run was run again")
    print(f"science_driver: ok ({time.monotonic() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
