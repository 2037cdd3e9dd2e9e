"""The SQL behind what makes trust inspectable: the review queue, API tokens, the audit
log's time window, and export/import of every row.

Kept apart from ``reader.py`` and ``writer.py`` as two mixins their classes take in, so
each concern's SQL sits in one place.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from ...types import FactRow
from ..records import ReviewFilter, TokenRecord
from . import scoped

# The tables an export carries, in an order an import can insert them in. Derived state
# (the full-text indexes, entity initials, vectors and their log, the mention queue) is
# not exported: an import rebuilds the indexes and embeds again.
# when a retired chunk of an export made before the time was kept stopped standing: at
# the next version of its document, else its delete (as migration 18 fills it)
RETIRED_AT = ("COALESCE((SELECT MIN(v.recorded_at) FROM versions v"
              " WHERE v.document_id = chunks.document_id AND v.id > chunks.version_id),"
              " (SELECT COALESCE(d.deleted_at, d.updated_at) FROM documents d"
              " WHERE d.id = chunks.document_id))")
EXPORT_TABLES = ("meta", "documents", "versions", "chunks", "entities", "names", "facts",
                 "events", "tokens", "names_past", "entity_past")
# meta keys that describe derived state, which an import leaves to the new store
_DERIVED_META = ("schema_version", "live_chunks", "retired_chunks", "embedder", "names_gen")


def _token(r: Sequence[Any]) -> TokenRecord:
    return TokenRecord(id=int(r[0]), name=str(r[1]), secret_hash=str(r[2]),
                       scopes=tuple(json.loads(r[3])), read_only=bool(r[4]),
                       created_at=str(r[5]), revoked_at=r[6])


class TrustReads:
    """Reads of the review queue, tokens and exports (a mixin of ``Reader``)."""

    con: sqlite3.Connection

    facts_by_id: Callable[[Sequence[int]], list[FactRow]]  # Reader's

    def review_queue(self, which: ReviewFilter, *, limit: int = 100, offset: int = 0
                     ) -> tuple[int, list[FactRow]]:
        """The live facts ``which`` selects, oldest first: (how many in all, one page)."""
        where = ["retracted_at IS NULL", f"review IN ({_marks(which.statuses)})"]
        args: list[object] = list(which.statuses)
        for col, values in (("trust", which.trusts), ("scope", which.scopes),
                            ("subject_id", which.subject_ids), ("id", which.fact_ids)):
            if values:
                where.append(f"{col} IN ({_marks(values)})")
                args.extend(values)
        if which.predicate:
            where.append("predicate = ?")
            args.append(which.predicate)
        cond = " AND ".join(where)
        total = int(self.con.execute(f"SELECT COUNT(*) FROM facts WHERE {cond}",
                                     args).fetchone()[0])
        ids = [int(r[0]) for r in self.con.execute(
            f"SELECT id FROM facts WHERE {cond} ORDER BY id LIMIT ? OFFSET ?",
            [*args, int(limit), int(offset)])]
        return total, self.facts_by_id(ids)

    def find_in_scopes(self, text: str, key: str, scopes: Sequence[str]) -> int | None:
        """``find_entity`` among the entities of ``scopes`` only: by iri (a live note
        first), by a name a note of those scopes declares (Obsidian's order), by a bare
        name of those scopes, then by label."""
        marks, sc = _marks(scopes), list(scopes)
        queries: list[tuple[str, list[object]]] = [
            ("SELECT COALESCE(e.resolved_id, e.id) FROM entities e"
             " LEFT JOIN documents d ON d.id = e.document_id"
             f" WHERE e.iri=? AND e.scope IN ({marks})"
             " ORDER BY d.deleted_at IS NULL AND d.id IS NOT NULL DESC, e.kind='note' DESC,"
             " e.id DESC LIMIT 1", [text, *sc]),
            ("SELECT n.entity_id FROM names n JOIN documents d ON d.id = n.document_id"
             f" WHERE n.key=? AND d.scope IN ({marks})"
             " ORDER BY n.rank, length(n.path), n.path LIMIT 1", [key, *sc]),
            ("SELECT COALESCE(resolved_id, id) FROM entities"
             f" WHERE name_key=? AND scope IN ({marks}) LIMIT 1", [key, *sc]),
            ("SELECT COALESCE(resolved_id, id) FROM entities"
             f" WHERE label=? COLLATE NOCASE AND scope IN ({marks}) LIMIT 1", [text, *sc]),
        ]
        for sql, args in queries:
            row = self.con.execute(sql, args).fetchone()
            if row:
                return int(row[0])
        return None

    def tokens(self) -> list[TokenRecord]:
        return [_token(r) for r in self.con.execute(
            "SELECT id, name, secret_hash, scopes, read_only, created_at, revoked_at"
            " FROM tokens ORDER BY id")]

    def token_by_hash(self, secret_hash: str) -> TokenRecord | None:
        row = self.con.execute(
            "SELECT id, name, secret_hash, scopes, read_only, created_at, revoked_at"
            " FROM tokens WHERE secret_hash = ?", (secret_hash,)).fetchone()
        return _token(row) if row else None

    def export_rows(self) -> Iterator[tuple[str, dict[str, object]]]:
        """Every row of the exported tables, as (table, column -> value), by table then
        id. A version's packed text is given back whole (``text``), never compressed."""
        import zlib

        for table in EXPORT_TABLES:
            cols = [r[1] for r in self.con.execute(f"PRAGMA table_info({table})")]
            if table == "chunks":
                cols = [c for c in cols if c != "embedded"]
            order = "key" if table == "meta" else "rowid"
            cur = self.con.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY {order}")
            for values in cur:
                row = dict(zip(cols, values, strict=True))
                if table == "meta" and row["key"] in _DERIVED_META:
                    continue
                if table == "versions":
                    packed = row.pop("text_z")
                    if isinstance(packed, bytes):
                        row["text"] = zlib.decompress(packed).decode("utf-8")
                yield table, row


class TrustWrites:
    """Review decisions, tokens and imports (a mixin of ``Writer``)."""

    con: sqlite3.Connection
    actor: str

    _event: Callable[..., None]  # Writer's
    _refresh_entity_fts: Callable[[Iterable[int]], None]  # Writer's
    _keep_index_times: bool  # Writer's

    def create_token(self, name: str, secret_hash: str, *, scopes: Sequence[str],
                     read_only: bool, created_at: str) -> int:
        cur = self.con.execute(
            "INSERT INTO tokens(name, secret_hash, scopes, read_only, created_at)"
            " VALUES(?,?,?,?,?)", (name, secret_hash, json.dumps(list(scopes)),
                                   int(read_only), created_at))
        tid = int(cur.lastrowid or 0)
        self._event("token_create", detail={"token": tid, "name": name,
                                            "scopes": list(scopes), "read_only": read_only})
        return tid

    def revoke_token(self, token_id: int, *, at: str) -> bool:
        cur = self.con.execute("UPDATE tokens SET revoked_at=? WHERE id=? AND revoked_at IS NULL",
                               (at, token_id))
        if cur.rowcount:
            self._event("token_revoke", detail={"token": token_id})
        return bool(cur.rowcount)

    def log_event(self, action: str, *, scope: str | None = None, reason: str | None = None,
                  detail: Mapping[str, object] | None = None) -> None:
        self._event(action, scope=scope, reason=reason,
                    detail=dict(detail) if detail else None)

    def import_rows(self, table: str, rows: Sequence[Mapping[str, object]]) -> int:
        """Insert exported rows as they are (ids included); the store must hold none of
        that table's rows yet. Indexes are rebuilt by ``rebuild_indexes``."""
        if not rows:
            return 0
        if table not in EXPORT_TABLES:
            raise ValueError(f"unknown table {table!r}")
        cols = list(rows[0])
        verb = "INSERT OR REPLACE" if table == "meta" else "INSERT"  # a new store's own keys
        self.con.executemany(
            f"{verb} INTO {table}({', '.join(cols)}) VALUES({', '.join('?' * len(cols))})",
            [tuple(r[c] for c in cols) for r in rows])
        return len(rows)

    def rebuild_indexes(self) -> None:
        """Rebuild what the imported rows imply: the full-text indexes, the entity index
        of every entity, and the mention queue (nothing to find again: the facts came)."""
        # history: when each retired chunk left the live set
        self.con.execute(f"UPDATE chunks SET retired_at = {RETIRED_AT}"
                         " WHERE live = 0 AND retired_at IS NULL")
        # live chunks in the live indexes, the retired ones and replaced entity texts in
        # the history indexes, each in its scope's (``scoped.py``)
        scoped.reindex(self.con)
        self.con.execute(
            "INSERT INTO meta(key, value) SELECT 'live_chunks', COUNT(*) FROM chunks"
            " WHERE live = 1 ON CONFLICT(key) DO UPDATE SET value = excluded.value")
        self._keep_index_times = True  # the imported rows say when each text was indexed
        self._refresh_entity_fts({int(r[0]) for r in self.con.execute(
            "SELECT id FROM entities WHERE resolved_id IS NULL OR kind = 'name'")})


def _marks(items: Sequence[object]) -> str:
    return ",".join("?" * len(items))
