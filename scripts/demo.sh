#!/usr/bin/env bash
# Sets up, builds and shows rlscope's main job on a small real workload:
#   1. installs missing packages (scripts/setup.sh)
#   2. builds `rlscope`, `rlscope-prof`, the collector and the CPU training sample (build/,
#      Release on first use)
#   3. profiles the sample, a REINFORCE agent learning CartPole, with rlscope-prof and
#      summarises the trace (operations, phases, processes; GPU activity where there is a GPU)
#   4. asks that trace a question in SQL: time per operation
#   5. profiles the Python sample, PPO learning MuJoCo Hopper (or a numpy arm without MuJoCo),
#      and shows its Python / Backend / Simulator time per operation
#   6. runs the C++ sample again recording its own finer timeline (Kineto-style JSON), imports
#      it (CPU categories) and exports it for Perfetto UI
#   7. imports a real PyTorch trace from an A100 when ../shared/traces is there
# Everything it writes goes to out/demo/. Usage: scripts/demo.sh
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if [[ $# -gt 0 ]]; then
  sed -n '2,12s/^# \{0,1\}//p' "$0"
  [[ "$1" == "-h" || "$1" == "--help" ]] && exit 0
  exit 2
fi

# The SQL example of docs/trace-format.md under the heading "### $1".
sql_of_docs() {
  local sql
  sql=$(awk -v heading="### $1" '$0 == heading { found = 1 }
    found && /^```sql/ { inblock = 1; next }
    inblock && /^```/ { exit }
    inblock { print }' docs/trace-format.md)
  [[ -n "$sql" ]] || die "no \"$1\" query in docs/trace-format.md"
  echo "$sql"
}

start=$(date +%s)
out=out/demo
rlscope=build/bin/rlscope
mkdir -p "$out"

step "[1/7] installing missing packages"
bash scripts/setup.sh

step "[2/7] building rlscope, rlscope-prof and the CPU training sample in build/"
if [[ -f build/CMakeCache.txt ]]; then
  # Keep the build type an earlier run chose (scripts/test.sh uses RelWithDebInfo), so
  # alternating between the scripts does not rebuild everything each time.
  configure build
else
  configure build -DCMAKE_BUILD_TYPE=Release
fi
cmake --build build --target rlscope rlscope-prof rlscope_sample_cpu_training -j "$build_jobs"

step "[3/7] calibrating and profiling the sample with rlscope-prof: REINFORCE on CartPole"
# --calibrate first measures what profiling costs per event (uninstrumented and partly
# instrumented runs), so that the analysis can remove the profiler's own overhead. A run of
# about a second, repeated until the calibration is tight or a minute has passed: on a busy
# machine the analysis then says that it was too noisy to tell rather than print a bias.
build/bin/rlscope-prof --calibrate --repetitions 3 --calibration-budget 60 \
  -o "$out/sample_prof.sqlite" -- build/bin/rlscope_sample_cpu_training --iterations 8000 --seed 1
echo
"$rlscope" info "$out/sample_prof.sqlite"
echo
"$rlscope" analyze "$out/sample_prof.sqlite"
"$rlscope" report "$out/sample_prof.sqlite" -o "$out/sample_report.html"
echo "(open $out/sample_report.html in a browser: the same analysis with charts)"

step "[4/7] asking the trace a question in SQL: time per operation (sqlite3)"
time_per_operation=$(sql_of_docs "Time per operation")
echo "$time_per_operation"
echo
sqlite3 -header -column "$out/sample_prof.sqlite" "$time_per_operation"

step "[5/7] profiling the Python sample: PPO with Python / Backend / Simulator time"
python=.venv/bin/python3
if [[ -x "$python" ]] && "$python" -c "import numpy" 2>/dev/null && [[ -d build/python/rlscope ]]; then
  build/bin/rlscope-prof -o "$out/python_prof.sqlite" -- \
    "$python" samples/python_rl/ppo.py --iterations 5 --steps-per-iteration 512 --seed 1
  echo
  "$rlscope" analyze "$out/python_prof.sqlite"
  "$rlscope" report "$out/python_prof.sqlite" -o "$out/python_report.html"
else
  echo "skipped: no Python environment with numpy (.venv, made by scripts/setup.sh) or the"
  echo "package was not built (RLSCOPE_WITH_PYTHON=OFF)"
fi

step "[6/7] the C++ sample's own finer timeline (CPU categories), imported and exported for Perfetto"
build/bin/rlscope_sample_cpu_training --iterations 20 --seed 1 --trace-out "$out/sample_trace.json"
"$rlscope" import "$out/sample_trace.json" -o "$out/sample.sqlite"
"$rlscope" export "$out/sample.sqlite" -o "$out/sample_chrome.json"
echo "(open $out/sample_chrome.json in https://ui.perfetto.dev to see the timeline)"

step "[7/7] importing, analysing and predicting a real PyTorch profiler trace (AlexNet on an A100)"
alexnet=../shared/traces/kineto/a100_alexnet.json.gz
if [[ -f "$alexnet" ]]; then
  "$rlscope" import "$alexnet" -o "$out/a100_alexnet.sqlite"
  echo
  "$rlscope" analyze "$out/a100_alexnet.sqlite" --top-kernels 8
  "$rlscope" report "$out/a100_alexnet.sqlite" --target H100 -o "$out/a100_alexnet_report.html"
  echo
  echo "The same run predicted on an H100 (docs/predictor.md):"
  "$rlscope" predict "$out/a100_alexnet.sqlite" --target H100 --top-kernels 5
  if [[ -x build/bin/rlscope-gui ]]; then
    # The timeline viewer, off screen: the first sgemm kernel selected, its launch linked, its
    # details and the run's breakdown beside it (docs/gui.md).
    build/bin/rlscope-gui --screenshot "$out/a100_alexnet_timeline.png" --size 1600x1000 \
      --search ampere_sgemm "$out/a100_alexnet.sqlite"
    echo "timeline screenshot: $out/a100_alexnet_timeline.png (open the trace with build/bin/rlscope-gui)"
  fi
else
  echo "skipped: $alexnet is not there (it sits beside the checkout on the project's machines)"
fi

step "demo done in $(elapsed "$start") s; files in $out/:"
ls -l "$out"
cat <<'TXT'

Next: `build/bin/rlscope-prof -- YOUR_PROGRAM` (docs/user-guide.md), `build/bin/rlscope --help`,
`build/bin/rlscope-gui TRACE` to look at a trace (docs/gui.md), the SQL examples in
docs/trace-format.md, and docs/architecture.md for how the parts fit.
TXT
