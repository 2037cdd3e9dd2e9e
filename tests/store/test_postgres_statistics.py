"""After a large write the PostgreSQL store's planner statistics and visibility map are
current at once (``Store.refresh_statistics``), not when autovacuum gets to the tables:
until then the planner takes a table a cold ingest just filled for nearly empty, and an
index-only read visits the table too."""

from __future__ import annotations

import time
from pathlib import Path

import psycopg
import pytest

from knotwork import Knotwork
from knotwork.store import open_store
from knotwork.store.postgres.schema import REFERENCE_TABLES, SCOPED_TABLES

from ..store_contract.drafts import doc, fact, lit


def _quiet(url: str) -> None:
    """No autovacuum on the store's tables: what is analyzed, the store analyzed."""
    with psycopg.connect(url, autocommit=True) as con:
        for t in (*SCOPED_TABLES, *REFERENCE_TABLES):
            con.execute(f"ALTER TABLE {t} SET (autovacuum_enabled = off)".encode())


def _analyzed(url: str, what: str = "analyze") -> set[str]:
    with psycopg.connect(url, autocommit=True) as con:
        return {r[0] for r in con.execute(
            "SELECT relname FROM pg_stat_user_tables WHERE schemaname = current_schema()"
            f" AND last_{what} IS NOT NULL".encode())}


def test_refresh_analyzes_the_tables_a_write_filled_and_says_which(url: str) -> None:
    store = open_store(url)
    try:
        _quiet(url)
        with store.write(actor="test") as w:
            for i in range(40):
                w.apply("default", doc(f"n{i}.md", [fact(f"p{j}", lit(f"v{i} {j}"), j + 1)
                                                    for j in range(8)]))
        done: set[str] = set()
        deadline = time.monotonic() + 15  # (the server gathers row counts within a second)
        while "facts" not in done and time.monotonic() < deadline:
            done.update(store.refresh_statistics())
            time.sleep(0.1)
        assert {"facts", "chunks", "entities"} <= done
        assert done <= _analyzed(url) | _analyzed(url, "vacuum")
        assert {"facts", "chunk_postings"} <= _analyzed(url) & _analyzed(url, "vacuum")
        assert "tokens" not in done  # (no row written: nothing to bring forward)
    finally:
        store.close()


def test_refresh_vacuums_an_emptied_work_queue_whatever_the_counts_say(url: str) -> None:
    """A queue a sync has just emptied is vacuumed by the refresh after it even when the
    server has counted too few dead rows for autovacuum's rules (or none yet): every
    edit after would read them."""
    store = open_store(url)
    try:
        _quiet(url)
        with psycopg.connect(url, autocommit=True) as con:
            con.execute("INSERT INTO name_changes(text, key, added, scope)"
                        " VALUES ('a', 'a', 1, 'default')")
            con.execute("VACUUM name_changes")  # (once vacuumed: no longer 'never')
            con.execute("DELETE FROM name_changes")  # (one dead row: under every threshold)
        assert "name_changes" in store.refresh_statistics()
        assert "name_changes" in _analyzed(url, "vacuum")
        assert "name_changes" not in store.refresh_statistics()  # (emptied: no pages left)
    finally:
        store.close()


@pytest.mark.slow
def test_a_large_sync_leaves_the_statistics_current(url: str, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(210):  # a sync of 200 files or more is a large write
        (vault / f"n{i:03}.md").write_text(
            f"# Note {i}\n\nstatus:: open\nowner:: [[n{i + 1:03}]]\n", encoding="utf-8")
    with Knotwork.open(vault, db=url, embedder="none") as kw:
        _quiet(url)
        kw.ingest()
    assert {"facts", "chunks", "entities", "chunk_postings"} <= _analyzed(url)
    assert {"chunk_postings", "entity_postings"} <= _analyzed(url, "vacuum")


def test_sqlite_keeps_no_statistics_to_refresh(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        with store.write(actor="test") as w:
            w.apply("default", doc("a.md", [fact("p", lit("v"), 1)]))
        assert store.refresh_statistics() == []
    finally:
        store.close()
