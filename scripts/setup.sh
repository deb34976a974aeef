#!/usr/bin/env bash
# Installs the Debian packages rlscope builds and tests with, and the Python environment .venv/
# (numpy, pytest and nvtx for the Python package's tests and sample; gymnasium[mujoco] for the
# sample's Hopper environment, when PyPI can be reached). Idempotent: installs only what is missing, and
# does nothing (no apt-get update, no pip) when everything is already there.
#
#   scripts/setup.sh            the build and test dependencies
#   scripts/setup.sh --bench    also torch, stable-baselines3 and gymnasium[mujoco] in .venv, for
#                               the validation suite of real RL workloads (bench/validation/)
set -euo pipefail

bench=0
for arg in "$@"; do
  case "$arg" in
    --bench) bench=1 ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "setup: unknown option '$arg' (usage: scripts/setup.sh [--bench])" >&2
      exit 2
      ;;
  esac
done

packages=(
  build-essential cmake ninja-build pkg-config git
  libsqlite3-dev sqlite3 zlib1g-dev libdeflate-dev
  libsimdjson-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  qt6-base-dev libgl-dev
  python3-dev python3-venv
  clang-format
  clang  # libFuzzer (scripts/fuzz.sh)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# .venv: the interpreter the Python package is built for (scripts/common.sh configures with it).
setup_python() {
  local root venv
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  venv="$root/.venv"
  if [ -x "$venv/bin/python3" ] && "$venv/bin/python3" -c "import numpy, pytest, nvtx, hta, ray, pyarrow, duckdb" 2>/dev/null; then
    echo "setup: Python environment .venv present"
    return 0
  fi
  echo "setup: creating the Python environment .venv (numpy, pytest, nvtx, HTA, Ray, pyarrow, DuckDB)"
  [ -x "$venv/bin/python3" ] || python3 -m venv "$venv" ||
    { echo "setup: warning: python3 -m venv failed; Python tests will be skipped" >&2; return 0; }
  "$venv/bin/python3" -m pip install -q --disable-pip-version-check numpy pytest nvtx ||
    echo "setup: warning: pip could not install numpy, pytest and nvtx; Python tests will be skipped" >&2
  # Holistic Trace Analysis, the oracle of tests/python/test_hta_oracle.py. Its own requirements
  # pull in JupyterLab, which it does not import: install what it imports, then HTA alone. HTA
  # 0.5.0 predates pandas 3.
  "$venv/bin/python3" -m pip install -q --disable-pip-version-check "pandas<3" plotly pyyaml \
    psutil networkx &&
    "$venv/bin/python3" -m pip install -q --disable-pip-version-check --no-deps \
      HolisticTraceAnalysis==0.5.0 ||
    echo "setup: warning: pip could not install HTA; the HTA comparison will be skipped" >&2
  # Ray, for tests/python/test_ray.py (a profiled program that starts Ray with actors) and
  # `rlscope analyze --ray`; pyarrow for `rlscope export --format parquet` and DuckDB to query it
  # (tests/python/test_fleet.py).
  "$venv/bin/python3" -m pip install -q --disable-pip-version-check "ray==2.*" ||
    echo "setup: note: ray not installed; the Ray tests will be skipped" >&2
  "$venv/bin/python3" -m pip install -q --disable-pip-version-check pyarrow duckdb ||
    echo "setup: note: pyarrow or duckdb not installed; the Parquet tests will be skipped" >&2
  # The Python sample's MuJoCo Hopper environment; the sample falls back to its numpy one.
  "$venv/bin/python3" -m pip install -q --disable-pip-version-check "gymnasium[mujoco]" ||
    echo "setup: note: gymnasium[mujoco] not installed; the Python sample uses its numpy environment" >&2
}

# --bench: the packages of bench/validation/'s workloads (Stable-Baselines3 on torch, MuJoCo), and
# RLlib for tests/python/test_ray.py's PPO run (torch-based; skipped without them).
setup_bench() {
  [ "$bench" -eq 1 ] || return 0
  local root venv
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  venv="$root/.venv"
  if [ ! -x "$venv/bin/python3" ]; then
    echo "setup: error: --bench needs the Python environment .venv, which could not be made" >&2
    exit 1
  fi
  if "$venv/bin/python3" -c "import torch, stable_baselines3, gymnasium, mujoco, ray.rllib" 2>/dev/null; then
    echo "setup: benchmark packages (torch, stable-baselines3, gymnasium[mujoco], ray[rllib]) present"
    return 0
  fi
  echo "setup: installing torch, stable-baselines3, gymnasium[mujoco] and ray[rllib] into .venv (large download)"
  "$venv/bin/python3" -m pip install -q --disable-pip-version-check torch stable-baselines3 \
    "gymnasium[mujoco]" "ray[rllib]==2.*" || {
    echo "setup: error: pip could not install the benchmark packages" >&2
    exit 1
  }
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  setup_python
  setup_bench
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
setup_python
setup_bench
