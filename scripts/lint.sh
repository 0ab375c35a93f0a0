#!/usr/bin/env bash
# Checks that every C++ file is formatted as .clang-format says, that
# compiler/ includes nothing above it, and that the report's script
# (runtime/report/report.js) parses (run by scripts/test.sh, so by CI). Fix the formatting with: scripts/lint.sh --fix
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.h' 2>/dev/null || find compiler runtime tests bench -name '*.cpp' -o -name '*.h')
if [ "${1:-}" = "--fix" ]; then
  clang-format --style=file -i "${files[@]}"
  exit 0
fi
# The layers (docs/architecture.md, "Layers and principles"): nothing under
# compiler/ includes a header of the runtime (core/, evolve/, report/,
# cuda/, mpi/) or of the application layer (app/).
if up=$(grep -rnE '#include "(core|evolve|report|cuda|mpi|app)/' compiler); then
  echo "$up"
  echo "lint: compiler/ includes the runtime or app/ above it (docs/architecture.md)" >&2
  exit 1
fi
echo "lint: compiler/ includes nothing from runtime/ or app/"
# The script is embedded in the evoc binary and only runs in a browser, so
# a syntax error would otherwise surface only in report_browser (skipped
# without chromium). node is optional: without it the check is skipped.
if command -v node >/dev/null 2>&1; then
  node --check runtime/report/report.js
  echo "lint: runtime/report/report.js parses (node --check)"
else
  echo "lint: node not found, runtime/report/report.js not checked"
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
