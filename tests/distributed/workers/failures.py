"""Failure cases, chosen by argv[1]: 'raise' (rank 1 raises while rank 0 waits in a
collective) and 'mismatch' (the ranks all-reduce tensors of different shapes)."""
import sys

import ember
import ember.distributed as dist


def raise_on_rank_1():
    raise ValueError("boom from rank 1")


def main(case):
    dist.init_process_group("mpi")
    rank = dist.get_rank()
    if case == "raise":
        if rank == 1:
            raise_on_rank_1()
        dist.all_reduce(ember.ones(4))
    elif case == "mismatch":
        dist.all_reduce(ember.ones(3 + rank))
    print(f"no failure on rank {rank}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
