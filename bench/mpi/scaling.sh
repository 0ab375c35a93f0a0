#!/usr/bin/env bash
# Designs per second of one experiment as R ranks x T threads (by default
# 1 x 2 and 2 x 1: the same two cores), and the communication per
# generation rank 0 reports; checks that every configuration wrote the same
# run (log.jsonl without its timing fields, best.json). docs/cluster.md.
#   bench/mpi/scaling.sh                       # examples/eldir_small.evo, 8 generations, 2 reps
#   CONFIGS="1x2 2x1 4x1" REPS=3 GENS=2 FILE=examples/eldir.evo EXTRA="--set evolve.population=16" bench/mpi/scaling.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
EVOC=${EVOC:-build/evoc}
FILE=${FILE:-examples/eldir_small.evo}
GENS=${GENS:-8}
REPS=${REPS:-2}
CONFIGS=${CONFIGS:-"1x2 2x1"}
read -r -a extra <<<"${EXTRA:-}" # more evoc options, e.g. --set evolve.population=16
OUT=${OUT:-$(mktemp -d /tmp/evoc-mpi-scaling.XXXXXX)}
mkdir -p "$OUT"
TIMEFORMAT='%R %U %S' # wall, user and system seconds of the run (all ranks)
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
echo "scaling: $FILE ${EXTRA:-}, $GENS generations, configurations $CONFIGS, $REPS reps, in $OUT"
for rep in $(seq "$REPS"); do
  for cfg in $CONFIGS; do
    ranks=${cfg%x*} threads=${cfg#*x}
    dir=$OUT/${cfg}_$rep
    args=(run "$FILE" --out "$dir" --threads "$threads" --set evolve.generations="$GENS" "${extra[@]}")
    if [ "$ranks" -eq 1 ]; then
      { time "$EVOC" "${args[@]}" >/dev/null 2>"$dir.err"; } 2>"$dir.time"
    else
      { time mpirun --oversubscribe -np "$ranks" "$EVOC" "${args[@]}" >/dev/null 2>"$dir.err"; } 2>"$dir.time"
    fi
    python3 - "$dir" "$cfg" <<'PY'
import json, re, sys
d, cfg = sys.argv[1], sys.argv[2]
log = [json.loads(l) for l in open(d + "/log.jsonl")]
# Generation 0 trains P bodies, the others lambda; all count.
designs = sum(r["offspring_trained"] for r in log)
seconds = sum(r["seconds"] for r in log)
train = sum(r["train_seconds"] for r in log)
line = ""
for l in open(d + ".err"):
    if "generations spread" in l:
        m = re.search(r"per generation ([\d.]+) s, of which the slowest rank's evaluation ([\d.]+) s "
                      r"\(mean rank ([\d.]+) s\) and communication ([\d.]+) ms \(([\d.]+) kB out, "
                      r"([\d.]+) kB back\)", l)
        if m:
            line = (f"; per generation {float(m[1]):.3f} s: slowest rank {float(m[2]):.3f} s, "
                    f"mean rank {float(m[3]):.3f} s, communication {m[4]} ms ({m[5]} kB out, {m[6]} kB back)")
wall, user, sys = (float(x) for x in open(d + ".time").read().split())
print(f"{cfg}: {designs} designs in {seconds:.2f} s = {designs / seconds:.2f} designs/s "
      f"(training {train / seconds:.1%} of the time; the whole command {wall:.1f} s wall, "
      f"{user + sys:.1f} CPU-s, {designs / (user + sys):.2f} designs per CPU-second){line}")
PY
  done
done
python3 - "$OUT" <<'PY'
import json, os, sys
T = {"seconds", "elapsed_seconds", "train_seconds", "designs_per_second", "robot_steps_per_second"}
out = sys.argv[1]
runs = sorted(d for d in os.listdir(out) if os.path.isdir(os.path.join(out, d)))
def key(d):
    log = [{k: v for k, v in json.loads(l).items() if k not in T} for l in open(os.path.join(out, d, "log.jsonl"))]
    return json.dumps(log, sort_keys=True) + json.dumps(json.load(open(os.path.join(out, d, "best.json"))), sort_keys=True)
same = len({key(d) for d in runs}) == 1
print(f"scaling: the {len(runs)} runs wrote {'the same' if same else 'DIFFERENT'} log.jsonl and best.json")
sys.exit(0 if same else 1)
PY
