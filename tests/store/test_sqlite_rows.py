"""The SQLite writer's rows: the full-text indexes written once at a transaction's end."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from knotwork.store.sqlite import SQLiteStore

from .conftest import doc, fact, link


def _fts_terms(con: sqlite3.Connection, table: str) -> list[tuple[object, ...]]:
    """What a full-text index holds (every term at every position), checked intact."""
    con.execute(f"INSERT INTO {table}({table}) VALUES('integrity-check')")
    con.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.v_{table}"
                f" USING fts5vocab(main, {table}, 'instance')")
    return con.execute(f"SELECT term, doc, col, offset FROM temp.v_{table}"
                       " ORDER BY doc, col, offset").fetchall()


def test_full_text_indexes_stay_intact_through_rollbacks_and_rewrites(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))
    with store.write(actor="test") as w:
        w.apply("default", doc("a.md", [fact("r", link("One"), 1)], body="alpha one"))
        with pytest.raises(RuntimeError), w.savepoint():
            w.apply("default", doc("a.md", [fact("r", link("Two"), 1)], body="alpha two"))
            raise RuntimeError("crash mid-document")
        w.apply("default", doc("b.md", [fact("r", link("Three"), 1)], body="beta three"))
        w.apply("default", doc("a.md", [], body="alpha four"))
        w.delete("default", "b.md")
    con = store._con()
    assert _fts_terms(con, "chunk_fts")  # integrity-check passed
    assert _fts_terms(con, "entity_fts")
    texts = {r[0] for r in con.execute(
        "SELECT c.text FROM chunk_fts JOIN chunks c ON c.id = chunk_fts.rowid"
        " WHERE chunk_fts MATCH 'alpha OR beta'")}
    assert texts == {"alpha four"}
    labels = {r[0] for r in con.execute(
        "SELECT label FROM entity_fts WHERE entity_fts MATCH 'one OR two OR three'")}
    assert labels == {"One", "Three"}  # name entities stay; the rolled-back one is gone
    store.close()
