"""The storage boundary: narrow Protocols over plain records, and ``open_store(url)``.

No cursor, session or driver object crosses this boundary; all SQL lives in
``store/<backend>/``. A backend is a module whose store satisfies ``Store`` and passes the
contract suite in ``tests/store_contract/`` (which uses these Protocols only).

The reader and the writer are each made of small Protocols by concern (documents,
entities, facts, mentions, text index, vectors, audit); a caller that needs one concern
asks for that one. Only frozen records cross them: text search takes a ``TextQuery``,
not a backend's query syntax.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from ..errors import BackendUnavailable
from ..types import (
    Applied,
    ChunkRow,
    Deleted,
    EntityRow,
    FactDraft,
    FactRow,
    FileState,
    Hit,
    ParsedDocument,
    Unchanged,
)
from .records import (
    Claim,
    DocumentChange,
    DocumentRecord,
    Edge,
    EntityName,
    EventRecord,
    FactMatch,
    FileCheck,
    LinkRow,
    MentionInputs,
    MentionWork,
    NameChange,
    NoteLinks,
    PendingChunk,
    Problem,
    ReviewFilter,
    SubjectMatch,
    TextQuery,
    TokenRecord,
    VectorSample,
    WarningRecord,
    Warnings,
)

__all__ = [
    "AuditReader", "Claim", "DocumentChange", "DocumentReader", "DocumentRecord",
    "DocumentWriter", "Edge", "EntityName", "EntityReader", "EventRecord", "FactMatch",
    "FactReader", "FactWriter", "FileCheck",
    "ImportWriter", "LinkRow", "MentionInputs", "MentionReader", "MentionWork", "MentionWriter",
    "NameChange", "NoteLinks", "PendingChunk", "Prepared", "Problem", "ReviewFilter", "Store",
    "StoreReader", "StoreWriter", "SubjectMatch", "TextIndex", "TextQuery", "TokenReader",
    "TokenRecord", "TokenWriter", "VectorReader", "VectorSample", "VectorWriter",
    "WarningRecord", "Warnings", "WikiReader",
    "open_store", "record_time",
]


class Prepared(Protocol):
    """A parsed document with what a backend derives from it before a write (``prepare``)."""

    @property
    def doc(self) -> ParsedDocument: ...


# ---------------------------------------------------------------- writing


class DocumentWriter(Protocol):
    """Documents and their versions: apply, delete, keep, and give back history's room."""

    def apply(self, scope: str, doc: ParsedDocument | Prepared, *, force: bool = False,
              rename_from: str | None = None) -> Applied | Unchanged: ...

    def delete(self, scope: str, path: str, *, reason: str = ...) -> Deleted | None: ...

    def refresh_files(self, scope: str, files: Sequence[FileCheck]) -> int:
        """Files found to still hold their versions; the ones whose document has another
        version now are skipped."""
        ...

    def pack_versions(self, *, after: int = 0, limit: int = 500) -> tuple[int, int | None]:
        """Store the text of up to ``limit`` past versions (ids past ``after``) compressed;
        return how many were not yet, and the last id looked at (None: no more). What
        ``version_text`` gives back does not change."""
        ...

    def drop_uncited_chunks(self) -> int:
        """Delete the chunks of past versions that no fact cites (nothing reads them);
        return how many. Every chunk a fact cites, and every live chunk, stays."""
        ...


class FactWriter(Protocol):
    """Facts no file states: an agent's assertions, retractions and review decisions."""

    def assert_fact(self, scope: str, draft: FactDraft, *, reason: str | None = None) -> int: ...

    def retract_fact(self, fact_id: int, *, reason: str) -> bool: ...

    def set_review(self, fact_id: int, status: str, *, reason: str | None) -> bool: ...

    def apply_extracted(self, doc_id: int, drafts: Sequence[FactDraft]) -> tuple[int, int]:
        """Make ``drafts`` the live document's model-extracted facts (extractor ``llm``,
        a third owner beside its structure and its mentions): a fact already live keeps
        its id, review and ``recorded_at``; one no longer drafted is retracted. Returns
        (added, retracted). A later version of the document retracts those whose chunk it
        no longer holds ("source edited"); a delete retracts them all."""
        ...


class MentionWriter(Protocol):
    """The facts a passage's plain text states by naming a note, and their work queue."""

    def claim_mentions(self, doc_ids: Sequence[int], *, wait: bool) -> list[int]:
        """Hold the documents ``doc_ids`` for this transaction's mention work, before their
        text is read for it: the ones held, sorted. ``wait``: wait for each one another
        writer holds (as for its writes), else leave it to that writer (its queued work
        stays queued), who reads it after this store's last commit of it. A store with
        one writer at a time holds them all."""
        ...

    def apply_mentions(self, doc_id: int, drafts: Sequence[FactDraft]) -> tuple[int, int]: ...

    def mentions_done(self, doc_ids: Sequence[int], *, through_change: int | None) -> None: ...

    def requeue_mentions(self, rules: str) -> bool:
        """Queue every live document's mentions to be found again, unless they were found
        under ``rules`` already (the store's meta ``mention_rules``); record ``rules``.
        True when it queued them."""
        ...


class VectorWriter(Protocol):
    """The vector index: one embedding per chunk text."""

    def put_vectors(self, items: Sequence[tuple[str, bytes]]) -> int: ...

    def clear_vectors(self) -> None: ...


class TokenWriter(Protocol):
    """API tokens (only a hash of each secret is kept) and events the front ends log."""

    def create_token(self, name: str, secret_hash: str, *, scopes: Sequence[str],
                     read_only: bool, created_at: str) -> int: ...

    def revoke_token(self, token_id: int, *, at: str) -> bool:
        """Revoke a live token; False when it is unknown or revoked already."""
        ...

    def log_event(self, action: str, *, scope: str | None = None, reason: str | None = None,
                  detail: Mapping[str, object] | None = None) -> None:
        """Append an event no store mutation makes (a request refused, say)."""
        ...


class ImportWriter(Protocol):
    """Rows of an export (``AuditReader.export_rows``) into an empty store."""

    def import_rows(self, table: str, rows: Sequence[Mapping[str, object]]) -> int: ...

    def rebuild_indexes(self) -> None:
        """Derive what imported rows imply (full-text and entity indexes, counts)."""
        ...


class StoreWriter(DocumentWriter, FactWriter, MentionWriter, VectorWriter, TokenWriter,
                  ImportWriter, Protocol):
    """Every mutation, inside one transaction (see ``Store.write``)."""

    def savepoint(self) -> AbstractContextManager[None]: ...

    def set_meta(self, key: str, value: str) -> None: ...


# ---------------------------------------------------------------- reading


class DocumentReader(Protocol):
    """Documents, their versions and their chunks."""

    def document_index(self, scope: str, *, paths: Sequence[str] | None = None
                       ) -> dict[str, FileState]: ...
    def document(self, scope: str, path: str) -> DocumentRecord | None: ...
    def document_texts(self, scope: str, paths: Sequence[str]) -> dict[str, str]: ...
    def version_text(self, version_id: int) -> str | None:
        """What a document said at one of its versions, past ones included."""
        ...

    def live_document_ids(self, scope: str, paths: Sequence[str]) -> dict[str, int]: ...
    def document_versions(self, ids: Sequence[int]) -> dict[int, tuple[int, str]]: ...
    def all_document_ids(self) -> set[int]: ...
    def documents_to_reread(self, extraction: str) -> int: ...
    def chunks(self, ids: Sequence[int]) -> dict[int, ChunkRow]: ...
    def chunk_entities(self, chunk_ids: Sequence[int], *, as_of: str | None = None
                       ) -> dict[int, list[int]]:
        """Entities each chunk speaks for; with ``as_of``, by the facts and names of then."""
        ...


class EntityReader(Protocol):
    """Entities and the names that reach them."""

    def members(self, entity_ids: Iterable[int], *, as_of: str | None = None
                ) -> dict[int, int]:
        """Every stored id that reads as one of ``entity_ids`` (by the names of ``as_of``)."""
        ...
    def entities(self, ids: Iterable[int]) -> dict[int, EntityRow]: ...
    def canonical(self, entity_id: int) -> int: ...
    def lookup_names(self, keys: Sequence[str], *, referred: bool = False,
                     as_of: str | None = None, scopes: Sequence[str] | None = None
                     ) -> dict[str, int]:
        """Name keys to entities; with ``as_of``, by the declarations of then; with
        ``scopes``, among those scopes' names alone."""
        ...
    def find_entity(self, text: str, key: str, *, scopes: Sequence[str] | None = None
                    ) -> int | None:
        """By iri, then name, then label; with ``scopes``, only an entity of those."""
        ...
    def names_of(self, entity_id: int) -> list[EntityName]: ...
    def types(self, entity_ids: Iterable[int]) -> dict[int, list[str]]: ...
    def labels(self) -> list[tuple[str, str, str]]:
        """(text, key, scope) per declaration of a name prose may mention."""
        ...
    def ambiguous_names(self, limit: int = 50) -> list[tuple[str, list[str]]]: ...
    def spelled_by(self, initials: Sequence[str], *, limit: int = 20,
                   scopes: Sequence[str] | None = None) -> list[tuple[int, str]]: ...


class FactReader(Protocol):
    """The graph: facts between entities, live or as of a time."""

    def facts(self, entity_ids: Iterable[int], *, direction: str = "out",
              as_of: str | None = None, history: bool = False, limit: int | None = None,
              scopes: Sequence[str] | None = None, min_confidence: float = 0.0,
              trusts: Sequence[str] | None = None, valid_at: str | None = None
              ) -> list[FactRow]: ...

    def entity_facts(self, entity_id: int, *, out_limit: int, in_limit: int,
                     as_of: str | None = None, scopes: Sequence[str] | None = None,
                     min_confidence: float = 0.0, trusts: Sequence[str] | None = None,
                     valid_at: str | None = None, own_document: int | None = None
                     ) -> tuple[list[FactRow], list[FactRow]]: ...

    def facts_by_id(self, fact_ids: Sequence[int]) -> list[FactRow]: ...
    def live_facts(self, *, scopes: Sequence[str] | None = None) -> list[FactRow]: ...

    def edges(self, entity_ids: Iterable[int], *, as_of: str | None = None,
              min_confidence: float = 0.0, trusts: Sequence[str] | None = None,
              scopes: Sequence[str] | None = None, valid_at: str | None = None,
              limit: int = 2000) -> list[Edge]: ...

    def degrees(self, entity_ids: Iterable[int], *, cap: int = 1000) -> dict[int, int]: ...
    def updated_dates(self, documents: Sequence[tuple[int, str, str]], *,
                      as_of: str | None = None) -> dict[int, str]:
        """Document id -> the ``updated`` date its note states, for (document id, scope,
        path)s: a live literal ``updated`` fact the document states about the entity of
        its note's IRI in that scope (as of ``as_of`` when one is given; ``dates``)."""
        ...

    def review_queue(self, which: ReviewFilter, *, limit: int = 100, offset: int = 0
                     ) -> tuple[int, list[FactRow]]:
        """The live facts ``which`` selects, by id: (how many in all, one page of them)."""
        ...

    def find_subjects(self, matches: Sequence[FactMatch], *,
                      scopes: Sequence[str] | None = None, limit: int = 50,
                      after: tuple[str, int] | None = None) -> list[SubjectMatch]:
        """The entities (canonical) that every one of ``matches`` holds for, by live facts
        not rejected (of ``scopes``), ordered by (label, id), the first ``limit`` past
        ``after``. Each condition is read on an index of live facts by predicate and
        value, or by object."""
        ...


class MentionReader(Protocol):
    """Which documents a name change reaches, and the mention work still queued."""

    def documents_mentioning(self, phrases: Sequence[str], *, limit: int = 100_000
                             ) -> set[int]: ...
    def documents_mentioning_keys(self, keys: Sequence[str]) -> set[int]: ...
    def mention_work(self) -> MentionWork: ...
    def keys_reaching(self, doc_ids: Sequence[int]) -> set[str]: ...
    def documents_linking(self, keys: Sequence[str]) -> set[int]: ...
    def mention_inputs_of(self, doc_ids: Sequence[int]) -> dict[int, MentionInputs]: ...


class TextIndex(Protocol):
    """Full-text search over chunk text and entity labels, asked with ``TextQuery``.

    With ``as_of`` (a record time), over the rows that stood then: live rows written by
    then and the history index's rows (retired chunks, replaced entity texts) standing
    then (``trust.history``); without it, over the live rows only, as ever."""

    def search_chunks(self, query: TextQuery, *, limit: int,
                      scopes: Sequence[str] | None = None, as_of: str | None = None
                      ) -> list[Hit]: ...
    def search_entities(self, query: TextQuery, *, limit: int,
                        scopes: Sequence[str] | None = None, as_of: str | None = None
                        ) -> list[Hit]: ...
    def term_frequencies(self, words: Sequence[str], *, table: str = "chunk",
                         cap: int | None = None, as_of: str | None = None,
                         scopes: Sequence[str] | None = None) -> list[tuple[str, int]]:
        """Rows of ``table`` holding each word, in ``scopes`` (all when None), summed."""
        ...
    def chunk_terms(self, chunk_ids: Sequence[int], words: Sequence[str]
                    ) -> dict[int, set[str]]: ...
    def live_chunk_count(self, scopes: Sequence[str] | None = None) -> int:
        """Live chunks (of ``scopes``: the rows their BM25 statistics count)."""
        ...


class VectorReader(Protocol):
    """The vector index: what is embedded, what waits, and what changed."""

    def pending_chunks(self, limit: int) -> list[PendingChunk]: ...
    def vector_counts(self) -> tuple[int, int]: ...
    def has_vectors(self) -> bool: ...
    def vector_status(self) -> tuple[bool, int]: ...
    def vector_changes(self, since: int, *, limit: int = 200_000
                       ) -> tuple[int, list[tuple[int, int]]]: ...
    def vectors(self, chunk_ids: Sequence[int]) -> list[tuple[int, bytes]]: ...
    def unembedded(self, chunk_ids: Sequence[int]) -> set[int]:
        """Those of ``chunk_ids`` that are live and have no vector yet (a store part-way
        through embedding: fusion must not rank them as if the vectors had found nothing)."""
        ...
    def live_chunk_ids(self, scopes: Sequence[str]) -> list[int]:
        """The live chunks of ``scopes``' documents: the rows a scoped vector search
        ranks, so that no other scope's vectors take its places or move its moments."""
        ...


class AuditReader(Protocol):
    """What happened (events, warnings) and what the store says of itself (meta, stats).

    ``stats`` stays a ``dict[str, int]``: its keys are counts that grow with the schema
    (one per table), and every reader renders them as they are.
    """

    def events(self, *, document_id: int | None = None, fact_ids: Sequence[int] = (),
               limit: int | None = 100, since: str | None = None) -> list[EventRecord]:
        """Newest first; those of the document or facts (either), at or after ``since``."""
        ...

    def document_changes(self, *, since: str, limit: int = 100,
                         scopes: Sequence[str] | None = None) -> list[DocumentChange]:
        """Documents created, edited, renamed or deleted at or after ``since`` (a record
        time), newest first, at most ``limit``; a document read again with its text
        unchanged (new extraction rules) is no change. On an index of those events by
        time."""
        ...

    def export_rows(self) -> Iterator[tuple[str, dict[str, object]]]:
        """Every row a store holds besides derived state, as (table, column -> value):
        documents, versions (text whole), chunks, entities, names, facts, events, tokens,
        meta. ``ImportWriter.import_rows`` takes them back in this order."""
        ...
    def warnings(self, limit: int = 100) -> Warnings: ...
    def meta(self, key: str) -> str | None: ...
    def stats(self) -> dict[str, int]: ...


class WikiReader(Protocol):
    """What the wiki's lint and search ask: each one set-based query on the indexes.

    ``exclude_paths``: documents whose links count for nothing and which are not reported
    (the wiki's generated ``index.md`` and ``log.md``).
    """

    def unresolved_links(self, scope: str, *, exclude_paths: Sequence[str] = ()
                         ) -> list[LinkRow]:
        """Live links (facts with an entity object, mentions aside) of the scope's file
        notes whose name reaches no note, by path and line."""
        ...

    def unlinked_notes(self, scope: str, *, exclude_paths: Sequence[str] = ()
                       ) -> list[NoteLinks]:
        """The scope's file notes no other note links to (mentions aside), by path."""
        ...

    def conflicting_values(self, scope: str, predicates: Sequence[str]) -> list[int]:
        """Ids of the live facts of ``predicates`` whose subject (canonical) holds two or
        more distinct values of that predicate (literals case-folded), from two or more
        sources (documents; actors for facts of no document) or with two or more valid
        times given."""
        ...

    def rival_claims(self, scope: str, predicates: Sequence[str],
                     inverse: Sequence[str] = ()) -> list[Claim]:
        """Live claims to supersede a target that two or more distinct entities make."""
        ...

    def search_chunks_under(self, query: TextQuery, prefix: str, *, limit: int,
                            scopes: Sequence[str] | None = None,
                            exclude_paths: Sequence[str] = ()) -> list[Hit]:
        """``search_chunks`` limited to live documents whose path starts with ``prefix``."""
        ...



class TokenReader(Protocol):
    """The API tokens a server accepts (never their secrets)."""

    def tokens(self) -> list[TokenRecord]: ...
    def token_by_hash(self, secret_hash: str) -> TokenRecord | None: ...


class StoreReader(DocumentReader, EntityReader, FactReader, MentionReader, TextIndex,
                  VectorReader, AuditReader, WikiReader, TokenReader,
                  Protocol):
    """Every read query, each on an index, returning plain records."""


class Store(Protocol):
    backend: str
    path: str

    @property
    def reader(self) -> StoreReader: ...

    def write(self, *, actor: str) -> AbstractContextManager[StoreWriter]: ...

    def snapshot(self) -> AbstractContextManager[None]:
        """Reads on this thread inside the block see one committed state of the store.

        Commits made meanwhile (another process's, another thread's) are seen after it.
        Inside a write, or another snapshot, it adds nothing: that is one state already.
        """
        ...

    def prepare(self, doc: ParsedDocument) -> Prepared:
        """The work of applying ``doc`` that needs no database, done before the write
        transaction (in a parallel ingest, outside the lock the writers share)."""

    def data_version(self) -> int: ...

    def change_token(self) -> tuple[int, int]: ...

    def opener(self, *, bulk: bool = False) -> Callable[[], Store] | None:
        """A picklable way to open this store in another process; None if it cannot be.

        ``bulk``: the opened store's commits need not each reach the disk before they
        return (they stay atomic); the caller makes them durable at the end of its work
        with ``make_durable`` on any handle of the store.
        """
        ...

    def make_durable(self) -> None:
        """Every commit so far, by any process, reaches the disk before this returns."""
        ...

    def refresh_statistics(self) -> list[str]:
        """After a large write (a sync of many files): the query planner's statistics of
        the tables it changed (and what else the server keeps of them for reads, as the
        visibility of their pages), brought up to date now rather than whenever the
        server gets to them; the tables refreshed (none where the backend keeps none)."""
        ...

    def compact(self, *, actor: str, vacuum: bool = False) -> dict[str, int]:
        """Give back the room history takes that nothing reads (``drop_uncited_chunks``)
        and pack past versions' text (``pack_versions``); with ``vacuum``, also shrink the
        store's files (writers wait meanwhile). Returns ``chunks_removed``,
        ``versions_packed``, ``bytes_freed`` (room the store can use again) and
        ``store_bytes`` (its files' size after)."""
        ...

    def check_integrity(self, *, sample: int = 200) -> list[Problem]:
        """Every invariant the store keeps between its source of truth (documents,
        versions, chunks, facts) and what is derived from it, checked: each live fact's
        citation resolves to its version's text; the text index holds every live chunk
        once and nothing else (and finds a ``sample`` of them by their words); every
        stored vector belongs to a live chunk and every chunk marked embedded has one; no
        live fact or chunk belongs to a deleted document; no mention work is left queued;
        the database's own structure is sound. Empty when all hold."""
        ...

    def vector_sample(self, n: int) -> list[VectorSample]:
        """Up to ``n`` live chunks' stored vectors with their text, at random (to embed
        again and compare)."""
        ...

    def rebuild_indexes(self, *, actor: str) -> dict[str, int]:
        """Rebuild what is derived from the source of truth: the chunk and entity text
        indexes from the live rows, and the vector bookkeeping (vectors no live chunk
        uses are dropped; chunks whose vector is missing are embedded again by the next
        ``embed``). Returns counts: ``chunks_indexed``, ``entities_indexed``,
        ``vectors_dropped``, ``chunks_to_embed``."""
        ...

    def close(self) -> None: ...


def record_time(t: datetime) -> str:
    """An instant as every record time of a store is spelled (``recorded_at``,
    ``retracted_at``, ``created_at``): UTC to the microsecond with a ``Z``, so that record
    times compare as text. A time without an offset is taken as UTC."""
    t = t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)
    return t.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def open_store(url: str, *, synchronous: str = "FULL") -> Store:
    """Open a store by URL: a file path or ``sqlite:///path``, or ``postgresql://...``
    (``postgres://`` too) for a PostgreSQL database with pgvector (``store/postgres``)."""
    if url.startswith(("postgres://", "postgresql://")):
        try:
            from .postgres import PostgresStore
        except ImportError as exc:  # psycopg, psycopg_pool or pgvector not installed
            raise BackendUnavailable(
                "postgresql", hint="pip install 'knotwork[postgres]'") from exc
        return PostgresStore("postgresql://" + url.split("://", 1)[1])
    path = url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else url
    from .sqlite import SQLiteStore

    if path != ":memory:":
        path = str(Path(path).expanduser())
    return SQLiteStore(path, synchronous=synchronous)
