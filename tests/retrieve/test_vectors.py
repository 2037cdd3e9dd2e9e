"""Vectors in the store: incremental embedding, no vector left behind, the manifest check."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from knotwork import ConfigError, Knotwork
from knotwork.retrieve.vectors import VectorIndex

VAULT = Path(__file__).resolve().parents[2] / "examples" / "vault"


@pytest.fixture
def kw(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("KNOTWORK_EMBEDDER", "hash")
    vault = tmp_path / "vault"
    shutil.copytree(VAULT, vault)
    k = Knotwork.open(vault, db=str(tmp_path / "s.db"))
    yield k
    k.close()


def vector_rows(kw: Knotwork) -> int:
    con = kw.store._con()  # type: ignore[attr-defined]
    return int(con.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])


def test_ingest_embeds_every_chunk_once(kw: Knotwork) -> None:
    kw.ingest()
    stats = kw.stats()
    assert stats["embedded_chunks"] == stats["chunks"] > 0
    assert kw.embedding_status() == "complete"
    assert kw.embed()["embedded"] == 0  # nothing pending: nothing embedded twice


def test_edit_reembeds_only_changed_chunks_and_delete_leaves_no_vector(kw: Knotwork) -> None:
    kw.ingest(embed=False)
    first = kw.embed()
    assert first["embedded"] == kw.stats()["chunks"]
    note = kw.vault / "services" / "Traefik.md"  # type: ignore[operator]
    note.write_text(note.read_text(encoding="utf-8") + "\n## Notes\n\nA brand new section.\n",
                    encoding="utf-8")
    kw.ingest(only=["services/Traefik.md"], embed=False)
    assert kw.embedding_status().startswith("partial")
    assert kw.embed()["embedded"] == 1  # the new section only
    before = vector_rows(kw)
    chunks = kw.store.reader.chunks  # noqa: F841 - readability of the next lines
    hits = {h.path for h in kw.search("reverse proxy", mode="vector", k=50)}
    assert "services/Traefik.md" in hits
    (kw.vault / "services" / "Traefik.md").unlink()  # type: ignore[operator]
    kw.ingest(only=["services/Traefik.md"])
    assert vector_rows(kw) < before
    assert "services/Traefik.md" not in {h.path for h in kw.search("traefik", mode="vector",
                                                                    k=200)}
    assert kw.embedding_status() == "complete"


def test_hybrid_and_semantic_relevance(kw: Knotwork) -> None:
    kw.ingest()
    hybrid = kw.search("Traefik routing", mode="hybrid", k=5)
    assert hybrid and hybrid[0].path.startswith("services/")
    ctx = kw.context("traefikk", max_tokens=0)  # a typo: no full-text hit at all
    assert ctx.summary.embedding_status == "complete"
    assert ctx.entities and all(e.relevance in ("Semantic", "Linked") for e in ctx.entities)
    assert ctx.summary.semantic_hits >= 1
    both = kw.context("traefik", max_tokens=0)
    assert both.entities[0].relevance == "Direct"
    assert any("vector" in w for w in both.entities[0].why)


def test_manifest_mismatch_is_refused_with_both_names(kw: Knotwork, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    kw.ingest()
    monkeypatch.setenv("KNOTWORK_EMBEDDER", "openai:nomic-embed-text")
    other = Knotwork.open(kw.vault, db=kw.store.path)
    try:
        with pytest.raises(ConfigError) as err:
            other.search("traefik", mode="vector")
        assert "hash" in str(err.value) and "openai:nomic-embed-text" in str(err.value)
        assert "knotwork reindex --embeddings" in str(err.value)
        assert other.search("traefik", mode="bm25")  # text search is unaffected
    finally:
        other.close()


def test_no_embedder_still_answers_and_says_so(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    shutil.copytree(VAULT, vault)
    with Knotwork.open(vault, db=str(tmp_path / "n.db"), embedder="none") as k:
        k.ingest()
        ctx = k.context("traefik")
        assert ctx.entities and ctx.summary.embedding_status == "none"


def test_vector_index_matches_brute_force_through_adds_and_removes() -> None:
    rng = np.random.default_rng(1)
    data = rng.normal(size=(3000, 16)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)

    class FakeLog:  # a store's vector log, in memory: the index only reads it
        def __init__(self) -> None:
            self.log: list[tuple[int, int, int]] = []

        def vector_changes(self, since: int, *, limit: int = 200_000):  # type: ignore[no-untyped-def]
            rows = [r for r in self.log if r[0] > since][:limit]
            return (rows[-1][0] if rows else since), [(c, a) for _, c, a in rows]

        def vectors(self, ids):  # type: ignore[no-untyped-def]
            return [(i, data[i].tobytes()) for i in ids]

    log, idx, live = FakeLog(), VectorIndex(16), set()
    seq = 0
    for step in range(6):
        for i in range(step * 500, step * 500 + 500):
            seq += 1
            log.log.append((seq, i, 1))
            live.add(i)
        for i in list(live)[:: 3 + step]:
            seq += 1
            log.log.append((seq, i, 0))
            live.discard(i)
        idx.refresh(log)  # type: ignore[arg-type]
        q = data[step]
        ids = sorted(live)
        brute = sorted(ids, key=lambda i: -float(data[i] @ q))[:10]
        assert [c for c, _ in idx.search(q, 10)] == brute
        assert len(idx) == len(live)
