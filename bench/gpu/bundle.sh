#!/usr/bin/env bash
# Prepares, on this (CPU) machine, what bench/gpu/run.sh needs on a GPU machine
# of the `device` tool, which has CUDA, CMake, ninja and Python but none of
# LLVM 19, ANTLR, fmt, nlohmann-json or Catch2 (and nothing can be fetched
# there): a Release build of the GPU benchmark, the CUDA tests and evoc,
# stripped (build.tgz), and the Debian packages of the shared libraries they load that
# the GPU machine lacks, in .device/ (git-ignored; about 45 MB, under the
# tool's 64 MiB carry limit). Then, on the GPU machine:
#
#   run(carry=[".device"], timeout_s=540, command="PREBUILT=.device bash bench/gpu/run.sh;
#       tar -C /tmp/gpu-bench -czf $OUT/gpu-bench.tgz --exclude='run-*' --exclude='grammar-*' .")
#
# (the working tree, shared/ and .device travel together: about 60 of the 64 MiB allowed).
#
# run.sh unpacks the packages under /tmp (never into /), points
# LD_LIBRARY_PATH at them and uses the prebuilt binaries instead of building.
#
#   bench/gpu/bundle.sh --estimate   # what would travel, without the Release
#                                    # build: exit 1 above 64 MiB, 77 where it
#                                    # cannot tell (ctest gpu_bundle_size;
#                                    # BUILD_DIR=build)
set -euo pipefail
cd "$(dirname "$0")/../.."
BINS="bench/gpu/evoc_bench_gpu tests/compiler/codegen/cuda/evoc_cuda_tests tests/compiler/codegen/cuda/evoc_cuda_examples_tests evoc"
PACKAGES="libllvm19 libz3-4 libicu72 libxml2 libedit2 libffi8 libbsd0 libmd0 libtinfo6 libantlr4-runtime4.9 libfmt9"

if [ "${1:-}" = --estimate ]; then
  # The tracked tree (what a clean clone sends; shared/ too where there is
  # one), the packages' sizes from apt's index, and the binaries of
  # BUILD_DIR stripped and compressed as the bundle packs them (a Release
  # build's are within a few percent).
  BUILD=${BUILD_DIR:-build}
  git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
    { echo "bundle.sh --estimate: not a git checkout; nothing to estimate" >&2; exit 77; }
  TMP=$(mktemp -d)
  trap 'rm -rf "$TMP"' EXIT
  tree=$(git ls-files -z | xargs -0 stat -c %s | awk '{s += $1} END {print s + 0}')
  shared=0
  [ -d shared ] && shared=$(du -sb shared | cut -f1)
  debs=0
  for p in $PACKAGES; do
    size=$(apt-cache show --no-all-versions "$p" 2>/dev/null | awk '/^Size:/ {print $2; exit}')
    [ -n "$size" ] || { echo "bundle.sh --estimate: apt knows no package $p (apt-get update?)" >&2; exit 77; }
    debs=$((debs + size))
  done
  for b in $BINS; do
    [ -f "$BUILD/$b" ] || { echo "bundle.sh --estimate: $BUILD/$b is not built" >&2; exit 2; }
    mkdir -p "$TMP/build/$(dirname "$b")"
    strip -o "$TMP/build/$b" "$BUILD/$b"
  done
  tar -C "$TMP" -czf "$TMP/build.tgz" build
  binaries=$(stat -c %s "$TMP/build.tgz")
  total=$((tree + shared + debs + binaries))
  limit=$((64 * 1024 * 1024))
  mib() { awk -v b="$1" 'BEGIN {printf "%.1f MiB", b / 1048576}'; }
  echo "what travels to the device: tree $(mib "$tree"), shared/ $(mib "$shared"), packages $(mib "$debs"), binaries $(mib "$binaries"): $(mib "$total") of $(mib "$limit")"
  if [ "$total" -gt "$limit" ]; then
    echo "bundle.sh --estimate: above the device tool's 64 MiB: shrink the tracked tree (large test data) or the bundle" >&2
    exit 1
  fi
  exit 0
fi

BUILD=${BUILD_DIR:-build-gpu-bench}
OUT=.device
# Without MPI: the GPU machines have no Open MPI libraries (and one rank).
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEVOC_ENABLE_MPI=OFF >/dev/null
TARGETS="evoc_bench_gpu evoc_cuda_tests evoc_cuda_examples_tests evoc"
ninja -C "$BUILD" -j "$(nproc)" $TARGETS
rm -rf "$OUT"
mkdir -p "$OUT/debs" "$OUT/build"
for b in $BINS; do
  mkdir -p "$OUT/build/$(dirname "$b")"
  strip -o "$OUT/build/$b" "$BUILD/$b"
done
tar -C "$OUT" -czf "$OUT/build.tgz" build && rm -rf "$OUT/build"
# The packages of every library the binaries load that is not part of the
# GPU machine's base image (libc, libstdc++, zlib, ... are; CUDA's NVRTC is).
(cd "$OUT/debs" && apt-get download -q $PACKAGES >/dev/null)
git rev-parse HEAD >"$OUT/commit"
pwd >"$OUT/source-dir" # compiled into the binaries (examples/, stdlib/)
du -sh "$OUT"
echo "bundle: $OUT ready; on the GPU machine: PREBUILT=$OUT bash bench/gpu/run.sh"
