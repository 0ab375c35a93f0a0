#!/usr/bin/env bash
# Installs the Python package evoc (docs/python.md) with `pip install .` into
# a virtual environment under the build directory ($BUILD_DIR/pyenv), with
# what its tests need (pytest, matplotlib, pandas, torch, jax). The module
# evoc._evoc is built in the build directory scripts/build.sh uses, so after
# that build only the module's own file compiles. Run by scripts/test.sh
# before ctest, whose test python_pytest runs python/tests.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
VENV=$BUILD_DIR/pyenv
PYTHON=${PYTHON:-python3}
t0=$(date +%s)
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
pip() { "$VENV/bin/python" -m pip "$@"; }
pip install -q --upgrade pip >/dev/null 2>&1 || true
# Build and test requirements (PyPI); evoc's C++ dependencies are Debian's.
if ! pip install -q "scikit-build-core>=0.10" "nanobind>=2.0" numpy pytest matplotlib pandas; then
  echo "python: could not install the build requirements from PyPI (no network?); the Python" \
    "package is not built and its tests (python_pytest) do not run" >&2
  exit 0
fi
# torch: the CPU-only wheel where its index is reachable, else PyPI's; jax
# from PyPI. Without them the interop tests skip and say why.
if ! "$VENV/bin/python" -c "import torch" >/dev/null 2>&1; then
  pip install -q --timeout 20 --retries 0 torch --index-url https://download.pytorch.org/whl/cpu 2>/dev/null ||
    pip install -q torch ||
    echo "python: could not install torch; the PyTorch tests will be skipped" >&2
fi
if ! "$VENV/bin/python" -c "import jax" >/dev/null 2>&1; then
  pip install -q jax || echo "python: could not install jax; the JAX tests will be skipped" >&2
fi
t1=$(date +%s)
# The package itself, built in $BUILD_DIR (pyproject.toml's scikit-build-core
# settings; --no-build-isolation so that the build directory keeps finding
# the nanobind installed above).
pip install -q --no-build-isolation --force-reinstall --no-deps \
  -C build-dir="$BUILD_DIR" -C cmake.build-type="${BUILD_TYPE:-RelWithDebInfo}" .
t2=$(date +%s)
echo "python: requirements $((t1 - t0)) s, pip install . $((t2 - t1)) s -> $VENV"
