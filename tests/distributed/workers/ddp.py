"""DistributedDataParallel (with SyncBatchNorm) on 2 ranks against one process on the full
batch; no_sync accumulation; find_unused_parameters. Prints 'ddp ok' on success."""
import numpy as np

import ember
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP


def mlp(seed):
    ember.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 3))


def batches(steps, size):
    g = np.random.default_rng(0)
    return [(ember.tensor(g.standard_normal((size, 6)).astype(np.float32)),
             ember.tensor(g.integers(0, 3, size))) for _ in range(steps)]


def train(model, data, rank=None, world=1):
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in data:
        if rank is not None:
            x, y = x.chunk(world)[rank], y.chunk(world)[rank]
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()


def close(a, b, what):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6,
                               err_msg=what)


def check_matches_one_process(rank, world):
    data = batches(5, 8)
    reference = mlp(0)
    train(reference, data)
    replica = nn.SyncBatchNorm.convert_sync_batchnorm(mlp(rank))  # rank 1 starts elsewhere
    model = DDP(replica, bucket_cap_mb=0.0002)                   # several buckets
    assert len(model._buckets) > 1
    assert all(k.startswith("module.") for k in model.state_dict())
    train(model, data, rank, world)
    ref_state = reference.state_dict()
    for name, value in model.module.state_dict().items():
        close(value.float(), ref_state[name].float(), name)


def check_no_sync(rank, world):
    ember.manual_seed(1)
    reference = nn.Linear(6, 2)
    ember.manual_seed(1)
    model = DDP(nn.Linear(6, 2))
    (xa, _), (xb, _) = batches(2, 4)
    reference(xa).square().mean().backward()
    reference(xb).square().mean().backward()
    with model.no_sync():
        model(xa.chunk(world)[rank]).square().mean().backward()
    local = [None] * world
    dist.all_gather_object(local, model.module.weight.grad.numpy())
    assert not np.allclose(local[0], local[1]), "grads were synchronized inside no_sync"
    model(xb.chunk(world)[rank]).square().mean().backward()
    close(model.module.weight.grad, reference.weight.grad, "no_sync weight")
    close(model.module.bias.grad, reference.bias.grad, "no_sync bias")


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body, self.head, self.extra = nn.Linear(4, 4), nn.Linear(4, 1), nn.Linear(4, 1)
        self.unused = nn.Linear(4, 1)

    def forward(self, x, use_extra):
        h = self.body(x)
        out = self.head(h)
        return out + self.extra(h) if use_extra else out


def check_unused_parameters(rank, world):
    ember.manual_seed(2)
    model = DDP(TwoHeads(), find_unused_parameters=True)
    x = ember.ones(2, 4) * (rank + 1)
    model(x, use_extra=rank == 0).sum().backward()
    assert model.module.unused.weight.grad is None
    grads = [None] * world
    dist.all_gather_object(grads, model.module.extra.weight.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])
    strict = DDP(TwoHeads())
    try:
        strict(x, use_extra=True).sum().backward()
    except RuntimeError as e:
        assert "find_unused_parameters" in str(e) and "unused.weight" in str(e), e
    else:
        raise AssertionError("an unused parameter went unnoticed")


def main():
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    check_matches_one_process(rank, world)
    check_no_sync(rank, world)
    check_unused_parameters(rank, world)
    dist.destroy_process_group()
    print(f"ddp ok {rank}", flush=True)


if __name__ == "__main__":
    main()
