"""End to end with the real bundled model: paraphrases find the right note offline."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from knotwork import Knotwork

VAULT = Path(__file__).resolve().parents[2] / "examples" / "vault"


def test_minilm_finds_paraphrased_notes_offline(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    vault = tmp_path / "v"
    shutil.copytree(VAULT, vault)
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="minilm") as kw:
        kw.ingest()
        assert kw.embedding_status() == "complete"
        top = kw.search("who is responsible for alerting", mode="vector", k=3)
        assert top[0].path == "projects/FEAT-alerting.md"
        paths = [h.path for h in kw.search("message broker for background jobs",
                                           mode="vector", k=4)]
        assert "services/Kestrel Queue.md" in paths
        ctx = kw.context("message broker for background jobs", max_tokens=0)
        assert "Kestrel Queue" in [e.label for e in ctx.entities[:5]]


def test_vectors_alone_bring_no_unrelated_notes(tmp_path: Path) -> None:
    """On a small vault every chunk is among the nearest 40: without a floor the question
    "node-altair" brought all 17 notes, 14 unrelated people among them, as Semantic hits."""
    from .test_linked_over_semantic import altair_vault

    vault = altair_vault(tmp_path / "v")
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="minilm") as kw:
        kw.ingest()
        ctx = kw.context("node-altair", max_tokens=0)
        relevance = {e.label: e.relevance for e in ctx.entities}
        assert relevance == {"node-altair": "Direct", "Grafana": "Direct",
                             "Kestrel Queue": "Linked"}
