#!/usr/bin/env bash
# Runs every ```sql block of docs/trace-format.md against rlscope traces (read-only) and fails if
# SQLite rejects any of them, so the documented examples keep working.
#   scripts/check-docs-sql.sh TRACE...      the given traces (e.g. out/demo/*.sqlite)
#   scripts/check-docs-sql.sh --bin DIR     makes the traces with DIR/rlscope and
#       DIR/rlscope_sample_cpu_training: the CPU training sample, and the A100 AlexNet trace of
#       ../shared/traces when it is there
set -euo pipefail
# Paths are taken relative to where the script was started; common.sh moves to the repository.
args=()
for arg in "$@"; do
  if [[ "$arg" == --* ]]; then args+=("$arg"); else args+=("$(realpath -m -- "$arg")"); fi
done
set -- "${args[@]}"
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

[[ $# -gt 0 ]] || die "usage: scripts/check-docs-sql.sh TRACE... | --bin DIR"
doc=docs/trace-format.md
command -v sqlite3 >/dev/null || die "sqlite3 is not installed (scripts/setup.sh installs it)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [[ "$1" == "--bin" ]]; then
  [[ $# -eq 2 ]] || die "usage: scripts/check-docs-sql.sh --bin DIR"
  bin="$2"
  "$bin/rlscope_sample_cpu_training" --iterations 5 --trace-out "$tmp/sample.json" >/dev/null
  "$bin/rlscope" import -q "$tmp/sample.json" -o "$tmp/sample.sqlite"
  set -- "$tmp/sample.sqlite"
  alexnet=../shared/traces/kineto/a100_alexnet.json.gz
  if [[ -f "$alexnet" ]]; then
    "$bin/rlscope" import -q "$alexnet" -o "$tmp/a100_alexnet.sqlite"
    set -- "$@" "$tmp/a100_alexnet.sqlite"
  fi
fi
# One file per block, query_01.sql, query_02.sql, ..., whose first line is the "### " heading
# above the block as an SQL comment.
awk -v dir="$tmp" '
  /^### / { heading = substr($0, 5) }
  /^```sql[[:space:]]*$/ {
    n++; file = sprintf("%s/query_%02d.sql", dir, n); inblock = 1
    print "-- " heading > file
    next
  }
  /^```[[:space:]]*$/ && inblock { inblock = 0; close(file); next }
  inblock { print > file }
' "$doc"
queries=("$tmp"/query_*.sql)
[[ -f "${queries[0]}" ]] || die "no sql blocks found in $doc"

failed=0
for trace in "$@"; do
  [[ -f "$trace" ]] || die "no such trace: $trace"
  for q in "${queries[@]}"; do
    label="$(basename "$q" .sql) $(head -n 1 "$q" | cut -c4-)"
    if sqlite3 -readonly -bail -batch "$trace" <"$q" >"$tmp/rows" 2>"$tmp/err"; then
      printf 'ok    %-58s %-22s %5d rows\n' "$label" "$(basename "$trace")" "$(wc -l <"$tmp/rows")"
    else
      printf 'FAIL  %-58s %-22s %s\n' "$label" "$(basename "$trace")" "$(cat "$tmp/err")"
      failed=1
    fi
  done
done
[[ $failed -eq 0 ]] || die "some documented queries failed"
echo "check-docs-sql: ${#queries[@]} queries ran on $# trace(s)"
