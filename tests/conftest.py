"""Test-wide defaults.

Embedding every ingested chunk with the real model would make each CLI and server test
wait on ONNX; tests switch it off unless they test embeddings, and those choose the
deterministic ``hash`` embedder or the real model explicitly.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _no_embedding_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KNOTWORK_EMBEDDER", "none")


@pytest.fixture
def taught_relation() -> Iterator[None]:
    """Whatever the test teaches the relation lexicon (``register_relation``,
    ``register_key``) is forgotten after it."""
    from knotwork.ingest import lexicon

    patterns = {lang: list(pairs) for lang, pairs in lexicon.RELATION_PATTERNS.items()}
    keys, taught = dict(lexicon._KEY_TABLE), list(lexicon._REGISTERED)
    yield
    lexicon.RELATION_PATTERNS.clear()
    lexicon.RELATION_PATTERNS.update(patterns)
    lexicon._KEY_TABLE.clear()
    lexicon._KEY_TABLE.update(keys)
    lexicon._REGISTERED[:] = taught
    lexicon.normalize_key.cache_clear()
    lexicon.known_key.cache_clear()
    lexicon._first_words.cache_clear()
    lexicon._phrase_table.cache_clear()
