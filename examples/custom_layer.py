"""A custom layer: subclass ``nn.Module``, register parameters and a buffer in ``__init__``,
compute the output in ``forward``. Here a "gated" linear layer ``(x W^T + b) * sigmoid(x V^T)``
with a running count of the samples it has seen, trained to tell the points inside a circle
from those outside it, with cross entropy and plain gradient descent.
"""
import math

import ember
import ember.nn as nn
import ember.nn.functional as F


class GatedLinear(nn.Module):
    """``(x W^T + b) * sigmoid(x V^T)``: a linear map with a learned elementwise gate."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.value = nn.Linear(in_features, out_features)
        self.gate = nn.Parameter(ember.empty(out_features, in_features))
        nn.init.xavier_uniform_(self.gate)
        self.register_buffer("samples_seen", ember.zeros((), dtype=ember.int64))

    def forward(self, x):
        if self.training:
            self.samples_seen += x.shape[0]
        return self.value(x) * F.linear(x, self.gate).sigmoid()

    def extra_repr(self):
        return f"in_features={self.value.in_features}, out_features={self.value.out_features}"


def disc(n):
    """``n`` points in the square [-1, 1]^2, labelled 1 outside the circle of area 1/2."""
    x = ember.rand(n, 2) * 2 - 1
    y = (x.pow(2).sum(1) > 2 / math.pi).long()
    return x, y


def main():
    ember.manual_seed(0)
    x, y = disc(400)
    model = nn.Sequential(GatedLinear(2, 16), nn.Tanh(), nn.Linear(16, 2))
    print(model)
    first = None
    for step in range(1, 1001):
        loss = F.cross_entropy(model(x), y)
        model.zero_grad()
        loss.backward()
        with ember.no_grad():
            for p in model.parameters():
                p -= 0.5 * p.grad
        first = loss.item() if first is None else first
        if step % 200 == 0:
            print(f"step {step:5d}  loss {loss.item():.4f}")
    model.eval()
    accuracy = (model(x).argmax(1) == y).float().mean().item()
    print(f"loss fell from {first:.4f} to {loss.item():.4f}; accuracy {accuracy:.3f}; "
          f"first layer saw {model[0].samples_seen.item()} samples")


if __name__ == "__main__":
    main()
