"""What the digits classifier examples (mlp_digits.py, cnn_digits.py) share: the data split,
the training loop and the evaluation. Each example brings its own model."""
import argparse

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import ember as torch
from ember import nn
from ember.utils.data import DataLoader, TensorDataset


def parse_args(description, epochs, lr):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--epochs", type=int, default=epochs)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=lr)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def digits_splits(seed, as_images):
    """scikit-learn's digits in [0, 1], as (N, 1, 8, 8) images or flat (N, 64) rows, with int64
    labels: a stratified 80/20 train and test split."""
    digits = load_digits()
    inputs = digits.images[:, None] if as_images else digits.data
    inputs = (inputs / 16.0).astype(np.float32)
    x_train, x_test, y_train, y_test = train_test_split(
        inputs, digits.target, test_size=0.2, stratify=digits.target, random_state=seed)
    as_pair = lambda x, y: (torch.from_numpy(x), torch.from_numpy(y.astype(np.int64)))  # noqa: E731
    return as_pair(x_train, y_train), as_pair(x_test, y_test)


def demo_cnn():
    """The CNN of digits_demo.py (the main demo) and digits_onnx.py: two 3x3 convolutions with
    batch norm, a 2x2 max pool, then two linear layers, on 8x8 digit images."""
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.MaxPool2d(2),                                    # 32 x 4 x 4
        nn.Flatten(), nn.Dropout(0.25),
        nn.Linear(32 * 4 * 4, 64), nn.ReLU(),
        nn.Linear(64, 10),
    )


def train_epoch(model, loader, optimizer, loss_fn):
    """One pass over the training data; returns the mean training loss."""
    model.train()
    total_loss = seen = 0
    for inputs, labels in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), labels)
        loss.backward()
        optimizer.step()
        total_loss += loss.item() * len(labels)
        seen += len(labels)
    return total_loss / seen


@torch.no_grad()
def accuracy(model, inputs, labels):
    model.eval()
    return (model(inputs).argmax(1) == labels).float().mean().item()


def train_and_evaluate(model, args, as_images):
    """Train ``model`` with Adam on shuffled mini-batches, printing the training loss and the
    test accuracy after each epoch and the final test accuracy at the end."""
    (x_train, y_train), (x_test, y_test) = digits_splits(args.seed, as_images)
    print(f"digits: {len(y_train)} training and {len(y_test)} test images, input shape "
          f"{tuple(x_train.shape[1:])}")
    print(model)
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=args.batch_size, shuffle=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(1, args.epochs + 1):
        loss = train_epoch(model, loader, optimizer, loss_fn)
        print(f"epoch {epoch:3d}/{args.epochs}  train loss {loss:.4f}  "
              f"test accuracy {accuracy(model, x_test, y_test):.4f}")
    print(f"final test accuracy {accuracy(model, x_test, y_test):.4f}")
