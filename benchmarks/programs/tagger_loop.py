"""A bidirectional LSTM tagger that steps through time in a Python loop: an embedding, one
nn.LSTMCell run left to right and one right to left over padded batches of sentences
(nn.utils.rnn.pad_sequence), the two states concatenated and projected to tag scores,
cross-entropy that ignores the padding, Adam, and accuracy on held-out sentences. The sentences
and their tags come from a seeded hidden Markov model.

    python benchmarks/programs/tagger_loop.py --lib ember|torch [--steps N] [--threads N]
"""
import argparse
import os
import random
import sys
import time

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--lib", choices=("torch", "ember"), default="torch")
parser.add_argument("--steps", type=int, default=300)
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

# a hidden Markov model of tags, each tag with its own words (some words shared by two tags)
N_TAGS = 8
VOCAB = 300
PAD = 0
IGNORE = -100
rnd = random.Random(0)
transitions = [[rnd.random() ** 3 for _ in range(N_TAGS)] for _ in range(N_TAGS)]
words_of = [rnd.sample(range(1, VOCAB), 40) for _ in range(N_TAGS)]


def make_sentence():
    length = rnd.randint(6, 24)
    tag = rnd.randrange(N_TAGS)
    tokens, tags = [], []
    for _ in range(length):
        tag = rnd.choices(range(N_TAGS), weights=transitions[tag])[0]
        tokens.append(rnd.choice(words_of[tag]))
        tags.append(tag)
    return tokens, tags


train_set = [make_sentence() for _ in range(1500)]
test_set = [make_sentence() for _ in range(200)]


def batchify(sentences):
    tokens = nn.utils.rnn.pad_sequence([torch.tensor(s) for s, _ in sentences], batch_first=True,
                                       padding_value=PAD)
    tags = nn.utils.rnn.pad_sequence([torch.tensor(t) for _, t in sentences], batch_first=True,
                                     padding_value=IGNORE)
    return tokens, tags


class BiLSTMTagger(nn.Module):
    def __init__(self, vocab_size, n_tags, embedding_dim=32, hidden_dim=48):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=PAD)
        self.forward_cell = nn.LSTMCell(embedding_dim, hidden_dim)
        self.backward_cell = nn.LSTMCell(embedding_dim, hidden_dim)
        self.dropout = nn.Dropout(0.2)
        self.classifier = nn.Linear(2 * hidden_dim, n_tags)

    def run(self, cell, inputs, steps):
        batch = inputs.size(0)
        h = inputs.new_zeros(batch, self.hidden_dim)
        c = inputs.new_zeros(batch, self.hidden_dim)
        outputs = [None] * inputs.size(1)
        for t in steps:
            h, c = cell(inputs[:, t, :], (h, c))
            outputs[t] = h
        return torch.stack(outputs, dim=1)

    def forward(self, tokens):
        x = self.dropout(self.embedding(tokens))
        length = tokens.size(1)
        left = self.run(self.forward_cell, x, range(length))
        right = self.run(self.backward_cell, x, reversed(range(length)))
        features = self.dropout(torch.cat([left, right], dim=-1))
        return self.classifier(features)


model = BiLSTMTagger(VOCAB, N_TAGS)
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
print(f"{sum(p.numel() for p in model.parameters())} parameters, {len(train_set)} training sentences")


def evaluate(sentences):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for i in range(0, len(sentences), 50):
            tokens, tags = batchify(sentences[i:i + 50])
            predictions = model(tokens).argmax(dim=-1)
            mask = tags != IGNORE
            correct += (predictions[mask] == tags[mask]).sum().item()
            total += mask.sum().item()
    model.train()
    return correct / total


batch_size = 32
start = time.perf_counter()
step = 0
losses = []
while step < args.steps:
    rnd.shuffle(train_set)
    for i in range(0, len(train_set) - batch_size + 1, batch_size):
        tokens, tags = batchify(train_set[i:i + batch_size])
        scores = model(tokens)
        loss = F.cross_entropy(scores.view(-1, N_TAGS), tags.view(-1), ignore_index=IGNORE)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
        optimizer.step()
        losses.append(loss.item())
        step += 1
        if step % 40 == 0:
            print(f"step {step}: loss {sum(losses[-40:]) / 40:.4f}")
        if step == args.steps:
            break

print(f"test accuracy {evaluate(test_set):.3f}")
print(f"final loss {losses[-1]:.4f}; {args.steps} steps in {time.perf_counter() - start:.2f} s")
