"""Hogwild: several processes train one model whose parameters live in shared memory, each
with its own optimizer and its own shard of the data, writing updates without locks
(Recht et al., 2011; PyTorch's mnist_hogwild example). The parent then evaluates the shared
model, which has learned from all the processes.

    PYTHONPATH=src python examples/hogwild.py --processes 2 --start-method fork
"""
import argparse

import ember
import ember.multiprocessing as mp
import ember.nn as nn
import ember.nn.functional as F
from ember.utils.data import DataLoader, TensorDataset


def make_data(n=2048, seed=0):
    """A regression problem: y = x @ w + 0.5 * sin(x0) + noise, 8 features."""
    g = ember.Generator().manual_seed(seed)
    x = ember.randn(n, 8, generator=g)
    w = ember.randn(8, 1, generator=g)
    y = x @ w + 0.5 * ember.sin(x[:, :1]) + 0.01 * ember.randn(n, 1, generator=g)
    return x, y


def make_model():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))


def evaluate(model, x, y):
    with ember.no_grad():
        return F.mse_loss(model(x), y).item()


def train(rank, model, x, y, processes, epochs):
    """One Hogwild worker: SGD on its shard, updating the shared parameters in place."""
    ember.manual_seed(1 + rank)
    shard = TensorDataset(x[rank::processes], y[rank::processes])
    loader = DataLoader(shard, batch_size=32, shuffle=True)
    optimizer = ember.optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
    for _ in range(epochs):
        for xb, yb in loader:
            optimizer.zero_grad()
            F.mse_loss(model(xb), yb).backward()
            optimizer.step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--start-method", default="fork", choices=mp.get_all_start_methods())
    args = parser.parse_args()
    x, y = make_data()
    model = make_model()
    model.share_memory()  # parameters move to shared memory: every process updates the same ones
    before = evaluate(model, x, y)
    ctx = mp.get_context(args.start_method)
    workers = [ctx.Process(target=train, args=(rank, model, x, y, args.processes, args.epochs))
               for rank in range(args.processes)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if any(w.exitcode != 0 for w in workers):
        raise SystemExit(f"a training process failed: exit codes {[w.exitcode for w in workers]}")
    after = evaluate(model, x, y)
    print(f"{args.processes} processes trained the shared model: loss fell from {before:.4f} to {after:.4f}")


if __name__ == "__main__":
    main()
