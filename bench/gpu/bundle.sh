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
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD_DIR:-build-gpu-bench}
OUT=.device
# Without MPI: the GPU machines have no Open MPI libraries (and one rank).
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEVOC_ENABLE_MPI=OFF >/dev/null
BINS="bench/gpu/evoc_bench_gpu tests/compiler/codegen/cuda/evoc_cuda_tests tests/compiler/codegen/cuda/evoc_cuda_examples_tests evoc"
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
(cd "$OUT/debs" && apt-get download -q libllvm19 libz3-4 libicu72 libxml2 libedit2 libffi8 \
  libbsd0 libmd0 libtinfo6 libantlr4-runtime4.9 libfmt9 >/dev/null)
git rev-parse HEAD >"$OUT/commit"
pwd >"$OUT/source-dir" # compiled into the binaries (examples/, stdlib/)
du -sh "$OUT"
echo "bundle: $OUT ready; on the GPU machine: PREBUILT=$OUT bash bench/gpu/run.sh"
