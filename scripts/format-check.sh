#!/usr/bin/env bash
# Checks that every C and C++ file of the repository is formatted as .clang-format says (the
# project's style), without changing any: lists the files that are not and exits 1. Fix them with
#   git ls-files '*.cpp' '*.h' '*.c' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v clang-format >/dev/null 2>&1 || { echo "format-check: clang-format is needed (apt install clang-format)" >&2; exit 1; }
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.c')
unformatted=()
# Each file's diagnostics start with its name: the files that differ, in one clang-format run.
mapfile -t unformatted < <(clang-format --dry-run --Werror "${files[@]}" 2>&1 |
  sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error:.*/\1/p' | sort -u)
if [[ ${#unformatted[@]} -gt 0 ]]; then
  echo "format-check: not formatted as .clang-format says ($(clang-format --version)):"
  printf '  %s\n' "${unformatted[@]}"
  exit 1
fi
echo "format-check: every C and C++ file is formatted (${#files[@]} files)"
