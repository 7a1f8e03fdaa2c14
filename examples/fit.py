"""Fit a small two-layer network to a noisy sine with ember's autograd and plain SGD,
printing the loss as it falls. (The full demo, on real data, comes with ember.nn/optim.)"""
import math

import ember

ember.manual_seed(0) if hasattr(ember, "manual_seed") else None

n, hidden = 256, 32
x = ember.linspace(-math.pi, math.pi, n).reshape(n, 1)
y = x.sin() + 0.05 * ember.tensor([math.sin(37.0 * i) for i in range(n)]).reshape(n, 1)

# parameters, initialised deterministically (uniform in +-1/sqrt(fan_in), like nn.Linear)
w1 = (ember.tensor([[math.sin(3.1 * i + 0.7) for i in range(hidden)]]) * 1.0).requires_grad_()
b1 = (ember.tensor([math.cos(1.3 * i) for i in range(hidden)]) * 0.5).requires_grad_()
w2 = (ember.tensor([[math.sin(2.3 * i + 0.1)] for i in range(hidden)]) / math.sqrt(hidden)).requires_grad_()
b2 = ember.zeros(1, requires_grad=True)
params = [w1, b1, w2, b2]

lr = 0.05
for step in range(1, 2001):
    h = (x @ w1 + b1).tanh() if hasattr(ember.Tensor, "__matmul__") else None
    pred = h @ w2 + b2
    loss = ((pred - y) ** 2).mean()
    for p in params:
        p.grad = None
    loss.backward()
    with ember.no_grad():
        for p in params:
            p -= lr * p.grad
    if step == 1 or step % 250 == 0:
        print(f"step {step:5d}  loss {loss.item():.5f}")
