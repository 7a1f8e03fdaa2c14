"""Train a small CNN with DistributedDataParallel on N processes.

    python -m ember.distributed.run --nproc-per-node 2 examples/ddp_train.py --epochs 5

Each process reads its share of the data through a DistributedSampler, gradients are averaged
across processes during backward, so every replica keeps the same weights. The data are
sklearn's 8x8 digits when scikit-learn is installed, else generated 8x8 "digits" (a fixed
random pattern per class plus noise). Rank 0 prints the progress.
"""
import argparse

import numpy as np

import ember
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP
from ember.utils.data import DataLoader, DistributedSampler, TensorDataset


def load_images():
    """(images N x 1 x 8 x 8 float32 in [0, 1], labels N int64)."""
    try:
        from sklearn.datasets import load_digits
        digits = load_digits()
        return (digits.images / 16.0).astype(np.float32)[:, None], digits.target.astype(np.int64)
    except ImportError:
        rng = np.random.default_rng(0)
        patterns = rng.random((10, 8, 8)) > 0.6
        labels = rng.integers(0, 10, 1800)
        images = patterns[labels] + 1.0 * rng.standard_normal((1800, 8, 8))
        return images.astype(np.float32)[:, None], labels.astype(np.int64)


def small_cnn():
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(16 * 4 * 4, 10))


def accuracy(model, images, labels):
    model.eval()
    with ember.no_grad():
        predicted = model(ember.tensor(images)).argmax(1).numpy()
    model.train()
    return float((predicted == labels).mean())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32, help="per process")
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()

    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    ember.manual_seed(rank)  # different on purpose: DDP broadcasts rank 0's weights
    images, labels = load_images()
    split = len(images) * 4 // 5
    train_set = TensorDataset(ember.tensor(images[:split]), ember.tensor(labels[:split]))
    sampler = DistributedSampler(train_set, shuffle=True, seed=0)
    loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler)

    model = DDP(nn.SyncBatchNorm.convert_sync_batchnorm(small_cnn()))
    optimizer = ember.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        total = ember.zeros(2, dtype=ember.float64)
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            total += ember.tensor([loss.item() * len(y), len(y)], dtype=ember.float64)
        dist.all_reduce(total)
        if rank == 0:
            print(f"epoch {epoch}  mean loss {total[0].item() / total[1].item():.4f}  "
                  f"({world} processes, {int(total[1].item())} samples)", flush=True)

    weights = [None] * world
    dist.all_gather_object(weights, model.module[-1].weight.detach().numpy())
    assert all(np.array_equal(weights[0], w) for w in weights), "replicas diverged"
    if rank == 0:
        print(f"final accuracy {accuracy(model.module, images[split:], labels[split:]):.3f} "
              f"on {len(images) - split} held-out images", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
