#!/usr/bin/env bash
# The MPM benchmark in one command: DiffTaichi's diffmpm robot
# (examples/diffmpm.evo: 2976 particles, a 128 x 128 grid, f64), one episode
# of T states forward and backward on one thread, by `evoc sim` (CPU back end)
# and by the independent PyTorch reference (tests/reference/mpm_reference.py:
# eager, autograd, one thread) in the same run, after checking that both give
# the same loss; prints the particle-steps per second of each and the ratio.
#
#   bench/mpm.sh [--steps T] [--reps R]
#   env: BUILD_DIR (build), PYTHON (build/pyenv/bin/python, else python3)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
PYTHON=${PYTHON:-$BUILD_DIR/pyenv/bin/python}
[ -x "$PYTHON" ] || PYTHON=python3
T=1024
REPS=3
while [ $# -gt 0 ]; do
  case "$1" in
  --steps) T=$2; shift 2 ;;
  --reps) REPS=$2; shift 2 ;;
  *) echo "bench/mpm.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
REF=tests/data/reference_mpm/params_seed1.json
"$PYTHON" -c "import json,sys; json.dump({'params': [json.load(open('$REF'))]}, open('$TMP/p.json', 'w'))"
export OMP_NUM_THREADS=1 EVOC_THREADS=1
best_evoc=0
for r in $(seq "$REPS"); do
  "$BUILD_DIR/evoc" sim examples/diffmpm.evo --params "$TMP/p.json" --set world.steps="$T" \
    --threads 1 --out "$TMP/evoc.json" 2>/dev/null
  s=$("$PYTHON" -c "import json; print(json.load(open('$TMP/evoc.json'))['seconds'])")
  best_evoc=$("$PYTHON" -c "print(min(x for x in ($s, $best_evoc) if x > 0))")
done
t0=$(date +%s.%N)
"$PYTHON" tests/reference/mpm_reference.py diffmpm --steps "$T" --params "$REF" --out "$TMP/ref.json" >/dev/null
t1=$(date +%s.%N)
"$PYTHON" - "$TMP/evoc.json" "$TMP/ref.json" "$best_evoc" "$t0" "$t1" "$T" <<'PY'
import json, sys
e, r = json.load(open(sys.argv[1]))["results"][0], json.load(open(sys.argv[2]))
se, t0, t1, T = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
sr = t1 - t0
assert abs(e["loss"] - r["loss"]) <= 1e-9 * abs(r["loss"]), (e["loss"], r["loss"])
ps = 2976 * (T - 1)
print(f"diffmpm, T = {T}, f64, forward + backward, one thread (losses agree: {e['loss']:.12f})")
print(f"  evoc (CPU back end, best of the runs): {se:8.3f} s  {ps / se:12,.0f} particle-steps/s")
print(f"  PyTorch reference (eager, autograd):   {sr:8.3f} s  {ps / sr:12,.0f} particle-steps/s")
print(f"  evoc / PyTorch: {sr / se:.1f}x")
PY
