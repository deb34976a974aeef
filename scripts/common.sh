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

# find_python X.Y: prints the path of a working pythonX.Y, from PATH or else from pyenv's
# versions; fails when there is none. (A pyenv shim of a version that is not selected exists on
# PATH but fails to run: it is skipped.)
find_python() {
  local version="$1" candidate
  local candidates=("$(command -v "python$version" 2>/dev/null || true)")
  candidates+=("${PYENV_ROOT:-$HOME/.pyenv}/versions/$version".*/bin/"python$version")
  for candidate in "${candidates[@]}"; do
    [[ -n $candidate && -x $candidate ]] || continue
    "$candidate" -c 'import venv' >/dev/null 2>&1 || continue
    echo "$candidate"
    return 0
  done
  return 1
}

# make_python_env INTERPRETER DIR: a virtual environment with what the Python tests import
# (numpy, pytest; nvtx when pip has it for this Python), unless DIR already has it.
make_python_env() {
  local interpreter="$1" venv="$2"
  if [[ -x $venv/bin/python3 ]] && "$venv/bin/python3" -c "import numpy, pytest" 2>/dev/null; then
    return 0
  fi
  "$interpreter" -m venv "$venv" || die "$interpreter -m venv $venv failed"
  "$venv/bin/python3" -m pip install -q --disable-pip-version-check numpy pytest ||
    die "pip could not install numpy and pytest into $venv"
  "$venv/bin/python3" -m pip install -q --disable-pip-version-check nvtx ||
    echo "note: the nvtx package is not available for $interpreter; its test is skipped" >&2
}

# What profiling a GPU run needs, built by gpu-check.sh and gpu-bundle.sh: Release, CUDA on, no
# tests, benchmarks, GUI or Python package.
# shellcheck disable=SC2034  # used by the scripts that source this file
gpu_targets=(rlscope-prof rlscope rlscope_collector rlscope_cupti rlscope_sample_cuda_training)
configure_gpu_build() {
  local cuda_args=()
  if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
    cuda_args+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
  fi
  configure "$1" -DCMAKE_BUILD_TYPE=Release -DRLSCOPE_WITH_CUDA=ON -DRLSCOPE_BUILD_TESTS=OFF \
    -DRLSCOPE_BUILD_BENCH=OFF -DRLSCOPE_WITH_GUI=OFF -DRLSCOPE_WITH_PYTHON=OFF "${cuda_args[@]}"
}
