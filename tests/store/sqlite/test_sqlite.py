"""What the SQLite backend does beyond the contract: its file is read through a mapping,
it drops the chunks nothing reads by itself, and compact packs past versions' text.

Why these are not in ``tests/store_contract/``: each one looks at the SQLite file itself
(its mmap size, its pages, its ``meta`` row), which another backend does not have.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from knotwork.errors import StoreError
from knotwork.store import TextQuery, open_store
from knotwork.store.sqlite import writer
from knotwork.store.sqlite.connection import MMAP_BYTES

from ...store_contract.drafts import doc, fact, lit


def test_mapped_reads_see_other_writers_commits_and_checkpoints(tmp_path: Path) -> None:
    reader, writer = open_store(str(tmp_path / "s.db")), open_store(str(tmp_path / "s.db"))
    try:
        con = reader._con()  # type: ignore[attr-defined]
        assert con.execute("PRAGMA mmap_size").fetchone()[0] == MMAP_BYTES
        assert reader.reader.stats()["facts"] == 0
        for n in range(1, 4):
            with writer.write(actor="test") as w:
                w.apply("default", doc(f"n{n}.md", [fact("r", lit(str(n)), 1)], body="x" * 5000))
            # pages move from the log into the mapped file; the map must show them
            writer._con().execute("PRAGMA wal_checkpoint(TRUNCATE)")  # type: ignore[attr-defined]
            assert reader.reader.stats()["facts"] == n
        with writer.write(actor="test") as w:
            w.delete("default", "n1.md")
        writer._con().execute("PRAGMA wal_checkpoint(TRUNCATE)")  # type: ignore[attr-defined]
        assert reader.reader.stats()["facts"] == 2
    finally:
        reader.close()
        writer.close()


def test_a_bulk_opener_defers_syncing_to_make_durable(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    store = open_store(path)
    try:
        opener = store.opener(bulk=True)
        assert opener is not None
        bulk, plain = opener(), store.opener()()  # type: ignore[misc]
        level = "PRAGMA synchronous"
        assert store._con().execute(level).fetchone()[0] == 2  # type: ignore[attr-defined]
        assert plain._con().execute(level).fetchone()[0] == 2  # type: ignore[attr-defined]
        assert bulk._con().execute(level).fetchone()[0] == 1  # type: ignore[attr-defined]
        with bulk.write(actor="test") as w:
            w.apply("default", doc("a.md", [fact("r", lit("1"), 1)]))
        assert Path(path + "-wal").stat().st_size > 0
        store.make_durable()  # syncs the log the bulk commit left unsynced
        assert store.reader.stats()["facts"] == 1
        for s in (bulk, plain):
            s.close()
        store._con().execute("PRAGMA wal_checkpoint(TRUNCATE)")  # type: ignore[attr-defined]
        store.make_durable()
    finally:
        store.close()
    assert open_store(":memory:").opener(bulk=True) is None


def test_uncited_chunks_of_past_versions_go_once_as_many_as_the_live_ones_retired(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writer, "COMPACT_MIN", 0)  # the live chunks alone set the pace
    store = open_store(str(tmp_path / "s.db"))

    def save(path: str, body: str) -> int:
        with store.write(actor="test") as w:
            w.apply("default", doc(path, [fact("role", lit("engineer"), 1)], body=body))
        [hit] = store.reader.search_chunks(TextQuery((body.split()[0],)), limit=5)
        return hit.id

    try:
        first = save("a.md", "alpha one")
        save("b.md", "beta")  # two live chunks: two retired ones start a compaction
        second = save("a.md", "gamma two")
        assert store.reader.chunks([first])  # one retired: kept for now
        third = save("a.md", "delta three")  # the second retired: both past chunks go
        assert store.reader.chunks([first, second]) == {}
        assert store.reader.chunks([third])
        assert any(e.action == "compact" for e in store.reader.events(limit=None))
        save("a.md", "epsilon four")  # the count started again
        assert store.reader.chunks([third])
    finally:
        store.close()


def test_compact_packs_past_versions_and_vacuum_gives_the_room_back(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "s.db"))
    con = store._con()  # type: ignore[attr-defined]

    def packed() -> list[bool]:
        return [r[0] is not None for r in con.execute(
            "SELECT text_z FROM versions ORDER BY id")]

    try:
        for i in range(40):
            with store.write(actor="test") as w:
                w.apply("default", doc("a.md", [fact("role", lit("engineer"), 1)],
                                       body=f"draft {i}\n" + "words of the note " * 300))
        assert not any(packed())  # saves do not pay for it
        texts = [store.reader.version_text(v) for v, in con.execute("SELECT id FROM versions")]
        with store.write(actor="test") as w:  # a part of them
            assert w.pack_versions(limit=10) == (10, 10)
        first = store.compact(actor="test")
        assert first["versions_packed"] == 29
        size = first["store_bytes"]
        assert packed() == [True] * 39 + [False]  # never the current one
        assert [store.reader.version_text(v)
                for v, in con.execute("SELECT id FROM versions")] == texts
        after = store.compact(actor="test", vacuum=True)
        assert after["versions_packed"] == 0
        assert after["store_bytes"] < size * 0.6
    finally:
        store.close()


def test_schema_newer_than_code_is_refused(tmp_path: Path) -> None:
    """SQLite's own: the schema version is a row of its ``meta`` table, set here by hand."""
    path = str(tmp_path / "s.db")
    open_store(path).close()
    con = sqlite3.connect(path)
    con.execute("UPDATE meta SET value='999' WHERE key='schema_version'")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="newer"):
        open_store(path)


def test_opening_a_new_store_another_process_is_creating_waits_for_it(
        tmp_path: Path) -> None:
    """Another connection holds the write lock of the new file while it is still in
    rollback mode (a second ingest creating the same store): SQLite refuses the change to
    WAL at once, without its busy handler; the open waits instead, then finds WAL."""
    import threading
    import time

    path = tmp_path / "new.db"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    other.execute("CREATE TABLE scratch(a)")
    threading.Timer(0.3, lambda: other.execute("COMMIT")).start()
    t = time.perf_counter()
    store = open_store(str(path))
    try:
        assert time.perf_counter() - t >= 0.25  # it waited for the other's commit
        assert store.reader.stats()["documents"] == 0
    finally:
        store.close()
        other.close()
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    check.close()
