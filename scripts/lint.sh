#!/usr/bin/env bash
# Checks that every C++ file is formatted as .clang-format says (run by
# scripts/test.sh, so by CI). Fix with: scripts/lint.sh --fix
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.h' 2>/dev/null || find compiler runtime tests bench -name '*.cpp' -o -name '*.h')
if [ "${1:-}" = "--fix" ]; then
  clang-format --style=file -i "${files[@]}"
  exit 0
fi
if clang-format --style=file --dry-run --Werror "${files[@]}" 2>/tmp/evoc-lint.$$; then
  echo "lint: ${#files[@]} files formatted as .clang-format says"
  rm -f /tmp/evoc-lint.$$
else
  grep -E '^[^ ].*: error:' /tmp/evoc-lint.$$ | cut -d: -f1 | sort -u | sed 's/^/lint: not formatted: /'
  rm -f /tmp/evoc-lint.$$
  echo "lint: run scripts/lint.sh --fix" >&2
  exit 1
fi
