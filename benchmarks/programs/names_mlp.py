"""A character-level name model, written the way makemore writes one: bigram counts in a tensor
filled by a Python loop and sampled with torch.multinomial, a neural bigram (one-hot times a
weight matrix) trained by hand-written gradient descent, then an MLP over three characters of
context (embedding table, a hand-written batch norm with running statistics, tanh) whose raw
parameter tensors are updated with ``p.data += -lr * p.grad``. The names are made up from
syllables by a seeded random generator.

    python benchmarks/programs/names_mlp.py --lib ember|torch [--steps N] [--threads N]
"""
import argparse
import os
import random
import sys
import time

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--lib", choices=("torch", "ember"), default="torch")
parser.add_argument("--steps", type=int, default=10000)
parser.add_argument("--threads", type=int, default=1)
args = parser.parse_args()

if args.lib == "ember":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src"))
    import ember as torch
else:
    import torch
F = torch.nn.functional

torch.set_num_threads(args.threads)

# made-up names
rnd = random.Random(42)
onsets = ["", "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
          "br", "ch", "cl", "dr", "fl", "gr", "kr", "sh", "st", "th", "tr"]
vowels = ["a", "e", "i", "o", "u", "y", "ai", "ea", "ee", "ia", "io", "ou"]
codas = ["", "", "", "n", "l", "r", "s", "th", "x", "nd", "ck", "lyn", "na", "ra", "ssa"]
words = []
for _ in range(2000):
    syllables = rnd.choice([1, 2, 2, 3])
    words.append("".join(rnd.choice(onsets) + rnd.choice(vowels) for _ in range(syllables)) + rnd.choice(codas))
print(len(words), "names:", " ".join(words[:8]))

chars = sorted(list(set("".join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
itos = {i: s for s, i in stoi.items()}
vocab_size = len(itos)

start = time.perf_counter()

# bigram counts
N = torch.zeros((vocab_size, vocab_size), dtype=torch.int32)
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        ix1 = stoi[ch1]
        ix2 = stoi[ch2]
        N[ix1, ix2] += 1

P = (N + 1).float()
P /= P.sum(1, keepdim=True)

g = torch.Generator().manual_seed(2147483647)
for _ in range(5):
    out = []
    ix = 0
    while True:
        p = P[ix]
        ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
        out.append(itos[ix])
        if ix == 0:
            break
    print("bigram sample:", "".join(out))

log_likelihood = 0.0
n = 0
for w in words[:200]:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        logprob = torch.log(P[stoi[ch1], stoi[ch2]])
        log_likelihood += logprob
        n += 1
print(f"bigram counts nll {(-log_likelihood / n).item():.4f}")

# neural bigram
xs, ys = [], []
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        xs.append(stoi[ch1])
        ys.append(stoi[ch2])
xs = torch.tensor(xs)
ys = torch.tensor(ys)
num = xs.nelement()
W = torch.randn((vocab_size, vocab_size), generator=g, requires_grad=True)
for _ in range(max(2, args.steps // 30)):
    xenc = F.one_hot(xs, num_classes=vocab_size).float()
    logits = xenc @ W
    counts = logits.exp()
    probs = counts / counts.sum(1, keepdims=True)
    loss = -probs[torch.arange(num), ys].log().mean() + 0.01 * (W ** 2).mean()
    W.grad = None
    loss.backward()
    W.data += -50 * W.grad
print(f"neural bigram loss {loss.item():.4f}")


# MLP over a context of three characters
def build_dataset(words, block_size=3):
    X, Y = [], []
    for w in words:
        context = [0] * block_size
        for ch in w + ".":
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]
    return torch.tensor(X), torch.tensor(Y)


rnd.shuffle(words)
n1 = int(0.8 * len(words))
n2 = int(0.9 * len(words))
Xtr, Ytr = build_dataset(words[:n1])
Xdev, Ydev = build_dataset(words[n1:n2])
Xte, Yte = build_dataset(words[n2:])

n_embd = 10
n_hidden = 200
block_size = 3
C = torch.randn((vocab_size, n_embd), generator=g)
W1 = torch.randn((n_embd * block_size, n_hidden), generator=g) * (5 / 3) / ((n_embd * block_size) ** 0.5)
W2 = torch.randn((n_hidden, vocab_size), generator=g) * 0.01
b2 = torch.randn(vocab_size, generator=g) * 0
bngain = torch.ones((1, n_hidden))
bnbias = torch.zeros((1, n_hidden))
bnmean_running = torch.zeros((1, n_hidden))
bnstd_running = torch.ones((1, n_hidden))
parameters = [C, W1, W2, b2, bngain, bnbias]
print(sum(p.nelement() for p in parameters), "parameters")
for p in parameters:
    p.requires_grad = True

max_steps = args.steps
batch_size = 32
lossi = []
for i in range(max_steps):
    ix = torch.randint(0, Xtr.shape[0], (batch_size,), generator=g)
    Xb, Yb = Xtr[ix], Ytr[ix]

    emb = C[Xb]
    embcat = emb.view(emb.shape[0], -1)
    hpreact = embcat @ W1
    bnmeani = hpreact.mean(0, keepdim=True)
    bnstdi = hpreact.std(0, keepdim=True)
    hpreact = bngain * (hpreact - bnmeani) / bnstdi + bnbias
    with torch.no_grad():
        bnmean_running = 0.999 * bnmean_running + 0.001 * bnmeani
        bnstd_running = 0.999 * bnstd_running + 0.001 * bnstdi
    h = torch.tanh(hpreact)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, Yb)

    for p in parameters:
        p.grad = None
    loss.backward()

    lr = 0.1 if i < max_steps * 3 // 4 else 0.01
    for p in parameters:
        p.data += -lr * p.grad

    if i % 1000 == 0:
        print(f"{i:7d}/{max_steps:7d}: {loss.item():.4f}")
    lossi.append(loss.log10().item())


@torch.no_grad()
def split_loss(split):
    x, y = {"train": (Xtr, Ytr), "val": (Xdev, Ydev), "test": (Xte, Yte)}[split]
    emb = C[x]
    embcat = emb.view(emb.shape[0], -1)
    hpreact = embcat @ W1
    hpreact = bngain * (hpreact - bnmean_running) / bnstd_running + bnbias
    h = torch.tanh(hpreact)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, y)
    print(split, f"{loss.item():.4f}")
    return loss.item()


split_loss("train")
final = split_loss("val")

for _ in range(5):
    out = []
    context = [0] * block_size
    while True:
        emb = C[torch.tensor([context])]
        h = torch.tanh(bngain * (emb.view(1, -1) @ W1 - bnmean_running) / bnstd_running + bnbias)
        logits = h @ W2 + b2
        probs = F.softmax(logits, dim=1)
        ix = torch.multinomial(probs, num_samples=1, generator=g).item()
        context = context[1:] + [ix]
        out.append(ix)
        if ix == 0:
            break
    print("mlp sample:", "".join(itos[i] for i in out))

print(f"final loss {final:.4f}; {max_steps} steps in {time.perf_counter() - start:.2f} s")
