"""A store of two scopes written before full-text statistics were kept per scope (SQLite
schema 18: one set of full-text indexes for every scope; PostgreSQL schema 4: counts of the
whole store) opens, is upgraded in place (no file is read again), passes its check, and
answers a scope's queries as a store of that scope alone does; ``check --repair`` rebuilds
the per-scope structures to the same answers."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from knotwork import Knotwork

from ..frontends.conftest import write_vault
from ..store_contract import pg

A = {"kestrel.md": "# Kestrel\n\nThe kestrel hovers over the meadow hunting voles.\n",
     "vole.md": "# Vole\n\nA vole is a small rodent of the meadow. Kestrels eat voles.\n",
     "barn.md": "# Barn\n\nAn old barn by the meadow, where a kestrel nests.\n",
     "pond.md": "# Pond\n\nFrogs in the pond.\n"}
B = {f"b{i}.md": f"# Ledger {i}\n\n" + "kestrel meadow audit ledger " * (i + 2) for i in range(5)}
QUERIES = ("kestrel", "meadow voles", "barn kestrel", "ledger")


def _answers(db: str) -> list[object]:
    with Knotwork.open(None, db=db, embedder="none") as kw:
        out: list[object] = []
        for q in QUERIES:
            out.append([(h.path, round(h.score, 9)) for h in kw.search(q, k=10, scopes=["a"])])
            out.append([(e.label, e.relevance, round(e.score, 9)) for e in
                        kw.context(q, max_tokens=0, scopes=["a"]).entities])
        return out


def _ok(db: str, *, repair: bool = False) -> None:
    with Knotwork.open(None, db=db, embedder="none") as kw:
        report = kw.check(repair=repair)
        assert report.ok, report.as_dict()


def _downgrade_sqlite(db: str) -> None:
    """Every scope's rows back in the one set of indexes, the per-scope ones dropped."""
    con = sqlite3.connect(db)
    others = [n for (n,) in con.execute("SELECT n FROM fts_scopes WHERE n > 0")]
    assert others, "the store must have more than one scope's indexes"
    for n in others:
        con.execute(f"INSERT INTO entity_fts(rowid, label, aliases, literals)"
                    f" SELECT rowid, label, aliases, literals FROM entity_fts_s{n}")
        for kind in ("chunk_fts", "chunk_past_fts", "entity_fts", "entity_past_fts"):
            con.execute(f"DROP TABLE {kind}_s{n}")
    for kind, live in (("chunk_fts", 1), ("chunk_past_fts", 0)):
        con.execute(f"INSERT INTO {kind}({kind}) VALUES('delete-all')")
        con.execute(f"INSERT INTO {kind}(rowid, context, text) SELECT id, context, text"
                    f" FROM chunks WHERE live = {live}")
    con.execute("INSERT INTO entity_past_fts(entity_past_fts) VALUES('delete-all')")
    con.execute("INSERT INTO entity_past_fts(rowid, label, aliases, literals)"
                " SELECT id, label, aliases, literals FROM entity_past")
    con.execute("DROP TABLE fts_scopes")
    con.execute("UPDATE meta SET value = '18' WHERE key = 'schema_version'")
    con.commit()
    con.close()


def _downgrade_postgres(db: str) -> None:
    import psycopg

    with psycopg.connect(db, autocommit=True) as con:
        for table in ("text_stats", "chunk_df", "entity_df"):
            con.execute(f"DROP TABLE {table}".encode())
        con.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")


def test_a_store_of_two_scopes_is_upgraded_in_place(tmp_path: Path, db: str) -> None:
    a, b = write_vault(tmp_path / "a", A), write_vault(tmp_path / "b", B)
    alone = str(tmp_path / "alone.db") if not db.startswith("postgresql") else pg.fresh_url()
    try:
        with Knotwork.open(None, db=alone, embedder="none") as kw:
            kw.ingest(a, scope="a")
        with Knotwork.open(None, db=db, embedder="none") as kw:
            kw.ingest(b, scope="b")  # b's rows first: b's indexes are the base ones
            kw.ingest(a, scope="a")
        expected = _answers(alone)
        assert expected[0], "the queries must find something"
        assert _answers(db) == expected
        (_downgrade_postgres if db.startswith("postgresql") else _downgrade_sqlite)(db)
        assert _answers(db) == expected  # upgraded as it opens
        _ok(db)
        _ok(db, repair=True)
        assert _answers(db) == expected
    finally:
        if alone.startswith("postgresql"):
            pg.drop(alone)
