#!/usr/bin/env bash
# Fuzzes the readers of untrusted input with libFuzzer, under AddressSanitizer and UBSan:
# fuzz_kineto_import (a stranger's Kineto JSON), fuzz_nsys_import (a stranger's Nsight Systems
# export, given as the SQL that builds it), fuzz_part_merge (the part file a crashed or killed
# process leaves for the merge), fuzz_kernel_models (a `predict --kernel-models` file) and
# fuzz_analysis_document (an analysis document for `rlscope report` or a fleet's combination). Builds
# build-fuzz/ with Clang, starts each from its corpus kept in the repository (fuzz/seeds/TARGET/:
# documents, exports, inputs that once found bugs, and what earlier runs found worth keeping;
# plus the parts of a real run of the CPU sample), runs each fuzzer for SECONDS, and exits 1 if any found a crash (the input is kept in out/fuzz/crashes/).
# .ci/run runs it for 40 s a fuzzer. New inputs a run finds stay in out/fuzz/TARGET/; to keep
# them, merge them into the corpus: build-fuzz/bin/fuzz_TARGET -merge=1 fuzz/seeds/TARGET
# out/fuzz/TARGET.
#
#   scripts/fuzz.sh [SECONDS]      (default 60 per fuzzer)
set -euo pipefail

# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

seconds="${1:-60}"
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || die "usage: scripts/fuzz.sh [SECONDS]"
command -v clang++ >/dev/null 2>&1 || die "clang++ is needed for libFuzzer (apt install clang)"

build=build-fuzz
out=out/fuzz
export ASAN_OPTIONS=detect_leaks=1:verify_asan_link_order=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

step "Configuring $build (Clang, libFuzzer, AddressSanitizer + UBSan)"
CC=clang CXX=clang++ configure "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRLSCOPE_BUILD_FUZZ=ON \
  "-DRLSCOPE_SANITIZE=address,undefined" -DRLSCOPE_BUILD_TESTS=OFF -DRLSCOPE_BUILD_BENCH=OFF \
  -DRLSCOPE_WITH_GUI=OFF -DRLSCOPE_WITH_PYTHON=OFF -DRLSCOPE_WITH_CUDA=OFF
step "Building (-j$build_jobs)"
cmake --build "$build" -j "$build_jobs" --target fuzz_kineto_import fuzz_nsys_import \
  fuzz_part_merge fuzz_kernel_models fuzz_analysis_document rlscope-prof rlscope_collector rlscope_sample_cpu_training

step "Seeding the corpora"
fuzzers=(kineto_import nsys_import part_merge kernel_models analysis_document)
for fuzzer in "${fuzzers[@]}"; do
  mkdir -p "$out/$fuzzer"
  cp fuzz/seeds/"$fuzzer"/* "$out/$fuzzer/"
done
mkdir -p "$out/crashes"
seed_run="$(mktemp -d)"
trap 'rm -rf "$seed_run"' EXIT
"$build/bin/rlscope-prof" --keep-parts -q -o "$seed_run/seed.sqlite" -- \
  "$build/bin/rlscope_sample_cpu_training" --iterations 2 >/dev/null
find "$seed_run" -name '*.part' -exec cp {} "$out/part_merge/" \;
echo "seeds: $(find "$out/kineto_import" -type f | wc -l) Kineto documents," \
  "$(find "$out/nsys_import" -type f | wc -l) nsys exports, $(find "$out/part_merge" -type f | wc -l) parts," \
  "$(find "$out/kernel_models" -type f | wc -l) kernel model files," \
  "$(find "$out/analysis_document" -type f | wc -l) analysis documents"

failed=0
for fuzzer in "${fuzzers[@]}"; do
  step "fuzz_$fuzzer for $seconds s"
  if ! "$build/bin/fuzz_$fuzzer" -max_total_time="$seconds" -max_len=16384 -print_final_stats=1 \
    -artifact_prefix="$out/crashes/${fuzzer}-" "$out/$fuzzer" 2>"$out/$fuzzer.log"; then
    failed=1
    tail -40 "$out/$fuzzer.log"
    echo "fuzz_$fuzzer: FOUND A CRASH (input in $out/crashes/, log in $out/$fuzzer.log)"
  else
    grep -E '^stat::number_of_executed_units|^Done' "$out/$fuzzer.log" | tail -2
  fi
done
exit "$failed"
