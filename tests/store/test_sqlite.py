"""What the SQLite backend does beyond the contract: its file is read through a mapping."""

from __future__ import annotations

from pathlib import Path

from knotwork.store import open_store
from knotwork.store.sqlite.connection import MMAP_BYTES

from .conftest import doc, fact, lit


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
