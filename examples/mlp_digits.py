"""Classify scikit-learn's handwritten digits (1,797 real 8x8 images) with a multilayer
perceptron in ember, written as one would write it with PyTorch.

It holds out a stratified 20% test split, trains a three-layer MLP on the flattened images
with ember.nn, Adam and a shuffling DataLoader (the loop is in examples/_digits.py), and
prints the training loss and the test accuracy after each epoch.

    python examples/mlp_digits.py [--epochs N] [--batch-size B] [--lr LR] [--seed S]
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
        nn.Linear(64, 128), nn.ReLU(), nn.Dropout(0.1),
        nn.Linear(128, 64), nn.ReLU(),
        nn.Linear(64, 10),
    )


def main():
    args = parse_args(__doc__.split("\n\n")[0], epochs=20, lr=1e-3)
    torch.manual_seed(args.seed)
    print("an MLP on the digits, each image flattened to 64 features")
    train_and_evaluate(make_model(), args, as_images=False)


if __name__ == "__main__":
    main()
