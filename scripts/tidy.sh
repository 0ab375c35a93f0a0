#!/usr/bin/env bash
# Runs the clang-tidy checks of .clang-tidy on compiler/ and runtime/ with the
# build's compile_commands.json (run by scripts/test.sh after the build);
# exits non-zero on any finding. compiler/frontend is left out: clang-tidy 14
# cannot parse the ANTLR runtime's headers (an error in
# antlr4-runtime/misc/InterpreterDataReader.h, not in evoc).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build}
if ! command -v clang-tidy >/dev/null 2>&1; then
  echo "tidy: clang-tidy is not installed (apt-get install clang-tidy); skipped" >&2
  exit 0
fi
mapfile -t files < <(ls app/*.cpp compiler/*/*.cpp compiler/*/*/*.cpp runtime/*/*.cpp runtime/*/*/*.cpp | grep -v '^compiler/frontend/')
# A build without MPI has no flags for the MPI code (mpi.h is not on its
# include path), and one with MPI none for the code that stands in for it:
# each is checked in the build that compiles it.
for f in runtime/mpi/Ranks.cpp runtime/mpi/Serve.cpp runtime/mpi/Spread.cpp runtime/mpi/NoMpi.cpp; do
  if ! grep -q "$f" "$BUILD/compile_commands.json" 2>/dev/null; then
    mapfile -t files < <(printf '%s\n' "${files[@]}" | grep -v "^$f\$")
  fi
done
out=$(mktemp)
printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -n 4 clang-tidy -p "$BUILD" --quiet >"$out" 2>&1 || true
if grep -E "(warning|error): " "$out" | grep -v "^Suppressed"; then
  echo "tidy: findings above (checks: .clang-tidy)" >&2
  rm -f "$out"
  exit 1
fi
rm -f "$out"
echo "tidy: ${#files[@]} files clean of the .clang-tidy checks"
