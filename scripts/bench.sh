#!/usr/bin/env bash
# Builds the benchmarks (build-release/, Release) and runs every bench/ program, then prints one
# table of the figures. Raw results: out/bench/<program>.json (Google Benchmark JSON).
#   scripts/bench.sh                               every benchmark
#   scripts/bench.sh --benchmark_filter=AddKernel  arguments go to every bench_* program
#   RLSCOPE_BENCH_VALIDATION=1 scripts/bench.sh    also the correction's validation on real RL
#                                                  workloads (bench/validation/, ~25 min; needs
#                                                  scripts/setup.sh --bench)
#   RLSCOPE_BENCH_FLEET=1 scripts/bench.sh         also a 64-trace job analysed serially, with
#                                                  --jobs and on Ray (bench/fleet/, ~6 min,
#                                                  2.5 GB of temporary traces)
# Numbers from a shared or busy machine are noisy: compare runs made on the same machine.
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,12s/^# \{0,1\}//p' "$0"
  exit 0
fi

start=$(date +%s)
dir=build-release
out=out/bench

step "installing missing packages"
bash scripts/setup.sh

step "configuring $dir (Release, benchmarks on, tests off)"
configure "$dir" -DCMAKE_BUILD_TYPE=Release -DRLSCOPE_BUILD_BENCH=ON -DRLSCOPE_BUILD_TESTS=OFF

step "building the benchmarks with $build_jobs jobs"
cmake --build "$dir" --target rlscope_benchmarks -j "$build_jobs"

mkdir -p "$out"
rm -f "$out"/bench_*.json
programs=()
for exe in "$dir"/bin/bench_*; do
  [[ -x "$exe" && -f "$exe" ]] && programs+=("$exe")
done
[[ ${#programs[@]} -gt 0 ]] || die "no bench_* programs in $dir/bin"

for exe in "${programs[@]}"; do
  name=$(basename "$exe")
  step "running $name"
  # JSON on stdout into the file; Google Benchmark's context and warnings go to stderr.
  "$exe" --benchmark_format=json "$@" >"$out/$name.json"
done

step "results (time per iteration, real time; items/s = rows, events, ... per second)"
# Google Benchmark writes one "key": value per line; read each benchmark object's fields.
awk '
  function flush() {
    if (name == "") return
    printf "%-58s %12s %12s  %s\n", name, time, items, extra
    name = ""; time = ""; items = "-"; extra = ""
  }
  function human(v,   units, i) {
    v += 0  # a number, not a string: "1.2e+06" >= 1000 must compare numerically
    split("k M G T", units, " ")
    for (i = 0; v >= 1000 && i < 4; i++) v /= 1000
    return sprintf(i ? "%.3g%s" : "%.3g", v, units[i])
  }
  BEGIN {
    printf "%-58s %12s %12s  %s\n", "benchmark", "time", "items/s", "counters"
    items = "-"
  }
  FNR == 1 { flush(); inbench = 0 }
  /^ *"benchmarks": \[/ { inbench = 1; next }
  !inbench { next }
  {
    line = $0
    sub(/^ */, "", line); sub(/,$/, "", line)
    if (line == "{") { flush(); next }
    if (line == "}" || line == "]") { flush(); next }
    key = line; sub(/^"/, "", key); sub(/":.*/, "", key)
    val = line; sub(/^"[^"]*": */, "", val); gsub(/"/, "", val)
    if (key == "name") name = val
    else if (key == "real_time") rt = val
    else if (key == "time_unit") time = sprintf("%.4g %s", rt, val)
    else if (key == "items_per_second") items = human(val)
    else if (key == "bytes_per_second") extra = extra " bytes/s=" human(val)
    else if (key ~ /^(family_index|per_family_instance_index|run_name|run_type|repetitions|repetition_index|threads|iterations|cpu_time|aggregate_name|aggregate_unit|label|error_occurred|error_message)$/) { }
    else if (val ~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/) extra = extra " " key "=" sprintf("%.4g", val)
  }
  END { flush() }
' "$out"/bench_*.json

# The Python package's costs (bench/python/bench_python.py): operation enter+exit, cost per
# transition, the Python sample's slowdown. Real runs under rlscope-prof, not Google Benchmark.
python=.venv/bin/python3
if [[ -d "$dir/python/rlscope" && -x "$python" ]] && "$python" -c "import numpy" 2>/dev/null; then
  step "Python: operations, transition tracking, the PPO sample's slowdown"
  cmake --build "$dir" --target rlscope-prof -j "$build_jobs"
  "$python" bench/python/bench_python.py --build "$dir" | tee "$out/python.txt"
else
  echo "bench.sh: Python figures skipped (no .venv with numpy, or the package was not built)"
fi

# The bias of overhead correction on the bundled samples (bench/correction/correction_bias.py):
# calibrate, profile several times, compare corrected totals with the uninstrumented runs.
step "overhead correction: bias on the bundled samples"
cmake --build "$dir" --target rlscope rlscope-prof rlscope_sample_cpu_training -j "$build_jobs"
bias_python=()
if [[ -d "$dir/python/rlscope" && -x "$python" ]] && "$python" -c "import numpy" 2>/dev/null; then
  bias_python=(--python "$PWD/$python")
fi
python3 bench/correction/correction_bias.py --build "$dir" "${bias_python[@]}" |
  tee "$out/correction_bias.txt"

# Per operation on Stable-Baselines3 workloads (bench/validation/validate.py): opt-in, it is long.
if [[ "${RLSCOPE_BENCH_VALIDATION:-0}" == 1 ]]; then
  step "overhead correction: validation on real RL workloads (bench/validation/)"
  "$python" bench/validation/validate.py --build "$dir" --markdown "$out/validation.md" \
    --json "$out/validation.json"
else
  echo "bench.sh: the validation on real RL workloads is skipped (RLSCOPE_BENCH_VALIDATION=1 runs it)"
fi

# What a user waits for (bench/end_to_end/end_to_end.py): the samples and, when .venv has
# Stable-Baselines3 (scripts/setup.sh --bench), SB3 PPO on MuJoCo Hopper; about 6 minutes.
step "end to end: plain run, profiled run, trace ready, size, memory (bench/end_to_end/)"
cmake --build "$dir" --target rlscope-prof rlscope_sample_cpu_training -j "$build_jobs"
e2e_python=python3
[[ -x "$python" ]] && e2e_python="$python"
"$e2e_python" bench/end_to_end/end_to_end.py --build "$dir" --python "$PWD/$python" \
  --json "$out/end_to_end.json" | tee "$out/end_to_end.txt"

# Many traces (bench/fleet/fleet_bench.py): opt-in, it writes 2.5 GB of traces.
if [[ "${RLSCOPE_BENCH_FLEET:-0}" == 1 ]]; then
  step "fleet: a 64-rank job analysed serially, with --jobs and as Ray tasks (bench/fleet/)"
  cmake --build "$dir" --target rlscope rlscope-prof rlscope_sample_cpu_training -j "$build_jobs"
  "$python" bench/fleet/fleet_bench.py --build "$dir" | tee "$out/fleet.txt"
else
  echo "bench.sh: the fleet analysis is skipped (RLSCOPE_BENCH_FLEET=1 runs it)"
fi

echo
echo "bench.sh: ${#programs[@]} program(s) in $(elapsed "$start") s; JSON in $out/"
