"""A store part-way through embedding: chunks without a vector are not ranked as if the
vectors had found them dissimilar (``adaptive_sum``'s ``unembedded``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from knotwork import Knotwork
from knotwork.retrieve.adaptive import adaptive_sum

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()


@pytest.fixture
def partial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """300 embedded runbooks, then one note BM25 ranks first, ingested without a vector."""
    monkeypatch.setenv("KNOTWORK_EMBEDDER", "hash")
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(300):
        (vault / f"n{i}.md").write_text(
            f"# Service {i}\n\nThe service restart runbook for {WORDS[i % len(WORDS)]} {i}:"
            " restart the service after a deploy.\n", encoding="utf-8")
    kw = Knotwork.open(vault, db=str(tmp_path / "s.db"))
    kw.ingest()
    (vault / "quokka.md").write_text(
        "# Quokka\n\nService restart: restart the service, then service restart again.\n",
        encoding="utf-8")
    kw.ingest(only=["quokka.md"], embed=False)
    yield kw
    kw.close()


def test_an_unembedded_chunk_keeps_the_place_its_text_earns(partial: Knotwork) -> None:
    assert partial.embedding_status() == "partial 300/301"
    assert partial.search("service restart", mode="bm25", k=3)[0].path == "quokka.md"
    # before: the vector side gave it its lowest z-score, and 300 embedded runbooks that
    # BM25 ranks below it all passed it (out of the first 10 of search and of context)
    assert partial.search("service restart", mode="hybrid", k=3)[0].path == "quokka.md"
    ctx = partial.context("service restart", max_tokens=0)
    assert ctx.entities[0].iri == "kw:note/quokka"
    assert ctx.summary.embedding_status == "partial 300/301"


def test_once_embedded_the_vectors_speak_for_it(partial: Knotwork) -> None:
    assert partial.embed()["embedded"] >= 1
    assert partial.embedding_status() == "complete"
    assert partial.store.reader.unembedded(
        [h.chunk_id for h in partial.search("service restart", mode="bm25", k=50)]) == set()


def test_unembedded_items_take_the_vector_z_at_their_bm25_rank() -> None:
    text = [(1, 9.0), (2, 5.0), (3, 4.0), (4, 1.0)]
    vector = [(5, 0.9), (3, 0.5)]  # 1, 2 and 4 have no vector; 3 has one
    stats = [(0.0, 1.0), (0.0, 0.1)]
    plain = adaptive_sum([text, vector], stats=stats, n=256, bonus=0.0)
    fair = adaptive_sum([text, vector], stats=stats, n=256, bonus=0.0,
                        unembedded={1, 2, 4})
    w = 1.0  # bm25_weight(256) = 16 / √256
    assert fair[1] == pytest.approx(w * 9.0 + 9.0)  # BM25's first: the vectors' first z
    assert fair[2] == pytest.approx(w * 5.0 + 5.0)  # second: the second z
    assert fair[4] == pytest.approx(w * 1.0 + 5.0)  # past the vector run: its lowest
    assert fair[3] == plain[3] and fair[5] == plain[5]  # embedded items as before
    assert plain[1] == pytest.approx(w * 9.0 + 5.0)  # without the rule: the lowest
