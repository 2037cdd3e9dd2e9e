"""One set of full-text indexes per scope, so BM25 reads only its own scope's statistics.

FTS5's ``bm25()`` takes the row count, the average row length and each term's document
frequency from the whole table it ranks in, and cannot be given others. One table for every
scope let a reader of scope A score A's rows with B's word counts: a token for A could infer
what B says from A's own scores. So each scope has its own four indexes:

    chunk_fts, chunk_past_fts, entity_fts, entity_past_fts    (scope number 0)
    chunk_fts_s1, chunk_past_fts_s1, entity_fts_s1, ...       (scope number 1), ...

``fts_scopes`` gives each scope its number, handed out in the order scopes are first
indexed. The first scope keeps the base names: a store of one scope has exactly the layout
(and the scores) it had. A query over several scopes asks each scope's index and merges the
hits by score: a federated search, each hit scored as a store of its scope alone scores it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

_TOKENIZE = "tokenize='porter unicode61 remove_diacritics 2'"
# kind -> the columns and content option of its FTS5 table
_KINDS = {
    "chunk_fts": ("context, text", "content='chunks', content_rowid='id', "),
    "chunk_past_fts": ("context, text", "content='chunks', content_rowid='id', "),
    "entity_fts": ("label, aliases, literals", ""),
    "entity_past_fts": ("label, aliases, literals",
                        "content='entity_past', content_rowid='id', "),
}
KINDS = tuple(_KINDS)

REGISTRY = """CREATE TABLE IF NOT EXISTS fts_scopes(scope TEXT PRIMARY KEY,
    n INTEGER NOT NULL UNIQUE)"""

# the scope of a chunk ``c`` (through its document)
CHUNK_SCOPE = "(SELECT d.scope FROM documents d WHERE d.id = c.document_id)"


def table(kind: str, n: int) -> str:
    """The name of scope number ``n``'s index of ``kind``."""
    return kind if n == 0 else f"{kind}_s{n}"


def numbers(con: sqlite3.Connection, scopes: Sequence[str] | None = None
            ) -> list[tuple[str, int]]:
    """(scope, number) of the indexed scopes among ``scopes`` (all when None or empty, as
    every read's scope filter takes it), by number."""
    rows = [(str(s), int(n)) for s, n in con.execute(
        "SELECT scope, n FROM fts_scopes ORDER BY n")]
    if not scopes:
        return rows
    wanted = set(scopes)
    return [(s, n) for s, n in rows if s in wanted]


def tables(con: sqlite3.Connection, kind: str, scopes: Sequence[str] | None = None
           ) -> list[str]:
    """The ``kind`` indexes of the indexed scopes among ``scopes`` (all when None)."""
    return [table(kind, n) for _, n in numbers(con, scopes)]


def ensure(con: sqlite3.Connection, scope: str) -> int:
    """The number of ``scope``, registering it (and making its indexes) when it is new.
    Inside the caller's write transaction: the indexes appear with the rows they hold."""
    row = con.execute("SELECT n FROM fts_scopes WHERE scope = ?", (scope,)).fetchone()
    if row is not None:
        return int(row[0])
    n = int(con.execute("SELECT COALESCE(MAX(n) + 1, 0) FROM fts_scopes").fetchone()[0])
    con.execute("INSERT INTO fts_scopes(scope, n) VALUES(?, ?)", (scope, n))
    for sql in create_statements(n):
        con.execute(sql)
    return n


def create_statements(n: int) -> list[str]:
    """The statements that make scope number ``n``'s indexes (if missing)."""
    return [f"CREATE VIRTUAL TABLE IF NOT EXISTS {table(kind, n)} USING fts5("
            f"{cols}, {content}{_TOKENIZE})" for kind, (cols, content) in _KINDS.items()]


def scopes_of_entities(con: sqlite3.Connection, ids: Iterable[int]) -> dict[int, str]:
    """Each entity's scope (its indexes'), for ``ids``."""
    return _scopes_by_id(con, "SELECT id, scope FROM entities e WHERE e.id", ids)


def scopes_of_chunks(con: sqlite3.Connection, ids: Iterable[int]) -> dict[int, str]:
    """Each chunk's scope (its document's), for ``ids``."""
    return _scopes_by_id(con, f"SELECT c.id, {CHUNK_SCOPE} FROM chunks c WHERE c.id", ids)


def _scopes_by_id(con: sqlite3.Connection, select: str, ids: Iterable[int]
                  ) -> dict[int, str]:
    """(id, scope) rows of ``select`` (ending at its id column) for ``ids``, 500 at a time."""
    out: dict[int, str] = {}
    ids = list(ids)
    for i in range(0, len(ids), 500):
        part = ids[i:i + 500]
        out.update((int(k), str(s)) for k, s in con.execute(
            f"{select} IN ({','.join('?' * len(part))})", part))
    return out


def row_count(con: sqlite3.Connection, kind: str, scopes: Sequence[str]) -> int:
    """How many rows the ``kind`` indexes of ``scopes`` hold: BM25's N, summed."""
    return sum(int(con.execute(f"SELECT COUNT(*) FROM {t}_docsize").fetchone()[0])
               for t in tables(con, kind, scopes))


def reindex(con: sqlite3.Connection, *, entities: bool = True) -> int:
    """Empty every index and fill the chunk ones again from the rows as they stand: live
    chunks, retired chunks and replaced entity texts, each in its scope's index. The entity
    indexes are left empty (``entities``) for the caller to fill; return the live chunks
    indexed. Every scope holding rows is registered first."""
    for (scope,) in con.execute(
            "SELECT scope FROM (SELECT d.scope AS scope, MIN(c.id) AS k FROM chunks c"
            " JOIN documents d ON d.id = c.document_id GROUP BY d.scope"
            " UNION ALL SELECT scope, NULL FROM entities GROUP BY scope)"
            " GROUP BY scope ORDER BY MIN(k) IS NULL, MIN(k), scope").fetchall():
        ensure(con, scope)
    indexed = 0
    for scope, n in numbers(con):
        for kind, live in (("chunk_fts", 1), ("chunk_past_fts", 0)):
            t = table(kind, n)
            con.execute(f"INSERT INTO {t}({t}) VALUES('delete-all')")
            got = con.execute(
                f"INSERT INTO {t}(rowid, context, text) SELECT c.id, c.context, c.text"
                f" FROM chunks c JOIN documents d ON d.id = c.document_id"
                f" WHERE c.live = ? AND d.scope = ? ORDER BY c.id", (live, scope)).rowcount
            indexed += got if live else 0
        t = table("entity_past_fts", n)
        con.execute(f"INSERT INTO {t}({t}) VALUES('delete-all')")
        con.execute(f"INSERT INTO {t}(rowid, label, aliases, literals) SELECT p.id, p.label,"
                    " p.aliases, p.literals FROM entity_past p JOIN entities e"
                    " ON e.id = p.entity_id WHERE e.scope = ? ORDER BY p.id", (scope,))
        if entities:
            con.execute(f"DELETE FROM {table('entity_fts', n)}")
    return indexed


def split(con: sqlite3.Connection) -> None:
    """Give every scope of an existing store its own indexes (migration 19), in place:
    the scope with the most live chunks keeps the base tables, each other scope's rows
    move to indexes of its own. A store of one scope is left as it is."""
    con.execute(REGISTRY)
    if con.execute("SELECT COUNT(*) FROM fts_scopes").fetchone()[0]:
        return  # (split already)
    scopes = [str(r[0]) for r in con.execute(
        "SELECT scope FROM (SELECT d.scope AS scope, SUM(c.live) AS live FROM documents d"
        " LEFT JOIN chunks c ON c.document_id = d.id GROUP BY d.scope"
        " UNION ALL SELECT scope, 0 FROM entities GROUP BY scope)"
        " GROUP BY scope ORDER BY SUM(COALESCE(live, 0)) DESC, scope")]
    for scope in scopes:
        ensure(con, scope)
    if len(scopes) < 2:
        return
    reindex(con, entities=False)
    for scope, n in numbers(con)[1:]:
        t = table("entity_fts", n)
        ids = "(SELECT id FROM entities WHERE scope = ?)"
        con.execute(f"INSERT INTO {t}(rowid, label, aliases, literals) SELECT rowid, label,"
                    f" aliases, literals FROM entity_fts WHERE rowid IN {ids} ORDER BY rowid",
                    (scope,))
        con.execute(f"DELETE FROM entity_fts WHERE rowid IN {ids}", (scope,))
