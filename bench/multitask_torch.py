#!/usr/bin/env python3
"""Batched PyTorch baseline of one training iteration of the multi-task
experiment (docs/multitask.md): Alpaca, B episodes of T steps with
random commands (two 500-step segments each), the formula weights of
tests/reference/multitask_reference.py, float64, forward (rollout + velocity,
height and crawl losses) and backward (autograd through the whole rollout).

The model is the one of tests/reference/multitask_reference.py (the test-data
generator); this script only times it. After one warm-up iteration it times
--reps iterations and prints one JSON line:

    {"system": "pytorch", "robot_steps_per_s": ..., "batch": 32, "steps": 1000,
     "threads": 2, "seconds": ...}

where seconds is the mean wall time of one iteration and robot_steps_per_s =
batch * steps / seconds (robot_steps_per_cpu_s: the same per CPU-second of
this process, which a machine shared with other work disturbs less).

    python3 bench/multitask_torch.py [--batch 32] [--steps 1000] [--reps 3]
                                     [--threads 2] [--design Alpaca] [--seed 1]
"""
import argparse
import json
import os
import random
import sys
import time

try:
    import torch
except ImportError:
    print("multitask_torch: PyTorch is not installed")
    sys.exit(0)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "reference"))
sys.path.insert(0, os.path.join(HERE, "cpu"))
import multitask_reference as ref  # noqa: E402
from peers_common import iteration_record  # noqa: E402  (the JSON record)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=ref.STEPS)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--design", default="Alpaca")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    body = ref.build_body(ref.load_design(args.design))
    model = ref.Model(body)
    weights = ref.make_weights("formula", body)
    rng = random.Random(args.seed)

    def iteration():
        episodes = [ref.draw_episode(rng.random) for _ in range(args.batch)]
        cv, ch, cc = (torch.tensor(a, dtype=torch.float64)
                      for a in ref.segment_commands(episodes, args.steps))
        w = ref.weights_tensors(weights, requires_grad=True)
        t0, c0 = time.perf_counter(), time.process_time()
        r = model.rollout(w["w1"], w["b1"], w["w2"], w["b2"], cv, ch, cc, steps=args.steps)
        loss = (r["velocity"].sum() + r["height"].sum() + r["crawl"].sum()) / args.batch
        loss.backward()
        return time.perf_counter() - t0, time.process_time() - c0

    iteration()                                   # warm-up
    runs = [iteration() for _ in range(args.reps)]
    times = [w for w, _ in runs]
    cpu = [c for _, c in runs]
    out = iteration_record("pytorch", args.batch, args.steps, torch.get_num_threads(), times, cpu)
    out["torch"] = torch.__version__
    print(json.dumps(out))


if __name__ == "__main__":
    main()
