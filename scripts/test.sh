#!/usr/bin/env bash
# Builds rlscope and runs every test (ctest: GoogleTest suites and end-to-end tests).
#   scripts/test.sh              build/ (RelWithDebInfo, warnings are errors)
#   scripts/test.sh --sanitize   build-asan/ (AddressSanitizer + UndefinedBehaviorSanitizer,
#                                leak checks on, every report fatal; benchmarks not built)
#   scripts/test.sh --tsan       build-tsan/ (ThreadSanitizer): the code with threads of its own only
#   scripts/test.sh --python 3.12
#                                build-python3.12/: the Python package built for that Python (from
#                                PATH or pyenv, in .venv-3.12/) and its tests; skipped, with a
#                                line saying so, when no such Python is installed
# Other arguments go to ctest, e.g. `scripts/test.sh -R Kineto` or `-L import`.
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

sanitize=0
tsan=0
python_version=
ctest_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --sanitize) sanitize=1 ;;
    --tsan) tsan=1 ;;
    --python)
      [[ $# -ge 2 && $2 =~ ^3\.[0-9]+$ ]] || die "--python takes a version such as 3.12"
      python_version=$2
      shift
      ;;
    -h | --help)
      sed -n '2,11s/^# \{0,1\}//p' "$0"
      exit 0
      ;;
    *) ctest_args+=("$1") ;;
  esac
  shift
done

start=$(date +%s)
targets=()
if [[ $tsan -eq 1 ]]; then
  dir=build-tsan
  what="ThreadSanitizer: collector, Kineto chunk parser, analysis readers and sweeps, GPU metrics, timeline load, analysis worker"
  cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DRLSCOPE_WERROR=OFF "-DRLSCOPE_SANITIZE=thread"
    -DRLSCOPE_BUILD_BENCH=OFF)
  # die_after_fork=0: a fork child of a profiled program starts its own writer thread.
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:die_after_fork=0:suppressions=$PWD/tests/tsan.supp"
  # The suites of the code that runs threads (labels = their folders under tests/) and what they
  # run: the collector; the Kineto importer's chunk parser (import); the analysis's two table
  # readers and its sweep beside the lookups (breakdown); the overlap engine's slices (overlap);
  # the GPU metrics' join in halves (gpu_metrics);
  # loadTimeline's two readers (gui); the analysis panel's worker, without Qt (gui_analysis).
  # Qt's own threads are not instrumented, so the widget tests are left out.
  targets=(--target rlscope_thread_checks)
  ctest_args=(-L '^(collector|cupti|import|breakdown|overlap|gpu_metrics|gui|gui_analysis)$' "${ctest_args[@]}")
elif [[ -n $python_version ]]; then
  # The package's C++ differs per Python version (3.12 and newer track transitions through
  # sys.monitoring, older ones through a profile function): the main build tests the one its
  # .venv has, this one another.
  interpreter=$(find_python "$python_version") || {
    echo "test.sh: SKIPPED (Python $python_version): no python$python_version on PATH or in pyenv"
    exit 0
  }
  dir=build-python$python_version
  what="Python $python_version package and its tests"
  venv=".venv-$python_version"
  step "Python environment $venv ($interpreter)"
  make_python_env "$interpreter" "$venv"
  cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DRLSCOPE_WERROR=ON -DRLSCOPE_WITH_GUI=OFF
    -DRLSCOPE_BUILD_BENCH=OFF "-DPython3_EXECUTABLE=$PWD/$venv/bin/python3")
  # What python_tests runs: rlscope-prof, the collector, the package, the fake simulator.
  targets=(--target rlscope_fake_simulator)
  ctest_args=(-L '^python$' "${ctest_args[@]}")
elif [[ $sanitize -eq 1 ]]; then
  dir=build-asan
  what="AddressSanitizer+UBSan"
  # Warnings are errors in the plain build only: GCC's flow warnings (-Wmaybe-uninitialized)
  # give false positives on ASan-instrumented code, and the plain build checks the same source.
  cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DRLSCOPE_WERROR=OFF
    "-DRLSCOPE_SANITIZE=address,undefined" -DRLSCOPE_BUILD_BENCH=OFF)
  # Exported before the build too: gtest_discover_tests runs the test programs at build time.
  # verify_asan_link_order=0: rlscope-prof preloads the (uninstrumented) collector into the
  # programs it profiles, ahead of the ASan runtime of the instrumented test programs.
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:verify_asan_link_order=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  # Leaks of system libraries the tests cannot free (fontconfig under Qt): tests/lsan.supp.
  export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp"
else
  dir=build
  what="RelWithDebInfo"
  cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DRLSCOPE_WERROR=ON)
fi

step "installing missing packages"
bash scripts/setup.sh

step "configuring $dir ($what)"
configure "$dir" "${cmake_args[@]}"

step "building $dir with $build_jobs jobs"
cmake --build "$dir" -j "$build_jobs" "${targets[@]}"
build_s=$(elapsed "$start")

step "running the tests in $dir"
log="$dir/ctest.log"
status=0
ctest --test-dir "$dir" --output-on-failure -j "$build_jobs" "${ctest_args[@]}" 2>&1 |
  tee "$log" || status=$?
result=$(grep -E '[0-9]+% tests passed' "$log" | tail -n 1 || true)
[[ -n "$result" ]] || result="no test summary (see $log)"

echo
if [[ $status -eq 0 ]]; then
  echo "test.sh: PASSED ($what, $dir): $result; build ${build_s} s, total $(elapsed "$start") s"
else
  echo "test.sh: FAILED ($what, $dir): $result; total $(elapsed "$start") s" >&2
fi
exit "$status"
