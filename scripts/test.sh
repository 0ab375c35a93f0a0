#!/usr/bin/env bash
# Sets up, builds and runs every test (this is what CI runs).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
# Test-only: Debian's chromium for the browser test of report.html
# (tests/runtime/report; it skips where chromium is missing or cannot start).
SUDO=""
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO=sudo
if ! command -v chromium >/dev/null 2>&1; then
  { $SUDO apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium; } ||
    echo "test: could not install chromium; the browser test will be skipped" >&2
fi
# Test-only too: Neovim for tests/editors/test_nvim.py (skipped without it).
if ! command -v nvim >/dev/null 2>&1; then
  { $SUDO apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends neovim; } ||
    echo "test: could not install neovim; the Neovim test will be skipped" >&2
fi
# Test-only too: clang-tidy for scripts/tidy.sh.
if ! command -v clang-tidy >/dev/null 2>&1; then
  { $SUDO apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang-tidy; } ||
    echo "test: could not install clang-tidy; the tidy checks will be skipped" >&2
fi
./scripts/lint.sh
./scripts/build.sh
./scripts/tidy.sh
# The Python package into $BUILD_DIR/pyenv (docs/python.md): ctest's
# python_pytest runs its tests.
./scripts/python.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)"
