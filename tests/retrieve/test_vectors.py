"""Vectors in the store: incremental embedding, no vector left behind, the manifest check,
and the mirror file a new process starts from."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from knotwork import ConfigError, Knotwork
from knotwork.retrieve import vectors as vectors_module
from knotwork.retrieve.ann import LogMark
from knotwork.retrieve.mirror import HEADER_SIZE, read_mirror, write_mirror
from knotwork.retrieve.vectors import VectorIndex
from knotwork.store import Store, open_store
from knotwork.types import ParsedDocument

from .notes import chunk_note

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


def test_each_text_gets_its_own_vector_across_windows_and_batches(kw: Knotwork) -> None:
    # pending chunks are read a window at a time and embedded shortest first in batches:
    # small ones here, so that several windows and batches run, out of order
    kw.ingest(embed=False)
    report = kw.embed(batch=3, window=7)
    assert report["embedded"] == kw.stats()["chunks"]
    emb = kw.embedder()
    assert emb is not None
    con = kw.store._con()  # type: ignore[attr-defined]
    rows = con.execute("SELECT c.context, c.text, e.vector FROM chunks c JOIN embeddings e"
                       " ON e.text_hash = c.text_hash WHERE c.live = 1").fetchall()
    assert len(rows) == report["embedded"]
    want = emb.embed([f"{context}\n{text}" for context, text, _ in rows])
    got = np.stack([np.frombuffer(v, dtype=np.float32) for *_, v in rows])
    assert np.array_equal(got, want)


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

        def meta(self, key: str) -> None:
            return None

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


# ------------------------------------------------------------ the mirror file (<store>.vectors)

MDIM = 16


def unit_vector(text: str, salt: str = "") -> np.ndarray:
    rng = np.random.default_rng(int(hashlib.sha256((salt + text).encode()).hexdigest()[:8], 16))
    v = rng.normal(size=MDIM)
    return (v / np.linalg.norm(v)).astype(np.float32)


def note(name: str, chunks: int = 10) -> ParsedDocument:
    return chunk_note(name, chunks)


def embed_all(store: Store, salt: str = "", only: str | None = None) -> None:
    """Embed pending chunks; ``salt`` changes the vectors of all, or of chunk ``only``."""
    with store.write(actor="test") as w:
        while items := store.reader.pending_chunks(500):
            texts = [(h, t.split("\n", 1)[1]) for h, t in items]
            w.put_vectors([(h, unit_vector(t, salt if only in (None, t) else "").tobytes())
                           for h, t in texts])


def vector_store(path: Path, docs: int = 40, salt: str = "", only: str | None = None
                 ) -> Store:
    store = open_store(str(path), synchronous="NORMAL")
    with store.write(actor="test") as w:
        for i in range(docs):
            w.apply("default", note(f"d{i}"))
    embed_all(store, salt, only)
    return store


def mirror_index(store: Store, path: Path | None) -> VectorIndex:
    idx = VectorIndex(MDIM, mirror_path=path, mirror_min=1)
    idx.refresh(store.reader)
    return idx


QUERIES = [unit_vector(f"query {i}") for i in range(12)]


def answers(idx: VectorIndex) -> list[object]:
    """Every query's full ranking with scores, and the fusion statistics."""
    out: list[object] = [idx.search(q, len(idx) + 5) for q in QUERIES]
    return out + [idx.search_with_stats(q, 10)[1] for q in QUERIES]


@pytest.fixture
def vstore(tmp_path: Path):  # type: ignore[no-untyped-def]
    s = vector_store(tmp_path / "m.db")
    yield s
    s.close()


def test_a_new_index_from_the_mirror_file_answers_as_one_that_read_the_store(
        vstore: Store, tmp_path: Path) -> None:
    path = tmp_path / "m.db.vectors"
    first = mirror_index(vstore, path)
    assert first.mirror_info["rejected"].startswith("missing")  # type: ignore[union-attr]
    assert first.save_mirror() and path.exists()
    assert not first.save_mirror()  # nothing new since
    second = mirror_index(vstore, path)
    assert second.mirror_info["state"] == "loaded" and len(second) == len(first) == 400
    assert not second._mat.flags.writeable  # mapped read-only, never written
    assert answers(second) == answers(first) == answers(mirror_index(vstore, None))


def test_edits_and_deletes_after_the_file_are_caught_up_and_deleted_chunks_never_return(
        vstore: Store, tmp_path: Path) -> None:
    path = tmp_path / "m.db.vectors"
    mirror_index(vstore, path).save_mirror()
    gone = {c for c, _ in mirror_index(vstore, None).search(unit_vector("d3 chunk 4"), 400)
            if vstore.reader.chunks([c])[c].text.startswith(("d3 ", "d5 "))}
    assert len(gone) == 20
    with vstore.write(actor="test") as w:
        w.delete("default", "d3.md")
        w.apply("default", note("d5", 4), force=True)  # edited: 10 chunks become 4
        w.apply("default", note("new", 6))
    embed_all(vstore)
    loaded = mirror_index(vstore, path)
    assert loaded.mirror_info["state"] == "loaded"
    scratch = mirror_index(vstore, None)
    assert len(loaded) == len(scratch) == 400 - 20 + 4 + 6
    assert answers(loaded) == answers(scratch)
    # d5's first four chunks are cut as before: they stay, with their ids and vectors
    kept = gone & {c for c, _ in scratch.search(unit_vector("d3 chunk 4"), 1000)}
    assert len(kept) == 4
    assert not (gone - kept) & {c for c, _ in loaded.search(unit_vector("d3 chunk 4"), 1000)}
    # the loaded rows were never written: the edit moved the index to new arrays
    assert loaded._mat.flags.writeable and read_mirror(path, MDIM) is not None


def test_a_mirror_catches_up_past_dropped_chunks_of_past_versions(
        vstore: Store, tmp_path: Path) -> None:
    """Chunks dropped by ``compact`` (past versions no fact cites) left entries in the log
    a mirror catches up through: it ends as an index read from the store would."""
    path = tmp_path / "m.db.vectors"
    mirror_index(vstore, path).save_mirror()
    with vstore.write(actor="test") as w:
        w.apply("default", note("d5", 4), force=True)
        w.delete("default", "d3.md")
    embed_all(vstore)
    assert vstore.compact(actor="test")["chunks_removed"] > 0
    loaded = mirror_index(vstore, path)
    scratch = mirror_index(vstore, None)
    assert loaded.mirror_info["state"] == "loaded"
    assert len(loaded) == len(scratch) == 400 - 20 + 4
    assert answers(loaded) == answers(scratch)


def _flip_byte(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["truncated", "flipped row byte", "flipped id byte",
                                    "another store", "another store, one vector differs",
                                    "another dimension", "mark past the log",
                                    "rows differ from the store", "deleted chunk kept"])
def test_a_mirror_file_that_is_not_this_store_is_rejected_and_the_store_read(
        vstore: Store, tmp_path: Path, damage: str) -> None:
    path = tmp_path / "m.db.vectors"
    truth = mirror_index(vstore, path)
    truth.save_mirror()
    size = path.stat().st_size
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[: size - 100])
    elif damage == "flipped row byte":
        _flip_byte(path, HEADER_SIZE + 4 * MDIM * 200 + 5)
    elif damage == "flipped id byte":
        _flip_byte(path, HEADER_SIZE + 4 * MDIM * 400)
    elif damage == "another store":  # same notes, same log, other vectors
        other = vector_store(tmp_path / "other.db", salt="other")
        mirror_index(other, path).save_mirror()
        other.close()
    elif damage == "another store, one vector differs":  # a sample would likely miss it
        other = vector_store(tmp_path / "other.db", salt="other", only="d17 chunk 2")
        mirror_index(other, path).save_mirror()
        other.close()
    elif damage == "another dimension":
        write_mirror(path, dim=2 * MDIM, mark=truth._mark, epoch=truth._epoch,
                     mat=np.zeros((400, 2 * MDIM), np.float32), ids=truth._ids[:400],
                     moments=None)
    elif damage == "mark past the log":
        mark = LogMark(truth._mark.seq + 1, truth._mark.chunk_id, truth._mark.added)
        write_mirror(path, dim=MDIM, mark=mark, epoch=truth._epoch, mat=truth._mat,
                     ids=truth._ids[: truth._size], moments=None)
    elif damage == "rows differ from the store":  # sound file, right mark, wrong vectors
        write_mirror(path, dim=MDIM, mark=truth._mark, epoch=truth._epoch,
                     mat=truth._mat[:, ::-1].copy(), ids=truth._ids[: truth._size],
                     moments=None)
    elif damage == "deleted chunk kept":  # caught by the live count (the sample: ~half the time)
        with vstore.write(actor="test") as w:
            w.delete("default", "d3.md")
        stale = mirror_index(vstore, None)
        ids = np.concatenate([stale._ids[: stale._size], truth._ids[: truth._size]])
        keep = np.unique(ids[ids >= 0], return_index=True)[1]
        mat = np.concatenate([stale._mat[: stale._size], truth._mat[: truth._size]])
        write_mirror(path, dim=MDIM, mark=stale._mark, epoch=truth._epoch,
                     mat=mat[np.sort(keep)], ids=ids[np.sort(keep)], moments=None)
    idx = mirror_index(vstore, path)
    assert idx.mirror_info["state"] == "off", idx.mirror_info
    assert answers(idx) == answers(mirror_index(vstore, None))
    idx.close()  # a search process that had to read the store leaves a good file behind
    again = mirror_index(vstore, path)
    assert again.mirror_info["state"] == "loaded", (again.mirror_info, idx.mirror_info)


def test_the_mirror_file_is_not_read_when_absent_or_not_asked_for(
        vstore: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Path] = []
    real = vectors_module.read_mirror

    def spy(path: Path, dim: int) -> object:
        calls.append(path)
        return real(path, dim)

    monkeypatch.setattr(vectors_module, "read_mirror", spy)
    assert answers(mirror_index(vstore, None)) == answers(
        mirror_index(vstore, tmp_path / "absent.vectors"))
    assert calls == [tmp_path / "absent.vectors"]  # tried once, found nothing
    assert not (tmp_path / "absent.vectors").exists()
    small = VectorIndex(MDIM, mirror_path=tmp_path / "small.vectors")  # default mirror_min
    small.refresh(vstore.reader)
    small.close()
    assert not (tmp_path / "small.vectors").exists()  # 400 vectors: not worth a file


def test_embed_leaves_the_mirror_file_and_the_next_process_uses_it(kw: Knotwork) -> None:
    kw.ingest(embed=False)
    dim = kw.embedder().dim  # type: ignore[union-attr]
    kw.vector_index(dim).mirror_min = 1
    kw.embed()
    path = Path(kw.store.path + ".vectors")
    assert path.exists()
    hits = [(h.path, h.score) for h in kw.search("reverse proxy", mode="vector", k=50)]
    (kw.vault / "services" / "Traefik.md").unlink()  # type: ignore[operator]
    kw.ingest(only=["services/Traefik.md"])
    with Knotwork.open(kw.vault, db=kw.store.path) as other:
        after = [(h.path, h.score) for h in other.search("reverse proxy", mode="vector", k=50)]
        info = other.vector_index(dim).mirror_info
        assert info["state"] == "loaded", info
    assert "services/Traefik.md" in {p for p, _ in hits}
    assert "services/Traefik.md" not in {p for p, _ in after}
    kept = [(p, s) for p, s in hits if p != "services/Traefik.md"]
    assert after[: len(kept)] == kept


def test_prepare_rewrites_the_mirror_file_only_when_it_lags_or_is_unusable(
        vstore: Store, tmp_path: Path) -> None:
    path = tmp_path / "m.db.vectors"
    writer = VectorIndex(MDIM, mirror_path=path, mirror_min=1)
    writer.prepare(vstore.reader, vectors=400)  # no file: read the store, write one
    assert read_mirror(path, MDIM) is not None and writer.mirror_info["saved_vectors"] == 400
    with vstore.write(actor="test") as w:  # a one-note edit and a new note: 12 log rows
        w.apply("default", note("d5", 4), force=True)
        w.apply("default", note("new", 6))
    embed_all(vstore)
    fresh = VectorIndex(MDIM, mirror_path=path, mirror_min=1)
    # d5's last 6 chunks removed (its first 4 are cut as before and stay), 6 added
    assert fresh.mirror_lag(vstore.reader) == 12
    fresh.prepare(vstore.reader, vectors=400)
    assert len(fresh) == 0  # close enough: nothing read, the file left as it was
    _flip_byte(path, 20)  # the header: unusable
    assert fresh.mirror_lag(vstore.reader) is None
    fresh.prepare(vstore.reader, vectors=400)
    loaded = mirror_index(vstore, path)
    assert loaded.mirror_info["state"] == "loaded" and len(loaded) == 400 - 10 + 4 + 6


def test_same_name_with_another_dimension_is_refused(kw: Knotwork) -> None:
    kw.ingest()
    stored = json.loads(kw.store.reader.meta("embedder") or "{}")
    with kw.store.write(actor="test") as w:  # as if a same-named model of another size wrote
        w.set_meta("embedder", json.dumps({**stored, "dim": stored["dim"] * 2}))
    with pytest.raises(ConfigError) as err:
        kw.search("traefik", mode="vector")
    message = str(err.value)
    assert f"{stored['dim'] * 2}-d" in message and f"{stored['dim']}-d" in message
    assert kw.search("traefik", mode="bm25")
