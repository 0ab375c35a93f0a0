#!/usr/bin/env bash
# The GPU benchmark in one command (on a machine with an NVIDIA GPU and the CUDA
# toolkit): builds the CUDA pieces of evoc (Release), runs the CUDA tests (GPU
# agreement with the interpreter included), the paper's workload (13x22 lattice
# robots, population 1000, T = 1000, f64 and f32) on the fused CUDA rollout, and the
# batched PyTorch CUDA baseline on the same bodies; prints a summary.
#
#   bench/gpu/run.sh                     # POPULATION=1000 STEPS=1000 by default
#   PREBUILT=.device bench/gpu/run.sh    # with the bundle of bench/gpu/bundle.sh (the
#                                        # device tool's GPU machines have no LLVM, ANTLR,
#                                        # fmt or Catch2 to build with)
#   POPULATION=200 STEPS=300 bench/gpu/run.sh   # a quicker look
#   SKIP_AGREEMENT=1 SKIP_RUN=1 bench/gpu/run.sh # skip the CPU-vs-CUDA checks and the
#                                                # evoc run part (and building the front
#                                                # end and LLVM)
#   GENERATIONS=3 CPU_POPULATION=32              # the evoc run part's settings
#   RUN_BACKEND=cpu SKIP_BUILD=1 BUILD_DIR=build  # the rehearsal without a GPU that the
#                                                # test command runs (ctest gpu_rehearsal):
#                                                # the evoc run part on the CPU back end,
#                                                # no fused benchmark or PyTorch CUDA baseline
#
# The evoc run part trains the paper's experiment with the engine on the GPU
# (--backend cuda: every body of a generation at once), and the same file on
# the CPU back end for the speed-up in designs per second.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD_DIR:-build-gpu-bench}
P=${POPULATION:-1000}
T=${STEPS:-1000}
if [ -n "${PREBUILT:-}" ]; then OUT=${OUT_DIR:-/tmp/gpu-bench}; else OUT=${OUT_DIR:-$BUILD/gpu-bench}; fi
mkdir -p "$OUT"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total \
  --format=csv,noheader || echo "(nvidia-smi not found)"

if [ -n "${PREBUILT:-}" ]; then
  # A bundle from bench/gpu/bundle.sh: libraries unpacked under /tmp, the
  # binaries used as they are. The tests find examples/ and stdlib/ through
  # the source path compiled into them: make it point here.
  LIBS=/tmp/evoc-libs
  mkdir -p "$LIBS"
  for f in "$PREBUILT"/debs/*.deb; do dpkg -x "$f" "$LIBS"; done
  export LD_LIBRARY_PATH="$LIBS/usr/lib/x86_64-linux-gnu:$LIBS/lib/x86_64-linux-gnu:$LIBS/usr/lib/llvm-19/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  SRC=$(cat "$PREBUILT/source-dir")
  if [ "$SRC" != "$PWD" ] && [ ! -e "$SRC" ]; then mkdir -p "$(dirname "$SRC")" && ln -s "$PWD" "$SRC"; fi
  mkdir -p /tmp/evoc-prebuilt && tar -C /tmp/evoc-prebuilt -xzf "$PREBUILT/build.tgz"
  BUILD=/tmp/evoc-prebuilt/build
  echo "prebuilt from commit $(cat "$PREBUILT/commit"), sources at $SRC"
elif [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$OUT/cmake.log" 2>&1 ||
    { tail -30 "$OUT/cmake.log"; exit 1; }
fi
TARGETS="evoc_bench_gpu evoc_cuda_tests"
[ "${SKIP_AGREEMENT:-0}" = 1 ] || TARGETS="$TARGETS evoc_cuda_examples_tests"
[ "${SKIP_RUN:-0}" = 1 ] || TARGETS="$TARGETS evoc"
if [ -z "${PREBUILT:-}" ] && [ "${SKIP_BUILD:-0}" != 1 ]; then
  ninja -C "$BUILD" -j "$(nproc)" $TARGETS >"$OUT/build.log" 2>&1 ||
    { tail -40 "$OUT/build.log"; exit 1; }
fi

# suite LOG FAILED SKIPPED COMMAND...: runs a test suite into $OUT/LOG.log and
# prints its summary, or its tail and "WARNING: FAILED" when it fails, and
# "NOTE: SKIPPED" when its [gpu] cases were skipped for want of a GPU.
suite() {
  local log="$OUT/$1.log" failed=$2 skipped=$3
  shift 3
  if ! "$@" >"$log" 2>&1; then
    tail -60 "$log"
    echo "WARNING: $failed (see $log)"
  else
    tail -2 "$log"
  fi
  if grep -q "skipped, no GPU" "$log"; then echo "NOTE: $skipped"; fi
}

echo "== CUDA tests (NVRTC, emulation, GPU agreement)"
suite tests "CUDA tests failed; benchmarking anyway" "the [gpu] tests were skipped: no GPU" \
  "$BUILD/tests/compiler/codegen/cuda/evoc_cuda_tests"

if [ "${SKIP_AGREEMENT:-0}" != 1 ]; then
  # Only the cases that need a GPU: the emulated ones run in every CI build.
  echo "== acceptance: CUDA vs CPU back end, 20 robots, T = 1000, f64; the GPU training device vs the CPU's (ELDiR, the multi-task examples)"
  suite agreement "agreement tests failed" "the agreement check was skipped: no GPU" \
    "$BUILD/tests/compiler/codegen/cuda/evoc_cuda_examples_tests" "[gpu]"
fi

if [ "${SKIP_RUN:-0}" != 1 ]; then
  # The evolution engine on the GPU training device: the paper's experiment
  # at population P for G generations, the CPU back end on the same file
  # (a smaller population, same bodies per design) for the speed-up, and the
  # grammar example's first generation on both back ends, design by design.
  G=${GENERATIONS:-3}
  CPU_P=${CPU_POPULATION:-32}
  BACKEND=${RUN_BACKEND:-cuda} # RUN_BACKEND=cpu tries this part without a GPU
  echo "== evoc run examples/eldir.evo --backend $BACKEND: population $P, $G generations, T = $T"
  rm -rf "$OUT/run-gpu" "$OUT/run-cpu" "$OUT/grammar-gpu" "$OUT/grammar-cpu"
  "$BUILD/evoc" run examples/eldir.evo --backend "$BACKEND" --out "$OUT/run-gpu" \
    --set evolve.population="$P" --set evolve.generations="$G" --set world.steps="$T" |
    tee "$OUT/run-gpu.txt" || echo "WARNING: evoc run --backend $BACKEND failed"
  echo "== evoc run examples/eldir.evo --backend cpu: population $CPU_P, 1 generation"
  "$BUILD/evoc" run examples/eldir.evo --backend cpu --out "$OUT/run-cpu" \
    --set evolve.population="$CPU_P" --set evolve.generations=1 --set world.steps="$T" |
    tee "$OUT/run-cpu.txt" || echo "WARNING: evoc run --backend cpu failed"
  echo "== grammar bodies (examples/grammar_walker.evo, generation 0): $BACKEND vs cpu"
  "$BUILD/evoc" run examples/grammar_walker.evo --backend "$BACKEND" --out "$OUT/grammar-gpu" \
    --set evolve.generations=1 >/dev/null || echo "WARNING: grammar run on $BACKEND failed"
  "$BUILD/evoc" run examples/grammar_walker.evo --backend cpu --out "$OUT/grammar-cpu" \
    --set evolve.generations=1 >/dev/null || echo "WARNING: grammar run on cpu failed"
  python3 bench/gpu/compare_runs.py "$OUT/run-gpu" "$OUT/run-cpu" "$OUT/grammar-gpu" \
    "$OUT/grammar-cpu" | tee "$OUT/runs.txt" || echo "WARNING: the run comparison failed"
fi

if [ "${RUN_BACKEND:-cuda}" = cpu ]; then
  echo "NOTE: RUN_BACKEND=cpu: no fused CUDA benchmark and no PyTorch CUDA baseline (both need a GPU)"
  exit 0
fi

echo "== evoc (fused CUDA rollout)"
"$BUILD/bench/gpu/evoc_bench_gpu" --population "$P" --steps "$T" --precision both \
  --dump-robots "$OUT/robots.json" | tee "$OUT/evoc.txt"

echo "== PyTorch CUDA baseline (same bodies)"
python3 bench/gpu/torch_cuda_baseline.py "$OUT/robots.json" --steps "$T" --precision both |
  tee "$OUT/torch.txt" || true

python3 - "$OUT/evoc.txt" "$OUT/torch.txt" <<'PY'
import re, sys
def results(path):
    out = {}
    for line in open(path):
        if line.startswith("RESULT"):
            kv = dict(re.findall(r'(\w+)=("[^"]*"|\S+)', line))
            out[kv["precision"]] = kv
    return out
evoc, torch = results(sys.argv[1]), results(sys.argv[2])
work = 1e7 * 35 * 1000  # designs x learning iterations x steps (forward + backward each)
print("== summary")
for p in ("f64", "f32"):
    if p not in evoc:
        continue
    r = float(evoc[p]["robot_steps_per_s"])
    line = (f"{p}: {r:.4g} robot-steps/s forward+backward, "
            f"{100 * float(evoc[p]['fraction_of_peak']):.2f}% of measured FMA peak")
    if p in torch:
        line += f", {r / float(torch[p]['robot_steps_per_s']):.1f}x PyTorch CUDA"
    else:
        line += ", no PyTorch baseline"
    days = work / r / 86400
    line += f"; paper's experiment (1e7 designs x 35 iterations x 1000 steps) on one GPU: {days:.1f} days"
    print(line)
print("device:", next(iter(evoc.values()))["device"] if evoc else "?")
PY
