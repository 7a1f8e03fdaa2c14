"""Train a word-level LSTM language model with ember on real text that ships with every
Python install: a few modules of the standard library's own source.

The text is split into words and punctuation with a regex and the most frequent words form
the vocabulary (the rest become <unk>). The model embeds each word, runs a 2-layer nn.LSTM
and decodes the next word with nn.Linear; it is trained as PyTorch's word-language-model
example does: the token stream is cut into parallel columns, walked in chunks with truncated
backpropagation through time (the hidden state is carried over but detach()ed between
chunks), gradients clipped with nn.utils.clip_grad_norm_. It prints the training and
validation perplexity after each epoch.

    python examples/word_lstm_lm.py [--epochs N] [--vocab-size V] [--bptt T] [--hidden H]
"""
import argparse
import collections
import math
import os
import re
import sys

# The matrices here are small: BLAS threads would only add synchronisation (and stall
# badly when other processes share the cores).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import ember as torch  # noqa: E402
from ember import nn  # noqa: E402
from _stdlib_corpus import CORPUS_MODULES, stdlib_source_text  # noqa: E402

WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|\d+|[^\sA-Za-z_0-9]")
UNKNOWN = "<unk>"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--vocab-size", type=int, default=1000,
                        help="the most frequent words kept; the rest become <unk>")
    parser.add_argument("--batch-size", type=int, default=20)
    parser.add_argument("--bptt", type=int, default=35)
    parser.add_argument("--embedding", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--dropout", type=float, default=0.2)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--clip", type=float, default=0.5)
    parser.add_argument("--max-tokens", type=int, default=0,
                        help="use only the first this many tokens (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


class WordVocabulary:
    """The ``size`` most frequent words, plus ``<unk>`` (index 0) for every other word."""

    def __init__(self, words, size):
        counts = collections.Counter(words)
        self.words = [UNKNOWN] + [w for w, _ in counts.most_common(size)]
        self.index = {w: i for i, w in enumerate(self.words)}

    def __len__(self):
        return len(self.words)

    def encode(self, words):
        return torch.tensor([self.index.get(w, 0) for w in words], dtype=torch.int64)


def batchify(data, batch_size):
    """Cut a 1-d token stream into ``batch_size`` parallel columns: a (length, batch) tensor."""
    length = len(data) // batch_size
    return data[:length * batch_size].reshape(batch_size, length).t().contiguous()


class WordLSTM(nn.Module):
    """Embedding, a multi-layer LSTM and a linear decoder over the vocabulary."""

    def __init__(self, vocab_size, embedding, hidden, layers=2, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(vocab_size, embedding)
        self.lstm = nn.LSTM(embedding, hidden, layers, dropout=dropout)
        self.decoder = nn.Linear(hidden, vocab_size)
        self.layers, self.hidden = layers, hidden

    def forward(self, tokens, state):
        output, state = self.lstm(self.drop(self.encoder(tokens)), state)
        return self.decoder(self.drop(output)), state

    def initial_state(self, batch_size):
        zeros = torch.zeros(self.layers, batch_size, self.hidden)
        return zeros, zeros.clone()


def detach_state(state):
    """The hidden state cut from the graph that produced it (truncated BPTT)."""
    return tuple(s.detach() for s in state)


def chunks(data, bptt):
    """(inputs, targets) for each chunk of ``bptt`` steps; targets are the inputs shifted by one."""
    for start in range(0, len(data) - 1, bptt):
        length = min(bptt, len(data) - 1 - start)
        yield data[start:start + length], data[start + 1:start + 1 + length]


def train_epoch(model, data, optimizer, loss_fn, args):
    """One pass over the training columns; returns the training perplexity."""
    model.train()
    state = model.initial_state(data.shape[1])
    total_loss = total_tokens = 0
    for inputs, targets in chunks(data, args.bptt):
        state = detach_state(state)
        logits, state = model(inputs, state)
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()
        total_loss += loss.item() * targets.numel()
        total_tokens += targets.numel()
    return math.exp(total_loss / total_tokens)


@torch.no_grad()
def perplexity(model, data, loss_fn, bptt):
    model.eval()
    state = model.initial_state(data.shape[1])
    total_loss = total_tokens = 0
    for inputs, targets in chunks(data, bptt):
        logits, state = model(inputs, state)
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        total_loss += loss.item() * targets.numel()
        total_tokens += targets.numel()
    return math.exp(total_loss / total_tokens)


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    words = WORD.findall(stdlib_source_text())
    if args.max_tokens:
        words = words[:args.max_tokens]
    split = int(0.9 * len(words))
    vocab = WordVocabulary(words[:split], args.vocab_size)
    train_data = batchify(vocab.encode(words[:split]), args.batch_size)
    val_data = batchify(vocab.encode(words[split:]), 10)
    unknown = (vocab.encode(words) == 0).float().mean().item()
    print(f"word-level LSTM LM on {len(words):,} tokens of the standard library's source "
          f"({', '.join(CORPUS_MODULES)}): {split:,} for training, {len(words) - split:,} for "
          f"validation; vocabulary {len(vocab):,} words ({unknown:.1%} of tokens are <unk>)")

    model = WordLSTM(len(vocab), args.embedding, args.hidden, dropout=args.dropout)
    print(f"model: {sum(p.numel() for p in model.parameters()):,} parameters; truncated BPTT "
          f"over {args.bptt} steps, {args.batch_size} columns, gradient norm clipped at {args.clip}")
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    print(f"validation perplexity before training {perplexity(model, val_data, loss_fn, args.bptt):.2f}"
          f" (a uniform guess: {len(vocab)})")
    for epoch in range(1, args.epochs + 1):
        train_ppl = train_epoch(model, train_data, optimizer, loss_fn, args)
        val_ppl = perplexity(model, val_data, loss_fn, args.bptt)
        print(f"epoch {epoch:3d}/{args.epochs}  train perplexity {train_ppl:8.2f}  "
              f"validation perplexity {val_ppl:8.2f}")


if __name__ == "__main__":
    main()
