#!/usr/bin/env bash
# evoc against its peers on the CPU, in one run: evoc (`evoc sim`, checkpointed and
# --full-tape, each also with --no-window-products (the weight gradients accumulated
# every step) and --replay-temps, the old path whose adjoint replays the
# controller; EVOC_ALT=path/to/another/evoc adds a second build),
# Taichi (bench/cpu/taichi_baseline.py), JAX (bench/cpu/jax_baseline.py: remat off/on,
# unsharded and sharded over the cores; the table shows every variant and marks the
# best) and batched PyTorch (bench/torch_baseline.py), run alternately REPEATS times on
# the same robots (the benchmark's, from `evoc_cpu_bench --dump-robots`), 6x10 and 13x22.
# Prints the median robot-steps/s of one forward + backward, the ratio to evoc
# (checkpointed), and the fraction of the machine's f64 FMA peak that rate would be at
# evoc's own count of flops per robot-step (forward + adjoint, from evoc_cpu_bench's
# full-tape line; the peak is evoc_cpu_bench's, measured in this run).
#
# Each peer first checks its losses (and gradients) against `evoc sim` on the same robots
# and weights (1e-9 relative; the run stops when one fails), in the first repeat.
#
#   bench/cpu/compare.sh                      # 16 robots, T = 1000, 3 repeats
#   ROBOTS=8 STEPS=200 REPEATS=1 WORKLOADS=6x10 bench/cpu/compare.sh
#
# Environment: ROBOTS, STEPS, REPEATS, WORKLOADS ("6x10 13x22"), BUILD (build/),
# EVOC, EVOC_ALT, EVOC_CPU_BENCH, PYTHON (.venv/ or /work/venv/ when present, else python3; jax and taichi are
# pip-installed into its environment when missing), SHARD (host devices for JAX's
# sharded variants; default: the number of cores), KEEP=1 keeps the work folder.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
export EVOC=${EVOC:-$BUILD/evoc}
EVOC_ALT=${EVOC_ALT:-}
BENCH=${EVOC_CPU_BENCH:-$BUILD/bench/evoc_cpu_bench}
if [ -z "${PYTHON:-}" ]; then # a virtual environment for the baselines, else the system's
  PYTHON=python3
  for v in "$ROOT/.venv" /work/venv; do [ -x "$v/bin/python" ] && PYTHON=$v/bin/python && break; done
fi
ROBOTS=${ROBOTS:-16}
STEPS=${STEPS:-1000}
REPEATS=${REPEATS:-3}
WORKLOADS=${WORKLOADS:-"6x10 13x22"}
SHARD=${SHARD:-$(nproc)}

PYTHON=$(command -v "$PYTHON" || echo "$PYTHON")
for f in "$EVOC" "$BENCH" "$PYTHON"; do
  [ -x "$f" ] || { echo "compare.sh: $f is not there (build first, or set EVOC / EVOC_CPU_BENCH / PYTHON)" >&2; exit 2; }
done
for pkg in jax taichi; do
  if ! "$PYTHON" -c "import $pkg" >/dev/null 2>&1; then
    echo "installing $pkg into $("$PYTHON" -c 'import sys; print(sys.prefix)')" >&2
    "$PYTHON" -m pip install -q "$pkg"
  fi
done
"$PYTHON" -c "import torch" 2>/dev/null || { echo "compare.sh: torch is missing from $PYTHON's environment" >&2; exit 2; }

WORK=$(mktemp -d /tmp/evoc_compare.XXXXXX)
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
RES=$WORK/results.txt
: > "$RES"

cd "$ROOT" # evoc_cpu_bench reads examples/*.evo relative to the repository
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
"$BENCH" --steps 50 --dump-robots "$WORK" > "$WORK/bench.txt"
grep -m1 '^peak FMA' "$WORK/bench.txt"
echo "robots: the first $ROBOTS of evoc_cpu_bench's; T = $STEPS; $REPEATS repeats, alternating; medians"

for w in $WORKLOADS; do
  "$PYTHON" - "$WORK/robots_$w.json" "$ROBOTS" "$WORK/sub_$w.json" "$WORK/subobj_$w.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))[: int(sys.argv[2])]
json.dump(r, open(sys.argv[3], "w"))               # bench/torch_baseline.py: a bare list
json.dump({"robots": r}, open(sys.argv[4], "w"))   # evoc sim: {"robots": [...]}
EOF
done

record() { echo "$1 $2 $3" >> "$RES"; printf '  %s %s: %.0f robot-steps/s\n' "$1" "$2" "$3"; }
rs_of() { sed -n 's/.*robot_steps_per_s=\([0-9.]*\).*/\1/p' | tail -1; }

evoc_sim() { # workload label binary [flags]
  local w=$1 label=$2 bin=$3; shift 3
  "$bin" sim examples/eldir.evo --robots "$WORK/subobj_$w.json" --steps "$STEPS" --out "$WORK/sim.json" "$@" 2> "$WORK/sim.err" \
    || { cat "$WORK/sim.err" >&2; exit 1; }
  record "$w" "$label" "$("$PYTHON" -c "import json,sys; print(json.load(open(sys.argv[1]))['robot_steps_per_second'])" "$WORK/sim.json")"
}

peer() { # workload label script [flags]
  local w=$1 label=$2 script=$3; shift 3
  local check=(--no-check)
  [ "$rep" = 1 ] && check=()
  "$PYTHON" "$script" "$WORK/robots_$w.json" --robots "$ROBOTS" --steps "$STEPS" "${check[@]}" "$@" > "$WORK/peer.txt" 2>&1 \
    || { cat "$WORK/peer.txt" >&2; echo "compare.sh: $label failed" >&2; exit 1; }
  grep '^check' "$WORK/peer.txt" | sed 's/^/  /' || true
  record "$w" "$label" "$(rs_of < "$WORK/peer.txt")"
}

for rep in $(seq 1 "$REPEATS"); do
  for w in $WORKLOADS; do
    echo "repeat $rep, $w:"
    evoc_sim "$w" evoc "$EVOC"
    evoc_sim "$w" evoc-full-tape "$EVOC" --full-tape
    evoc_sim "$w" evoc-no-products "$EVOC" --no-window-products
    evoc_sim "$w" evoc-no-products-full-tape "$EVOC" --no-window-products --full-tape
    evoc_sim "$w" evoc-replay "$EVOC" --replay-temps
    evoc_sim "$w" evoc-replay-full-tape "$EVOC" --replay-temps --full-tape
    if [ -n "$EVOC_ALT" ]; then
      evoc_sim "$w" evoc-alt "$EVOC_ALT"
      evoc_sim "$w" evoc-alt-full-tape "$EVOC_ALT" --full-tape
    fi
    peer "$w" taichi bench/cpu/taichi_baseline.py
    for remat in 0 1; do
      flag=(); [ $remat = 1 ] && flag=(--remat)
      peer "$w" "jax-remat$remat-shard1" bench/cpu/jax_baseline.py "${flag[@]}"
      if [ "$SHARD" -gt 1 ] && [ $((ROBOTS % SHARD)) = 0 ]; then
        peer "$w" "jax-remat$remat-shard$SHARD" bench/cpu/jax_baseline.py "${flag[@]}" --shard "$SHARD"
      fi
    done
    "$PYTHON" bench/torch_baseline.py "$WORK/sub_$w.json" --steps "$STEPS" > "$WORK/peer.txt" 2>&1 \
      || { cat "$WORK/peer.txt" >&2; exit 1; }
    record "$w" pytorch "$(sed -n 's/.* = \([0-9]*\) robot-steps\/s.*/\1/p' "$WORK/peer.txt" | tail -1)"
  done
done

"$PYTHON" - "$RES" "$WORK/bench.txt" "$WORKLOADS" <<'EOF'
import re, statistics, sys
from collections import defaultdict
res = defaultdict(list)
for line in open(sys.argv[1]):
    w, label, rs = line.split()
    res[(w, label)].append(float(rs))
bench = open(sys.argv[2]).read()
peak = float(re.search(r"([\d.]+) GFLOP/s on \d+ threads", bench).group(1)) * 1e9  # all threads
# flops per robot-step (evoc's count, forward + adjoint): the full-tape line of each workload
fpr = {}
for block in bench.split("== ")[1:]:
    m = re.search(r"(\d+)x(\d+) lattice", block)
    f = re.search(r"full tape:\s+[\d.]+ s:\s+([\d.]+) robot-steps/s,\s+([\d.]+) GFLOP/s", block)
    if m and f:
        fpr[f"{m.group(1)}x{m.group(2)}"] = float(f.group(2)) * 1e9 / float(f.group(1))
print()
print(f"{'workload':8} {'system':30} {'robot-steps/s':>14} {'min..max':>19} {'vs evoc':>8} {'% FMA peak':>10}")
for w in sys.argv[3].split():
    labels = [l for (ww, l) in res if ww == w]
    med = {l: statistics.median(res[(w, l)]) for l in labels}
    jax = [l for l in labels if l.startswith("jax")]
    best_jax = max(jax, key=med.get) if jax else None
    ref = med.get("evoc")
    for l in labels:
        v = res[(w, l)]
        pk = f"{100 * med[l] * fpr[w] / peak:9.1f}%" if w in fpr else "        ?"
        name = l + (" (best jax)" if l == best_jax else "")
        print(f"{w:8} {name:30} {med[l]:14.0f} {min(v):9.0f}..{max(v):<9.0f} "
              f"{med[l] / ref:7.3f}x {pk}")
    if best_jax:
        print(f"{w:8} evoc / best jax ({best_jax}): {ref / med[best_jax]:.2f}x")
print(f"(flops per robot-step, evoc's count: " +
      ", ".join(f"{w} {f / 1e3:.1f} kflop" for w, f in fpr.items()) + f"; peak {peak * 1e-9:.1f} GFLOP/s)")
EOF
