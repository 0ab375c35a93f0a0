#!/usr/bin/env python3
"""Batched PyTorch CUDA baseline of the ELDiR rollout (bench/gpu/bench_gpu.cpp's workload).

The same bodies as evoc_bench_gpu (written by `evoc_bench_gpu --dump-robots FILE`),
padded to the largest robot, ELDiR's step (docs/evolution.md; MLP controller: 10 sine inputs,
4 inputs per point, 2 constants, 32 tanh units; springs; semi-implicit Euler; noslip
ground), T states, one forward and one backward (autograd, full tape) of the whole
population on the GPU, in chunks of robots that fit in memory. Prints robot-steps per
second and one RESULT line per precision for bench/gpu/run.sh.

    python3 bench/gpu/torch_cuda_baseline.py ROBOTS.json [--steps 1000] [--precision f64|f32|both]
"""
import argparse
import json
import math
import sys
import time

try:
    import torch
except ImportError:
    print("torch_cuda_baseline: PyTorch is not installed; no baseline measured")
    sys.exit(0)

DT, GROUND, GRAVITY, DAMPING, UNITS = 0.004, 0.1, -4.8, 15.0, 32


def load(path, dtype, dev):
    robots = json.load(open(path))
    B = len(robots)
    P = max(len(r["points"]) for r in robots)
    S = max(len(r["springs"]) for r in robots)
    x0 = torch.zeros(B, P, 2, dtype=dtype)
    pmask = torch.zeros(B, P, dtype=dtype)
    a = torch.zeros(B, S, dtype=torch.long)
    b = torch.zeros(B, S, dtype=torch.long)
    rest, stiff, actu = (torch.zeros(B, S, dtype=dtype) for _ in range(3))
    for i, r in enumerate(robots):
        pts = torch.tensor(r["points"], dtype=dtype)
        x0[i, : len(pts)] = pts
        pmask[i, : len(pts)] = 1
        sp = torch.tensor(r["springs"], dtype=torch.float64)
        n = len(sp)
        a[i, :n], b[i, :n] = sp[:, 0].long(), sp[:, 1].long()
        rest[i, :n], stiff[i, :n], actu[i, :n] = sp[:, 2], sp[:, 3], sp[:, 4]
    # Padded springs have stiffness 0 (no force); padded points are masked.
    return [t.to(dev) for t in (x0, pmask, a, b, rest, stiff, actu)]


def rollout(T, x0, pmask, a, b, rest, stiff, actu, w1, b1, w2, b2):
    B, P, _ = x0.shape
    dtype, dev = x0.dtype, x0.device
    n = pmask.sum(1, keepdim=True)
    m3 = pmask[..., None]
    x, v = x0, torch.zeros_like(x0)
    a2 = a[..., None].expand(-1, -1, 2)
    b2i = b[..., None].expand(-1, -1, 2)
    phases = 2 * math.pi * torch.arange(10, dtype=dtype, device=dev) / 10
    ones = torch.ones(B, 2, dtype=dtype, device=dev)
    damp = math.exp(-DT * DAMPING)
    grav = torch.tensor([0.0, DT * GRAVITY], dtype=dtype, device=dev)
    for t in range(T - 1):
        c = (x * m3).sum(1) / n
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
        vn = damp * v + grav + vinc
        ny = x[..., 1] + DT * vn[..., 1]
        hit = (ny < GROUND) & (vn[..., 1] < -1e-4)
        toi = -(x[..., 1] - GROUND) / vn[..., 1]
        step = torch.where(hit, toi, torch.full_like(toi, DT))[..., None]
        x = x + step * vn
        v = torch.where(hit[..., None], torch.zeros_like(vn), vn)
    disp = ((x[..., 0] - x0[..., 0]) * pmask).sum(1) / n[:, 0]
    return -disp


def measure(args, dtype, name):
    dev = torch.device("cuda")
    x0, pmask, a, b, rest, stiff, actu = load(args.robots, dtype, dev)
    B, P, _ = x0.shape
    S = a.shape[1]
    nin = 12 + 4 * P
    g = torch.Generator(device=dev).manual_seed(1)
    total, done = 0.0, 0
    # Warm-up (kernels, allocator) on a short rollout of one chunk.
    for first in (True, False):
        for lo in range(0, B, args.chunk):
            hi = min(B, lo + args.chunk)
            k = hi - lo
            w1 = (torch.randn(k, UNITS, nin, generator=g, dtype=dtype, device=dev)
                  * 2 * math.sqrt(2 / (UNITS + nin))).requires_grad_()
            w2 = (torch.randn(k, S, UNITS, generator=g, dtype=dtype, device=dev)
                  * 3 * math.sqrt(2 / (UNITS + S))).requires_grad_()
            b1 = torch.zeros(k, UNITS, dtype=dtype, device=dev, requires_grad=True)
            b2 = torch.zeros(k, S, dtype=dtype, device=dev, requires_grad=True)
            sl = [t[lo:hi] for t in (x0, pmask, a, b, rest, stiff, actu)]
            T = 5 if first else args.steps
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            loss = rollout(T, *sl, w1, b1, w2, b2)
            loss.sum().backward()
            torch.cuda.synchronize()
            if not first:
                total += time.perf_counter() - t0
                done += k
            del loss, w1, w2, b1, b2
            if first:
                break
    rate = done * (args.steps - 1) / total
    print(f"pytorch {torch.__version__} CUDA {name} on {torch.cuda.get_device_name(0)}: "
          f"{done} robots (padded to {P} points, {S} springs, chunks of {args.chunk}), "
          f"T = {args.steps}, forward + backward: {total:.3f} s = {rate:.4g} robot-steps/s")
    print(f"RESULT baseline=pytorch precision={name} robot_steps_per_s={rate:.6g}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("robots")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--precision", default="both")
    ap.add_argument("--chunk", type=int, default=250, help="robots per autograd graph")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_cuda_baseline: PyTorch sees no CUDA device; no baseline measured")
        return
    if args.precision in ("f64", "both"):
        measure(args, torch.float64, "f64")
    if args.precision in ("f32", "both"):
        measure(args, torch.float32, "f32")


if __name__ == "__main__":
    main()
