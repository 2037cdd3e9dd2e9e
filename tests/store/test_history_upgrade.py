"""A store written before history was kept (SQLite schema 17, PostgreSQL schema 3) opens,
is upgraded, and answers as-of questions of its past: a retired chunk stood until its
document's next version, a name since its note was created. Then it keeps history."""

from __future__ import annotations

import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path

from knotwork import Knotwork
from knotwork.store import record_time

# what each backend's history migration adds, taken away again: a store as written before
BEFORE = {
    "sqlite": ["DROP TABLE chunk_past_fts", "DROP TABLE entity_past_fts",
               "DROP TABLE entity_past", "DROP TABLE names_past",
               "ALTER TABLE chunks DROP COLUMN retired_at",
               "ALTER TABLE names DROP COLUMN recorded_at",
               "ALTER TABLE entities DROP COLUMN indexed_at",
               "UPDATE meta SET value = '17' WHERE key = 'schema_version'"],
    "postgresql": ["DROP TABLE entity_past", "DROP TABLE names_past",
                   "DROP INDEX chunks_tsv_past", "ALTER TABLE chunks DROP COLUMN retired_at",
                   "ALTER TABLE names DROP COLUMN recorded_at",
                   "ALTER TABLE entities DROP COLUMN indexed_at",
                   "UPDATE meta SET value = '3' WHERE key = 'schema_version'"],
}


def _now() -> str:
    time.sleep(0.002)
    t = record_time(datetime.now(UTC))
    time.sleep(0.002)
    return t


def _downgrade(db: str) -> None:
    if db.startswith("postgresql"):
        import psycopg

        with psycopg.connect(db, autocommit=True) as con:
            for sql in BEFORE["postgresql"]:
                con.execute(sql.encode())
        return
    con = sqlite3.connect(db)
    for sql in BEFORE["sqlite"]:
        con.execute(sql)
    con.commit()
    con.close()


def _evidence(kw: Knotwork, q: str, as_of: str | None) -> list[str]:
    return [e.text.strip() for e in kw.context(q, max_tokens=0, as_of=as_of).evidence]


def test_a_store_written_before_history_answers_its_past(tmp_path: Path, db: str) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    note = vault / "a.md"
    note.write_text("# a\n\nThe kestrel nests on the ledge.\n", encoding="utf-8")
    (vault / "b.md").write_text("# b\n\nSee [[Ledge]] for the nest.\n", encoding="utf-8")
    with Knotwork.open(vault, db=db, embedder="none") as kw:
        kw.ingest()
        t1 = _now()
        note.write_text("# a\n\nThe osprey nests on the ledge.\n", encoding="utf-8")
        kw.ingest()
    _downgrade(db)
    with Knotwork.open(vault, db=db, embedder="none") as kw:  # upgraded here
        assert _evidence(kw, "kestrel", t1) == ["# a\n\nThe kestrel nests on the ledge."]
        assert _evidence(kw, "kestrel", None) == []
        assert _evidence(kw, "osprey", t1) == []
        assert _evidence(kw, "osprey", None) == ["# a\n\nThe osprey nests on the ledge."]
        # and from now on it keeps history: an alias taken, then a past answer
        t2 = _now()
        note.write_text("---\naliases: [Ledge]\n---\n# a\n\nThe osprey nests on the ledge.\n",
                        encoding="utf-8")
        kw.ingest()
        then = {e.iri for e in kw.context("ledge", max_tokens=0, as_of=t2).entities}
        now = {e.iri for e in kw.context("ledge", max_tokens=0).entities}
        assert "kw:name/ledge" in then and "kw:name/ledge" not in now
