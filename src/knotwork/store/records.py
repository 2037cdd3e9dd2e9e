"""The frozen records that cross the store boundary, besides those of ``knotwork.types``.

Each names its fields, so a backend can build it from whatever its driver returns and a
caller never counts columns. The small ones are ``NamedTuple`` s: they still unpack as the
tuples they replace, at a tuple's cost, on paths that read thousands of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Literal, NamedTuple

from ..types import Hit


@dataclass(frozen=True, slots=True)
class TextQuery:
    """Words to look for in a text index, as a backend-neutral record.

    ``match``: ``"any"`` finds the rows holding at least one term (ranked by BM25),
    ``"all"`` only those holding every term, ``"all_else_any"`` those holding every term
    when they are at least the search's ``limit`` (distinct ids, each with a score), else
    those holding any (``retrieve.fulltext``'s rule, asked of the store at once: a backend
    a round trip away answers it in one statement; ``or_else``, in two). ``field``: the one
    indexed field to look in
    (an entity's ``"label"``), or None for every field. Each backend spells the query in
    its own syntax (SQLite: an FTS5 MATCH string, every term quoted, so that user text
    holding ``AND``, ``NEAR``, ``*`` or ``"`` stays words).

    >>> TextQuery(("kestrel", "queue"), match="all")
    TextQuery(terms=('kestrel', 'queue'), match='all', field=None)
    """

    terms: tuple[str, ...]
    match: Literal["any", "all", "all_else_any"] = "any"
    field: Literal["label"] | None = None


def or_else(search: Callable[[TextQuery], list[Hit]], query: TextQuery, limit: int
            ) -> list[Hit]:
    """An ``"all_else_any"`` query as two searches: the rows holding every term if they
    fill ``limit``, else the rows holding any."""
    every = search(replace(query, match="all"))
    return every if len(every) >= limit else search(replace(query, match="any"))


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    """One document as the store holds it (``StoreReader.document``); ``deleted_at`` is
    set on a deleted one, which keeps its id, versions and history."""

    id: int
    scope: str
    path: str
    title: str | None
    doc_type: str | None
    version_id: int | None
    content_hash: str | None
    created_at: str
    updated_at: str
    deleted_at: str | None
    source_kind: str


@dataclass(frozen=True, slots=True)
class EventRecord:
    """One entry of the audit log (``StoreReader.events``): who did what, when, to which
    document or fact, and the action's own details."""

    id: int
    at: str
    actor: str
    action: str
    scope: str | None
    document_id: int | None
    fact_id: int | None
    reason: str | None
    detail: Mapping[str, object] | None


class NameChange(NamedTuple):
    """A name change since the mentions were last found (the mention queue).

    A label prose may mention (``label``): the document whose names changed, the label's
    text and key, and whether it was added. Else a name that came to reach another note,
    or none: the document it reached before (or None), its key as ``text`` and ``key``,
    and whether it reaches a note now (``added``). ``scope``: the document's ("" without
    one), whose label table the change was to.
    """

    document_id: int | None
    text: str
    key: str
    added: bool
    label: bool
    scope: str = ""


class MentionWork(NamedTuple):
    """What finding mentions has still to do (``StoreReader.mention_work``)."""

    queued: list[int]  # documents whose mentions wait to be found again
    changes: list[NameChange]
    last_change: int | None  # the last change read, for ``mentions_done``


class FileCheck(NamedTuple):
    """A file found to still hold the version the store has of it (``refresh_files``)."""

    path: str
    content_hash: str
    size: int
    mtime_ns: int
    checked_ns: int


class EntityName(NamedTuple):
    """One name an entity is known by (``StoreReader.names_of``), best first."""

    kind: str  # how the note declares it: "title", "alias", "path", ...
    text: str


class WarningRecord(NamedTuple):
    """One warning a document's last version had when it was read (``warnings``)."""

    path: str
    line: int | None  # None: the warning is about the whole document
    reason: str


@dataclass(frozen=True, slots=True)
class Warnings:
    """The live documents' warnings (``StoreReader.warnings``): how many documents have
    any, and the first of the warnings, by path."""

    documents: int
    first: tuple[WarningRecord, ...]


@dataclass(frozen=True, slots=True)
class MentionInputs:
    """What finding one document's mentions reads (``StoreReader.mention_inputs_of``)."""

    chunks: tuple[tuple[int, str], ...]  # its live chunks: (first line, text), in order
    declared: frozenset[str]  # the name keys it declares
    # the name keys its own structural facts point to, with every name of the notes those
    # resolve to: a written link beats a mention
    linked: frozenset[str]
    scope: str  # the document's: its prose mentions its own scope's notes only


class Edge(NamedTuple):
    """A live fact between two entities (``StoreReader.edges``), both ends canonical."""

    source: int  # the fact's subject
    target: int  # its object
    predicate: str
    confidence: float


class PendingChunk(NamedTuple):
    """Live chunk text without a vector yet (``StoreReader.pending_chunks``)."""

    text_hash: str  # what ``put_vectors`` stores the vector under
    text: str  # what to embed: the chunk's context, a newline, then its text


class LinkRow(NamedTuple):
    """A live link of a vault note whose name reaches no note (``unresolved_links``)."""

    fact_id: int
    path: str  # the linking note
    line: int | None
    name: str  # the name as written (the name entity's label)
    key: str  # its name key
    predicate: str
    extractor: str = ""  # what read it (``hierarchy``: a dot name's parent, no link written)


class NoteLinks(NamedTuple):
    """A vault note with no incoming link, or none either way (``unlinked_notes``)."""

    path: str
    title: str
    outgoing: bool  # it links to some other entity


class Claim(NamedTuple):
    """One fact's claim that ``claimant`` supersedes ``target`` (``rival_claims``)."""

    fact_id: int
    claimant: int  # canonical entity ids
    target: int


@dataclass(frozen=True, slots=True)
class TokenRecord:
    """An API token as the store keeps it (``StoreReader.tokens``): never its secret,
    only a hash of it, the scopes it may read and write, and whether it may write."""

    id: int
    name: str
    secret_hash: str
    scopes: tuple[str, ...]
    read_only: bool
    created_at: str
    revoked_at: str | None


@dataclass(frozen=True, slots=True)
class ReviewFilter:
    """Which live facts the review queue holds (``StoreReader.review_queue``).

    ``statuses``: review statuses (default: those awaiting a decision); ``trusts``: how the
    facts came in (``asserted``, ``extracted``, ``stated``); ``predicate``, ``subject_ids``
    and ``fact_ids`` narrow it further; ``scopes`` limits it to those scopes.
    """

    statuses: tuple[str, ...] = ("unreviewed",)
    trusts: tuple[str, ...] = ()
    predicate: str | None = None
    subject_ids: tuple[int, ...] = ()
    fact_ids: tuple[int, ...] = ()
    scopes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Problem:
    """One broken invariant ``Store.check_integrity`` found: which check, and where."""

    check: str  # citations, text_index, vector_index, ownership, mentions, database
    detail: str


class VectorSample(NamedTuple):
    """A stored vector and the text it was made from (``Store.vector_sample``)."""

    text: str  # as ``PendingChunk.text``: context, a newline, then the chunk's text
    vector: bytes  # float32, as ``VectorWriter.put_vectors`` stored it


@dataclass(frozen=True, slots=True)
class FactMatch:
    """One condition of ``FactReader.find_subjects``: a live fact of ``predicate`` whose
    literal value is one of ``values`` (ASCII letters compared without case: SQLite's
    ``NOCASE``, PostgreSQL's ``lower`` under the bytewise collation) or whose object is an
    entity one of ``names`` (name keys, ``types.name_key``) reaches: the name as written,
    or a note that declares it. Neither given: any value of ``predicate``."""

    predicate: str
    values: tuple[str, ...] = ()
    names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SubjectMatch:
    """An entity (canonical id) every condition holds for, with the live facts that make
    each one hold: ``fact_ids[i]`` for condition ``i``, by id."""

    subject_id: int
    label: str
    fact_ids: tuple[tuple[int, ...], ...]


@dataclass(frozen=True, slots=True)
class DocumentChange:
    """A document created, edited, renamed or deleted (``AuditReader.document_changes``):
    the event that recorded it, who made it, and the path then (``previous_path``: a
    rename's old path)."""

    event_id: int
    at: str
    actor: str
    change: Literal["created", "edited", "renamed", "deleted"]
    scope: str
    path: str
    previous_path: str | None
    document_id: int
    version_id: int | None
    title: str | None
    facts_added: int
    facts_retracted: int
