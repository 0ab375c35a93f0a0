#!/usr/bin/env bash
# evoc against its peers on the CPU, in one run: evoc (`evoc sim`, checkpointed and
# --full-tape, each also with --no-window-products (the weight gradients accumulated
# every step) and --replay-temps, the old path whose adjoint replays the
# controller; EVOC_ALT=path/to/another/evoc adds a second build),
# Taichi (bench/cpu/taichi_baseline.py), JAX (bench/cpu/jax_baseline.py: remat off/on,
# unsharded and sharded over the cores; the table shows every variant and marks the
# best) and batched PyTorch (bench/torch_baseline.py), run alternately REPEATS times on
# the same robots and the same physics, in three workloads:
#   6x10, 13x22  lattice robots (the benchmark's, from `evoc_cpu_bench --dump-robots`) in
#                examples/eldir.evo's world (noslip ground);
#   walker       ROBOTS random grammar bodies of examples/grammar_walker.evo (ragged: of
#                different sizes; the peers pad every robot to the largest) in its world
#                (mass_spring_friction: friction ground). They are the initial population
#                of a one-generation `evoc run` (evolve.seed = WALKER_SEED; one learning
#                iteration of 2 states, which does not change the bodies), read from its
#                gen_0000/population.json.
# The peers read the world (dt, gravity, damping, ground, contact model) from the same
# .evo file as `evoc sim` (--evo; bench/cpu/peers_common.py).
# Prints the median robot-steps/s of one forward + backward, the ratio to evoc
# (checkpointed), and the fraction of the machine's f64 FMA peak that rate would be at
# evoc's own count of flops per robot-step (forward + adjoint, from evoc_cpu_bench's
# full-tape line; the peak is evoc_cpu_bench's, measured in this run; '?' for walker,
# which evoc_cpu_bench does not count). A peer that runs but measures nothing (its
# framework is not installed) is a "not run" row with its reason.
#
# Each peer first checks its losses and gradients against `evoc sim` on the same robots
# and weights (1e-9 relative for the losses, 1e-7 for the gradients; the run stops when
# one fails), in the first repeat.
#
#   bench/cpu/compare.sh                      # 16 robots, T = 1000, 3 repeats
#   ROBOTS=8 STEPS=200 REPEATS=1 WORKLOADS=6x10 bench/cpu/compare.sh
#   REPEATS=1 WORKLOADS=walker bench/cpu/compare.sh
#
# Environment: ROBOTS, STEPS, REPEATS, WORKLOADS ("6x10 13x22 walker"), WALKER_SEED (1),
# BUILD (build/), EVOC, EVOC_ALT, EVOC_CPU_BENCH, PYTHON (.venv/ or /work/venv/ when
# present, else python3; jax and taichi are pip-installed into its environment when
# missing), SHARD (host devices for JAX's sharded variants; default: the number of cores),
# KEEP=1 keeps the work folder.
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
WORKLOADS=${WORKLOADS:-"6x10 13x22 walker"}
WALKER_SEED=${WALKER_SEED:-1}
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

evo_of() { # the .evo file whose world a workload runs in
  case $1 in
    walker) echo examples/grammar_walker.evo ;;
    *) echo examples/eldir.evo ;;
  esac
}

cd "$ROOT" # evoc_cpu_bench reads examples/*.evo relative to the repository
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
"$BENCH" --steps 50 --dump-robots "$WORK" > "$WORK/bench.txt"
grep -m1 '^peak FMA' "$WORK/bench.txt"
if [[ " $WORKLOADS " == *" walker "* ]]; then
  # generation 0 of examples/grammar_walker.evo: ROBOTS bodies drawn from its grammar
  "$EVOC" run examples/grammar_walker.evo --out "$WORK/walker_run" --threads 1 \
    --set evolve.population="$ROBOTS" --set evolve.seed="$WALKER_SEED" \
    --set evolve.generations=1 --set evolve.learn.iterations=1 --set world.steps=2 \
    > "$WORK/walker_run.txt" 2>&1 || { cat "$WORK/walker_run.txt" >&2; exit 1; }
  "$PYTHON" -c 'import json, sys
pop = json.load(open(sys.argv[1]))["population"]
json.dump([m["robot"] for m in pop], open(sys.argv[2], "w"))' \
    "$WORK/walker_run/gen_0000/population.json" "$WORK/robots_walker.json"
fi
echo "robots: $ROBOTS a workload (a lattice: the first of evoc_cpu_bench's; walker: drawn from the" \
  "grammar, evolve.seed = $WALKER_SEED); T = $STEPS; $REPEATS repeats, alternating; medians"

for w in $WORKLOADS; do
  "$PYTHON" - "$WORK/robots_$w.json" "$ROBOTS" "$WORK/sub_$w.json" "$WORK/subobj_$w.json" "$w" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))[: int(sys.argv[2])]
json.dump(r, open(sys.argv[3], "w"))               # the peers: a bare list
json.dump({"robots": r}, open(sys.argv[4], "w"))   # evoc sim: {"robots": [...]}
for what in ("points", "springs"):
    n = [len(x[what]) for x in r]
    print(f"  {sys.argv[5]}: {len(r)} robots, {what} min {min(n)} mean {sum(n) / len(n):.1f} max {max(n)}")
EOF
done

record() { echo "$1 $2 $3" >> "$RES"; printf '  %s %s: %.0f robot-steps/s\n' "$1" "$2" "$3"; }
rs_of() { sed -n 's/.*robot_steps_per_s=\([0-9.]*\).*/\1/p' | tail -1; }

evoc_sim() { # workload label binary [flags]
  local w=$1 label=$2 bin=$3; shift 3
  "$bin" sim "$(evo_of "$w")" --robots "$WORK/subobj_$w.json" --steps "$STEPS" --out "$WORK/sim.json" "$@" 2> "$WORK/sim.err" \
    || { cat "$WORK/sim.err" >&2; exit 1; }
  record "$w" "$label" "$("$PYTHON" -c "import json,sys; print(json.load(open(sys.argv[1]))['robot_steps_per_second'])" "$WORK/sim.json")"
}

peer() { # workload label script [flags]
  local w=$1 label=$2 script=$3; shift 3
  local check=(--no-check)
  [ "$rep" = 1 ] && check=()
  "$PYTHON" "$script" "$WORK/sub_$w.json" --steps "$STEPS" --evo "$(evo_of "$w")" "${check[@]}" "$@" \
    > "$WORK/peer.txt" 2>&1 || { cat "$WORK/peer.txt" >&2; echo "compare.sh: $label failed" >&2; exit 1; }
  grep '^check' "$WORK/peer.txt" | sed 's/^/  /' || true
  local rs; rs=$(rs_of < "$WORK/peer.txt")
  if [ -n "$rs" ]; then
    record "$w" "$label" "$rs"
  else # it exited 0 without measuring: its last line says why (its framework is missing)
    local why; why=$(tail -1 "$WORK/peer.txt")
    echo "$w $label - $why" >> "$RES"; echo "  $w $label: not run: $why"
  fi
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
    peer "$w" pytorch bench/torch_baseline.py
  done
done

"$PYTHON" - "$RES" "$WORK/bench.txt" "$WORKLOADS" <<'EOF'
import re, statistics, sys
from collections import defaultdict
res = defaultdict(list)
not_run = {}  # (workload, label): why
for line in open(sys.argv[1]):
    w, label, rs, *why = line.split(None, 3)
    if rs == "-":
        not_run[(w, label)] = " ".join(why).strip()
    else:
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
    for (ww, l), why in not_run.items():
        if ww == w and (w, l) not in res:
            print(f"{w:8} {l:30} {'not run':>14}   {why}")
    if best_jax:
        print(f"{w:8} evoc / best jax ({best_jax}): {ref / med[best_jax]:.2f}x")
counts = [f"{w} {fpr[w] / 1e3:.1f} kflop" if w in fpr else f"{w} not counted"
          for w in sys.argv[3].split()]
print(f"(flops per robot-step, evoc's count: {', '.join(counts)}; peak {peak * 1e-9:.1f} GFLOP/s)")
EOF
