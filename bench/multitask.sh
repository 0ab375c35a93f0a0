#!/usr/bin/env bash
# The multi-task benchmark in one command: evoc (build/bench/evoc_multitask_bench,
# one training iteration of examples/multitask_alpaca.evo through the compiled
# module: 32 episodes x 1000 steps, forward + backward), the batched PyTorch
# implementation (bench/multitask_torch.py) and the JAX one
# (bench/multitask_jax.py: jit + lax.scan, with and without --remat, on 1 and
# 2 host devices; each first checks its loss and gradient against `evoc sim`)
# measured in the same run, with the same thread count; prints the rates,
# evoc's ratio to PyTorch and to the best JAX variant, and the ratio to the
# authors' Taichi figure.
#
#   bench/multitask.sh [--threads N] [--reps R] [--torch-reps R] [--jax-reps R] [--breakdown]
#   env: BUILD_DIR (build), PYTHON (/work/venv/bin/python, else python3)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
PYTHON=${PYTHON:-/work/venv/bin/python}
[ -x "$PYTHON" ] || PYTHON=python3
THREADS=2
REPS=3
TORCH_REPS=3
JAX_REPS=3
EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
  --threads) THREADS=$2; shift 2 ;;
  --reps) REPS=$2; shift 2 ;;
  --torch-reps) TORCH_REPS=$2; shift 2 ;;
  --jax-reps) JAX_REPS=$2; shift 2 ;;
  --breakdown) EXTRA+=(--breakdown); shift ;;
  *) echo "usage: bench/multitask.sh [--threads N] [--reps R] [--torch-reps R] [--jax-reps R] [--breakdown]" >&2
     exit 2 ;;
  esac
done
BIN=$BUILD_DIR/bench/evoc_multitask_bench
if [ ! -x "$BIN" ]; then
  echo "multitask.sh: $BIN is missing; build it with: ninja -C $BUILD_DIR evoc_multitask_bench" >&2
  exit 1
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "== machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== evoc ($BIN --threads $THREADS --reps $REPS ${EXTRA[*]:-})"
"$BIN" --threads "$THREADS" --reps "$REPS" "${EXTRA[@]}" | tee "$TMP/evoc.out"
tail -n 1 "$TMP/evoc.out" > "$TMP/evoc.json"
echo "== PyTorch ($PYTHON bench/multitask_torch.py --threads $THREADS --reps $TORCH_REPS)"
"$PYTHON" bench/multitask_torch.py --threads "$THREADS" --reps "$TORCH_REPS" | tee "$TMP/torch.out"
tail -n 1 "$TMP/torch.out" > "$TMP/torch.json"
# JAX: remat 0/1 x shard 1/2. A variant whose check against evoc fails (or that
# fails otherwise) is reported and left out of the summary.
JAX_CHECK=(--evoc "$BUILD_DIR/evoc")
[ -x "$BUILD_DIR/evoc" ] || { echo "== ($BUILD_DIR/evoc is missing: JAX runs unchecked)"; JAX_CHECK=(--no-check); }
for shard in 1 2; do
  for remat in 0 1; do
    name=jax_r${remat}_s${shard}
    flags=(--threads "$THREADS" --reps "$JAX_REPS" --shard "$shard" "${JAX_CHECK[@]}")
    [ "$remat" = 1 ] && flags+=(--remat)
    echo "== JAX ($PYTHON bench/multitask_jax.py ${flags[*]})"
    rc=0
    "$PYTHON" bench/multitask_jax.py "${flags[@]}" > "$TMP/$name.out" 2>&1 || rc=$?
    cat "$TMP/$name.out"
    if [ "$rc" = 0 ]; then
      tail -n 1 "$TMP/$name.out" > "$TMP/$name.json"
    else
      echo "== JAX remat $remat shard $shard FAILED (exit $rc); left out of the summary"
    fi
  done
done

"$PYTHON" - "$TMP/evoc.json" "$TMP/torch.json" "$TMP"/jax_*.json <<'EOF'
import json, sys
TAICHI = 2300.0  # the authors' Taichi figure, 2 CPU cores (docs/multitask.md; issue 10): a constant, not measured here
e = json.load(open(sys.argv[1]))
try:
    t = json.load(open(sys.argv[2]))
except ValueError:
    t = None
jax = []
for path in sys.argv[3:]:
    try:
        j = json.load(open(path))
    except (ValueError, OSError):
        continue
    if j.get("system") == "jax":
        jax.append(j)
print("== summary (robot-steps/s, forward + backward, batch %d x %d steps, %d threads)"
      % (e["batch"], e["steps"], e["threads"]))
print("evoc:    %10.0f  (%.3f s per iteration; %.0f per CPU-second)"
      % (e["robot_steps_per_s"], e["seconds"], e["robot_steps_per_cpu_s"]))
if t:
    print("PyTorch: %10.0f  (%.3f s per iteration; %.0f per CPU-second; torch %s, %d threads)"
          % (t["robot_steps_per_s"], t["seconds"], t["robot_steps_per_cpu_s"], t.get("torch", "?"),
             t["threads"]))
    print("evoc / PyTorch = %.1fx wall, %.1fx per CPU-second (same machine, same run)"
          % (e["robot_steps_per_s"] / t["robot_steps_per_s"],
             e["robot_steps_per_cpu_s"] / t["robot_steps_per_cpu_s"]))
else:
    print("PyTorch: not measured (torch is not installed for this python)")
for j in sorted(jax, key=lambda j: (j["shard"], j["remat"])):
    print("JAX remat %d shard %d: %10.0f  (%.3f s per iteration; %.0f per CPU-second; jax %s, %d CPUs%s)"
          % (j["remat"], j["shard"], j["robot_steps_per_s"], j["seconds"], j["robot_steps_per_cpu_s"],
             j.get("jax", "?"), j["threads"],
             "; checked against evoc: loss %.1e, gradient %.1e" % (j["check"]["loss_rel"], j["check"]["grad_rel_max"])
             if "check" in j else "; not checked"))
if jax:
    b = max(jax, key=lambda j: j["robot_steps_per_s"])
    bc = max(jax, key=lambda j: j["robot_steps_per_cpu_s"])
    print("best JAX (wall): remat %d shard %d, %.0f robot-steps/s; best per CPU-second: remat %d shard %d, %.0f"
          % (b["remat"], b["shard"], b["robot_steps_per_s"], bc["remat"], bc["shard"], bc["robot_steps_per_cpu_s"]))
    print("evoc / best JAX = %.2fx wall, %.2fx per CPU-second (same machine, same run)"
          % (e["robot_steps_per_s"] / b["robot_steps_per_s"],
             e["robot_steps_per_cpu_s"] / bc["robot_steps_per_cpu_s"]))
else:
    print("JAX: not measured (jax is not installed for this python, or every variant failed)")
print("Taichi (authors' figure, 2 CPU cores; a constant, not measured here): %.0f" % TAICHI)
print("evoc / Taichi figure = %.1fx (wall); 100x the Taichi figure would be %.0f robot-steps/s"
      % (e["robot_steps_per_s"] / TAICHI, 100 * TAICHI))
p1, pn = e["peak_fma_gflops_1_thread"], e["peak_fma_gflops_all_threads"]
print("(peak FMA measured in this run: %.1f GFLOP/s on 1 thread, %.1f on %d = %.2fx; below %dx, other"
      " work shares the cores)" % (p1, pn, e["threads"], pn / p1, e["threads"]))
EOF
