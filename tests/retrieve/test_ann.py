"""The HNSW path of the vector index, on a real SQLite store: same hits as exact search,
incremental adds and removes, no deleted chunk ever returned, and a sidecar that is used
only when it matches the store."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from knotwork import Knotwork
from knotwork.retrieve.ann import AnnParams
from knotwork.retrieve.vectors import VectorIndex
from knotwork.store import Store, open_store
from knotwork.types import ParsedDocument

from .notes import chunk_note

DIM = 24
PER_DOC = 10
PARAMS = AnnParams(connectivity=16, expansion_add=64, expansion_search=64)
VAULT = Path(__file__).resolve().parents[2] / "examples" / "vault"


def vector_of(text: str) -> np.ndarray:
    """A unit vector drawn from the text (clustered: 8 latent dims, as embeddings are)."""
    rng = np.random.default_rng(int(hashlib.sha256(text.encode()).hexdigest()[:8], 16))
    v = rng.normal(size=8) @ np.random.default_rng(0).normal(size=(8, DIM))
    v = v + 0.3 * rng.normal(size=DIM)
    return (v / np.linalg.norm(v)).astype(np.float32)


def doc(name: str, chunks: int = PER_DOC) -> ParsedDocument:
    return chunk_note(name, chunks)


def embed_pending(store: Store) -> None:
    with store.write(actor="test") as w:
        while items := store.reader.pending_chunks(500):
            # the text to embed is "<context>\n<chunk text>": vectors follow the chunk text
            w.put_vectors([(h, vector_of(t.split("\n", 1)[1]).tobytes()) for h, t in items])


def make_store(path: Path, docs: int) -> Store:
    store = open_store(str(path), synchronous="NORMAL")
    with store.write(actor="test") as w:
        for i in range(docs):
            w.apply("default", doc(f"d{i}"))
    embed_pending(store)
    return store


def index(store: Store, sidecar: Path | None = None, threshold: int = 500) -> VectorIndex:
    idx = VectorIndex(DIM, ann_threshold=threshold, ann_path=sidecar, ann_params=PARAMS,
                      background=False, threads=1)
    idx.refresh(store.reader)
    return idx


def chunk_ids(store: Store, name: str) -> dict[str, int]:
    """Chunk text → id for one document's live chunks, read from the chunks table."""
    con = store._con()  # type: ignore[attr-defined]  # the test reads ids directly
    return {t: i for i, t in con.execute(
        "SELECT c.id, c.text FROM chunks c JOIN documents d ON d.id = c.document_id"
        " WHERE d.path = ? AND c.live = 1", (f"{name}.md",))}


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    s = make_store(tmp_path / "s.db", 100)  # 1,000 chunk vectors
    yield s
    s.close()


def test_past_the_threshold_the_graph_gives_the_exact_hits(store: Store) -> None:
    small = index(store, threshold=5_000)
    assert not small.uses_ann  # below the threshold: exact
    idx = index(store)
    assert idx.uses_ann and idx.ann_info["source"] == "built"
    rng = np.random.default_rng(3)
    overlap = []
    for _ in range(30):
        q = vector_of(f"d{rng.integers(100)} chunk {rng.integers(PER_DOC)}")
        q = q + 0.05 * rng.normal(size=DIM).astype(np.float32)
        q /= np.linalg.norm(q)
        ann, exact = idx.search(q, 10), idx.search(q, 10, exact=True)
        assert ann[0] == exact[0]
        assert ann[0][1] == pytest.approx(float(q @ vector_of(_text(store, ann[0][0]))), abs=1e-5)
        overlap.append(len({c for c, _ in ann} & {c for c, _ in exact}) / 10)
    assert np.mean(overlap) >= 0.95
    # the fusion statistics come from the moments, equal to the full product's
    _, stats = idx.search_with_stats(q, 10)
    _, want = idx.search_with_stats(q, 10, exact=True)
    assert stats == pytest.approx(want, abs=1e-5)


def _text(store: Store, chunk_id: int) -> str:
    return store.reader.chunks([chunk_id])[chunk_id].text


def test_edits_go_to_the_graph_in_place_and_deleted_chunks_never_return(store: Store) -> None:
    idx = index(store)
    graph = idx._ann
    gone = chunk_ids(store, "d7")
    q = vector_of("d7 chunk 3")
    assert idx.search(q, 1)[0][0] == gone["d7 chunk 3"]
    with store.write(actor="test") as w:
        w.delete("default", "d7.md")
        w.apply("default", doc("fresh", 3))
    embed_pending(store)
    idx.refresh(store.reader)
    assert idx._ann is graph and idx.uses_ann  # applied in place, no rebuild
    for text, cid in gone.items():
        hits = [c for c, _ in idx.search(vector_of(text), 50)]
        assert cid not in hits
    new = chunk_ids(store, "fresh")
    assert idx.search(vector_of("fresh chunk 1"), 1)[0][0] == new["fresh chunk 1"]
    assert len(idx) == len(idx._ann) == 1_000 - PER_DOC + 3


def test_changes_made_while_the_graph_builds_are_applied_when_it_is_installed(
        store: Store) -> None:
    idx = VectorIndex(DIM, ann_threshold=500, ann_params=PARAMS, background=False, threads=1)
    with idx._lock:  # the refresh that starts a build, with the build held back
        idx._drain(store.reader)
        worker = idx._plan_ann(store.reader)
    assert worker is not None
    gone = set(chunk_ids(store, "d5").values())
    with store.write(actor="test") as w:  # the store moves on during the build
        w.delete("default", "d5.md")
        w.apply("default", doc("during", 4))
    embed_pending(store)
    idx.refresh(store.reader)  # the mirror follows; the change waits in the journal
    assert not idx.uses_ann and idx._journal
    worker.run()  # the build ends: snapshot + journal
    assert idx.uses_ann and len(idx._ann) == len(idx) == 1_000 - PER_DOC + 4  # type: ignore[arg-type]
    assert not gone & {c for c, _ in idx.search(vector_of("d5 chunk 1"), 50)}
    assert idx.search(vector_of("during chunk 3"), 1)[0][0] == chunk_ids(
        store, "during")["during chunk 3"]
    q = vector_of("d42 chunk 0")
    assert idx.search_with_stats(q, 5)[1] == pytest.approx(
        idx.search_with_stats(q, 5, exact=True)[1], abs=1e-5)


def test_the_sidecar_is_used_caught_up_and_rejected_when_it_does_not_match(
        store: Store, tmp_path: Path) -> None:
    sidecar = tmp_path / "s.db.usearch"
    first = index(store, sidecar)
    assert sidecar.exists() and first.ann_info["source"] == "built"
    with store.write(actor="test") as w:  # changes the sidecar does not reflect
        w.delete("default", "d3.md")
        w.apply("default", doc("later", 4))
    embed_pending(store)
    second = index(store, sidecar)
    assert second.ann_info["source"] == "sidecar", second.ann_info
    assert second.search(vector_of("later chunk 2"), 1)[0][0] == chunk_ids(
        store, "later")["later chunk 2"]
    d3 = set(chunk_ids_all(store, "d3.md"))
    assert not d3 & {c for c, _ in second.search(vector_of("d3 chunk 0"), 50)}
    q = vector_of("d9 chunk 9")
    exact_stats = second.search_with_stats(q, 5, exact=True)[1]
    assert second.search_with_stats(q, 5)[1] == exact_stats  # no moments yet: exact path
    second.refresh(store.reader)  # a search asked for statistics: the worker computes them
    assert second.search_with_stats(q, 5)[1] == pytest.approx(exact_stats, abs=1e-5)
    assert second._moments is not None

    data = bytearray(sidecar.read_bytes())
    data[-100] ^= 0xFF  # one flipped bit of the body
    sidecar.write_bytes(bytes(data))
    third = index(store, sidecar)
    assert third.ann_info["source"] == "built"
    assert "damaged" in str(third.ann_info["sidecar_rejected"])
    assert index(store, sidecar).ann_info["source"] == "sidecar"  # the rebuild was saved

    sidecar.write_bytes(sidecar.read_bytes()[:5000])  # truncated
    assert index(store, sidecar).ann_info["source"] == "built"

    other = make_store(tmp_path / "other.db", 60)  # another store, its own sidecar
    try:
        shutil.copy(sidecar, tmp_path / "other.db.usearch")
        wrong = index(other, tmp_path / "other.db.usearch")
        assert wrong.ann_info["source"] == "built"
        assert "another store" in str(wrong.ann_info)
    finally:
        other.close()


def test_a_store_made_anew_at_the_same_path_does_not_adopt_the_old_graph(
        tmp_path: Path) -> None:
    """Deleted and re-ingested alike: same log, same vectors, yet another store."""
    path, sidecar = tmp_path / "a.db", tmp_path / "a.db.usearch"
    first = make_store(path, 100)
    assert index(first, sidecar).ann_info["source"] == "built" and sidecar.exists()
    first.close()
    for leftover in tmp_path.glob("a.db*"):
        if leftover != sidecar:
            leftover.unlink()
    again = make_store(path, 100)
    try:
        fresh = index(again, sidecar)
        assert fresh.ann_info["source"] == "built"
        assert "another store" in str(fresh.ann_info["sidecar_rejected"])  # its epoch
        assert index(again, sidecar).ann_info["source"] == "sidecar"  # its own, saved
    finally:
        again.close()


def chunk_ids_all(store: Store, path: str) -> list[int]:
    """Every chunk id a document ever had, live or not."""
    con = store._con()  # type: ignore[attr-defined]
    return [r[0] for r in con.execute(
        "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.path = ?",
        (path,))]


def test_ingest_leaves_a_graph_that_searches_load_and_the_vault_stays_clean(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KNOTWORK_EMBEDDER", "hash")
    vault = tmp_path / "vault"
    shutil.copytree(VAULT, vault)
    before = sorted(p.relative_to(vault) for p in vault.rglob("*"))
    db = tmp_path / "store" / "s.db"
    db.parent.mkdir()
    sidecar = tmp_path / "store" / "s.db.usearch"
    query = "reverse proxy routing"
    with Knotwork.open(vault, db=str(db), ann_threshold=10) as kw:
        kw.ingest()  # embeds, then builds the graph in the foreground and saves it
        assert sidecar.exists()
        dim = kw.embedder().dim  # type: ignore[union-attr]
        hits = kw.search(query, mode="vector", k=5)
        index = kw.vector_index(dim)
        assert index.uses_ann and index.ann_info["source"] == "built"
        q = np.asarray(kw.embedder().embed([query]), dtype=np.float32)[0]  # type: ignore[union-attr]
        assert index.search(q, 5) == index.search(q, 5, exact=True)
        assert kw.search(query, mode="hybrid", k=5)
    note = vault / "services" / "Traefik.md"
    with Knotwork.open(vault, db=str(db), ann_threshold=10) as kw:  # the next process
        note.write_text(note.read_text(encoding="utf-8") + "\n## Zebra\n\nZebra crossings.\n",
                        encoding="utf-8")
        kw.ingest(only=["services/Traefik.md"])
        assert len(kw.vector_index(dim)) == 0  # the sidecar was fresh: no vector was read
        assert [h.path for h in kw.search(query, mode="vector", k=5)] == [h.path for h in hits]
        index = kw.vector_index(dim)
        assert index.uses_ann and index.ann_info["source"] == "sidecar"  # caught up
        assert index.search(q, 5) == index.search(q, 5, exact=True)
        assert kw.search("Zebra crossings", mode="vector", k=1)[0].path == "services/Traefik.md"
    assert sorted(p.relative_to(vault) for p in vault.rglob("*")) == before


def test_the_graph_library_and_the_default_embedder_load_in_either_order() -> None:
    """usearch first, then onnxruntime: this order crashed the interpreter (see ann.py)."""
    code = ("import numpy as np\n"
            "from knotwork.retrieve.ann import AnnIndex, AnnParams\n"
            "AnnIndex(8, AnnParams()).add(np.arange(1, 4), np.eye(3, 8, dtype=np.float32))\n"
            "import onnxruntime\n"
            "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
