#!/usr/bin/env python3
"""Compares evoc run directories for bench/gpu/run.sh: designs per second and
robot-steps per second of a GPU run and a CPU run of the same experiment
(the speed-up, the projected time of the paper's experiment), and the
fitness of every design of generation 0 of two runs of one grammar
experiment on the two back ends (the same bodies: their fitness must agree).

  compare_runs.py GPU_RUN CPU_RUN GRAMMAR_GPU_RUN GRAMMAR_CPU_RUN
"""
import json
import math
import sys
from pathlib import Path


def log(run):
    path = Path(run) / "log.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def rates(run):
    """designs/s and robot-steps/s over the run's generations (sums of work / time)."""
    gens = log(run)
    if not gens:
        return None
    designs = sum(g["offspring_trained"] for g in gens)
    seconds = sum(g["seconds"] for g in gens)
    train = sum(g["train_seconds"] for g in gens)
    steps = sum(g["robot_steps_per_second"] * g["train_seconds"] for g in gens
                if g.get("robot_steps_per_second") is not None)
    return {"generations": len(gens), "designs": designs, "designs_per_s": designs / seconds,
            "robot_steps_per_s": steps / train if train > 0 else float("nan"),
            "train_share": train / seconds}


def fitness0(run):
    path = Path(run) / "gen_0000" / "population.json"
    if not path.exists():
        return {}
    doc = json.loads(path.read_text())
    return {o["id"]: (o["valid"], o["fitness"]) for o in doc["offspring"]}


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    gpu, cpu = rates(sys.argv[1]), rates(sys.argv[2])
    ok = True
    for name, r in (("gpu", gpu), ("cpu", cpu)):
        if r is None:
            print(f"{name} run: no log.jsonl (the run failed)")
            ok = False
        else:
            print(f"{name} run: {r['generations']} generations, {r['designs']} designs, "
                  f"{r['designs_per_s']:.4g} designs/s, {r['robot_steps_per_s']:.4g} "
                  f"robot-steps/s forward+backward (training {100 * r['train_share']:.0f}% "
                  f"of the time)")
    if gpu and cpu:
        print(f"speed-up of the GPU device over the CPU back end: "
              f"{gpu['designs_per_s'] / cpu['designs_per_s']:.1f}x designs/s")
        days = 1e7 / gpu["designs_per_s"] / 86400
        print(f"projected: the paper's 1e7 designs (35 iterations x 1000 steps each) at this "
              f"rate: {days:.1f} days on this GPU")
    a, b = fitness0(sys.argv[3]), fitness0(sys.argv[4])
    if not a or not b:
        print("grammar runs: a generation 0 is missing (a run failed)")
        return 1
    worst, mismatched = 0.0, 0
    for i, (va, fa) in a.items():
        vb, fb = b.get(i, (None, None))
        if va != vb:
            mismatched += 1
            continue
        if va and fa is not None and fb is not None:
            worst = max(worst, abs(fa - fb) / max(1.0, abs(fb)))
    print(f"grammar bodies, generation 0: {len(a)} designs, {mismatched} verdicts differ, "
          f"worst fitness difference {worst:.3g} (relative)")
    ok = ok and mismatched == 0 and worst <= 1e-9 and set(a) == set(b)
    print("AGREEMENT OK" if ok else "AGREEMENT FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
