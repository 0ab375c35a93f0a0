#!/usr/bin/env bash
# The paper's ablations (Fang et al. 2022) on a short budget, with the real
# binary: `evoc train` of examples/multitask_alpaca.evo (sin, batch 32, Adam)
# against one change each:
#   tanh       bench/ablations/multitask_alpaca_tanh.evo (tanh in both layers)
#   batch1     --set train.learn.batch=1
#   batch1eq   batch 1 for 32x the iterations, validated every 800: the same
#              episodes (robot-steps) as batch 32 (not in the default set)
#   nsgd       --set train.learn.optimizer='normalized_sgd(step = 0.03)'
#              (0.03: about the length of one Adam step at lr 3e-4 over the
#              controller's 12,896 weights, 3e-4 * sqrt(12896))
# Same seed(s), same iteration count. Prints a table of the validation total
# (validation.jsonl) at each validation point and the wall time of each run,
# and writes it to OUT/ablations.md and OUT/ablations.json.
#
#   bench/ablations/run.sh [--iterations N] [--seeds "1 2 3"] [--threads T]
#                          [--out DIR] [--only "base tanh batch1 nsgd"]
#   env: BUILD_DIR (build)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build}
EVOC=$BUILD_DIR/evoc
ITERS=100
SEEDS="1"
THREADS=2
OUT=runs/ablations
ONLY="base tanh batch1 nsgd"
while [ $# -gt 0 ]; do
  case "$1" in
  --iterations) ITERS=$2; shift 2 ;;
  --seeds) SEEDS=$2; shift 2 ;;
  --threads) THREADS=$2; shift 2 ;;
  --out) OUT=$2; shift 2 ;;
  --only) ONLY=$2; shift 2 ;;
  *) echo "usage: bench/ablations/run.sh [--iterations N] [--seeds \"1 2\"] [--threads T] [--out DIR] [--only \"base tanh batch1 nsgd\"]" >&2
     exit 2 ;;
  esac
done
[ -x "$EVOC" ] || { echo "run.sh: $EVOC is missing (BUILD_DIR=$BUILD_DIR)" >&2; exit 1; }
mkdir -p "$OUT"

# The tanh copy must be the example but for its controller: if the example
# has changed since, run a fresh copy (and say so) instead of a stale one.
EXAMPLE=examples/multitask_alpaca.evo
TANH=bench/ablations/multitask_alpaca_tanh.evo
fresh() { # the example from its first import on, with the tanh controller
  sed -n '/^import /,$p' "$EXAMPLE" |
    sed 's|import "controllers/fang_mlp.evo";|import "fang_mlp_tanh.evo";|; s|controller = fang_mlp;|controller = fang_mlp_tanh;|'
}
if ! diff -q <(fresh) <(sed -n '/^import /,$p' "$TANH") >/dev/null; then
  echo "run.sh: note: $EXAMPLE changed since $TANH was written; using a fresh copy in $OUT/src" >&2
  mkdir -p "$OUT/src"
  cp bench/ablations/fang_mlp_tanh.evo "$OUT/src/"
  fresh > "$OUT/src/multitask_alpaca_tanh.evo"
  TANH=$OUT/src/multitask_alpaca_tanh.evo
fi

echo "== $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $ITERS iterations, seeds $SEEDS, $THREADS threads"
: > "$OUT/runs.tsv"
for seed in $SEEDS; do
  for name in $ONLY; do
    file=$EXAMPLE
    extra=()
    case "$name" in
    base) ;;
    tanh) file=$TANH ;;
    batch1) extra=(--set train.learn.batch=1) ;;
    batch1eq) extra=(--set train.learn.batch=1 --set train.validate_every=800) ;;
    nsgd) extra=(--set "train.learn.optimizer=normalized_sgd(step = 0.03)") ;;
    *) echo "run.sh: unknown ablation '$name'" >&2; exit 2 ;;
    esac
    iters=$ITERS
    [ "$name" = batch1eq ] && iters=$((ITERS * 32))
    dir=$OUT/$name-s$seed-i$ITERS
    rm -rf "$dir"
    echo "-- $name, seed $seed: $EVOC train $file --out $dir --threads $THREADS --set train.seed=$seed --set train.learn.iterations=$iters ${extra[*]:-}"
    t0=$(date +%s.%N)
    "$EVOC" train "$file" --out "$dir" --threads "$THREADS" --set "train.seed=$seed" \
      --set "train.learn.iterations=$iters" "${extra[@]}" > "$dir.log" 2>&1 ||
      { echo "run.sh: $name failed; see $dir.log" >&2; tail -5 "$dir.log" >&2; exit 1; }
    t1=$(date +%s.%N)
    printf '%s\t%s\t%s\t%s\n' "$name" "$seed" "$(echo "$t1 - $t0" | bc)" "$dir" >> "$OUT/runs.tsv"
    tail -n 2 "$dir.log"
  done
done

python3 - "$OUT" "$ITERS" <<'EOF'
import json, sys
out, iters = sys.argv[1], int(sys.argv[2])
what = {"base": "sin, batch 32, Adam (the example)", "tanh": "tanh, batch 32, Adam",
        "batch1": "sin, batch 1, Adam", "nsgd": "sin, batch 32, normalised step 0.03",
        "batch1eq": "sin, batch 1, Adam, 32x iterations (columns: iterations / 32)"}
rows = []
for line in open(out + "/runs.tsv"):
    name, seed, wall, d = line.rstrip("\n").split("\t")
    val = [json.loads(l) for l in open(d + "/validation.jsonl") if l.strip()]
    if name == "batch1eq":  # same episodes as batch 32: iteration / 32
        for v in val:
            v["iteration"] //= 32
    rows.append({"ablation": name, "what": what[name], "seed": int(seed), "wall_s": float(wall),
                 "validation": [{"iteration": v["iteration"], "total": v["total"],
                                 "terms": v["terms"]} for v in val]})
its = sorted({v["iteration"] for r in rows for v in r["validation"]})
if len(its) > 7:  # keep the table short: 0, N/4, N/2, 3N/4, N (nearest points)
    its = sorted({min(its, key=lambda i: abs(i - q * iters / 4)) for q in range(5)})
head = "| run | seed | " + " | ".join("it %d" % i for i in its) + " | task at end | wall s |"
lines = [head, "|" + " --- |" * (len(its) + 4)]
for r in rows:
    at = {v["iteration"]: v for v in r["validation"]}
    last = r["validation"][-1]
    task = last["total"] - last["terms"].get("crawl", 0.0)
    lines.append("| %s | %d | " % (r["what"], r["seed"]) +
                 " | ".join("%.4f" % at[i]["total"] if i in at else "-" for i in its) +
                 " | %.4f | %.0f |" % (task, r["wall_s"]))
table = "\n".join(lines)
print("\nvalidation total (mean over the 54-case grid; lower is better)\n" + table)
open(out + "/ablations.md", "w").write(table + "\n")
json.dump(rows, open(out + "/ablations.json", "w"), indent=1)
print("\nwritten: %s/ablations.md, %s/ablations.json" % (out, out))
EOF
