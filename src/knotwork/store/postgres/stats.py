"""BM25's statistics per scope, kept in tables of their own by the writer.

A hit's score reads only its own scope's statistics (as SQLite's indexes per scope do,
``store/sqlite/scoped.py``): a reader of scope A must learn nothing of what scope B holds,
not even through A's own scores. So the counts are per scope:

- ``text_stats(scope, kind, n, tokens)``: the live chunks (kind ``chunk``) or indexed
  entity rows (``entity``) of a scope and the tokens they hold (BM25's N and average length);
- ``chunk_df(lexeme, scope, df)``: how many live chunks of the scope hold the lexeme;
- ``entity_df(lexeme, scope, df, df_label)``: how many indexed entity rows of the scope hold
  it, and hold it in their label (a label-only search's frequency).

Why kept, not counted: a query read each term's document frequency by counting its
postings, O(rows holding it), which for a common word was most of a context answer's time.
A count kept per (lexeme, scope) is one index probe. The writer changes them in ``finish``,
under the lock every writer finishes under (one writer at a time, rows locked in key
order), so two writers never wait on each other's counts in opposite orders. A count that
falls to 0 stays as a row of 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (the schema's migrations read this module, and connection reads them)
    from .connection import Con

TABLES = ("text_stats", "chunk_df", "entity_df")

CREATE = [
    """CREATE TABLE IF NOT EXISTS text_stats(scope TEXT NOT NULL,
        kind TEXT NOT NULL, n BIGINT NOT NULL, tokens BIGINT NOT NULL,
        PRIMARY KEY (scope, kind))""",
    """CREATE TABLE IF NOT EXISTS chunk_df(lexeme TEXT NOT NULL,
        scope TEXT NOT NULL, df BIGINT NOT NULL, PRIMARY KEY (lexeme, scope))""",
    """CREATE TABLE IF NOT EXISTS entity_df(lexeme TEXT NOT NULL,
        scope TEXT NOT NULL, df BIGINT NOT NULL, df_label BIGINT NOT NULL,
        PRIMARY KEY (lexeme, scope))""",
]

_ADD_STATS = (" ON CONFLICT (scope, kind) DO UPDATE SET n = text_stats.n + EXCLUDED.n,"
              " tokens = text_stats.tokens + EXCLUDED.tokens")

# The chunks of ``unnest(?, ?)`` (id, +1 indexed | -1 taken out), counted in or out
CHUNK_DELTA = (
    "WITH x AS (SELECT id, SUM(sign) AS sign FROM unnest(?::bigint[], ?::int[]) AS x(id, sign)"
    " GROUP BY 1 HAVING SUM(sign) <> 0),"
    " y AS (SELECT c.scope, c.tsv, x.sign FROM x JOIN chunks c ON c.id = x.id),"
    " d AS (INSERT INTO chunk_df(lexeme, scope, df) SELECT u.lexeme, y.scope, SUM(y.sign)"
    " FROM y CROSS JOIN LATERAL unnest(y.tsv) u GROUP BY 1, 2 HAVING SUM(y.sign) <> 0"
    " ORDER BY 1, 2 ON CONFLICT (lexeme, scope) DO UPDATE SET df = chunk_df.df + EXCLUDED.df)"
    " INSERT INTO text_stats(scope, kind, n, tokens) SELECT scope, 'chunk', SUM(sign),"
    f" SUM(sign * kw_doclen(tsv)) FROM y GROUP BY 1 ORDER BY 1{_ADD_STATS}")


def entity_delta(sign: int) -> str:
    """The statement that counts the entity rows of ``entity_fts`` with the ids ``?`` in
    (``sign`` 1) or out (-1: before they are deleted)."""
    s = int(sign)
    return (
        "WITH x AS (SELECT scope, tsv, dl FROM entity_fts WHERE entity_id = ANY(?::bigint[])),"
        " d AS (INSERT INTO entity_df(lexeme, scope, df, df_label) SELECT u.lexeme, x.scope,"
        f" {s} * COUNT(*), {s} * COUNT(*) FILTER (WHERE 'A' = ANY(u.weights))"
        " FROM x CROSS JOIN LATERAL unnest(x.tsv) u GROUP BY 1, 2 ORDER BY 1, 2"
        " ON CONFLICT (lexeme, scope) DO UPDATE SET df = entity_df.df + EXCLUDED.df,"
        " df_label = entity_df.df_label + EXCLUDED.df_label)"
        f" INSERT INTO text_stats(scope, kind, n, tokens) SELECT scope, 'entity', {s} * COUNT(*),"
        f" {s} * COALESCE(SUM(dl), 0) FROM x GROUP BY 1 ORDER BY 1{_ADD_STATS}")


RECOUNT_CHUNKS = [
    "DELETE FROM chunk_df",
    "DELETE FROM text_stats WHERE kind = 'chunk'",
    "INSERT INTO chunk_df(lexeme, scope, df) SELECT lexeme, scope, COUNT(*)"
    " FROM chunk_postings GROUP BY 1, 2",
    "INSERT INTO text_stats(scope, kind, n, tokens) SELECT scope, 'chunk', COUNT(*),"
    " COALESCE(SUM(kw_doclen(tsv)), 0) FROM chunks WHERE live GROUP BY 1",
]
"""Count every scope's chunks again from the live chunks and their postings."""

RECOUNT_ENTITIES = [
    "DELETE FROM entity_df",
    "DELETE FROM text_stats WHERE kind = 'entity'",
    "INSERT INTO entity_df(lexeme, scope, df, df_label) SELECT lexeme, scope, COUNT(*),"
    " COUNT(*) FILTER (WHERE tf_label > 0) FROM entity_postings GROUP BY 1, 2",
    "INSERT INTO text_stats(scope, kind, n, tokens) SELECT scope, 'entity', COUNT(*),"
    " COALESCE(SUM(dl), 0) FROM entity_fts GROUP BY 1",
]
"""Count every scope's entity rows again from the entity index and its postings."""


def recount(con: Con, *, chunks: bool = True, entities: bool = True) -> None:
    """Count the statistics again from the indexes as they stand (a rebuild, an import)."""
    for sql in (RECOUNT_CHUNKS if chunks else []) + (RECOUNT_ENTITIES if entities else []):
        con.execute(sql, None)
