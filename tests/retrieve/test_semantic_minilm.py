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
