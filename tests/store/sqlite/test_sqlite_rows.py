"""The SQLite writer's rows, column by column: what a document prepared before the write
transaction becomes, and the full-text indexes written once at its end.

Why not in ``tests/store_contract/``: these read SQLite's tables directly, to prove that
the writer's fast paths (a document prepared outside the transaction, the FTS rows written
in one batch) leave exactly the rows the plain path does — a property of this backend's
layout, not of the contract.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from knotwork.store.sqlite import SQLiteStore
from knotwork.types import (
    SELF,
    ChunkDraft,
    FactDraft,
    LiteralValue,
    NameRef,
    ParsedDocument,
    Span,
)

from ...store_contract.drafts import doc, fact, link, lit

# times differ run to run: only whether each is set is compared
_STAMPS = {"created_at", "updated_at", "recorded_at", "at", "retracted_at", "deleted_at",
           "indexed_at", "retired_at"}


def _rows(path: str) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table but the full-text shadow tables (their terms instead)."""
    con = sqlite3.connect(path)
    try:
        tables = [r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%fts%'")]
        out = {}
        for t in tables:
            cols = [f"{r[1]} IS NULL" if r[1] in _STAMPS else r[1]
                    for r in con.execute(f"PRAGMA table_info({t})")]
            out[t] = con.execute(f"SELECT {', '.join(cols)} FROM {t} ORDER BY 1").fetchall()
        for t in ("chunk_fts", "entity_fts"):
            out[t] = _fts_terms(con, t)
        return out
    finally:
        con.close()


def _fts_terms(con: sqlite3.Connection, table: str) -> list[tuple[object, ...]]:
    """What a full-text index holds (every term at every position), checked intact."""
    con.execute(f"INSERT INTO {table}({table}) VALUES('integrity-check')")
    con.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.v_{table}"
                f" USING fts5vocab(main, {table}, 'instance')")
    return con.execute(f"SELECT term, doc, col, offset FROM temp.v_{table}"
                       " ORDER BY doc, col, offset").fetchall()


def _docs() -> list[ParsedDocument]:
    a = doc("a.md", [fact("uses", link("Kafka"), 2), fact("port", lit("9092", "integer"), 3),
                     fact("uses", link("kafka"), 4),  # the same fact again: written once
                     fact("owner", link("Ana"), 5, subject=link("Kafka")),
                     fact("same_as", SELF, 6, subject=link("A Alias"))],
            body="# A\nuses kafka\nport 9092\nkafka again\nowner\nself", aliases=("A Alias",))
    b = doc("b.md", [fact("depends_on", link("a"), 1)], body="# B\ndepends on a")
    return [a, b]


def test_prepared_and_parsed_documents_write_the_same_rows(tmp_path: Path) -> None:
    paths = [str(tmp_path / "parsed.db"), str(tmp_path / "prepared.db")]
    for i, path in enumerate(paths):
        store = SQLiteStore(path)
        with store.write(actor="test") as w:
            for d in _docs():
                w.apply("default", store.prepare(d) if i else d)
        # an edit, then a delete, each in its own transaction
        edited = doc("a.md", [fact("uses", link("Kafka"), 3)], body="# A\n\nuses kafka")
        with store.write(actor="test") as w:
            w.apply("default", store.prepare(edited) if i else edited)
        with store.write(actor="test") as w:
            w.delete("default", "b.md")
        store.close()
    assert _rows(paths[0]) == _rows(paths[1])


def _key(*parts: str) -> str:
    return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=16).hexdigest()


def test_a_fact_row_holds_every_column_as_drafted(tmp_path: Path) -> None:
    d = doc("n.md", [], body="front\n# One\nbody one\n# Two\nbody two")
    chunks = (ChunkDraft(0, ("One",), "# One\nbody one", Span(2, 3)),
              ChunkDraft(1, ("Two",), "# Two\nbody two", Span(4, 5)))
    drafts = (
        FactDraft(SELF, "status", LiteralValue("draft"), Span(1, 1), "status: draft", "fm"),
        FactDraft(SELF, "uses", NameRef("kafka", "Kafka"), Span(5, 5), "uses [[Kafka]]", "x",
                  extractor_version="2", confidence=0.75, trust="extracted",
                  valid_from="2024-01-01", valid_to="2024-12-31",
                  qualifiers=(("role", "broker"), ("env", "prod"))),
        FactDraft(NameRef("kafka", "Kafka"), "part_of", SELF, Span(3, 3), "part", "y"),
    )
    store = SQLiteStore(str(tmp_path / "s.db"))
    with store.write(actor="me") as w:
        w.apply("default", store.prepare(replace(d, chunks=chunks, facts=drafts)))
    con = store._con()
    doc_id, version_id = con.execute("SELECT id, version_id FROM documents").fetchone()
    note = con.execute("SELECT id FROM entities WHERE key = ?", (f"doc:{doc_id}",)).fetchone()[0]
    kafka = con.execute("SELECT id FROM entities WHERE key = 'name:kafka'").fetchone()[0]
    c1, c2 = [r[0] for r in con.execute("SELECT id FROM chunks ORDER BY ord")]
    rows = con.execute(
        "SELECT scope, fact_key, subject_id, predicate, object_id, value, datatype, qualifiers,"
        " valid_from, valid_to, confidence, trust, review, document_id, version_id, chunk_id,"
        " line_start, line_end, supporting_text, extractor, extractor_version, actor,"
        " retracted_at FROM facts ORDER BY id").fetchall()
    me = f"doc:{doc_id}"
    assert rows == [
        ("default", _key(me, "status", "lit:string:draft", "", ""), note, "status", None,
         "draft", "string", None, None, None, 1.0, "stated", "approved", doc_id, version_id,
         None, 1, 1, "status: draft", "fm", "1", "me", None),
        ("default", _key(me, "uses", "name:kafka", "2024-01-01", "2024-12-31", "role=broker",
                         "env=prod"), note, "uses", kafka, "Kafka", None,
         json.dumps({"role": "broker", "env": "prod"}), "2024-01-01", "2024-12-31", 0.75,
         "extracted", "unreviewed", doc_id, version_id, c2, 5, 5, "uses [[Kafka]]", "x", "2",
         "me", None),
        ("default", _key("name:kafka", "part_of", me, "", ""), kafka, "part_of", note, "", None,
         None, None, None, 1.0, "stated", "approved", doc_id, version_id, c1, 3, 3, "part",
         "y", "1", "me", None),
    ]
    store.close()


def test_full_text_indexes_stay_intact_through_rollbacks_and_rewrites(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))
    with store.write(actor="test") as w:
        w.apply("default", doc("a.md", [fact("r", link("One"), 1)], body="alpha one"))
        with pytest.raises(RuntimeError), w.savepoint():
            w.apply("default", doc("a.md", [fact("r", link("Two"), 1)], body="alpha two"))
            raise RuntimeError("crash mid-document")
        w.apply("default", doc("b.md", [fact("r", link("Three"), 1)], body="beta three"))
        w.apply("default", doc("a.md", [], body="alpha four"))
        w.apply("default", doc("c.md", [fact("r", link("One"), 1)], body="gamma"))
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
    # a name stays while a live fact refers to it (c.md's link to One); Three's only link
    # went with b.md, and the rolled-back Two is gone
    assert labels == {"One"}
    store.close()


def test_null_columns_hold_null_not_its_stand_in(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))
    body = "front\n# One\nbody one"
    chunks = (ChunkDraft(0, ("One",), "# One\nbody one", Span(2, 3)),)
    first = replace(doc("a.md", [], body=body), chunks=chunks, facts=(
        FactDraft(SELF, "status", LiteralValue("draft"), Span(3, 3), "s", "x"),
        FactDraft(SELF, "uses", NameRef("kafka", "Kafka"), Span(3, 3), "u", "x")))
    # the edit moves both facts to line 1, before the first chunk: no chunk to cite
    edited = replace(first, content_hash="2", facts=tuple(
        replace(f, span=Span(1, 1)) for f in first.facts))
    for d in (first, edited):
        with store.write(actor="test") as w:
            w.apply("default", d)
    with store.write(actor="test") as w:
        w.assert_fact("default", FactDraft(NameRef("kafka", "Kafka"), "port",
                                           LiteralValue("9092", "integer"), Span(0, 0), "",
                                           "api"))
        w.assert_fact("default", FactDraft(NameRef("kafka", "Kafka"), "runs_on",
                                           NameRef("host", "Host"), Span(0, 0), "", "api"))
    con = store._con()
    types = con.execute(
        "SELECT typeof(object_id), typeof(datatype), typeof(qualifiers), typeof(valid_from),"
        " typeof(valid_to), typeof(chunk_id) FROM facts ORDER BY id").fetchall()
    assert types == [("null", "text", "null", "null", "null", "null"),
                     ("integer", "null", "null", "null", "null", "null"),
                     ("null", "text", "null", "null", "null", "null"),
                     ("integer", "null", "null", "null", "null", "null")]
    store.close()


def test_upgrading_a_store_takes_orphaned_names_out_of_the_index(tmp_path: Path) -> None:
    # a store written before names could be orphaned: kota is linked no more, yet indexed
    path = str(tmp_path / "s.db")
    store = SQLiteStore(path)
    with store.write(actor="test") as w:
        w.apply("default", doc("a.md", [fact("r", link("kota"), 1)], body="alpha"))
        w.apply("default", doc("b.md", [fact("r", link("vega"), 1)], body="beta"))
    with store.write(actor="test") as w:
        w.apply("default", doc("a.md", [], body="alpha again"))
    con = store._con()
    kota = con.execute("SELECT id, label FROM entities WHERE key = 'name:kota'").fetchone()
    con.execute("INSERT INTO entity_fts(rowid, label, aliases, literals) VALUES(?,?,'','')",
                kota)
    con.execute("ALTER TABLE entities DROP COLUMN orphan")
    con.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")
    con.commit()
    store.close()
    store = SQLiteStore(path)  # migrates to the current schema
    con = store._con()
    indexed = {r[0] for r in con.execute(
        "SELECT label FROM entity_fts WHERE entity_fts MATCH 'kota OR vega'")}
    assert indexed == {"vega"}
    assert con.execute("SELECT orphan FROM entities WHERE key = 'name:kota'").fetchone() == (1,)
    store.close()


def test_upgrading_a_store_indexes_the_initials_of_its_labels(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    store = SQLiteStore(path)
    with store.write(actor="test") as w:
        w.apply("default", doc("hpa.md", [fact("uses", link("Custom Resource Definition"), 1)],
                               title="Horizontal Pod Autoscaler", body="scales"))
    con = store._con()
    con.execute("DROP TABLE entity_initials")  # as a store written before migration 15
    con.execute("UPDATE meta SET value = '14' WHERE key = 'schema_version'")
    con.commit()
    store.close()
    store = SQLiteStore(path)  # migrates to the current schema
    assert [s for _, s in store.reader.spelled_by(["hpa", "crd"])] == ["hpa"]
    store.close()
