"""Raw rows of a PostgreSQL store, for copying it to another backend (``store.migrate``).

Rows come in by ``COPY`` inside one transaction; ``finish`` fills the columns only this
backend has (each row's scope, from its document or entity), makes the derived state
(postings, BM25's counts, HNSW indexes), moves the id sequences past the copied ids and
commits.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast

import numpy as np

from . import stats
from .connection import map_driver_errors
from .schema import COUNTS
from .writer import ENTITY_POSTINGS_INSERT, POSTINGS_INSERT

_FLAGS = frozenset({"live", "embedded", "orphan", "read_only"})
# tables whose scope is filled in by ``finish`` (their rows arrive without one)
_SCOPE_FROM = [
    "UPDATE versions t SET scope = d.scope FROM documents d WHERE d.id = t.document_id",
    "UPDATE chunks t SET scope = d.scope FROM documents d WHERE d.id = t.document_id",
    "UPDATE names t SET scope = d.scope FROM documents d WHERE d.id = t.document_id",
    "UPDATE mention_queue t SET scope = d.scope FROM documents d WHERE d.id = t.document_id",
    "UPDATE name_changes t SET scope = d.scope FROM documents d WHERE d.id = t.document_id",
    "UPDATE entity_fts t SET scope = e.scope FROM entities e WHERE e.id = t.entity_id",
    "UPDATE entity_initials t SET scope = e.scope FROM entities e WHERE e.id = t.entity_id",
    "UPDATE vector_log t SET scope = c.scope FROM chunks c WHERE c.id = t.chunk_id",
    "UPDATE names_past t SET scope = d.scope FROM documents d WHERE d.id = t.document_id",
    "UPDATE entity_past t SET scope = e.scope FROM entities e WHERE e.id = t.entity_id",
]
_NO_SCOPE = ("versions", "chunks", "names", "mention_queue", "name_changes", "entity_fts",
             "entity_initials", "vector_log", "names_past", "entity_past")
_IDS = {"documents": "id", "versions": "id", "chunks": "id", "entities": "id", "facts": "id",
        "events": "id", "name_changes": "id", "vector_log": "seq", "tokens": "id",
        "entity_past": "id"}


def _vector_text(blob: bytes) -> str:
    return "[" + ",".join(repr(float(x)) for x in np.frombuffer(blob, dtype="<f4")) + "]"


class PostgresTables:
    def __init__(self, store: Any) -> None:
        self.store = store
        self._con: Any = None

    def read(self, table: str, columns: Sequence[str], key: Sequence[str]
             ) -> Iterator[tuple[object, ...]]:
        vec = [i for i, c in enumerate(columns) if c == "vector"]
        for row in self.store._con.execute(
                f"SELECT {', '.join(columns)} FROM {table} ORDER BY {', '.join(key)}", None):
            if vec:
                row = tuple(np.asarray(v.to_numpy(), dtype="<f4").tobytes() if i in vec else v
                            for i, v in enumerate(row))
            yield row

    def _begin(self) -> Any:
        if self._con is None:
            with map_driver_errors("cannot reach the store"):
                self._con = self.store._pool.getconn()
                self._con.execute("BEGIN")
        return self._con

    def write(self, table: str, columns: Sequence[str],
              rows: Sequence[tuple[object, ...]]) -> None:
        con = self._begin()
        cols = list(columns)
        out: list[tuple[object, ...]] = list(rows)
        if table == "meta":
            with map_driver_errors("cannot write meta"), con.cursor() as cur:
                cur.executemany("INSERT INTO meta(key, value) VALUES(%s, %s) ON CONFLICT(key)"
                                " DO UPDATE SET value = EXCLUDED.value", out)
            return
        flags = [i for i, c in enumerate(cols) if c in _FLAGS]
        if flags:
            out = [tuple(bool(v) if i in flags else v for i, v in enumerate(r)) for r in out]
        if table == "embeddings":
            cols.append("dim")
            out = [(h, _vector_text(cast(bytes, v)), len(cast(bytes, v)) // 4) for h, v in out]
        if table in _NO_SCOPE:
            cols.append("scope")
            out = [(*r, "") for r in out]
        with map_driver_errors(f"cannot write {table}"), con.cursor() as cur:
            with cur.copy(f"COPY {table} ({', '.join(cols)}) FROM STDIN".encode()) as copy:
                for r in out:
                    copy.write_row(r)

    def is_empty(self) -> bool:
        row = self.store._con.execute(
            "SELECT EXISTS(SELECT 1 FROM documents) OR EXISTS(SELECT 1 FROM entities)"
            " OR EXISTS(SELECT 1 FROM facts) OR EXISTS(SELECT 1 FROM events)"
            " OR EXISTS(SELECT 1 FROM embeddings)", None).fetchone()
        return not row[0]

    def finish(self) -> None:
        con = self._begin()
        try:
            with map_driver_errors("cannot finish the copy"):
                for sql in _SCOPE_FROM:
                    con.execute(sql.encode())
                con.execute("UPDATE name_changes SET scope = 'default' WHERE scope = ''")
                con.execute("UPDATE vector_log SET scope = 'default' WHERE scope = ''")
                got = con.execute(POSTINGS_INSERT.replace("?", "%s"), (
                    [r[0] for r in con.execute("SELECT id FROM chunks WHERE live")],)).fetchone()
                con.execute(ENTITY_POSTINGS_INSERT.replace("?", "%s"), (
                    [r[0] for r in con.execute("SELECT entity_id FROM entity_fts")],))
                counts = {
                    "live_chunks": con.execute("SELECT COUNT(*) FROM chunks WHERE live"
                                               ).fetchone()[0],
                    "live_chunk_tokens": got[0] if got else 0,
                    "entity_rows": con.execute("SELECT COUNT(*) FROM entity_fts").fetchone()[0],
                    "entity_tokens": con.execute("SELECT COALESCE(SUM(dl), 0) FROM entity_fts"
                                                 ).fetchone()[0]}
                assert set(counts) == set(COUNTS)
                for sql in (*stats.RECOUNT_CHUNKS, *stats.RECOUNT_ENTITIES):
                    con.execute(sql.encode())
                con.cursor().executemany(
                    "INSERT INTO meta(key, value) VALUES(%s, %s) ON CONFLICT(key)"
                    " DO UPDATE SET value = EXCLUDED.value",
                    [(k, str(int(v))) for k, v in counts.items()])
                for table, col in _IDS.items():
                    seq = f"{table}_{col}_seq"
                    con.execute(f"SELECT setval('{seq}', GREATEST((SELECT MAX({col}) FROM"
                                f" {table}), 1), (SELECT MAX({col}) FROM {table}) IS NOT NULL)"
                                .encode())
                for (dim,) in con.execute("SELECT DISTINCT dim FROM embeddings").fetchall():
                    con.execute(f"CREATE INDEX IF NOT EXISTS embeddings_hnsw_{int(dim)} ON"
                                f" embeddings USING hnsw ((vector::vector({int(dim)}))"
                                f" vector_cosine_ops) WHERE dim = {int(dim)}".encode())
                con.execute("COMMIT")
        except BaseException:
            if not con.closed:
                con.execute("ROLLBACK")
            raise
        finally:
            self.store._pool.putconn(con)
            self._con = None
