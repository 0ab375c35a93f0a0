#!/usr/bin/env bash
# Runs a test command with the CPU back end generating code for a processor
# other than this one (EVOC_CPU, docs/architecture.md "tests on every
# processor"): without AVX-512 on a machine that has it, without AVX on one
# that has no AVX-512. A tolerance that holds only for this machine's vector
# widths and FMA contraction then fails here, not on the next machine.
# EVOC_OTHER_CPU overrides the choice.
set -euo pipefail
if [ "$(uname -m)" != x86_64 ]; then
  echo "other_cpu: not an x86-64 machine; skipped"
  exit 77
fi
if [ -n "${EVOC_OTHER_CPU:-}" ]; then
  other=$EVOC_OTHER_CPU
elif grep -qw avx512f /proc/cpuinfo; then
  other=x86-64-v3
else
  other=x86-64-v2
fi
echo "other_cpu: EVOC_CPU=$other $*"
EVOC_CPU=$other exec "$@"
