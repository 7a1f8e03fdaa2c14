"""ember.distributed and DistributedDataParallel in real 2-rank MPI jobs: each test starts
the launcher (python -m ember.distributed.run) on a worker script under workers/ with
EMBER_DISTRIBUTED_DEBUG=DETAIL, and a time limit."""
import importlib.util
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
pytestmark = pytest.mark.skipif(importlib.util.find_spec("mpi4py") is None,
                                reason="mpi4py is not installed")


def launch(*args, nproc=2, timeout=60):
    """Run the launcher; return the completed process (stdout and stderr as text)."""
    env = dict(os.environ, EMBER_DISTRIBUTED_DEBUG="DETAIL",
               PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    command = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(nproc), *args]
    job = subprocess.Popen(command, env=env, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = job.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)  # the launcher, mpiexec and the workers
        stdout, stderr = job.communicate()
        pytest.fail(f"the job did not end within {timeout} s:\n{stdout}\n{stderr}")
    return subprocess.CompletedProcess(command, job.returncode, stdout, stderr)


def assert_ok(result, marker, nproc=2):
    assert result.returncode == 0, result.stdout + result.stderr
    for rank in range(nproc):
        assert f"{marker} {rank}" in result.stdout, result.stdout + result.stderr


def test_collectives_match_numpy():
    assert_ok(launch(str(HERE / "workers" / "collectives.py")), "collectives ok")


def test_ddp_matches_one_process_no_sync_and_unused_parameters():
    assert_ok(launch(str(HERE / "workers" / "ddp.py")), "ddp ok")


def test_a_failing_rank_aborts_the_job_with_its_error():
    result = launch(str(HERE / "workers" / "failures.py"), "raise", timeout=90)
    assert result.returncode != 0
    assert "ValueError: boom from rank 1" in result.stderr
    assert "no failure" not in result.stdout


def test_a_failing_ranks_traceback_survives_the_abort_under_cpu_load():
    # on a busy machine mpiexec's handling of the abort could overtake the rank's report
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        for _ in range(20):
            result = launch(str(HERE / "workers" / "failures.py"), "raise", timeout=90)
            assert result.returncode != 0
            header = result.stderr.find("[rank 1] uncaught exception, aborting the MPI job:")
            assert header >= 0, result.stderr
            report = result.stderr[header:]
            assert "in raise_on_rank_1" in report, result.stderr
            assert "ValueError: boom from rank 1" in report, result.stderr
    finally:
        spinner.kill()
        spinner.wait()


def test_mismatched_shapes_name_both_shapes():
    result = launch(str(HERE / "workers" / "failures.py"), "mismatch", timeout=90)
    assert result.returncode != 0
    assert "Detected mismatch between collectives" in result.stderr
    assert "all_reduce with shape (3,)" in result.stderr and "all_reduce with shape (4,)" in result.stderr


def test_example_trains_on_two_processes():
    result = launch(str(ROOT / "examples" / "ddp_train.py"), "--epochs", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "final accuracy" in result.stdout


def test_package_imports_without_starting_mpi():
    code = ("import sys, ember.distributed as d; assert d.is_available() and d.is_mpi_available();"
            "assert not d.is_initialized(); assert 'mpi4py.MPI' not in sys.modules\n"
            "try:\n    d.get_rank()\nexcept ValueError as e:\n    print(e)")
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(ROOT / "src")),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Default process group has not been initialized" in out.stdout


def test_queued_callback_runs_once_after_backward():
    import ember
    from ember.autograd import engine
    w = ember.ones(3, requires_grad=True)
    seen = []
    w.register_post_accumulate_grad_hook(
        lambda p: engine.queue_callback(lambda: seen.append(p.grad.tolist())))
    (w * 2).sum().backward()
    assert seen == [[2.0, 2.0, 2.0]]
    with pytest.raises(RuntimeError, match="during backward pass"):
        engine.queue_callback(lambda: None)


def test_convert_sync_batchnorm_keeps_parameters_and_acts_as_batchnorm_alone():
    import ember
    from ember import nn
    ember.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3))
    x = ember.randn(2, 2, 3, 3)
    bn = model[1]
    expected = model(x)
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert isinstance(converted[1], nn.SyncBatchNorm)
    assert converted[1].weight is bn.weight and converted[1].running_mean is bn.running_mean
    bn.running_mean.zero_(), bn.running_var.fill_(1), bn.num_batches_tracked.zero_()
    assert ember.allclose(converted(x), expected)
    assert bn.num_batches_tracked.item() == 1
