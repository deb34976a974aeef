# shellcheck shell=bash
# Shared by scripts/*.sh (sourced, not run). Puts the shell at the repository root and defines
# small helpers for progress lines and CMake configuration.

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root" || exit 1

# The number of parallel build jobs: RLSCOPE_JOBS, else 2 (the CI machine has 2 cores).
# shellcheck disable=SC2034  # used by the scripts that source this file
build_jobs="${RLSCOPE_JOBS:-2}"

# "==> message" on stdout, so a reader of a long log finds where each step starts.
step() {
  printf '\n==> %s\n' "$*"
}

die() {
  printf '%s: error: %s\n' "$(basename "$0")" "$*" >&2
  exit 1
}

# configure BUILD_DIR CMAKE_ARGS...: configures with Ninja. A build directory configured before
# keeps its generator (CMake refuses to switch generators in place). The CMake log goes to
# BUILD_DIR/configure.log and is shown only when configuring fails.
configure() {
  local dir="$1"
  shift
  local generator=(-G Ninja)
  if [[ -f "$dir/CMakeCache.txt" ]]; then
    generator=()
  fi
  # The Python package is built for scripts/setup.sh's .venv when there is one.
  local python=()
  if [[ -x .venv/bin/python3 ]]; then
    python=("-DPython3_EXECUTABLE=$PWD/.venv/bin/python3")
  fi
  mkdir -p "$dir"
  if ! cmake -S . -B "$dir" "${generator[@]}" "${python[@]}" "$@" >"$dir/configure.log" 2>&1; then
    cat "$dir/configure.log" >&2
    die "configuring $dir failed (log above, also in $dir/configure.log)"
  fi
  # The feature summary (CUDA, GUI, Python: on or off, and why).
  grep -E '^-- (rlscope|  )' "$dir/configure.log" || true
}

# seconds since START (an integer from `date +%s`).
elapsed() {
  echo $(($(date +%s) - $1))
}
