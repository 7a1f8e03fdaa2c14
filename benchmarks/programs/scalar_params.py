"""Fitting a bouncing ball's physics: a model whose parameters are three scalars (gravity, the
bounce's restitution, air drag) and whose forward is a Python loop of Euler steps over 0-d
tensors, with an ``if`` on a tensor at every step (the ball hits the floor: reflect it). Adam
with an exponential learning-rate decay fits the scalars to noisy heights simulated from known
ones; a no_grad clamp keeps gravity positive.

    python benchmarks/programs/scalar_params.py --lib ember|torch [--steps N] [--threads N]
"""
import argparse
import os
import sys
import time

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--lib", choices=("torch", "ember"), default="torch")
parser.add_argument("--steps", type=int, default=500)
parser.add_argument("--threads", type=int, default=1)
args = parser.parse_args()

if args.lib == "ember":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src"))
    import ember as torch
else:
    import torch
nn = torch.nn
F = torch.nn.functional

torch.set_num_threads(args.threads)
torch.manual_seed(0)

DT = 0.02
N_STEPS = 80


class BouncingBall(nn.Module):
    def __init__(self, gravity=5.0, bounce=0.0, log_drag=-1.0):
        super().__init__()
        self.gravity = nn.Parameter(torch.tensor(gravity))
        self.bounce_logit = nn.Parameter(torch.tensor(bounce))
        self.log_drag = nn.Parameter(torch.tensor(log_drag))

    def forward(self, y0, v0, steps=N_STEPS, dt=DT):
        restitution = torch.sigmoid(self.bounce_logit)
        drag = self.log_drag.exp()
        y, v = y0, v0
        heights = []
        for _ in range(steps):
            a = -self.gravity - drag * v * v.abs()
            v = v + a * dt
            y = y + v * dt
            if y < 0:  # the ball hits the floor
                y = -y * restitution
                v = -v * restitution
            heights.append(y)
        return torch.stack(heights)


# observations from known physics, with noise
starts = [(2.0, 0.0), (1.0, 3.0), (0.5, -1.0)]
with torch.no_grad():
    truth = BouncingBall(gravity=9.81, bounce=1.4, log_drag=-2.0)
    observed = [truth(torch.tensor(y0), torch.tensor(v0)) + 0.01 * torch.randn(N_STEPS)
                for y0, v0 in starts]

model = BouncingBall()
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.99)

start = time.perf_counter()
for step in range(args.steps):
    optimizer.zero_grad()
    loss = 0.0
    for (y0, v0), target in zip(starts, observed):
        predicted = model(torch.tensor(y0), torch.tensor(v0))
        loss = loss + F.mse_loss(predicted, target)
    loss = loss / len(starts)
    loss.backward()
    optimizer.step()
    scheduler.step()
    with torch.no_grad():
        model.gravity.clamp_(min=0.1)
    if step % 20 == 0 or step == args.steps - 1:
        print(f"step {step}: loss {loss.item():.5f}, gravity {model.gravity.item():.3f}, "
              f"restitution {torch.sigmoid(model.bounce_logit).item():.3f}, "
              f"drag {model.log_drag.exp().item():.3f}")

print(f"final loss {loss.item():.5f}; {args.steps} steps in {time.perf_counter() - start:.2f} s")
