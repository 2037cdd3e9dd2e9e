"""End to end on both backends: a vault ingested, edited and deleted from through the
facade, asked for context and searched (text, vector, hybrid); the two backends answer the
same. PostgreSQL runs on the test server (``tests/store_contract/pg.py``)."""

from __future__ import annotations

import shutil
from pathlib import Path

from knotwork import Knotwork

from ..store_contract import pg

COUNTS = ("documents", "tombstones", "versions", "chunks", "entities", "facts",
          "retracted_facts", "events", "embedded_chunks")
VAULT = Path(__file__).resolve().parents[2] / "examples" / "vault"


def _vault(tmp_path: Path) -> Path:
    dest = tmp_path / "vault"
    shutil.copytree(VAULT, dest)
    return dest


def _answers(kw: Knotwork) -> dict[str, object]:
    """What a user sees of a store: counts, context and the three searches."""
    ctx = kw.context("traefik", max_tokens=0)
    return {
        "stats": tuple(getattr(kw.stats(), k) for k in COUNTS),
        "context": [(e.label, e.relevance, sorted(f.predicate for f in e.facts))
                    for e in ctx.entities],
        "bm25": [(h.path, h.line_start) for h in kw.search("queue kestrel", k=5)],
        "vector": [h.path for h in kw.search("queue kestrel", k=5, mode="vector")],
        "hybrid": [h.path for h in kw.search("queue kestrel", k=5, mode="hybrid")],
    }


def test_ingest_edit_delete_context_and_search(db: str, tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    with Knotwork.open(vault, db=db, embedder="hash") as kw:
        report = kw.ingest()
        assert report.added > 10 and not report.errors
        ctx = kw.context("traefik", max_tokens=0)
        assert ctx.entities and ctx.entities[0].label.lower() == "traefik"
        assert ctx.evidence
        hits = kw.search("traefik", k=3)
        assert hits and "traefik" in hits[0].text.lower()
        assert kw.search("traefik", k=3, mode="vector")
        assert kw.search("traefik", k=3, mode="hybrid")
        note = next(vault.rglob("Traefik.md"))
        before = {f.predicate for f in kw.facts(note.stem)}
        note.write_text(note.read_text() + "\nowner:: [[Zanzibar Team]]\n")
        again = kw.ingest()
        assert again.updated == 1 and again.facts_added >= 1
        assert {f.predicate for f in kw.facts(note.stem)} >= before
        assert any(f.value_label == "Zanzibar Team" for f in kw.facts(note.stem))
        assert kw.stats().versions == kw.stats().documents + 1
        note.unlink()
        gone = kw.ingest()
        assert gone.deleted == 1 and kw.stats().tombstones == 1
        assert kw.history(note.stem).total_facts > 0  # what it said, kept
        assert not [h for h in kw.search("traefik", k=10) if h.path.endswith("Traefik.md")]


def test_both_backends_give_the_same_answers(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    url = pg.fresh_url()
    try:
        answers = []
        for db in (str(tmp_path / "store.db"), url):
            with Knotwork.open(vault, db=db, embedder="hash") as kw:
                kw.ingest()
                answers.append(_answers(kw))
        assert answers[0] == answers[1]
    finally:
        pg.drop(url)
