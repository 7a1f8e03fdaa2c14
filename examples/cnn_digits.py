"""Classify scikit-learn's handwritten digits (1,797 real 8x8 images) with a small
convolutional network in ember, written as one would write it with PyTorch.

It holds out a stratified 20% test split, trains two convolution blocks (Conv2d, BatchNorm2d,
ReLU, MaxPool2d) and a linear head with ember.nn, Adam and a shuffling DataLoader (the loop
is in examples/_digits.py), and prints the training loss and the test accuracy after each
epoch. (examples/digits_demo.py trains a CNN with checkpoints, plots and a profiler trace.)

    python examples/cnn_digits.py [--epochs N] [--batch-size B] [--lr LR] [--seed S]
"""
import os
import sys

# The matrices here are small: BLAS threads would only add synchronisation (and stall
# badly when other processes share the cores).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import ember as torch  # noqa: E402
from ember import nn  # noqa: E402
from _digits import parse_args, train_and_evaluate  # noqa: E402


def make_model():
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.MaxPool2d(2),                                    # 16 x 4 x 4
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.MaxPool2d(2),                                    # 32 x 2 x 2
        nn.Flatten(),
        nn.Linear(32 * 2 * 2, 64), nn.ReLU(),
        nn.Linear(64, 10),
    )


def main():
    args = parse_args(__doc__.split("\n\n")[0], epochs=8, lr=3e-3)
    torch.manual_seed(args.seed)
    print("a CNN on the digits, each image 1x8x8")
    train_and_evaluate(make_model(), args, as_images=True)


if __name__ == "__main__":
    main()
