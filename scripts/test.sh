#!/usr/bin/env bash
# Sets up, builds and runs every test (this is what CI runs).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/lint.sh
./scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)"
