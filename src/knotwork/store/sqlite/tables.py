"""Raw rows of a SQLite store, for copying it to another backend (``store.migrate``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

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
            self.con.executemany(f"INSERT INTO {table}({', '.join(cols)})"
                                 f" VALUES({', '.join('?' * len(cols))})", rows)

    def is_empty(self) -> bool:
        return not any(self.con.execute(f"SELECT EXISTS(SELECT 1 FROM {t})").fetchone()[0]
                       for t in ("documents", "entities", "facts", "events", "embeddings"))

    def finish(self) -> None:
        """Index the live chunks' text and count them; commit."""
        with map_driver_errors("cannot finish the copy"):
            if not self._open:
                self.con.execute("BEGIN IMMEDIATE")
            self.con.execute("INSERT INTO chunk_fts(rowid, context, text)"
                             " SELECT id, context, text FROM chunks WHERE live = 1")
            # the history indexes: retired chunks, replaced entity texts
            self.con.execute("INSERT INTO chunk_past_fts(rowid, context, text)"
                             " SELECT id, context, text FROM chunks WHERE live = 0")
            self.con.execute("INSERT INTO entity_past_fts(rowid, label, aliases, literals)"
                             " SELECT id, label, aliases, literals FROM entity_past")
            self.con.execute("INSERT OR REPLACE INTO meta(key, value) SELECT 'live_chunks',"
                             " CAST(COUNT(*) AS TEXT) FROM chunks WHERE live = 1")
            self.con.execute("COMMIT")
            self._open = False
