#!/usr/bin/env bash
# The GPU check for ember's CUDA backend (issue 10), meant to finish within 8 minutes on one GPU:
#   1. nvidia-smi and CuPy's view of the GPU;
#   2. the op table (tests/test_ops.py forward values and gradients) and the nn tests that take
#      the device fixture (Linear, Conv2d, normalization layers) on cuda against torch;
#   3. the CUDA tests (tests/cuda) on the real GPU;
#   4. ResNet-20 training, ember-cuda against torch on the same GPU (first losses compared:
#      nn and optim on cuda against torch), then a short table.
# `scripts/gpu_check.sh --dry-run` (or EMBER_GPU_CHECK_DRY_RUN=1) runs the same steps on a CPU
# machine with tests/cuda/fake_cupy.py standing in for CuPy, on a handful of ops and tiny sizes.
# Needs numpy, ml_dtypes, pytest (+ pytest-xdist), torch and CuPy already installed; ember
# comes from this checkout's src/ (no network, no install).
set -u
cd "$(dirname "$0")/.."
DRY="${EMBER_GPU_CHECK_DRY_RUN:-0}"
[ "${1:-}" = "--dry-run" ] && DRY=1
PY="${PYTHON:-python3}"
if [ "$DRY" = 1 ] && [ -z "${PYTHON:-}" ] && [ -x .venv/bin/python ]; then PY=.venv/bin/python; fi
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
declare -a NAMES RESULTS

record() {  # record NAME STATUS
    NAMES+=("$1"); RESULTS+=("$2")
}

need() {
    "$PY" -c "import $1" 2>/dev/null || { echo "gpu_check: Python module '$1' is missing for $PY"; exit 2; }
}
for module in numpy ml_dtypes pytest torch; do need "$module"; done

if [ "$DRY" = 1 ]; then
    echo "=== DRY RUN: fake CuPy (NumPy) instead of a GPU; tiny sizes ==="
    DEVICE_OPT="--device fake-cuda"
    # one pytest run over a few entries: collecting the op table is most of its time
    OPS_FILTER="-k (test_forward and matmul) or test_linear_matches_torch"
    NN_TESTS="tests/nn/test_linear_activation.py"
    # test_cuda_fake.py runs in the ordinary suite; here only the real-GPU tests' skips
    CUDA_TESTS="tests/cuda/test_cuda_real.py"
    CUDA_FILTER="-k not dry_run"
    BENCH_PRE="import sys; sys.path.insert(0, 'tests/cuda'); import fake_cupy; fake_cupy.install();"
    BENCH_ARGS="--dry-run --steps ${EMBER_GPU_CHECK_STEPS:-2}"
    XDIST=""
    OPS_LIMIT=60; CUDA_LIMIT=60; BENCH_LIMIT=60
else
    echo "=== GPU check ==="
    need cupy
    nvidia-smi --query-gpu=name,driver_version,memory.total,utilization.gpu --format=csv || echo "(nvidia-smi failed)"
    DEVICE_OPT="--device cuda"
    OPS_FILTER="-k (test_forward or test_grad or matches_torch) and not gradcheck and not gradgrad"
    NN_TESTS="tests/nn/test_linear_activation.py::test_linear_matches_torch
              tests/nn/test_conv.py::test_conv2d_matches_torch
              tests/nn/test_normalization.py::test_normalization_layers_match_torch"
    CUDA_TESTS="tests/cuda"
    CUDA_FILTER="-k not dry_run"
    BENCH_PRE=""
    BENCH_ARGS=""
    XDIST="-n 8"; "$PY" -c "import xdist" 2>/dev/null || XDIST=""
    OPS_LIMIT=300; CUDA_LIMIT=60; BENCH_LIMIT=120
fi

echo "--- CuPy and ember.cuda ---"
"$PY" - <<PYEOF
$BENCH_PRE
import cupy, ember
print("cupy", getattr(cupy, "__version__", "(fake)"), "| ember.cuda.is_available():", ember.cuda.is_available())
if ember.cuda.is_available():
    print("device 0:", ember.cuda.get_device_name(0), ember.cuda.get_device_properties(0))
PYEOF
[ $? -eq 0 ] && record "cuda detected" PASS || record "cuda detected" FAIL

echo "--- op table and nn layers on cuda against torch (limit ${OPS_LIMIT}s) ---"
# shellcheck disable=SC2086
timeout "$OPS_LIMIT" "$PY" -m pytest tests/test_ops.py $NN_TESTS -q -p no:cacheprovider $DEVICE_OPT $XDIST "$OPS_FILTER" 2>&1 | tail -n 25
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] && record "op table + nn (cuda)" PASS || record "op table + nn (cuda)" "FAIL (exit $status)"

echo "--- CUDA tests (limit ${CUDA_LIMIT}s) ---"
# shellcheck disable=SC2086
timeout "$CUDA_LIMIT" "$PY" -m pytest -q -p no:cacheprovider -rs $CUDA_TESTS "$CUDA_FILTER" 2>&1 | tail -n 15
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] && record "cuda tests" PASS || record "cuda tests" "FAIL (exit $status)"

echo "--- ResNet-20 training: ember-cuda vs torch (limit ${BENCH_LIMIT}s) ---"
BENCH_OUT=$(timeout "$BENCH_LIMIT" "$PY" -c "$BENCH_PRE import runpy, sys; sys.argv = ['gpu_bench.py'] + '$BENCH_ARGS'.split(); runpy.run_path('scripts/gpu_bench.py', run_name='__main__')" 2>&1)
status=$?
echo "$BENCH_OUT" | tail -n 30
[ "$status" -eq 0 ] && record "resnet20 ember-cuda vs torch" PASS || record "resnet20 ember-cuda vs torch" "FAIL (exit $status)"

echo
echo "=== summary$([ "$DRY" = 1 ] && echo ' (DRY RUN, fake CuPy)') ==="
failed=0
for i in "${!NAMES[@]}"; do
    printf '%-32s %s\n' "${NAMES[$i]}" "${RESULTS[$i]}"
    [ "${RESULTS[$i]}" = PASS ] || failed=1
done
echo "$BENCH_OUT" | grep -E '^(library|ember-cuda|torch-|ember/torch)' || true
exit $failed
