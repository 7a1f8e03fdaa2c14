"""``ember.distributed``: process groups, collectives and point-to-point communication over
MPI (mpi4py), with torch.distributed's API.

Importing this package never needs mpi4py; ``is_available()`` says whether it is installed,
and ``init_process_group`` starts MPI. Launch jobs with ``python -m ember.distributed.run
--nproc-per-node N script.py`` (or ``mpiexec -n N python script.py``).
"""
from .c10d import *  # noqa: F403
from .c10d import __all__  # noqa: F401
