"""Train a character-level Transformer language model with ember on real text that ships
with every Python install: a few modules of the standard library's own source.

The model embeds each character, adds a learned position embedding, runs a stack of
nn.TransformerEncoderLayer blocks under a causal mask (each position sees only the ones
before it) and predicts the next character with cross-entropy, trained by Adam on random
windows of the text. It prints the training loss as it falls, the loss on held-out text,
and a snippet sampled from the model with temperature sampling (ember.multinomial).

    python examples/char_transformer_lm.py [--steps N] [--block-size T] [--d-model D]
"""
import argparse
import math
import os
import sys

# The matrices here are small: BLAS threads would only add synchronisation (and stall
# badly when other processes share the cores).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import ember as torch  # noqa: E402
from ember import nn  # noqa: E402
from ember.nn import functional as F  # noqa: E402
from _stdlib_corpus import CORPUS_MODULES, stdlib_source_text  # noqa: E402


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--block-size", type=int, default=64)
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--sample-length", type=int, default=300)
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


class CharVocabulary:
    """Maps each distinct character of a text to an index and back."""

    def __init__(self, text):
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self):
        return len(self.chars)

    def encode(self, text):
        return torch.tensor([self.index[c] for c in text], dtype=torch.int64)

    def decode(self, indices):
        return "".join(self.chars[i] for i in indices)


class CharTransformer(nn.Module):
    """A decoder-only Transformer: token and learned position embeddings, causally masked
    encoder layers, a final LayerNorm and a linear head over the vocabulary."""

    def __init__(self, vocab_size, block_size, d_model, heads, layers, dropout=0.1):
        super().__init__()
        self.block_size = block_size
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(block_size, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model,
                                           dropout=dropout, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        length = tokens.shape[1]
        positions = torch.arange(length)
        x = self.token_embedding(tokens) + self.position_embedding(positions)
        mask = nn.Transformer.generate_square_subsequent_mask(length)
        x = self.blocks(x, mask=mask, is_causal=True)
        return self.head(self.norm(x))


def random_windows(data, batch_size, block_size, generator):
    """A batch of random windows of the text and, for each, the window shifted by one."""
    starts = torch.randint(0, len(data) - block_size - 1, (batch_size,), generator=generator)
    offsets = starts[:, None] + torch.arange(block_size + 1)
    chunks = data[offsets]
    return chunks[:, :-1], chunks[:, 1:]


def language_model_loss(model, inputs, targets):
    logits = model(inputs)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


@torch.no_grad()
def held_out_loss(model, data, block_size, batches=4, batch_size=32):
    """The mean loss on fixed windows of held-out text."""
    model.eval()
    generator = torch.Generator().manual_seed(1234)
    losses = [language_model_loss(model, *random_windows(data, batch_size, block_size, generator))
              for _ in range(batches)]
    model.train()
    return sum(loss.item() for loss in losses) / len(losses)


@torch.no_grad()
def sample(model, prompt, length, temperature):
    """Extend ``prompt`` (a 1-d index tensor) by ``length`` characters, each drawn from the
    model's softmax at the given temperature."""
    model.eval()
    tokens = prompt[None]
    for _ in range(length):
        logits = model(tokens[:, -model.block_size:])[:, -1]
        probs = F.softmax(logits / temperature, dim=-1)
        tokens = torch.cat([tokens, torch.multinomial(probs, 1)], dim=1)
    model.train()
    return tokens[0].tolist()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    text = stdlib_source_text()
    vocab = CharVocabulary(text)
    data = vocab.encode(text)
    split = int(0.9 * len(data))
    train_data, val_data = data[:split], data[split:]
    print(f"character-level Transformer LM on {len(text):,} characters of the standard "
          f"library's source ({', '.join(CORPUS_MODULES)}), {len(vocab)} distinct characters")

    model = CharTransformer(len(vocab), args.block_size, args.d_model, args.heads, args.layers)
    print(f"model: {sum(p.numel() for p in model.parameters()):,} parameters, "
          f"{args.layers} layers, d_model {args.d_model}, {args.heads} heads, "
          f"context {args.block_size}")
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    generator = torch.Generator().manual_seed(args.seed)
    print(f"uniform-guess loss would be ln({len(vocab)}) = {math.log(len(vocab)):.3f}")
    print(f"validation loss before training {held_out_loss(model, val_data, args.block_size):.4f}")

    report_every = max(1, args.steps // 10)
    running = []
    for step in range(1, args.steps + 1):
        inputs, targets = random_windows(train_data, args.batch_size, args.block_size, generator)
        loss = language_model_loss(model, inputs, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running.append(loss.item())
        if step == 1 or step % report_every == 0 or step == args.steps:
            print(f"step {step:5d}/{args.steps}  train loss {sum(running) / len(running):.4f}")
            running = []
    print(f"validation loss after training {held_out_loss(model, val_data, args.block_size):.4f}")

    prompt = vocab.encode("def ")
    snippet = vocab.decode(sample(model, prompt, args.sample_length, args.temperature))
    print(f"sampled at temperature {args.temperature}:")
    print("-" * 60)
    print(snippet)
    print("-" * 60)


if __name__ == "__main__":
    main()
