"""``knotwork check`` for SQLite: the store's invariants, checked and repaired.

Why not FTS5's own ``integrity-check`` at rank 1: ``chunk_fts`` is an external-content
index over ``chunks``, which also holds past versions' chunks (cited by history) that are
deliberately not indexed, so that check calls a healthy store with history "malformed".
Here the index is compared with the live chunks it must hold, the index's own structure
is checked at rank 0, and a sample of live chunks must be found by their own words.
"""

from __future__ import annotations

import random
import re
import sqlite3
import zlib
from collections.abc import Iterator

from ..integrity import MAX_LISTED, capped, citation_problems
from ..records import Problem, VectorSample
from . import scoped
from .connection import map_driver_errors
from .writer import Writer

_WORD = re.compile(r"[^\W_]{3,}")


def _text(row: tuple[object, object]) -> str:
    text, packed = row
    return zlib.decompress(packed).decode() if isinstance(packed, bytes) else str(text)


def check(con: sqlite3.Connection, *, sample: int = 200) -> list[Problem]:
    """Every invariant, in one read transaction (one committed state of the store)."""
    with map_driver_errors("cannot check the store"):
        began = not con.in_transaction
        if began:
            con.execute("BEGIN")
        try:
            problems = _database(con)
            problems += capped("citations", _citations(con))
            problems += capped("text_index", _text_index(con, sample))
            problems += capped("vector_index", _vectors(con))
            problems += capped("ownership", _ownership(con))
            problems += _mentions(con)
        finally:
            if began:
                con.execute("COMMIT")
        problems += _fts_structure(con)
    return problems


def _database(con: sqlite3.Connection) -> list[Problem]:
    rows = [str(r[0]) for r in con.execute("PRAGMA quick_check")]
    return [] if rows == ["ok"] else [Problem("database", r) for r in rows[:MAX_LISTED]]


def _citations(con: sqlite3.Connection) -> Iterator[str]:
    """Each live fact read from a document cites lines of its version, holding its text."""
    rows = con.execute(
        "SELECT f.id, f.version_id, f.line_start, f.line_end, f.supporting_text,"
        " f.document_id, v.document_id FROM facts f LEFT JOIN versions v ON v.id = f.version_id"
        " WHERE f.retracted_at IS NULL AND f.document_id IS NOT NULL ORDER BY f.version_id")

    def text_of(vid: int) -> str:
        return _text(con.execute("SELECT text, text_z FROM versions WHERE id = ?",
                                 (vid,)).fetchone())

    return citation_problems(rows, text_of)


def _text_index(con: sqlite3.Connection, sample: int) -> Iterator[str]:
    """The chunk indexes hold the live chunks, each once and in its own scope's index
    (``scoped.py``), and nothing else; an entity index holds only its scope's entities."""
    live = {r[0]: r[1] for r in con.execute(
        f"SELECT c.id, {scoped.CHUNK_SCOPE} FROM chunks c WHERE c.live = 1")}
    numbers = dict(scoped.numbers(con))
    indexed: dict[int, str] = {}
    for scope, n in numbers.items():
        for (cid,) in con.execute(f"SELECT id FROM {scoped.table('chunk_fts', n)}_docsize"):
            if cid in indexed:
                yield f"chunk {cid} is in the text indexes of two scopes"
            indexed[cid] = scope
    for cid in sorted(live.keys() - indexed.keys()):
        yield f"live chunk {cid} is not in the text index"
    for cid in sorted(indexed.keys() - live.keys()):
        yield f"the text index holds chunk {cid}, which is not live"
    ids = sorted(live.keys() & indexed.keys())
    for cid in ids:
        if live[cid] != indexed[cid]:
            yield f"live chunk {cid} of scope {live[cid]!r} is in another scope's text index"
    for cid in random.sample(ids, min(sample, len(ids))):
        row = con.execute("SELECT context, text FROM chunks WHERE id = ?", (cid,)).fetchone()
        words = _WORD.findall(f"{row[0]} {row[1]}")
        if not words:
            continue
        word = max(words, key=len).replace('"', "")
        t = scoped.table("chunk_fts", numbers[indexed[cid]])
        hit = con.execute(f"SELECT 1 FROM {t} WHERE {t} MATCH ? AND rowid = ?",
                          (f'"{word}"', cid)).fetchone()
        if hit is None:
            yield f"live chunk {cid} is not found in the text index by its word {word!r}"
    for scope, n in numbers.items():
        for (eid,) in con.execute(
                f"SELECT rowid FROM {scoped.table('entity_fts', n)} WHERE rowid NOT IN"
                " (SELECT id FROM entities WHERE scope = ?)", (scope,)):
            yield f"the entity index of scope {scope!r} holds entity {eid}, not of that scope"


def _fts_structure(con: sqlite3.Connection) -> list[Problem]:
    """FTS5's own check of its index structure (rank 0: not against the content table)."""
    out = []
    for table in (t for kind in ("chunk_fts", "entity_fts") for t in scoped.tables(con, kind)):
        con.execute("SAVEPOINT knotwork_check")
        try:
            con.execute(f"INSERT INTO {table}({table}, rank) VALUES('integrity-check', 0)")
        except sqlite3.DatabaseError as exc:
            out.append(Problem("text_index", f"{table}: {exc}"))
        finally:
            con.execute("ROLLBACK TO knotwork_check")
            con.execute("RELEASE knotwork_check")
    return out


def _vectors(con: sqlite3.Connection) -> Iterator[str]:
    """Every stored vector is a live chunk's; every chunk marked embedded has its vector."""
    for (h,) in con.execute("SELECT text_hash FROM embeddings e WHERE NOT EXISTS (SELECT 1"
                            " FROM chunks c WHERE c.text_hash = e.text_hash AND c.live = 1)"):
        yield f"a vector is stored for text {h[:12]}…, which no live chunk has"
    for (cid,) in con.execute("SELECT id FROM chunks c WHERE live = 1 AND embedded = 1 AND"
                              " NOT EXISTS (SELECT 1 FROM embeddings e"
                              " WHERE e.text_hash = c.text_hash)"):
        yield f"live chunk {cid} is marked embedded but has no vector"


def _ownership(con: sqlite3.Connection) -> Iterator[str]:
    """Nothing live belongs to a deleted document."""
    for fid, path in con.execute(
            "SELECT f.id, d.path FROM facts f JOIN documents d ON d.id = f.document_id"
            " WHERE f.retracted_at IS NULL AND d.deleted_at IS NOT NULL"):
        yield f"live fact #{fid} belongs to the deleted document {path}"
    for cid, path in con.execute(
            "SELECT c.id, d.path FROM chunks c JOIN documents d ON d.id = c.document_id"
            " WHERE c.live = 1 AND d.deleted_at IS NOT NULL"):
        yield f"live chunk {cid} belongs to the deleted document {path}"


def _mentions(con: sqlite3.Connection) -> list[Problem]:
    docs = con.execute("SELECT COUNT(*) FROM mention_queue").fetchone()[0]
    names = con.execute("SELECT COUNT(*) FROM name_changes").fetchone()[0]
    if docs or names:
        return [Problem("mentions", f"mention work is queued: {docs} documents, {names} name"
                        " changes (a sync, or check --repair, finds them)")]
    return []


def vector_sample(con: sqlite3.Connection, n: int) -> list[VectorSample]:
    return [VectorSample(f"{r[0]}\n{r[1]}", bytes(r[2])) for r in con.execute(
        "SELECT c.context, c.text, e.vector FROM chunks c JOIN embeddings e"
        " ON e.text_hash = c.text_hash WHERE c.live = 1 ORDER BY random() LIMIT ?", (n,))]


def rebuild(w: Writer) -> dict[str, int]:
    """Rebuild the derived indexes inside ``w``'s transaction (``Store.rebuild_indexes``)."""
    con = w.con
    with map_driver_errors("cannot rebuild the indexes"):
        chunks = scoped.reindex(con)  # every scope's indexes, the entities' left empty
        ids = [r[0] for r in con.execute("SELECT id FROM entities")]
        w._refresh_entity_fts(ids)  # indexed again from the rows as they stand, in finish
        dropped = con.execute(
            "DELETE FROM embeddings WHERE NOT EXISTS (SELECT 1 FROM chunks c"
            " WHERE c.text_hash = embeddings.text_hash AND c.live = 1)").rowcount
        lost = [r[0] for r in con.execute(
            "SELECT id FROM chunks c WHERE live = 1 AND embedded = 1 AND NOT EXISTS"
            " (SELECT 1 FROM embeddings e WHERE e.text_hash = c.text_hash)")]
        for cid in lost:  # to be embedded again; the change log tells every vector copy
            con.execute("UPDATE chunks SET embedded = 0 WHERE id = ?", (cid,))
            con.execute("INSERT INTO vector_log(chunk_id, added) VALUES(?, 0)", (cid,))
        pending = con.execute("SELECT COUNT(*) FROM chunks WHERE live = 1 AND embedded = 0"
                              ).fetchone()[0]
    return {"chunks_indexed": chunks, "entities_indexed": len(ids),
            "vectors_dropped": dropped, "chunks_to_embed": int(pending)}
