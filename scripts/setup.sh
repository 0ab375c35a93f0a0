#!/usr/bin/env bash
# Installs the Debian 12 packages evoc needs to build and test, skipping the
# ones already present. The CUDA toolkit is optional (found under
# /usr/local/cuda by the build when present); Open MPI is installed here so
# that CI builds and tests evolution over MPI ranks (docs/cluster.md), but
# the build works without it.
set -euo pipefail
packages=(
  build-essential cmake ninja-build git python3 python3-dev python3-venv
  llvm-19-dev libzstd-dev zlib1g-dev libedit-dev libxml2-dev libcurl4-openssl-dev
  antlr4 libantlr4-runtime-dev uuid-dev default-jre-headless
  libfmt-dev nlohmann-json3-dev catch2 clang-format
  libopenmpi-dev openmpi-bin
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "setup: run this as root (or install sudo): it installs ${missing[*]}" >&2
    exit 1
  fi
  SUDO=sudo
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
