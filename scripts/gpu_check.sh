#!/usr/bin/env bash
# The GPU check for ember's CUDA backend (issue 10), meant to finish within 8 minutes on one GPU:
#   1. nvidia-smi and CuPy's view of the GPU;
#   2. the op table (tests/test_ops.py forward values and gradients) on cuda against torch;
#   3. the nn, loss and optim tests that take the device fixture (Linear, Conv2d, normalization,
#      LSTM/GRU/RNN, MultiheadAttention, Transformer, regression and cross-entropy losses; then
#      the optimizer trajectories) on cuda against torch;
#   4. the CUDA tests (tests/cuda) on the real GPU;
#   5. ResNet-20 training, ember-cuda against torch on the same GPU (first losses compared:
#      nn and optim on cuda against torch), then a short table.
# `scripts/gpu_check.sh --dry-run` (or EMBER_GPU_CHECK_DRY_RUN=1) runs the steps on a CPU
# machine with tests/cuda/fake_cupy.py standing in for CuPy, on a few tests and tiny sizes; it
# leaves out step 2 and the optimizers (collecting the op table and 50-step trajectories are
# slow: run `pytest --device fake-cuda tests/test_ops.py tests/optim` for those).
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

need() {  # need MODULE...: stop unless $PY finds every MODULE (found, not imported: torch is slow)
    missing=$("$PY" -c "import importlib.util, sys; print(' '.join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))" "$@")
    [ $? -eq 0 ] || { echo "gpu_check: cannot run $PY"; exit 2; }
    [ -z "$missing" ] || { echo "gpu_check: Python module(s) missing for $PY: $missing"; exit 2; }
}
need numpy ml_dtypes pytest torch

if [ "$DRY" = 1 ]; then
    echo "=== DRY RUN: fake CuPy (NumPy) instead of a GPU; tiny sizes ==="
    DEVICE_OPT="--device fake-cuda"
    OPS_FILTER=""
    NN_TESTS="tests/nn/test_linear_activation.py::test_linear_matches_torch"
    OPTIM_TESTS=""  # 50-step trajectories: slow on the fake
    # test_cuda_fake.py runs in the ordinary suite; here only the real-GPU tests' skips
    CUDA_TESTS="tests/cuda/test_cuda_real.py"
    CUDA_FILTER="-k not dry_run"
    BENCH_PRE="import sys; sys.path.insert(0, 'tests/cuda'); import fake_cupy; fake_cupy.install();"
    BENCH_ARGS="--dry-run --steps ${EMBER_GPU_CHECK_STEPS:-2}"
    XDIST=""
    export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1  # no xdist or hypothesis needed: a second less a run
    NN_LIMIT=60; CUDA_LIMIT=60; BENCH_LIMIT=60
else
    echo "=== GPU check ==="
    need cupy
    nvidia-smi --query-gpu=name,driver_version,memory.total,utilization.gpu --format=csv || echo "(nvidia-smi failed)"
    DEVICE_OPT="--device cuda"
    OPS_FILTER="-k (test_forward or test_grad) and not gradcheck and not gradgrad"
    NN_TESTS="tests/nn/test_linear_activation.py::test_linear_matches_torch
              tests/nn/test_conv.py::test_conv2d_matches_torch
              tests/nn/test_normalization.py::test_normalization_layers_match_torch
              tests/nn/test_rnn.py::test_layer_matches_torch
              tests/nn/test_attention_transformer.py::test_multihead_attention_matches_torch
              tests/nn/test_attention_transformer.py::test_transformer_matches_torch
              tests/nn/test_loss.py::test_regression_losses
              tests/nn/test_loss.py::test_cross_entropy_class_indices
              tests/nn/test_loss.py::test_cross_entropy_class_probabilities"
    OPTIM_TESTS="tests/optim/test_optimizers.py::test_trajectory_matches_torch"
    CUDA_TESTS="tests/cuda"
    CUDA_FILTER="-k not dry_run"
    BENCH_PRE=""
    BENCH_ARGS=""
    XDIST="-n 8"; "$PY" -c "import xdist" 2>/dev/null || XDIST=""
    OPS_LIMIT=240; NN_LIMIT=120; CUDA_LIMIT=60; BENCH_LIMIT=120
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

if [ -n "$OPS_FILTER" ]; then
    echo "--- op table on cuda against torch (limit ${OPS_LIMIT}s) ---"
    # shellcheck disable=SC2086
    timeout "$OPS_LIMIT" "$PY" -m pytest tests/test_ops.py -q -p no:cacheprovider $DEVICE_OPT $XDIST "$OPS_FILTER" 2>&1 | tail -n 25
    status=${PIPESTATUS[0]}
    [ "$status" -eq 0 ] && record "op table (cuda)" PASS || record "op table (cuda)" "FAIL (exit $status)"
fi

echo "--- nn layers and losses on cuda against torch (limit ${NN_LIMIT}s) ---"
# shellcheck disable=SC2086
timeout "$NN_LIMIT" "$PY" -m pytest $NN_TESTS -q -p no:cacheprovider $DEVICE_OPT $XDIST 2>&1 | tail -n 25
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] && record "nn + losses (cuda)" PASS || record "nn + losses (cuda)" "FAIL (exit $status)"

if [ -n "$OPTIM_TESTS" ]; then
    echo "--- optimizer trajectories on cuda against torch (limit ${NN_LIMIT}s) ---"
    # shellcheck disable=SC2086
    timeout "$NN_LIMIT" "$PY" -m pytest $OPTIM_TESTS -q -p no:cacheprovider $DEVICE_OPT $XDIST 2>&1 | tail -n 25
    status=${PIPESTATUS[0]}
    [ "$status" -eq 0 ] && record "optim (cuda)" PASS || record "optim (cuda)" "FAIL (exit $status)"
fi

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
