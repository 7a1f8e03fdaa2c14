"""Launcher: ``python -m ember.distributed.run --nproc-per-node N [--hostfile F] script.py args``.

Like ``torchrun``, it starts N copies of ``script.py`` with ``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR`` and ``MASTER_PORT`` set; the processes are
started by the ``mpiexec`` installed next to this Python (the venv's), so that the launcher
matches the MPI library mpi4py loads.
"""
import argparse
import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["main", "find_mpiexec"]

# (rank, size, local rank, local size) as MPICH's hydra and Open MPI name them
_LAUNCHER_VARIABLES = (
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"),
)


def find_mpiexec():
    """The ``mpiexec`` beside ``sys.executable`` (the venv's), else the one on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.exists():
        return str(beside)
    found = shutil.which("mpiexec")
    if found is None:
        raise RuntimeError("mpiexec not found: pip install mpi4py mpich")
    return found


def _parser():
    p = argparse.ArgumentParser(prog="python -m ember.distributed.run",
                                description="Start N processes of a training script over MPI.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", dest="nproc", type=int, default=1)
    p.add_argument("--nnodes", type=int, default=1)
    p.add_argument("--hostfile", default=None, help="MPI host file (one host per line)")
    p.add_argument("--master-addr", "--master_addr", dest="master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", dest="master_port", default="29500")
    p.add_argument("-m", "--module", action="store_true", help="run the script as a module")
    p.add_argument("script")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    return p


def mpiexec_command(args):
    """The command line starting ``args.nproc * args.nnodes`` workers."""
    command = [find_mpiexec(), "-n", str(args.nproc * args.nnodes)]
    if args.hostfile:
        command += ["-f", args.hostfile, "-ppn", str(args.nproc)]
    worker = [sys.executable, "-m", "ember.distributed.run", "--worker"]
    if args.module:
        worker.append("-m")
    return command + worker + [args.script] + args.script_args


def main(argv=None):
    """Parse the command line, start the job, return its exit status."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        return _worker(argv[1:])
    args = _parser().parse_args(argv)
    env = dict(os.environ, MASTER_ADDR=args.master_addr, MASTER_PORT=str(args.master_port))
    if args.nproc > 1:
        # as torchrun does: one BLAS/OpenMP thread per process unless told otherwise
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env.setdefault(name, "1")
    return subprocess.call(mpiexec_command(args), env=env)


def _worker(argv):
    """In each started process: set torchrun's variables from the MPI launcher's, then run
    the script as ``__main__``."""
    for rank, size, local_rank, local_size in _LAUNCHER_VARIABLES:
        if rank in os.environ:
            os.environ["RANK"] = os.environ[rank]
            os.environ["WORLD_SIZE"] = os.environ[size]
            os.environ["LOCAL_RANK"] = os.environ.get(local_rank, os.environ[rank])
            os.environ["LOCAL_WORLD_SIZE"] = os.environ.get(local_size, os.environ[size])
            break
    as_module = argv[0] == "-m"
    if as_module:
        argv = argv[1:]
    sys.argv = list(argv)
    if as_module:
        runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
    else:
        sys.path.insert(0, str(Path(argv[0]).resolve().parent))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
