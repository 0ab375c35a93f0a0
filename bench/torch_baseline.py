#!/usr/bin/env python3
"""Batched PyTorch baseline of the ELDiR rollout (bench/cpu_bench.cpp's workload).

The same bodies as the C++ benchmark (written by `evoc_cpu_bench --dump-robots DIR`),
padded to the largest robot of the batch, ELDiR's step (docs/evolution.md; MLP controller with
10 sine inputs, 4 inputs per point and 2 constants, 32 tanh units; springs; semi-
implicit Euler; noslip ground), T states, one forward and one backward (autograd,
full tape) for the whole batch. Prints robot-steps per second.

    python3 bench/torch_baseline.py DIR/robots_6x10.json [--steps 1000] [--threads N]
"""
import argparse
import json
import math
import sys
import time

try:
    import torch
except ImportError:
    print("torch_baseline: PyTorch is not installed (Debian: apt-get install python3-torch)")
    sys.exit(0)

DT, GROUND, GRAVITY, DAMPING, UNITS = 0.004, 0.1, -4.8, 15.0, 32


def load(path):
    robots = json.load(open(path))
    B = len(robots)
    P = max(len(r["points"]) for r in robots)
    S = max(len(r["springs"]) for r in robots)
    x0 = torch.zeros(B, P, 2, dtype=torch.float64)
    pmask = torch.zeros(B, P, dtype=torch.float64)
    a = torch.zeros(B, S, dtype=torch.long)
    b = torch.zeros(B, S, dtype=torch.long)
    rest, stiff, actu = (torch.zeros(B, S, dtype=torch.float64) for _ in range(3))
    for i, r in enumerate(robots):
        pts = torch.tensor(r["points"], dtype=torch.float64)
        lift = max(0.0, GROUND - pts[:, 1].min().item())
        pts[:, 1] += lift
        x0[i, : len(pts)] = pts
        pmask[i, : len(pts)] = 1
        for s, (sa, sb, sr, sk, sact) in enumerate(r["springs"]):
            a[i, s], b[i, s], rest[i, s], stiff[i, s], actu[i, s] = sa, sb, sr, sk, sact
    return x0, pmask, a, b, rest, stiff, actu


def rollout(T, x0, pmask, a, b, rest, stiff, actu, w1, b1, w2, b2):
    B, P, _ = x0.shape
    n = pmask.sum(1, keepdim=True)  # [B, 1]
    m3 = pmask[..., None]
    x, v = x0, torch.zeros_like(x0)
    a2 = a[..., None].expand(-1, -1, 2)
    b2i = b[..., None].expand(-1, -1, 2)
    phases = 2 * math.pi * torch.arange(10, dtype=torch.float64) / 10
    ones = torch.ones(B, 2, dtype=torch.float64)
    damp = math.exp(-DT * DAMPING)
    for t in range(T - 1):
        c = (x * m3).sum(1) / n  # [B, 2]
        waves = torch.sin(10 * t * DT + phases).expand(B, 10)
        feats = torch.cat([0.05 * (x - c[:, None, :]), 0.05 * v], 2) * m3
        inp = torch.cat([waves, feats.reshape(B, 4 * P), ones], 1)
        h = torch.tanh(torch.bmm(w1, inp[..., None])[..., 0] + b1)
        act = torch.tanh(torch.bmm(w2, h[..., None])[..., 0] + b2)
        d = torch.gather(x, 1, a2) - torch.gather(x, 1, b2i)
        L = d.norm(dim=2) + 1e-4
        target = rest * (1 + actu * act)
        imp = (DT * (L - target) * stiff / L)[..., None] * d
        vinc = torch.zeros_like(x).scatter_add(1, a2, -imp).scatter_add(1, b2i, imp)
        vn = damp * v + vinc
        vn = torch.stack([vn[..., 0], vn[..., 1] + DT * GRAVITY], 2)
        ny = x[..., 1] + DT * vn[..., 1]
        hit = (ny < GROUND) & (vn[..., 1] < -1e-4)
        toi = -(x[..., 1] - GROUND) / vn[..., 1]
        step = torch.where(hit, toi, torch.full_like(toi, DT))[..., None]
        x = x + step * vn
        v = torch.where(hit[..., None], torch.zeros_like(vn), vn)
    disp = ((x[..., 0] - x0[..., 0]) * pmask).sum(1) / n[:, 0]
    return -disp  # per-robot loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("robots")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    x0, pmask, a, b, rest, stiff, actu = load(args.robots)
    B, P, _ = x0.shape
    S = a.shape[1]
    g = torch.Generator().manual_seed(1)
    nin = 12 + 4 * P
    w1 = (torch.randn(B, UNITS, nin, generator=g, dtype=torch.float64)
          * 2 * math.sqrt(2 / (UNITS + nin))).requires_grad_()
    w2 = (torch.randn(B, S, UNITS, generator=g, dtype=torch.float64)
          * 3 * math.sqrt(2 / (UNITS + S))).requires_grad_()
    b1 = torch.zeros(B, UNITS, dtype=torch.float64, requires_grad=True)
    b2 = torch.zeros(B, S, dtype=torch.float64, requires_grad=True)
    t0 = time.perf_counter()
    loss = rollout(args.steps, x0, pmask, a, b, rest, stiff, actu, w1, b1, w2, b2)
    loss.sum().backward()
    dt = time.perf_counter() - t0
    steps = B * (args.steps - 1)
    print(f"pytorch {torch.__version__} ({torch.get_num_threads()} threads): {B} robots "
          f"(padded to {P} points, {S} springs), T = {args.steps}, forward + backward: "
          f"{dt:.3f} s = {steps / dt:.0f} robot-steps/s")


if __name__ == "__main__":
    main()
