#!/usr/bin/env bash
# Validates the kernel predictor on held-out GPUs (bench/predictor/validate_heldout.py): each GPU
# of the public paired timings (../shared/reference/gpu-timings: P4, P100, V100, T4, A100) is
# held out in turn, the learned models are trained without it, and it is predicted from each of
# the others; the mean absolute error per held-out GPU and operator family is printed
# (docs/predictor.md, "Validation"). Builds `rlscope` in build/ first. Training the 5 held-out
# model sets takes ~15 min on 2 cores; --models DIR keeps them for the next run.
#
#   scripts/validate-predictor.sh [--shapes N] [--models DIR] [--analytic] [--markdown FILE]
#                                 [--json FILE] [--data DIR]
set -euo pipefail

# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

[ -d build ] || configure build -DCMAKE_BUILD_TYPE=RelWithDebInfo
step "Building rlscope (-j$build_jobs)"
cmake --build build -j "$build_jobs" --target rlscope
# Training needs torch (scripts/setup.sh puts it in .venv) and scikit-learn (added here).
[ -x .venv/bin/python ] || die "no .venv: run scripts/setup.sh first"
python=.venv/bin/python
if ! "$python" -c "import sklearn" 2>/dev/null; then
  step "Installing scikit-learn into .venv (the pair models' trainer)"
  .venv/bin/pip install -q scikit-learn
fi
step "Predicting every held-out GPU"
"$python" bench/predictor/validate_heldout.py --build build "$@"
