#!/usr/bin/env bash
# Checks rlscope's CUDA collector on a machine with an NVIDIA GPU (docs/architecture.md, "Testing
# the CUDA path without a GPU"): builds what profiling needs with CUDA on, profiles
# samples/cuda_training, and checks the trace for kernels with their launch configurations, copies
# and memsets, API ↔ kernel correlation, kernel ↔ NVTX operation attribution, synchronisation, and
# the GPU's properties. Prints PASS/FAIL per check with the numbers; exits 1 if any check fails, 2
# when there is no usable GPU.
#
#   scripts/gpu-check.sh [--iterations N]      (default 20)
#   scripts/gpu-check.sh --prebuilt DIR [--iterations N]
#       profiles with the binaries scripts/gpu-bundle.sh put in DIR instead of building (for GPU
#       machines that cannot build rlscope: no network, no development packages)
#   scripts/gpu-check.sh --check-only TRACE [--iterations N] [--bin DIR]
#       only the checks, on a trace of the sample made before with N iterations (no GPU needed;
#       the analysis it writes goes beside TRACE; DIR holds the rlscope to analyse it with,
#       default build/bin). The fake-GPU test (tests/cupti/fake_gpu_test.cpp) runs this in CI.
set -euo pipefail

iterations=20
trace_only=""
bin=""
prebuilt=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --iterations)
      [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || {
        echo "gpu-check.sh: error: --iterations needs a positive integer" >&2
        exit 1
      }
      iterations="$2"
      shift 2
      ;;
    --bin)
      [[ $# -ge 2 ]] || {
        echo "gpu-check.sh: error: --bin needs a directory" >&2
        exit 1
      }
      bin="$(realpath "$2")"
      shift 2
      ;;
    --prebuilt)
      [[ $# -ge 2 && -d "$2" ]] || {
        echo "gpu-check.sh: error: --prebuilt needs the directory scripts/gpu-bundle.sh made" >&2
        exit 1
      }
      prebuilt="$(realpath "$2")"
      shift 2
      ;;
    --check-only)
      [[ $# -ge 2 ]] || {
        echo "gpu-check.sh: error: --check-only needs a trace" >&2
        exit 1
      }
      trace_only="$(realpath "$2")"
      shift 2
      ;;
    *)
      echo "gpu-check.sh: error: unknown argument '$1' (usage: scripts/gpu-check.sh" \
        "[--iterations N] [--prebuilt DIR] [--check-only TRACE [--bin DIR]])" >&2
      exit 1
      ;;
  esac
done

gpu_usable() {
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1
}
if [[ -z "$trace_only" ]] && ! gpu_usable; then
  echo "gpu-check.sh: no NVIDIA GPU here (nvidia-smi missing or failing); nothing checked" >&2
  exit 2
fi

# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

jobs="$(nproc)"
build=build
out=out/gpu-check
trace="$out/cuda.sqlite"

if [[ -n "$trace_only" ]]; then
  trace="$trace_only"
  out="$(dirname "$trace")"
else
  step "GPU"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

  if [[ -n "$prebuilt" ]]; then
    [[ -x "$prebuilt/bin/rlscope-prof" && -x "$prebuilt/bin/rlscope_sample_cuda_training" ]] ||
      die "$prebuilt lacks bin/rlscope-prof or the CUDA sample (scripts/gpu-bundle.sh makes it)"
    bin="$prebuilt/bin"
    # The bundle's libraries (SQLite, simdjson, CUPTI, the CUDA runtime, ...) before the machine's;
    # its C++ runtime only where the machine's is too old to run them.
    export LD_LIBRARY_PATH="$prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    if ! "$bin/rlscope" --version >/dev/null 2>&1; then
      export LD_LIBRARY_PATH="$prebuilt/lib/fallback:$LD_LIBRARY_PATH"
      "$bin/rlscope" --version >/dev/null 2>&1 ||
        die "the binaries of $prebuilt do not run here: $("$bin/rlscope" --version 2>&1 | head -1)"
      echo "using the bundle's C++ runtime (the machine's is older)"
    fi
    step "Using the binaries of $prebuilt"
  else
    step "Configuring $build (Release, CUDA on)"
    configure_gpu_build "$build"
    step "Building (-j$jobs)"
    cmake --build "$build" -j "$jobs" --target "${gpu_targets[@]}"
    bin="$build/bin"
  fi

  step "Profiling the CUDA sample ($iterations iterations)"
  mkdir -p "$out"
  rm -f "$trace"
  started=$(date +%s)
  "$bin/rlscope-prof" -o "$trace" -- "$bin/rlscope_sample_cuda_training" \
    --iterations "$iterations"
  echo "profiled and merged in $(elapsed "$started") s"
  [[ -f "$trace" ]] || die "rlscope-prof wrote no trace at $trace"
fi

# One query, rows as "a|b|c". The sqlite3 shell when installed, else Python's sqlite3 module.
sql() {
  if command -v sqlite3 >/dev/null 2>&1; then
    sqlite3 -batch -noheader "$trace" "$1"
  else
    python3 - "$trace" "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
for row in db.execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in row))
PY
  fi
}

failures=0
# check NAME ACTUAL OP EXPECTED: OP is eq, ge or gt; ACTUAL must be an integer.
check() {
  local name="$1" actual="$2" op="$3" expected="$4" ok=0
  if [[ "$actual" =~ ^-?[0-9]+$ ]]; then
    case "$op" in
      eq) ((actual == expected)) && ok=1 ;;
      ge) ((actual >= expected)) && ok=1 ;;
      gt) ((actual > expected)) && ok=1 ;;
    esac
  fi
  if ((ok)); then
    printf 'PASS  %-62s %s (want %s %s)\n' "$name" "$actual" "$op" "$expected"
  else
    printf 'FAIL  %-62s %s (want %s %s)\n' "$name" "${actual:-<none>}" "$op" "$expected"
    failures=$((failures + 1))
  fi
}

n="$iterations"
# Kernel rows with their names (short, demangled, mangled) resolved.
kernels="(SELECT k.*, IFNULL(sn.value, '') || ' ' || IFNULL(dn.value, '') || ' ' ||
                  IFNULL(mn.value, '') AS names
          FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
          LEFT JOIN StringIds AS sn ON sn.id = k.shortName
          LEFT JOIN StringIds AS dn ON dn.id = k.demangledName
          LEFT JOIN StringIds AS mn ON mn.id = k.mangledName)"

step "Run"
check "meta gpu_activity = 'recorded'" \
  "$(sql "SELECT COUNT(*) FROM rlscope_meta WHERE key = 'gpu_activity' AND value = 'recorded'")" \
  eq 1
sql "SELECT key, value FROM rlscope_meta WHERE key IN ('gpu_activity', 'features')"

step "Kernels: names, counts and launch configurations"
# name | launches per iteration | blockX | blockY | the (gridX,gridY) pairs its launches use
expected_kernels=(
  "linear_forward|2|16|16|(8,16),(1,16)"
  "relu_forward|1|256|1|(128,1)"
  "mse_loss_grad|1|256|1|(4,1)"
  "linear_backward_weights|2|16|16|(8,1),(4,8)"
  "linear_backward_input|1|16|16|(8,16)"
  "relu_backward|1|256|1|(128,1)"
  "sgd_update|4|256|1|(32,1),(1,1),(2,1)"
)
total_expected=0
for spec in "${expected_kernels[@]}"; do
  IFS='|' read -r name per blockx blocky grids <<<"$spec"
  want=$((per * n))
  total_expected=$((total_expected + want))
  like="names LIKE '%$name%'"
  check "kernel $name launches" "$(sql "SELECT COUNT(*) FROM $kernels WHERE $like")" eq "$want"
  check "kernel $name block ($blockx,$blocky,1), grid $grids, regs > 0" \
    "$(sql "SELECT COUNT(*) FROM $kernels WHERE $like AND blockX = $blockx AND blockY = $blocky
            AND blockZ = 1 AND (gridX, gridY) IN (VALUES ${grids//),(/), (}) AND gridZ = 1
            AND registersPerThread > 0")" eq "$want"
done
check "kernels in total" "$(sql "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")" eq \
  "$total_expected"
check "kernels with end <= start" \
  "$(sql "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE end <= start")" eq 0
sql "SELECT 'registersPerThread by kernel:', SUBSTR(names, 1, 40), MIN(registersPerThread),
            MAX(registersPerThread) FROM $kernels GROUP BY shortName"

step "Copies and memsets"
# Per iteration: observations HtoD (256×64 floats), targets HtoD and action values DtoH (256×4).
check "memcpy HtoD of the observations (65536 bytes)" \
  "$(sql "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1 AND bytes = 65536")" \
  eq "$n"
check "memcpy HtoD of the targets (4096 bytes)" \
  "$(sql "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1 AND bytes = 4096")" \
  eq "$n"
check "memcpy DtoH of the action values (4096 bytes)" \
  "$(sql "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 2 AND bytes = 4096")" \
  eq "$n"
check "memcpy bytes in total" \
  "$(sql "SELECT IFNULL(SUM(bytes), 0) FROM CUPTI_ACTIVITY_KIND_MEMCPY")" gt 0
check "memsets of the gradients (4 per iteration)" \
  "$(sql "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE bytes > 0 AND value = 0")" \
  eq $((4 * n))

step "CUDA API calls and correlation"
for api in cudaLaunchKernel cudaMemcpyAsync cudaMemcpy cudaMemsetAsync cudaStreamSynchronize \
  cudaDeviceSynchronize; do
  check "runtime calls named $api" \
    "$(sql "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r JOIN StringIds AS s
            ON s.id = r.nameId WHERE s.value = '$api'")" ge "$n"
done
check "kernels without a RUNTIME row of the same correlationId and process" \
  "$(sql "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k WHERE NOT EXISTS (
            SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r
            WHERE r.correlationId = k.correlationId AND (r.globalTid & ~0xFFFFFF) = k.globalPid)")" \
  eq 0
check "kernels launched by cudaLaunchKernel" \
  "$(sql "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
          JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r
            ON r.correlationId = k.correlationId AND (r.globalTid & ~0xFFFFFF) = k.globalPid
          JOIN StringIds AS s ON s.id = r.nameId WHERE s.value LIKE 'cudaLaunchKernel%'")" \
  eq "$total_expected"
check "kernels starting before their launch call (clock mismatch)" \
  "$(sql "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
          JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r
            ON r.correlationId = k.correlationId AND (r.globalTid & ~0xFFFFFF) = k.globalPid
          WHERE k.start < r.start")" eq 0
check "memcpys without a RUNTIME row of the same correlationId" \
  "$(sql "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m WHERE NOT EXISTS (
            SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r
            WHERE r.correlationId = m.correlationId AND (r.globalTid & ~0xFFFFFF) = m.globalPid)")" \
  eq 0

step "Synchronisation"
check "stream synchronisations (syncType 3)" \
  "$(sql "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE syncType = 3")" ge "$n"
check "context synchronisations (syncType 4)" \
  "$(sql "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE syncType = 4")" ge "$n"

step "Kernels attributed to NVTX operations"
attributed="FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
  JOIN rlscope_external_correlation AS x
    ON x.globalPid = k.globalPid AND x.correlationId = k.correlationId
  JOIN rlscope_operations AS o ON o.id = x.externalId
  JOIN StringIds AS os ON os.id = o.nameId
  JOIN StringIds AS ks ON ks.id = k.shortName"
check "operations simulate/inference/backpropagate, $n each" \
  "$(sql "SELECT COUNT(*) FROM rlscope_operations AS o JOIN StringIds AS s ON s.id = o.nameId
          WHERE s.value IN ('simulate', 'inference', 'backpropagate')")" eq $((3 * n))
check "kernels attributed to an operation" "$(sql "SELECT COUNT(*) $attributed")" eq \
  "$total_expected"
check "kernels attributed to inference (linear_forward, relu_forward)" \
  "$(sql "SELECT COUNT(*) $attributed WHERE os.value = 'inference'")" eq $((3 * n))
check "kernels attributed to backpropagate" \
  "$(sql "SELECT COUNT(*) $attributed WHERE os.value = 'backpropagate'")" eq $((9 * n))
check "kernels attributed to simulate (CPU only)" \
  "$(sql "SELECT COUNT(*) $attributed WHERE os.value = 'simulate'")" eq 0
check "sgd_update kernels outside backpropagate" \
  "$(sql "SELECT COUNT(*) $attributed WHERE ks.value LIKE '%sgd_update%'
          AND os.value <> 'backpropagate'")" eq 0
check "attributed kernels starting before their operation (clock mismatch)" \
  "$(sql "SELECT COUNT(*) $attributed WHERE k.start < o.start")" eq 0
sql "SELECT 'kernels per operation:', os.value, COUNT(*) $attributed GROUP BY os.value"

step "GPU properties (TARGET_INFO_GPU)"
sql "SELECT 'gpu:', id, name, smCount, computeMajor || '.' || computeMinor, clockRate,
            memoryClockRate, memoryBusWidth, memoryBandwidth, totalMemory, l2CacheSize, uuid,
            busLocation, chipName FROM TARGET_INFO_GPU"
check "GPUs with a name" "$(sql "SELECT COUNT(*) FROM TARGET_INFO_GPU WHERE name <> ''")" ge 1
check "GPUs with smCount > 0 and computeMajor >= 7" \
  "$(sql "SELECT COUNT(*) FROM TARGET_INFO_GPU WHERE smCount > 0 AND computeMajor >= 7")" ge 1
check "GPU of the kernels described" \
  "$(sql "SELECT COUNT(DISTINCT k.deviceId) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
          JOIN TARGET_INFO_GPU AS g ON g.id = k.deviceId AND g.totalMemory > 0
            AND g.maxThreadsPerBlock > 0 AND g.threadsPerWarp = 32")" eq 1

step "Analysis (rlscope analyze --format json)"
rlscope_bin="${bin:-$build/bin}/rlscope"
if [[ -x "$rlscope_bin" ]]; then
  analysis="$out/analysis.json"
  mkdir -p "$out"
  "$rlscope_bin" analyze "$trace" --format json -o "$analysis"
  # One integer per line: what the checks below compare.
  figures=$(python3 - "$analysis" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ops = {o["name"]: o for o in d["operations"]}
g = d["gpu"]
print(int(g["available"]))
print(len(g["kernels"]))
print(int(round(ops.get("inference", {}).get("launched_gpu_us", 0) * 1000)))
print(int(round(ops.get("backpropagate", {}).get("launched_gpu_us", 0) * 1000)))
print(int(round(ops.get("simulate", {}).get("launched_gpu_us", 0) * 1000)))
print(sum(int(round(o["gpu_bound_us"] * 1000)) for o in d["operations"]))
print(int(g["launch"]["kernels_only"]["count"]))
PY
  )
  mapfile -t f <<<"$figures"
  check "analysis: GPU metrics available" "${f[0]}" eq 1
  check "analysis: kernel names in the kernel breakdown" "${f[1]}" ge 3
  check "analysis: GPU ns launched by inference" "${f[2]}" gt 0
  check "analysis: GPU ns launched by backpropagate" "${f[3]}" gt 0
  check "analysis: GPU ns launched by simulate (CPU only)" "${f[4]}" eq 0
  check "analysis: GPU-bound ns over all operations" "${f[5]}" gt 0
  check "analysis: kernel launches with an API call" "${f[6]}" eq "$total_expected"
else
  echo "skipped: no rlscope binary"
fi

step "Prediction (rlscope predict): this GPU matched in the database, itself and an A100"
if [[ -x "$rlscope_bin" ]]; then
  "$rlscope_bin" predict "$trace" --target A100 --top-kernels 5 || true
  self_gpu=$("$rlscope_bin" predict "$trace" --target A100 --format json 2>/dev/null |
    python3 -c "import json, sys; print(json.load(sys.stdin)['origin'])" || echo "")
  check "predict: the trace's GPU is in the database (${self_gpu:-none})" "${#self_gpu}" gt 0
  if [[ -n "$self_gpu" ]]; then
    # On its own GPU the prediction is the run as recorded; on an A100 finite and positive.
    ratios=$(for target in "$self_gpu" A100; do
      "$rlscope_bin" predict "$trace" --target "$target" --format json |
        python3 -c "import json, sys; r = json.load(sys.stdin)['gpu']
print(int(round(1e6 * r['predicted_us'] / r['origin_us'])) if r['origin_us'] > 0 else -1)"
    done)
    mapfile -t r <<<"$ratios"
    check "predict: GPU time on itself / recorded (x1e6)" "${r[0]}" eq 1000000
    check "predict: GPU time on an A100 / recorded (x1e6)" "${r[1]}" gt 0
    # The replayed run keeps its bounds: never shorter than a stream's serial work (1 = kept).
    bounds=$("$rlscope_bin" predict "$trace" --target A100 --format json |
      python3 -c "import json, sys; r = json.load(sys.stdin)['run']
print(int(r['model'] != 'replay' or r['predicted_us'] + 1 >= r['longest_stream_us']))")
    check "predict: the replayed run on an A100 is at least its longest stream" "$bounds" eq 1
  fi
fi

echo
if ((failures > 0)); then
  echo "gpu-check: $failures check(s) FAILED (trace: $trace)"
  exit 1
fi
echo "gpu-check: all checks passed (trace: $trace)"
