#!/usr/bin/env bash
# Truncation against MAP-Elites on one experiment at the same budget of
# designs: N seeds of each, then coverage, QD-score and best fitness (mean
# and spread) as a markdown table (docs/evolution.md, "MAP-Elites").
#
#   bench/qd/compare.sh [--seeds N] [--generations G] [--steps S] [--iterations K]
#                       [--experiment FILE]
#   env: EVOC (build/evoc), PYTHON (python3)
#
# Both arms run FILE (default examples/map_elites_walkers.evo, which selects
# with map_elites) with its population and offspring, so each trains the
# same number of designs per generation; the truncation arm overrides
# `select = truncation(mu_plus_lambda)`. Coverage and QD-score are measured
# the same way for both: every design that was ever in a population
# (gen_*/population.json, whose members carry their robot while the
# population holds at most 50) is placed in the map_elites grid of FILE,
# keeping the best per cell. For MAP-Elites that is its archive; for
# truncation, the cells its survivors visited. Descriptors computed here:
# actuators, width, height (the kinds that need no training data).
set -euo pipefail
cd "$(dirname "$0")/../.."
EVOC=${EVOC:-build/evoc}
PYTHON=${PYTHON:-python3}
SEEDS=5
EXPERIMENT=examples/map_elites_walkers.evo
SETS=()
while [ $# -gt 0 ]; do
  case "$1" in
  --seeds) SEEDS=$2; shift 2 ;;
  --generations) SETS+=(--set "evolve.generations=$2"); shift 2 ;;
  --steps) SETS+=(--set "world.steps=$2"); shift 2 ;;
  --iterations) SETS+=(--set "evolve.learn.iterations=$2"); shift 2 ;;
  --experiment) EXPERIMENT=$2; shift 2 ;;
  *) echo "usage: bench/qd/compare.sh [--seeds N] [--generations G] [--steps S]" \
          "[--iterations K] [--experiment FILE]" >&2
     exit 2 ;;
  esac
done
if [ ! -x "$EVOC" ]; then
  echo "compare.sh: $EVOC is missing; build it (cmake --build build --target evoc) or set EVOC" >&2
  exit 1
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo "== $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs; $EXPERIMENT ${SETS[*]:-}, $SEEDS seeds" >&2
start=$(date +%s)
for seed in $(seq 1 "$SEEDS"); do
  "$EVOC" run "$EXPERIMENT" "${SETS[@]}" --set "evolve.seed=$seed" \
    --set "evolve.select=truncation(mu_plus_lambda)" --out "$TMP/truncation_$seed" 2>/dev/null
  "$EVOC" run "$EXPERIMENT" "${SETS[@]}" --set "evolve.seed=$seed" --out "$TMP/map_elites_$seed" \
    2>/dev/null
  echo "   seed $seed done ($(( $(date +%s) - start )) s)" >&2
done
"$PYTHON" - "$TMP" "$SEEDS" <<'PY'
import glob, json, math, os, statistics, sys

root, seeds = sys.argv[1], int(sys.argv[2])
grid = json.load(open(os.path.join(root, "map_elites_1", "elites.json")))
axes, offset = grid["axes"], grid["qd_offset"]

def value(kind, robot):
    pts, springs = robot["points"], robot["springs"]
    if kind == "actuators":
        return sum(1 for s in springs if s[4] != 0)
    axis = {"width": 0, "height": len(pts[0]) - 1}[kind]
    xs = [p[axis] for p in pts]
    return max(xs) - min(xs)

def cell(robot):
    out = 0
    for a in axes:
        v = value(a["descriptor"], robot)
        b = 0 if math.isnan(v) else int(math.floor((v - a["lo"]) / (a["hi"] - a["lo"]) * a["bins"]))
        out = out * a["bins"] + min(max(b, 0), a["bins"] - 1)
    return out

def measure(run):
    best = {}
    for path in sorted(glob.glob(os.path.join(run, "gen_*", "population.json"))):
        for m in json.load(open(path))["population"]:
            if "robot" in m:
                c = cell(m["robot"])
                best[c] = max(best.get(c, -math.inf), m["fitness"])
    cells = 1
    for a in axes:
        cells *= a["bins"]
    log = [json.loads(l) for l in open(os.path.join(run, "log.jsonl"))]
    qd = sum(max(0.0, f - offset) for f in best.values())
    return len(best) / cells, qd, log[-1]["best_fitness"], log[-1]["designs_evaluated"]

def stat(xs):
    return f"{statistics.mean(xs):.4g} ± {statistics.stdev(xs) if len(xs) > 1 else 0:.2g}"

print("| selection | designs trained | coverage | QD-score | best fitness |")
print("|---|---|---|---|---|")
for arm in ("truncation", "map_elites"):
    rows = [measure(os.path.join(root, f"{arm}_{s}")) for s in range(1, seeds + 1)]
    print(f"| {arm} | {stat([r[3] for r in rows])} | {stat([r[0] for r in rows])} | "
          f"{stat([r[1] for r in rows])} | {stat([r[2] for r in rows])} |")
PY
