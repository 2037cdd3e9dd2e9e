"""Copy a store to another backend exactly, and verify it by counts and a checksum.

Every table that holds what the store knows is copied row by row with its ids: documents
and every version of them, chunks (past ones too), entities and names, facts with their
record and retraction times, events, vectors and their log, the mention queue. What a
backend derives from those (its full-text index, BM25's counts, the HNSW index) is made
again on the target. The checksum is over the copied tables' rows in key order, each value
spelled one way whatever the backend (a flag as 0/1, a vector as its float32 bytes), so a
store copied to PostgreSQL and back to SQLite has the checksum it started with.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..errors import StoreError
from . import Store

# table -> (its key columns, in checksum order; the columns copied)
TABLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "meta": (("key",), ("key", "value")),
    "documents": (("id",), ("id", "scope", "path", "source_kind", "title", "doc_type",
                            "version_id", "content_hash", "size", "mtime_ns", "created_at",
                            "updated_at", "deleted_at", "checked_ns", "warnings",
                            "extraction")),
    "versions": (("id",), ("id", "document_id", "path", "content_hash", "text",
                           "recorded_at", "actor", "text_z")),
    "chunks": (("id",), ("id", "version_id", "document_id", "ord", "heading", "context",
                         "text", "line_start", "line_end", "text_hash", "live", "embedded",
                         "retired_at")),
    "entities": (("id",), ("id", "key", "kind", "scope", "iri", "label", "name_key",
                           "document_id", "resolved_id", "created_at", "orphan",
                           "indexed_at")),
    "entity_fts": (("entity_id",), ("entity_id", "label", "aliases", "literals")),
    "entity_initials": (("initials", "entity_id"), ("initials", "entity_id")),
    "names": (("key", "document_id", "kind"), ("key", "document_id", "entity_id", "kind",
                                               "text", "rank", "path", "recorded_at")),
    # history: dropped name declarations and replaced entity search texts (``trust.history``)
    "names_past": (("document_id", "key", "kind", "recorded_at", "retracted_at"),
                   ("key", "document_id", "entity_id", "kind", "text", "rank", "path",
                    "recorded_at", "retracted_at")),
    "entity_past": (("id",), ("id", "entity_id", "label", "aliases", "literals", "recorded_at",
                              "retired_at")),
    "facts": (("id",), ("id", "scope", "fact_key", "subject_id", "predicate", "object_id",
                        "value", "datatype", "qualifiers", "valid_from", "valid_to",
                        "confidence", "trust", "review", "document_id", "version_id",
                        "chunk_id", "line_start", "line_end", "supporting_text", "extractor",
                        "extractor_version", "actor", "recorded_at", "retracted_at",
                        "retract_reason")),
    "events": (("id",), ("id", "at", "actor", "action", "scope", "document_id", "fact_id",
                         "reason", "detail")),
    "embeddings": (("text_hash",), ("text_hash", "vector")),
    "vector_log": (("seq",), ("seq", "chunk_id", "added")),
    "mention_queue": (("document_id",), ("document_id",)),
    "name_changes": (("id",), ("id", "text", "key", "added", "document_id", "label")),
    "tokens": (("id",), ("id", "name", "secret_hash", "scopes", "read_only", "created_at",
                         "revoked_at")),
}
FLAGS = frozenset({"live", "embedded", "orphan", "read_only"})
"""Columns holding a yes/no (SQLite: 0/1, PostgreSQL: boolean)."""
DERIVED_META = frozenset({"schema_version", "live_chunks", "live_chunk_tokens", "entity_rows",
                          "entity_tokens", "commits"})
"""Meta keys a backend keeps of itself (made again on the target, not compared)."""
BATCH = 5000


class Tables(Protocol):
    """A backend's raw rows, for copying (``store/<backend>/tables.py``)."""

    def read(self, table: str, columns: Sequence[str], key: Sequence[str]
             ) -> Iterator[tuple[object, ...]]: ...
    def write(self, table: str, columns: Sequence[str],
              rows: Sequence[tuple[object, ...]]) -> None: ...
    def is_empty(self) -> bool: ...
    def finish(self) -> None: ...


def tables_of(store: Store) -> Tables:
    """The raw table access of ``store``'s backend."""
    if store.backend == "sqlite":
        from .sqlite.tables import SQLiteTables
        return SQLiteTables(store)
    if store.backend == "postgresql":
        from .postgres.tables import PostgresTables
        return PostgresTables(store)
    raise StoreError(f"cannot copy a store of backend {store.backend!r}")


@dataclass(frozen=True, slots=True)
class Summary:
    """A store's copied tables: rows of each, and the checksum of them all."""

    counts: dict[str, int]
    checksum: str


def _canonical(value: object) -> bytes:
    if value is None:
        return b"\x00"
    if isinstance(value, bool):
        return b"i" + str(int(value)).encode()
    if isinstance(value, int):
        return b"i" + str(value).encode()
    if isinstance(value, float):
        return b"f" + repr(value).encode()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return b"b" + bytes(value).hex().encode()
    return b"s" + str(value).encode()


def summarize(store: Store) -> Summary:
    """Counts and checksum of the tables ``migrate`` copies (backend-neutral)."""
    t = tables_of(store)
    counts: dict[str, int] = {}
    whole = hashlib.blake2b(digest_size=20)
    for table, (key, cols) in TABLES.items():
        h = hashlib.blake2b(digest_size=20)
        n = 0
        for row in _rows(t, table, cols, key):
            h.update(b"\x1e".join(_canonical(v) for v in row) + b"\x1d")
            n += 1
        counts[table] = n
        whole.update(table.encode() + b"=" + h.digest())
    return Summary(counts, whole.hexdigest())


def _rows(t: Tables, table: str, cols: Sequence[str], key: Sequence[str]
          ) -> Iterator[tuple[object, ...]]:
    flags = [i for i, c in enumerate(cols) if c in FLAGS]
    for row in t.read(table, cols, key):
        if table == "meta" and row[0] in DERIVED_META:
            continue
        if flags:
            row = tuple(int(bool(v)) if i in flags else v for i, v in enumerate(row))
        yield row


def _batches(rows: Iterable[tuple[object, ...]]) -> Iterator[list[tuple[object, ...]]]:
    batch: list[tuple[object, ...]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def migrate(source: Store, target: Store) -> tuple[Summary, Summary]:
    """Copy every row of ``source`` into the empty ``target``; the two summaries (equal
    when the copy is exact). Raises ``StoreError`` when the target holds anything, or
    when the copy's summary differs from the source's."""
    src, dst = tables_of(source), tables_of(target)
    if not dst.is_empty():
        raise StoreError(f"{target.path} is not empty: migrate copies into an empty store")
    with source.snapshot():
        before = summarize(source)
        for table, (key, cols) in TABLES.items():
            for batch in _batches(_rows(src, table, cols, key)):
                dst.write(table, cols, batch)
    dst.finish()
    after = summarize(target)
    if after != before:
        bad = sorted(k for k in before.counts if before.counts[k] != after.counts.get(k))
        raise StoreError(f"the copy differs from {source.path}: "
                         + (f"counts of {', '.join(bad)}" if bad else "checksum"))
    return before, after
