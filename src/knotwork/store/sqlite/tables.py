"""Raw rows of a SQLite store, for copying it to another backend (``store.migrate``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any, cast

from . import scoped
from .connection import map_driver_errors

_FTS_ROWID = {"entity_fts": "entity_id"}  # a column a table calls rowid


class SQLiteTables:
    """Reads go through the store's connection; the writes make one transaction, from the
    first ``write`` to ``finish``."""

    def __init__(self, store: Any) -> None:
        self.con: sqlite3.Connection = store._con()
        self._open = False

    @staticmethod
    def _names(table: str, columns: Sequence[str]) -> list[str]:
        return ["rowid" if _FTS_ROWID.get(table) == c else c for c in columns]

    def read(self, table: str, columns: Sequence[str], key: Sequence[str]
             ) -> Iterator[tuple[object, ...]]:
        cols = ", ".join(self._names(table, columns))
        order = ", ".join(self._names(table, key))
        with map_driver_errors(f"cannot read {table}"):
            if table == "entity_fts":  # every scope's index (``scoped.py``), as one table
                parts = " UNION ALL ".join(f"SELECT {cols} FROM {t}"
                                           for t in scoped.tables(self.con, table))
                if parts:
                    yield from self.con.execute(f"SELECT * FROM ({parts}) ORDER BY 1")
                return
            yield from self.con.execute(f"SELECT {cols} FROM {table} ORDER BY {order}")

    def write(self, table: str, columns: Sequence[str],
              rows: Sequence[tuple[object, ...]]) -> None:
        with map_driver_errors(f"cannot write {table}"):
            if not self._open:
                self.con.execute("BEGIN IMMEDIATE")
                self._open = True
            if table == "meta":
                self.con.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)",
                                     rows)
                return
            cols = self._names(table, columns)
            if table == "entity_fts":  # into each entity's scope's index
                self._write_entity_fts(cols, rows)
                return
            self.con.executemany(f"INSERT INTO {table}({', '.join(cols)})"
                                 f" VALUES({', '.join('?' * len(cols))})", rows)

    def _write_entity_fts(self, cols: Sequence[str], rows: Sequence[tuple[object, ...]]
                          ) -> None:
        """Rows of the entity index, each in its scope's (the entities are copied first)."""
        scope_of = scoped.scopes_of_entities(self.con, (int(cast(int, r[0])) for r in rows))
        by_scope: dict[str, list[tuple[object, ...]]] = {}
        for r in rows:
            by_scope.setdefault(scope_of.get(int(cast(int, r[0])), "default"), []).append(r)
        for scope in sorted(by_scope):
            t = scoped.table("entity_fts", scoped.ensure(self.con, scope))
            self.con.executemany(f"INSERT INTO {t}({', '.join(cols)})"
                                 f" VALUES({', '.join('?' * len(cols))})", by_scope[scope])

    def is_empty(self) -> bool:
        return not any(self.con.execute(f"SELECT EXISTS(SELECT 1 FROM {t})").fetchone()[0]
                       for t in ("documents", "entities", "facts", "events", "embeddings"))

    def finish(self) -> None:
        """Index the live chunks' text and count them; commit."""
        with map_driver_errors("cannot finish the copy"):
            if not self._open:
                self.con.execute("BEGIN IMMEDIATE")
            # live chunks, and the history indexes (retired chunks, replaced entity
            # texts), each in its scope's indexes; the entity rows came copied
            scoped.reindex(self.con, entities=False)
            self.con.execute("INSERT OR REPLACE INTO meta(key, value) SELECT 'live_chunks',"
                             " CAST(COUNT(*) AS TEXT) FROM chunks WHERE live = 1")
            self.con.execute("COMMIT")
            self._open = False
