"""The SQL behind what makes trust inspectable, on PostgreSQL: the review queue, API
tokens, entity lookup within scopes, and export/import of every row.

Two mixins the backend's ``Reader`` and ``Writer`` take in (as the SQLite backend's
``trust.py``). Exported rows have the SQLite store's columns, in its order, so an export
of either backend imports into the other; the columns only this backend has (each row's
``scope`` where SQLite's table has none, the ``tsvector``) are left out, and an import
derives them again (``rebuild_indexes``).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from ...types import FactRow
from ..records import ReviewFilter, TokenRecord
from . import stats
from .connection import Con, Transaction
from .schema import COUNTS

# each exported table's columns, as the SQLite store's (``store/sqlite/trust.py``)
EXPORT_COLUMNS: dict[str, tuple[str, ...]] = {
    "meta": ("key", "value"),
    "documents": ("id", "scope", "path", "source_kind", "title", "doc_type", "version_id",
                  "content_hash", "size", "mtime_ns", "created_at", "updated_at",
                  "deleted_at", "checked_ns", "warnings", "extraction"),
    "versions": ("id", "document_id", "path", "content_hash", "text", "recorded_at", "actor",
                 "text_z"),
    "chunks": ("id", "version_id", "document_id", "ord", "heading", "context", "text",
               "line_start", "line_end", "text_hash", "live", "retired_at"),
    "entities": ("id", "key", "kind", "scope", "iri", "label", "name_key", "document_id",
                 "resolved_id", "created_at", "orphan", "indexed_at"),
    "names": ("key", "document_id", "entity_id", "kind", "text", "rank", "path",
              "recorded_at"),
    "facts": ("id", "scope", "fact_key", "subject_id", "predicate", "object_id", "value",
              "datatype", "qualifiers", "valid_from", "valid_to", "confidence", "trust",
              "review", "document_id", "version_id", "chunk_id", "line_start", "line_end",
              "supporting_text", "extractor", "extractor_version", "actor", "recorded_at",
              "retracted_at", "retract_reason"),
    "events": ("id", "at", "actor", "action", "scope", "document_id", "fact_id", "reason",
               "detail"),
    "tokens": ("id", "name", "secret_hash", "scopes", "read_only", "created_at",
               "revoked_at"),
    "names_past": ("key", "document_id", "entity_id", "kind", "text", "rank", "path",
                   "recorded_at", "retracted_at"),
    "entity_past": ("id", "entity_id", "label", "aliases", "literals", "recorded_at",
                    "retired_at"),
}
_ORDER = {"meta": "key", "names": "document_id, key, kind",
          "names_past": "document_id, key, kind, recorded_at, retracted_at"}
# meta keys that describe derived state, which an import leaves to the new store
_DERIVED_META = ("schema_version", "live_chunks", "retired_chunks", "embedder", "names_gen",
                 "commits", *COUNTS)
_FLAGS = frozenset({"live", "embedded", "orphan", "read_only"})
# the scope of rows whose exported table has none, from the row they belong to
_SCOPE_FROM = (
    "UPDATE versions t SET scope = d.scope FROM documents d"
    " WHERE d.id = t.document_id AND t.scope = ''",
    "UPDATE chunks t SET scope = d.scope FROM documents d"
    " WHERE d.id = t.document_id AND t.scope = ''",
    "UPDATE names t SET scope = d.scope FROM documents d"
    " WHERE d.id = t.document_id AND t.scope = ''",
    "UPDATE names_past t SET scope = d.scope FROM documents d"
    " WHERE d.id = t.document_id AND t.scope = ''",
    "UPDATE entity_past t SET scope = e.scope FROM entities e"
    " WHERE e.id = t.entity_id AND t.scope = ''",
    # a retired chunk of an export made before the time was kept: it stood until the next
    # version of its document, else its delete (as migration 4 fills it)
    "UPDATE chunks SET retired_at = COALESCE((SELECT MIN(v.recorded_at) FROM versions v"
    " WHERE v.document_id = chunks.document_id AND v.scope = chunks.scope"
    " AND v.id > chunks.version_id), (SELECT COALESCE(d.deleted_at, d.updated_at)"
    " FROM documents d WHERE d.id = chunks.document_id AND d.scope = chunks.scope))"
    " WHERE NOT live AND retired_at IS NULL",
)
ENTITY_COUNTS = ("entity_rows", "entity_tokens")
_IDS = ("documents", "versions", "chunks", "entities", "facts", "events", "tokens",
        "entity_past")
_TOKEN = "SELECT id, name, secret_hash, scopes, read_only, created_at, revoked_at FROM tokens"


def _token(r: Sequence[Any]) -> TokenRecord:
    return TokenRecord(id=int(r[0]), name=str(r[1]), secret_hash=str(r[2]),
                       scopes=tuple(json.loads(r[3])), read_only=bool(r[4]),
                       created_at=str(r[5]), revoked_at=r[6])


# ``find_entity`` in some scopes as one SQL expression, its inputs spelled by the caller
# (parameters, or a row's columns): by iri (a live note first), by a name a note of those
# scopes declares (Obsidian's order), by a bare name of those scopes, then by label.
# COALESCE reads its subqueries in order and stops at the first that finds one.
FIND = (
    "COALESCE((SELECT COALESCE(e.resolved_id, e.id) FROM entities e"
    " LEFT JOIN documents d ON d.id = e.document_id AND d.scope = e.scope"
    " WHERE e.iri = {text} AND e.scope = ANY({scopes})"
    " ORDER BY (d.deleted_at IS NULL AND d.id IS NOT NULL) DESC, e.kind = 'note' DESC,"
    " e.id DESC LIMIT 1),"
    " (SELECT n.entity_id FROM names n"
    " JOIN documents d ON d.id = n.document_id AND d.scope = n.scope"
    " WHERE n.key = {key} AND d.scope = ANY({scopes})"
    " ORDER BY n.rank, length(n.path), n.path LIMIT 1),"
    " (SELECT COALESCE(resolved_id, id) FROM entities"
    " WHERE name_key = {key} AND scope = ANY({scopes}) ORDER BY id LIMIT 1),"
    " (SELECT COALESCE(resolved_id, id) FROM entities"
    " WHERE lower(label) = lower({text}) AND scope = ANY({scopes}) ORDER BY id LIMIT 1))")


class TrustReads:
    """Reads of the review queue, tokens and exports (a mixin of ``Reader``)."""

    con: Con

    facts_by_id: Callable[[Sequence[int]], list[FactRow]]  # Reader's

    def review_queue(self, which: ReviewFilter, *, limit: int = 100, offset: int = 0
                     ) -> tuple[int, list[FactRow]]:
        """The live facts ``which`` selects, oldest first: (how many in all, one page)."""
        where = ["retracted_at IS NULL", "review = ANY(?)"]
        args: list[object] = [list(which.statuses)]
        for col, values in (("trust", which.trusts), ("scope", which.scopes),
                            ("subject_id", which.subject_ids), ("id", which.fact_ids)):
            if values:
                where.append(f"{col} = ANY(?)")
                args.append(list(values))
        if which.predicate:
            where.append("predicate = ?")
            args.append(which.predicate)
        cond = " AND ".join(where)
        row = self.con.execute(f"SELECT COUNT(*) FROM facts WHERE {cond}", args).fetchone()
        ids = [int(r[0]) for r in self.con.execute(
            f"SELECT id FROM facts WHERE {cond} ORDER BY id LIMIT ? OFFSET ?",
            [*args, int(limit), int(offset)])]
        return int(row[0]) if row else 0, self.facts_by_id(ids)

    def find_in_scopes(self, text: str, key: str, scopes: Sequence[str]) -> int | None:
        """``find_entity`` among the entities of ``scopes`` only: by iri (a live note
        first), by a name a note of those scopes declares (Obsidian's order), by a bare
        name of those scopes, then by label."""
        row = self.con.execute(f"SELECT {FIND.format(text='?', key='?', scopes='?')}",
                               [text, list(scopes), key, list(scopes), key, list(scopes),
                                text, list(scopes)]).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def tokens(self) -> list[TokenRecord]:
        return [_token(r) for r in self.con.execute(f"{_TOKEN} ORDER BY id")]

    def token_by_hash(self, secret_hash: str) -> TokenRecord | None:
        row = self.con.execute(f"{_TOKEN} WHERE secret_hash = ?", (secret_hash,)).fetchone()
        return _token(row) if row else None

    def export_rows(self) -> Iterator[tuple[str, dict[str, object]]]:
        """Every row of the exported tables, as (table, column -> value), by table then
        key. A version's packed text is given back whole (``text``), never compressed."""
        for table, cols in EXPORT_COLUMNS.items():
            order = _ORDER.get(table, "id")
            for values in self.con.execute(
                    f"SELECT {', '.join(cols)} FROM {table} ORDER BY {order}", None):
                row = dict(zip(cols, values, strict=True))
                if table == "meta" and row["key"] in _DERIVED_META:
                    continue
                if table == "versions":
                    packed = row.pop("text_z")
                    if isinstance(packed, bytes | memoryview):
                        row["text"] = zlib.decompress(bytes(packed)).decode("utf-8")
                yield table, row


class TrustWrites:
    """Review decisions, tokens and imports (a mixin of ``Writer``)."""

    con: Con
    tx: Transaction
    actor: str

    _event: Callable[..., None]  # Writer's
    _refresh_entity_fts: Callable[[Iterable[int]], None]  # Writer's
    _keep_index_times: bool  # Writer's

    def set_review(self, fact_id: int, status: str, *, reason: str | None) -> bool:
        """Record a review decision on a fact (the writer's actor is the reviewer).

        A rejected literal leaves its subject's search index; an approved one returns."""
        row = self.con.execute("SELECT scope, subject_id, review FROM facts WHERE id = ?"
                               " FOR UPDATE", (fact_id,)).fetchone()
        if row is None:
            return False
        self.con.execute("UPDATE facts SET review = ? WHERE id = ?", (status, fact_id))
        self._refresh_entity_fts({int(row[1])})
        self._event("review", scope=row[0], fact_id=fact_id, reason=reason,
                    detail={"status": status, "was": row[2]})
        return True

    def create_token(self, name: str, secret_hash: str, *, scopes: Sequence[str],
                     read_only: bool, created_at: str) -> int:
        row = self.con.execute(
            "INSERT INTO tokens(name, secret_hash, scopes, read_only, created_at)"
            " VALUES(?,?,?,?,?) RETURNING id",
            (name, secret_hash, json.dumps(list(scopes)), bool(read_only), created_at)
        ).fetchone()
        tid = int(row[0])
        self._event("token_create", detail={"token": tid, "name": name,
                                            "scopes": list(scopes), "read_only": read_only})
        return tid

    def revoke_token(self, token_id: int, *, at: str) -> bool:
        n = self.con.execute("UPDATE tokens SET revoked_at = ? WHERE id = ?"
                             " AND revoked_at IS NULL", (at, token_id)).rowcount
        if n:
            self._event("token_revoke", detail={"token": token_id})
        return bool(n)

    def log_event(self, action: str, *, scope: str | None = None, reason: str | None = None,
                  detail: Mapping[str, object] | None = None) -> None:
        self._event(action, scope=scope, reason=reason,
                    detail=dict(detail) if detail else None)

    def import_rows(self, table: str, rows: Sequence[Mapping[str, object]]) -> int:
        """Insert exported rows as they are (ids included); the store must hold none of
        that table's rows yet. The scope of a row whose table was exported without one,
        and the indexes, come from ``rebuild_indexes``."""
        if not rows:
            return 0
        if table not in EXPORT_COLUMNS:
            raise ValueError(f"unknown table {table!r}")
        cols = list(rows[0])
        unknown = [c for c in cols if c not in EXPORT_COLUMNS[table]]
        if unknown:
            raise ValueError(f"table {table!r} has no column {unknown[0]!r}")
        values = [tuple(bool(r[c]) if c in _FLAGS and r[c] is not None else r[c] for c in cols)
                  for r in rows]
        if table == "meta":
            self.con.executemany("INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key)"
                                 " DO UPDATE SET value = EXCLUDED.value",
                                 [(r[cols.index("key")], r[cols.index("value")])
                                  for r in values])
            return len(rows)
        if "scope" not in cols and table in ("versions", "chunks", "names"):
            cols.append("scope")
            values = [(*v, "") for v in values]
        self.con.executemany(
            f"INSERT INTO {table}({', '.join(cols)}) VALUES({', '.join('?' * len(cols))})",
            values)
        return len(rows)

    def rebuild_indexes(self) -> None:
        """Derive what the imported rows imply: each row's scope, the chunk postings and
        BM25's counts, the entity index of every entity, and the id sequences past the
        imported ids (nothing to find again for mentions: the facts came)."""
        from .writer import POSTINGS_INSERT  # (the writer takes this mixin in)

        for sql in _SCOPE_FROM:
            self.con.execute(sql, None)
        self.con.execute("DELETE FROM chunk_postings", None)
        ids = [r[0] for r in self.con.execute("SELECT id FROM chunks WHERE live ORDER BY id")]
        got = self.con.execute(POSTINGS_INSERT, (ids,)).fetchone()
        self._set_meta_counts({"live_chunks": len(ids),
                               "live_chunk_tokens": int(got[0]) if got else 0})
        self.con.execute("DELETE FROM entity_fts", None)
        self.con.execute("DELETE FROM entity_postings", None)
        self.con.execute("DELETE FROM entity_initials", None)
        self._set_meta_counts(dict.fromkeys(ENTITY_COUNTS, 0))
        stats.recount(self.con)  # the entities' counted again as ``finish`` indexes them
        self._keep_index_times = True  # the imported rows say when each text was indexed
        self._refresh_entity_fts(int(r[0]) for r in self.con.execute(
            "SELECT id FROM entities WHERE resolved_id IS NULL OR kind = 'name'"))
        for table in _IDS:
            self.con.execute(
                f"SELECT setval('{table}_id_seq', GREATEST((SELECT MAX(id) FROM {table}), 1),"
                f" (SELECT MAX(id) FROM {table}) IS NOT NULL)", None)

    def _set_meta_counts(self, counts: Mapping[str, int]) -> None:
        self.con.executemany("INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key)"
                             " DO UPDATE SET value = EXCLUDED.value",
                             [(k, str(int(v))) for k, v in counts.items()])
