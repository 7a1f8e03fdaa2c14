"""Train the digits CNN with ember, export it to ONNX with ember.onnx.export, run the .onnx
file in ONNX Runtime, and print both predictions side by side.

The model is examples/digits_demo.py's CNN (two convolution blocks with batch norm, max
pooling, dropout and a linear head), trained on scikit-learn's handwritten digits with the
loop of examples/_digits.py. It is exported in eval mode with a dynamic batch dimension, checked
with onnx.checker, and run by onnxruntime on the whole test split in one batch: the script
prints the first test images' labels and both predictions, then how many predictions agree,
the largest logit difference and each side's test accuracy.

    python examples/digits_onnx.py [--epochs N] [--steps N] [--out DIR]
    (needs the onnx and onnxruntime packages, and scikit-learn for the data)
"""
import argparse
import os
import sys

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime  # noqa: E402

import ember as torch  # noqa: E402
import ember.onnx  # noqa: E402
from ember import nn  # noqa: E402
from ember.utils.data import DataLoader, TensorDataset  # noqa: E402
from _digits import accuracy, demo_cnn, digits_splits  # noqa: E402


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--steps", type=int, default=0,
                        help="stop training after this many steps (0: train every epoch out)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--out", default="out")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=12, help="test images to print")
    return parser.parse_args()


def train(model, x_train, y_train, args):
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=args.batch_size, shuffle=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    step = 0
    model.train()
    for epoch in range(1, args.epochs + 1):
        total = seen = 0
        for images, labels in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(images), labels)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(labels)
            seen += len(labels)
            step += 1
            if step == args.steps:
                break
        print(f"epoch {epoch}/{args.epochs}  train loss {total / seen:.4f}  ({step} steps)")
        if step == args.steps:
            break


def export_onnx(model, example, path):
    model.eval()
    torch.onnx.export(model, (example,), path, input_names=["images"], output_names=["logits"],
                      dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=17)
    onnx.checker.check_model(onnx.load(path))
    print(f"exported to {path} ({os.path.getsize(path)} bytes), onnx.checker passed")


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    (x_train, y_train), (x_test, y_test) = digits_splits(args.seed, as_images=True)
    model = demo_cnn()
    train(model, x_train, y_train, args)

    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "digits_cnn.onnx")
    export_onnx(model, x_test[:1], path)

    with torch.no_grad():
        ember_logits = model(x_test).numpy()
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    (ort_logits,) = session.run(["logits"], {"images": x_test.numpy()})

    labels = y_test.numpy()
    ember_pred, ort_pred = ember_logits.argmax(1), ort_logits.argmax(1)
    print(f"\n{'image':>5}  {'label':>5}  {'ember':>5}  {'onnxruntime':>11}")
    for i in range(min(args.show, len(labels))):
        print(f"{i:5d}  {labels[i]:5d}  {ember_pred[i]:5d}  {ort_pred[i]:11d}")
    agree = int((ember_pred == ort_pred).sum())
    print(f"\npredictions agree on {agree}/{len(labels)} test images; largest logit difference "
          f"{np.abs(ember_logits - ort_logits).max():.2e}")
    print(f"test accuracy: ember {accuracy(model, x_test, y_test):.4f}, onnxruntime "
          f"{(ort_pred == labels).mean():.4f}")


if __name__ == "__main__":
    main()
