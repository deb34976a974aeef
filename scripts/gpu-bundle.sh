#!/usr/bin/env bash
# Prepares scripts/gpu-check.sh for a GPU machine that cannot build rlscope (no network and no
# SQLite, simdjson or libdeflate development packages, as on the device machines lent to some
# sessions): builds gpu-check's targets here (Release, CUDA on) and copies them, with every shared
# library they load beyond glibc and the CUDA driver (SQLite, simdjson, libdeflate, libstdc++,
# CUPTI, the CUDA runtime), into .gpu-bundle/ (git-ignored), which then travels with the checkout.
#
#   scripts/gpu-bundle.sh
#   scripts/gpu-check.sh --prebuilt .gpu-bundle        (on the GPU machine)
#
# The GPU machine needs glibc at least as new as the version printed at the end, and a driver for
# the CUDA toolkit the bundle's CUPTI and CUDA runtime come from (13 here).
set -euo pipefail

# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build=build-gpu-bundle
bundle=.gpu-bundle
start=$(date +%s)

step "Configuring $build (Release, CUDA on)"
configure_gpu_build "$build"
step "Building (-j$build_jobs)"
cmake --build "$build" -j "$build_jobs" --target "${gpu_targets[@]}"
[[ -x "$build/bin/rlscope_sample_cuda_training" ]] ||
  die "the CUDA sample was not built (is nvcc installed? see $build/configure.log)"

step "Assembling $bundle"
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib/fallback"
cp "$build/bin/rlscope-prof" "$build/bin/rlscope" "$build/bin/rlscope_sample_cuda_training" \
  "$bundle/bin/"
cp "$build/lib/librlscope_collector.so" "$build/lib/librlscope_cupti.so" "$bundle/lib/"
# rlscope-prof finds the collector libraries in ../lib beside it; the rest go there too, and
# gpu-check.sh --prebuilt puts that folder first on LD_LIBRARY_PATH. The C++ runtime goes into
# lib/fallback, used only where the machine's own is too old to run the binaries (this one needs
# a newer glibc than they do).
for binary in "$bundle"/bin/* "$bundle"/lib/librlscope_*.so; do
  ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'
done | sort -u | while read -r library; do
  name="$(basename "$library")"
  case "$name" in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libutil.so.* | \
      ld-linux* | libcuda.so.* | librlscope_*) ;;
    libstdc++.so.* | libgcc_s.so.*) cp -L "$library" "$bundle/lib/fallback/$name" ;;
    *) cp -L "$library" "$bundle/lib/$name" ;;
  esac
done

newest_glibc() {
  objdump -T "$@" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1 | sed 's/GLIBC_//'
}
(cd "$bundle" && find lib -type f -printf '  %-38p %9s bytes\n' | sort)
echo "bundle: $(du -sh "$bundle" | cut -f1) in $bundle (built in $(elapsed "$start") s); needs" \
  "glibc $(newest_glibc "$bundle"/bin/* "$bundle"/lib/*.so*) or newer, or" \
  "$(newest_glibc "$bundle"/lib/fallback/*) where the machine's C++ runtime is too old"
echo "on the GPU machine: scripts/gpu-check.sh --prebuilt $bundle"
