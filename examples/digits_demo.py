"""Train a small CNN on scikit-learn's handwritten digits (1,797 real 8x8 images) with ember,
written as one would write it with PyTorch.

It holds out a stratified 20% test split, trains with DataLoader worker processes, Adam and a
cosine learning-rate schedule (a tqdm bar per epoch shows loss and accuracy), prints the test
accuracy after each epoch, saves a checkpoint, reloads it into a fresh model and checks it
scores the same, plots the loss and accuracy curves, and writes a Chrome trace of one training
step with ember.profiler. Everything lands under out/.

    python examples/digits_demo.py [--epochs N] [--out DIR]     (or DEMO_EPOCHS=N)
"""
import argparse
import os
import sys
import time

# The matrices here are small: BLAS threads would only add synchronisation (and fight the
# DataLoader's worker processes for the cores).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from tqdm import tqdm  # noqa: E402

import ember as torch  # noqa: E402
from ember import nn  # noqa: E402
from ember.profiler import ProfilerActivity, profile, record_function  # noqa: E402
from ember.utils.data import DataLoader, TensorDataset  # noqa: E402
from _digits import demo_cnn  # noqa: E402


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=int(os.environ.get("DEMO_EPOCHS", 12)))
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--out", default="out")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def digits_splits(seed):
    """The digits as (N, 1, 8, 8) float tensors in [0, 1] and int64 labels: train and test."""
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]
    x_train, x_test, y_train, y_test = train_test_split(
        images, digits.target, test_size=0.2, stratify=digits.target, random_state=seed)
    as_pair = lambda x, y: (torch.from_numpy(x), torch.from_numpy(y.astype(np.int64)))  # noqa: E731
    return as_pair(x_train, y_train), as_pair(x_test, y_test)


def train_step(model, optimizer, loss_fn, images, labels):
    """One optimisation step; returns the batch's loss and the number it got right."""
    optimizer.zero_grad()
    logits = model(images)
    loss = loss_fn(logits, labels)
    loss.backward()
    optimizer.step()
    return loss.item(), (logits.argmax(1) == labels).sum().item()


def train_epoch(model, loader, optimizer, loss_fn, epoch, epochs):
    model.train()
    total_loss = correct = seen = 0
    bar = tqdm(loader, desc=f"epoch {epoch:2d}/{epochs}", leave=False, file=sys.stdout,
               dynamic_ncols=True)
    for images, labels in bar:
        loss, right = train_step(model, optimizer, loss_fn, images, labels)
        total_loss += loss * len(labels)
        correct += right
        seen += len(labels)
        bar.set_postfix(loss=f"{total_loss / seen:.4f}", acc=f"{correct / seen:.3f}")
    bar.close()
    return total_loss / seen, correct / seen


@torch.no_grad()
def accuracy(model, images, labels):
    model.eval()
    return (model(images).argmax(1) == labels).float().mean().item()


def profile_one_step(model, optimizer, loss_fn, loader, path):
    """Profile one training step and write its Chrome trace; returns the op table."""
    images, labels = next(iter(loader))
    model.train()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("train_step"):
            train_step(model, optimizer, loss_fn, images, labels)
    prof.export_chrome_trace(path)
    return prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10)


def plot_curves(history, path):
    epochs = range(1, len(history["loss"]) + 1)
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 4))
    ax_loss.plot(epochs, history["loss"], marker="o")
    ax_loss.set(title="training loss", xlabel="epoch", ylabel="cross-entropy")
    ax_acc.plot(epochs, history["train_acc"], marker="o", label="train")
    ax_acc.plot(epochs, history["test_acc"], marker="o", label="test")
    ax_acc.set(title="accuracy", xlabel="epoch", ylabel="accuracy")
    ax_acc.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    started = time.perf_counter()
    torch.manual_seed(args.seed)
    (x_train, y_train), (x_test, y_test) = digits_splits(args.seed)
    print(f"digits: {len(y_train)} training and {len(y_test)} test images of 8x8")
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=args.batch_size, shuffle=True,
                        num_workers=2, persistent_workers=True)

    model = demo_cnn()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    loss_fn = nn.CrossEntropyLoss()

    history = {"loss": [], "train_acc": [], "test_acc": []}
    for epoch in range(1, args.epochs + 1):
        loss, train_acc = train_epoch(model, loader, optimizer, loss_fn, epoch, args.epochs)
        scheduler.step()
        test_acc = accuracy(model, x_test, y_test)
        for key, value in zip(history, (loss, train_acc, test_acc)):
            history[key].append(value)
        print(f"epoch {epoch:2d}/{args.epochs}  loss {loss:.4f}  train accuracy {train_acc:.4f}  "
              f"test accuracy {test_acc:.4f}")

    checkpoint = os.path.join(args.out, "digits_cnn.pt")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "epochs": args.epochs, "test_accuracy": test_acc}, checkpoint)
    restored = demo_cnn()
    state = torch.load(checkpoint)
    restored.load_state_dict(state["model"])
    torch.optim.Adam(restored.parameters(), lr=args.lr).load_state_dict(state["optimizer"])
    reloaded_acc = accuracy(restored, x_test, y_test)
    print(f"final test accuracy {test_acc:.4f}; reloaded checkpoint test accuracy {reloaded_acc:.4f}")

    curves = os.path.join(args.out, "digits_curves.png")
    plot_curves(history, curves)
    trace = os.path.join(args.out, "digits_step_trace.json")
    table = profile_one_step(model, optimizer, loss_fn, loader, trace)
    print("one training step, by self CPU time:")
    print(table)
    print(f"checkpoint: {checkpoint}")
    print(f"curves:     {curves}")
    print(f"trace:      {trace}   (open in https://ui.perfetto.dev or chrome://tracing)")
    print(f"done in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
