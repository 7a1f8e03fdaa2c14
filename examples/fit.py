"""Fit a two-layer network to a noisy sine curve with ember's autograd and plain gradient
descent, printing the loss as it falls.

(The full demo, on real data with ember.nn and ember.optim, arrives with those packages.)
"""
import math

import ember

ember.manual_seed(0)

n, hidden, steps, lr = 256, 32, 3000, 0.05
x = ember.linspace(-math.pi, math.pi, n).reshape(n, 1)
y = x.sin() + 0.05 * ember.randn(n, 1)

# parameters initialised as nn.Linear does: uniform in +-1/sqrt(fan_in)
w1 = ember.empty(1, hidden).uniform_(-1.0, 1.0).requires_grad_()
b1 = ember.empty(hidden).uniform_(-1.0, 1.0).requires_grad_()
bound = 1 / math.sqrt(hidden)
w2 = ember.empty(hidden, 1).uniform_(-bound, bound).requires_grad_()
b2 = ember.empty(1).uniform_(-bound, bound).requires_grad_()
params = [w1, b1, w2, b2]

first = None
for step in range(1, steps + 1):
    pred = (x @ w1 + b1).tanh() @ w2 + b2
    loss = ((pred - y) ** 2).mean()
    for p in params:
        p.grad = None
    loss.backward()
    with ember.no_grad():
        for p in params:
            p -= lr * p.grad
    first = first if first is not None else loss.item()
    if step == 1 or step % 300 == 0:
        print(f"step {step:5d}   loss {loss.item():.5f}")

print(f"loss fell from {first:.4f} to {loss.item():.4f} "
      f"(the noise floor is {0.05 ** 2:.4f})")
