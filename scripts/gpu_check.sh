#!/usr/bin/env bash
# The GPU check for ember's CUDA backend, meant to finish within 7 minutes on one GPU:
#   1. nvidia-smi and CuPy's view of the GPU;
#   2. at the same time, as two groups of processes:
#      - the op table (tests/test_ops.py forward values and gradients) on cuda against torch;
#      - the CUDA tests (tests/cuda: round trips, pinned non-blocking copies, events, streams,
#        the caching allocator's statistics and empty_cache, device-mixing errors, save of CUDA
#        tensors loaded on the CPU, float16 autocast with a GradScaler against torch, DDP of a
#        CUDA model over MPI on one rank), then the nn, loss and optimizer tests that take the
#        device fixture, on cuda against torch;
#   3. training throughput, ember-cuda beside torch on the same GPU (scripts/gpu_bench.py:
#      ResNet-20, ResNet-50 float32 and float16 autocast, a GPT-2-small-sized LM, an LSTM LM).
# Every step's whole output goes to a log in $GPU_CHECK_LOGS (default: $OUT where the device
# tool sets it, else /tmp/gpu_check_logs); the console shows their tails and a summary.
# `scripts/gpu_check.sh --dry-run` (or EMBER_GPU_CHECK_DRY_RUN=1) runs the steps on a CPU
# machine with tests/cuda/fake_cupy.py standing in for CuPy, on a few tests and tiny sizes; it
# leaves out the op table and the optimizers (collecting the op table and 50-step trajectories
# are slow: run `pytest --device fake-cuda tests/test_ops.py tests/optim` for those).
# Needs numpy, ml_dtypes, pytest (+ pytest-xdist), torch and CuPy already installed (mpi4py and
# an MPI for the DDP test); ember comes from this checkout's src/ (no network, no install).
set -u
cd "$(dirname "$0")/.."
DRY="${EMBER_GPU_CHECK_DRY_RUN:-0}"
[ "${1:-}" = "--dry-run" ] && DRY=1
PY="${PYTHON:-python3}"
if [ "$DRY" = 1 ] && [ -z "${PYTHON:-}" ] && [ -x .venv/bin/python ]; then PY=.venv/bin/python; fi
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
declare -a NAMES RESULTS

LOGS="${GPU_CHECK_LOGS:-${OUT:-/tmp/gpu_check_logs}}"
mkdir -p "$LOGS"

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
    BENCH_PRE="import sys; sys.path.insert(0, 'tests/cuda'); import fake_cupy; fake_cupy.install(); "
    BENCH_ARGS="--dry-run --steps ${EMBER_GPU_CHECK_STEPS:-2}"
    XDIST=""; OPS_XDIST=""
    export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1  # no xdist or hypothesis needed: a second less a run
    NN_LIMIT=60; CUDA_LIMIT=60; BENCH_LIMIT=60
else
    echo "=== GPU check ==="
    need cupy
    nvidia-smi --query-gpu=name,driver_version,memory.total,utilization.gpu --format=csv || echo "(nvidia-smi failed)"
    DEVICE_OPT="--device cuda"
    OPS_FILTER="(test_forward or test_grad) and not gradcheck and not gradgrad"
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
    BENCH_PRE=""
    BENCH_ARGS="${EMBER_GPU_BENCH_ARGS:---budget 8 --steps 8}"
    XDIST="-n 4"; OPS_XDIST="-n ${EMBER_GPU_CHECK_OPS_WORKERS:-10}"
    "$PY" -c "import xdist" 2>/dev/null || { XDIST=""; OPS_XDIST=""; }
    OPS_LIMIT=${EMBER_GPU_CHECK_OPS_LIMIT:-200}; NN_LIMIT=75; CUDA_LIMIT=75; BENCH_LIMIT=${EMBER_GPU_CHECK_BENCH_LIMIT:-200}
fi
SKIP="${EMBER_GPU_CHECK_SKIP:-}"  # steps to leave out on a rerun: any of ops cuda nn optim bench
skipped() { case " $SKIP " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

step() {  # step NAME LOG LIMIT COMMAND...: run with a time limit, the whole output to LOG, its tail shown
    local name=$1 log=$2 limit=$3; shift 3
    timeout "$limit" "$@" >"$LOGS/$log" 2>&1
    local status=$?
    echo "--- $name (limit ${limit}s, exit $status; log $log) ---"
    tail -n 20 "$LOGS/$log"
    [ "$status" -eq 0 ] && record "$name" PASS || record "$name" "FAIL (exit $status)"
}

echo "--- CuPy and ember.cuda ---"
"$PY" - <<PYEOF
$BENCH_PRE
import cupy, ember
print("cupy", getattr(cupy, "__version__", "(fake)"), "| ember.cuda.is_available():", ember.cuda.is_available())
if ember.cuda.is_available():
    print("device 0:", ember.cuda.get_device_name(0), ember.cuda.get_device_properties(0))
PYEOF
[ $? -eq 0 ] && record "cuda detected" PASS || record "cuda detected" FAIL

OPS_PID=""
if [ -n "$OPS_FILTER" ] && ! skipped ops; then  # in the background, beside the other tests
    # shellcheck disable=SC2086
    timeout "$OPS_LIMIT" "$PY" -m pytest tests/test_ops.py -v -p no:cacheprovider --tb=short -rfE \
        $DEVICE_OPT $OPS_XDIST -k "${EMBER_GPU_CHECK_OPS_FILTER:-$OPS_FILTER}" >"$LOGS/ops.log" 2>&1 &
    OPS_PID=$!
fi

# shellcheck disable=SC2086
skipped cuda || step "cuda tests" cuda.log "$CUDA_LIMIT" \
    "$PY" -m pytest -q -p no:cacheprovider -rs --tb=short $DEVICE_OPT tests/cuda/test_cuda_real.py
# shellcheck disable=SC2086
skipped nn || step "nn + losses (cuda)" nn.log "$NN_LIMIT" \
    "$PY" -m pytest $NN_TESTS -q -p no:cacheprovider --tb=short -rfE $DEVICE_OPT $XDIST
if [ -n "$OPTIM_TESTS" ] && ! skipped optim; then
    # shellcheck disable=SC2086
    step "optim (cuda)" optim.log "$NN_LIMIT" \
        "$PY" -m pytest $OPTIM_TESTS -q -p no:cacheprovider --tb=short -rfE $DEVICE_OPT $XDIST
fi

if [ -n "$OPS_PID" ]; then
    wait "$OPS_PID"
    status=$?
    echo "--- op table on cuda against torch (limit ${OPS_LIMIT}s, exit $status; log ops.log) ---"
    grep -E "^(FAILED|ERROR) " "$LOGS/ops.log" | head -n 40
    tail -n 3 "$LOGS/ops.log"
    echo "passed $(grep -c ' PASSED ' "$LOGS/ops.log"), failed $(grep -c ' FAILED ' "$LOGS/ops.log") before the end or the limit"
    [ "$status" -eq 0 ] && record "op table (cuda)" PASS || record "op table (cuda)" "FAIL (exit $status)"
fi

skipped bench || step "throughput beside torch" bench.log "$BENCH_LIMIT" \
    "$PY" -c "${BENCH_PRE}import runpy, sys; sys.argv = ['gpu_bench.py'] + '$BENCH_ARGS'.split(); runpy.run_path('scripts/gpu_bench.py', run_name='__main__')"

echo
echo "=== summary$([ "$DRY" = 1 ] && echo ' (DRY RUN, fake CuPy)') ==="
failed=0
for i in "${!NAMES[@]}"; do
    printf '%-32s %s\n' "${NAMES[$i]}" "${RESULTS[$i]}"
    [ "${RESULTS[$i]}" = PASS ] || failed=1
done
[ -f "$LOGS/bench.log" ] && grep -E '^(GPU|model|resnet|gpt2|lstm)' "$LOGS/bench.log"
exit $failed
