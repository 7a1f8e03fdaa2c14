"""Every collective on 2+ ranks, checked against the NumPy computation of the result.
Run by test_distributed.py through the launcher; prints 'collectives ok' on success."""
import os

import numpy as np

import ember
import ember.distributed as dist


def data(r, shape=(3, 4), dtype=np.float32):
    """Rank r's input: distinct values per rank."""
    return (np.arange(np.prod(shape)).reshape(shape) + 10 * r + 1).astype(dtype)


def check(tensor, expected):
    np.testing.assert_allclose(tensor.numpy(), expected, rtol=1e-6)


def main():
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    assert os.environ["RANK"] == str(rank) and os.environ["WORLD_SIZE"] == str(world)
    assert "LOCAL_RANK" in os.environ and os.environ["MASTER_ADDR"]
    assert dist.is_initialized() and dist.get_backend() == "mpi"
    everyone = np.stack([data(r) for r in range(world)])

    for op, fn in [(dist.ReduceOp.SUM, np.sum), (dist.ReduceOp.AVG, np.mean),
                   (dist.ReduceOp.MAX, np.max), (dist.ReduceOp.MIN, np.min),
                   (dist.ReduceOp.PRODUCT, np.prod)]:
        t = ember.tensor(data(rank))
        version = t._version
        dist.all_reduce(t, op=op)
        check(t, fn(everyone, axis=0))
        assert t._version > version
    t = ember.tensor(data(rank, dtype=np.int64))
    dist.all_reduce(t)
    assert t.dtype == ember.int64 and (t.numpy() == everyone.sum(0)).all()
    t = ember.tensor(data(rank)).to(ember.bfloat16)
    dist.all_reduce(t)
    check(t.float(), everyone.sum(0))

    t = ember.tensor(data(rank))
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    assert work.is_completed()
    check(t, everyone.sum(0))

    t = ember.tensor(data(rank))
    dist.broadcast(t, src=world - 1)
    check(t, data(world - 1))
    t = ember.tensor(data(rank))
    dist.broadcast(t, src=1, async_op=True).wait()
    check(t, data(1))

    t = ember.tensor(data(rank))
    dist.reduce(t, dst=0, op=dist.ReduceOp.MAX)
    check(t, everyone.max(0) if rank == 0 else data(rank))

    out = [ember.zeros(3, 4) for _ in range(world)]
    dist.all_gather(out, ember.tensor(data(rank)))
    for r in range(world):
        check(out[r], data(r))
    out = ember.zeros(world * 3, 4)
    dist.all_gather_into_tensor(out, ember.tensor(data(rank)), async_op=True).wait()
    check(out, everyone.reshape(world * 3, 4))

    out = ember.zeros(2, 4)
    dist.reduce_scatter_tensor(out, ember.tensor(data(rank, (2 * world, 4))))
    summed = sum(data(r, (2 * world, 4)) for r in range(world))
    check(out, summed[2 * rank: 2 * rank + 2])

    gathered = [ember.zeros(3, 4) for _ in range(world)] if rank == 0 else None
    dist.gather(ember.tensor(data(rank)), gathered, dst=0)
    if rank == 0:
        for r in range(world):
            check(gathered[r], data(r))

    t = ember.zeros(3, 4)
    pieces = [ember.tensor(data(100 + r)) for r in range(world)] if rank == 1 else None
    dist.scatter(t, pieces, src=1)
    check(t, data(100 + rank))

    outs = [ember.zeros(2) for _ in range(world)]
    dist.all_to_all(outs, [ember.tensor(np.array([rank, r], np.float32)) for r in range(world)])
    for r in range(world):
        check(outs[r], [r, rank])
    out = ember.zeros(world, dtype=ember.int64)
    dist.all_to_all_single(out, ember.arange(world) + 10 * rank)
    assert out.tolist() == [10 * r + rank for r in range(world)]

    dist.barrier()
    dist.barrier(async_op=True).wait()

    if rank == 0:
        dist.send(ember.tensor(data(7)), dst=1)
        t = ember.zeros(5, dtype=ember.int64)
        work = dist.irecv(t, src=1)
        work.wait()
        assert t.tolist() == [1, 2, 3, 4, 5]
    elif rank == 1:
        t = ember.zeros(3, 4)
        assert dist.recv(t) == 0
        check(t, data(7))
        dist.isend(ember.tensor([1, 2, 3, 4, 5]), dst=0).wait()

    objects = [{"rank": rank}, "x"] if rank == 0 else [None, None]
    dist.broadcast_object_list(objects, src=0)
    assert objects == [{"rank": 0}, "x"]
    gathered = [None] * world
    dist.all_gather_object(gathered, ("obj", rank))
    assert gathered == [("obj", r) for r in range(world)]

    pair = dist.new_group([0, 1])
    t = ember.tensor(data(rank))
    dist.all_reduce(t, group=pair)
    check(t, everyone[:2].sum(0) if rank < 2 else data(rank))
    assert dist.get_world_size(pair) == (2 if rank < 2 else -1)

    try:
        dist.all_reduce(ember.zeros(4, 3).t())
    except RuntimeError as e:
        assert "contiguous" in str(e)
    else:
        raise AssertionError("a non-contiguous tensor was accepted")
    dist.destroy_process_group()
    assert not dist.is_initialized()
    print(f"collectives ok {rank}", flush=True)


if __name__ == "__main__":
    main()
