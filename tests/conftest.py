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
    from knotwork.ingest.lexicon import LEXICON

    before = LEXICON.snapshot()
    yield
    LEXICON.restore(before)
