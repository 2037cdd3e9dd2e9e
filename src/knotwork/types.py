"""Frozen value types that flow between the layers.

Ingestion produces a ``ParsedDocument`` (names, chunks and fact drafts, all with
line spans); the store applies it; retrieval reads ``EntityRow``/``FactRow``/``ChunkRow``
records and returns a ``KnowledgeContext``. Nothing here knows about SQL or files.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

# The domain rules own these (``domain.words``, ``domain.ids``); named here too, as they
# were before the rules had a home.
from .domain.ids import DEFAULT_SCOPE as DEFAULT_SCOPE
from .domain.names import FOLDER_KINDS as FOLDER_KINDS
from .domain.words import STOPWORDS as STOPWORDS
from .domain.words import label_initials as label_initials
from .domain.words import label_words as label_words
from .domain.words import name_key as name_key
from .domain.words import name_words as name_words

Trust = Literal["stated", "asserted", "extracted"]
Review = Literal["unreviewed", "approved", "rejected"]
ValueType = Literal["Entity", "Literal"]
Relevance = Literal["Direct", "Linked", "Semantic"]
NameKind = Literal["path", "stem", "title", "alias", "folder_index", "folder_file",
                   "folder_note", "folder_readme"]

# A context answer quotes at most this much of a fact's supporting text; the line span
# (and the evidence section) lead to the rest.
SUPPORT_QUOTE_CHARS = 160


@dataclass(frozen=True, slots=True)
class Span:
    """Where a piece of text sits in a document: 1-based inclusive lines."""

    line_start: int
    line_end: int


@dataclass(frozen=True, slots=True)
class NameDecl:
    """A name a document declares for its own entity (path, file stem, title, alias)."""

    key: str
    text: str
    kind: NameKind


def mention_labels(names: Iterable[tuple[str, str, str]]) -> frozenset[tuple[str, str]]:
    """The ``(text, key)`` of a note's names ``(key, kind, text)`` that prose may mention
    it by (``mentionable``)."""
    rows = list(names)
    titled = any(kind == "title" for _, kind, _ in rows)  # a title whose key is not the stem's
    return frozenset((text, key) for key, kind, text in rows
                     if mentionable(kind, text, titled))


def mentionable(kind: str, text: str, titled: bool) -> bool:
    """Whether prose may mention a note by its name ``text`` of ``kind``: any name but a
    file name of one lower-case word when the note is ``titled`` otherwise.

    Why: Foam names its command notes ``list.md``, ``search.md``, ``update.md`` and titles
    them "foam list", "foam search"…; "list" in prose is the word, not the note (``[[list]]``
    still links to it: this is about mentions only). A note whose only name is its file
    name (``kota.md``, untitled or titled "kota") keeps it. The file name is a "stem", or
    the "path" of a note at the vault's root. A function of one note's own names, so it
    stays exact as notes change one at a time.

    A folder's name (``domain.names.FOLDER_KINDS``) is no name at all to prose: it is
    how the folder's notes find their page.
    """
    if kind in FOLDER_KINDS:
        return False
    return not (titled and kind in ("stem", "path") and text.isalpha() and text.islower())


@dataclass(frozen=True, slots=True)
class SelfRef:
    """The entity of the document the fact came from (the note itself)."""


SELF = SelfRef()


@dataclass(frozen=True, slots=True)
class NameRef:
    """An entity named by text (a link target, an agent-extracted entity).

    Resolved to a note when read, never when written: see ``name_key``.
    """

    key: str
    text: str

    @staticmethod
    def of(text: str) -> NameRef:
        return NameRef(name_key(text), " ".join(text.split()))


@dataclass(frozen=True, slots=True)
class LiteralValue:
    """A typed literal: ``datatype`` is string | integer | number | boolean | date | datetime."""

    value: str
    datatype: str = "string"


EntityRef = SelfRef | NameRef
ObjectRef = SelfRef | NameRef | LiteralValue


@dataclass(frozen=True, slots=True)
class FactDraft:
    """A fact as an extractor proposes it, before the store gives it an id and a time."""

    subject: EntityRef
    predicate: str
    object: ObjectRef
    span: Span
    supporting_text: str
    extractor: str
    extractor_version: str = "1"
    confidence: float = 1.0
    trust: Trust = "stated"
    valid_from: str | None = None
    valid_to: str | None = None
    qualifiers: tuple[tuple[str, str], ...] = ()
    # Where in the line ``span.line_start`` the fact was read (0-based characters): a line
    # cut into several chunks has one piece per stretch of it, and this picks the piece.
    column: int = 0

    def identity(self) -> tuple[builtins.object, ...]:  # (``object`` is a field here)
        """What the fact says, not where it sits: the key edits are diffed by."""
        return (self.subject, self.predicate, self.object, self.valid_from, self.valid_to,
                self.qualifiers)


@dataclass(frozen=True, slots=True)
class ChunkDraft:
    """A heading-bounded span of a document, ready to index and cite."""

    ord: int
    heading_path: tuple[str, ...]
    text: str
    span: Span
    # Where the text starts in its first line: past 0 only for a later piece of a line
    # cut into several chunks (each piece cites the whole line).
    column: int = 0


@dataclass(frozen=True, slots=True)
class Issue:
    """A problem met while ingesting one source; ``fatal`` ones keep it out of the store."""

    path: str
    reason: str
    line: int | None = None
    fatal: bool = True

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "line": self.line, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    """One source turned into what the store needs: names, chunks and fact drafts."""

    path: str
    text: str
    content_hash: str
    title: str
    doc_type: str
    names: tuple[NameDecl, ...]
    chunks: tuple[ChunkDraft, ...]
    facts: tuple[FactDraft, ...]
    issues: tuple[Issue, ...] = ()
    size: int = 0
    mtime_ns: int = 0
    source_kind: Literal["file", "api"] = "file"
    # the rules it was read under (``knotwork.ingest.extraction_key``); "" for a document
    # no parser made (facts an agent asserted)
    extraction: str = ""


# ---------------------------------------------------------------- outcomes of a write


@dataclass(frozen=True, slots=True)
class Applied:
    """A document version was written: ``created`` is False for an edit or rename."""

    path: str
    created: bool
    added: int
    retracted: int
    kept: int
    renamed_from: str | None = None
    document_id: int = 0
    # names this version declares anew or no longer: (text, key); other notes' mentions
    # of them must be looked at again
    names_added: tuple[tuple[str, str], ...] = ()
    names_removed: tuple[tuple[str, str], ...] = ()
    # the text was the store's already: read again under other rules, or by ``force``
    reread: bool = False


@dataclass(frozen=True, slots=True)
class Unchanged:
    path: str


@dataclass(frozen=True, slots=True)
class Deleted:
    path: str
    retracted: int
    names_removed: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Failed:
    issue: Issue


ApplyOutcome = Applied | Unchanged | Deleted | Failed


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What one ingest run did, in the CLI contract's shape."""

    added: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    renamed: int = 0
    errors: tuple[Issue, ...] = ()
    facts_added: int = 0
    facts_retracted: int = 0
    # files whose text the store had already, read again: extracted under other rules
    # than the current ones (an upgrade, another chunk size), or ``force``
    reread: int = 0

    def as_dict(self) -> dict[str, object]:
        return {
            "added": self.added,
            "updated": self.updated,
            "deleted": self.deleted,
            "unchanged": self.unchanged,
            "renamed": self.renamed,
            "reread": self.reread,
            "errors": [i.as_dict() for i in self.errors],
            "facts_added": self.facts_added,
            "facts_retracted": self.facts_retracted,
        }


# ---------------------------------------------------------------- rows read back


class FileState(NamedTuple):
    """A live file document as the store knows it: what a sync compares the file to.

    ``checked_ns``: when the file was last found to hold that version, with that size and
    time: when the version was written (checked under the write lock), or later, when a
    sync read the file again and found the same bytes.
    """

    content_hash: str
    size: int
    mtime_ns: int
    checked_ns: int
    extraction: str | None = None  # the rules its facts were read under (None: unknown)


@dataclass(frozen=True, slots=True)
class EntityRow:
    id: int
    iri: str
    label: str
    kind: str  # note | name
    scope: str
    document_id: int | None = None
    created_at: str = ""  # when the store first recorded it (``as_of`` leaves out later ones)


@dataclass(frozen=True, slots=True)
class Source:
    """A fact's citation: the document text it came from."""

    path: str
    line_start: int
    line_end: int
    chunk_id: int | None
    supporting_text: str
    document_id: int | None = None
    version_id: int | None = None

    def as_dict(self, *, max_quote: int | None = None) -> dict[str, object]:
        quote = self.supporting_text
        if max_quote and len(quote) > max_quote:
            quote = quote[: max_quote - 1].rstrip() + "…"
        return {
            "path": self.path,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "chunk_id": self.chunk_id,
            "supporting_text": quote,
        }


@dataclass(frozen=True, slots=True)
class FactRow:
    """A stored fact with its object resolved for reading."""

    id: int
    subject_id: int
    subject_iri: str
    subject_label: str
    predicate: str
    value: str
    value_type: ValueType
    datatype: str | None
    object_id: int | None
    value_label: str | None
    confidence: float
    trust: Trust
    review: Review
    scope: str
    recorded_at: str
    retracted_at: str | None
    valid_from: str | None
    valid_to: str | None
    extractor: str
    source: Source | None
    actor: str | None = None
    qualifiers: tuple[tuple[str, str], ...] = ()
    # why it was retracted ("source edited", "source deleted", "read again under other
    # rules", or what a caller gave)
    retract_reason: str | None = None
    # why ``valid_to`` is what it is when no note said it: the newer fact that closed
    # this one (``knotwork.trust.truth``); None when the valid time is as stored
    valid_to_reason: str | None = None

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "id": self.id,
            "subject": self.subject_iri,
            "subject_label": self.subject_label,
            "predicate": self.predicate,
            "value": self.value,
            "value_type": self.value_type,
        }
        if self.value_type == "Entity":
            out["value_label"] = self.value_label
        else:
            out["datatype"] = self.datatype
        out.update(
            confidence=self.confidence,
            trust=self.trust,
            review=self.review,
            scope=self.scope,
            recorded_at=self.recorded_at,
            retracted_at=self.retracted_at,
            valid_from=self.valid_from,
            valid_to=self.valid_to,
            extractor=self.extractor,
            actor=self.actor,
            source=self.source.as_dict() if self.source else None,
        )
        if self.qualifiers:
            out["qualifiers"] = dict(self.qualifiers)
        if self.retracted_at:
            out["retract_reason"] = self.retract_reason
        if self.valid_to_reason:
            out["valid_to_reason"] = self.valid_to_reason
        return out


@dataclass(frozen=True, slots=True)
class ChunkRow:
    id: int
    document_id: int
    path: str
    title: str
    heading_path: str
    line_start: int
    line_end: int
    text: str
    scope: str
    recorded_at: str = ""  # when its version was recorded


@dataclass(frozen=True, slots=True)
class Hit:
    """A scored full-text or vector hit on a row id."""

    id: int
    score: float


# ---------------------------------------------------------------- the context answer


@dataclass(frozen=True, slots=True)
class Evidence:
    chunk_id: int
    path: str
    heading: str
    line_start: int
    line_end: int
    text: str
    score: float

    def as_dict(self) -> dict[str, object]:
        return {
            "chunk_id": self.chunk_id,
            "path": self.path,
            "heading": self.heading,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "text": self.text,
            "score": round(self.score, 4),
        }


@dataclass(frozen=True, slots=True)
class ContextEntity:
    iri: str
    label: str
    types: tuple[str, ...]
    relevance: Relevance
    score: float
    facts: tuple[FactRow, ...]
    incoming: tuple[FactRow, ...] = ()
    why: tuple[str, ...] = ()
    entity_id: int = 0
    wiki: bool = False  # a page of the vault's wiki, which ``context`` checks first

    def as_dict(self, *, explain: bool = False) -> dict[str, object]:
        out: dict[str, object] = {
            "iri": self.iri,
            "label": self.label,
            "types": list(self.types),
            "relevance": self.relevance,
            "score": round(self.score, 4),
        }
        if self.wiki:
            out["wiki"] = True
        out["facts"] = [_context_fact(f) for f in self.facts]
        if self.incoming:
            out["incoming"] = [
                {"subject": f.subject_iri, "subject_label": f.subject_label, **_context_fact(f)}
                for f in self.incoming
            ]
        if explain:
            out["why"] = list(self.why)
        return out


def _context_fact(f: FactRow) -> dict[str, object]:
    out: dict[str, object] = {
        "id": f.id,
        "predicate": f.predicate,
        "value": f.value,
        "value_type": f.value_type,
    }
    if f.value_type == "Entity":
        out["value_label"] = f.value_label
    elif f.datatype and f.datatype != "string":
        out["datatype"] = f.datatype
    out.update(
        confidence=f.confidence,
        trust=f.trust,
        recorded_at=f.recorded_at,
        retracted_at=f.retracted_at,
        source=f.source.as_dict(max_quote=SUPPORT_QUOTE_CHARS) if f.source else None,
    )
    if f.review != "approved":
        out["review"] = f.review
    if f.valid_from or f.valid_to:
        out.update(valid_from=f.valid_from, valid_to=f.valid_to)
    if f.valid_to_reason:
        out["valid_to_reason"] = f.valid_to_reason
    return out


@dataclass(frozen=True, slots=True)
class ContextSummary:
    total_entities: int
    total_facts: int
    direct_hits: int
    linked_additions: int
    semantic_hits: int
    tokens: int
    truncated: bool
    embedding_status: str = "none"
    # whether the store had caught up with its vault, and the changed files not applied
    # yet: known to a server that catches up in the background, None elsewhere
    index_fresh: bool | None = None
    pending_changes: int | None = None

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "total_entities": self.total_entities,
            "total_facts": self.total_facts,
            "direct_hits": self.direct_hits,
            "linked_additions": self.linked_additions,
            "semantic_hits": self.semantic_hits,
            "tokens": self.tokens,
            "truncated": self.truncated,
            "embedding_status": self.embedding_status,
        }
        if self.index_fresh is not None:
            out["index_fresh"] = self.index_fresh
            out["pending_changes"] = self.pending_changes or 0
        return out


@dataclass(frozen=True, slots=True)
class KnowledgeContext:
    """The answer to ``context(query)``: the seed's shape plus evidence and a summary."""

    query: str
    entities: tuple[ContextEntity, ...]
    evidence: tuple[Evidence, ...]
    summary: ContextSummary
    evidence_chain: tuple[str, ...] = ()
    explain: bool = False
    notes: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, object]:
        return {
            "query": self.query,
            "entities": [e.as_dict(explain=self.explain) for e in self.entities],
            "evidence": [e.as_dict() for e in self.evidence],
            **self.tail_dict(),
        }

    def tail_dict(self) -> dict[str, object]:
        """What ``as_dict`` holds after the entities and the evidence, in its order."""
        out: dict[str, object] = {"summary": self.summary.as_dict()}
        if self.evidence:
            # query_with_evidence's grouping, by reference: the text is in "evidence" once
            groups: dict[str, list[int]] = {}
            for ev in self.evidence:
                groups.setdefault(ev.path, []).append(ev.chunk_id)
            out["supporting_documents"] = [{"path": p, "chunk_ids": ids}
                                           for p, ids in groups.items()]
        if self.evidence_chain:
            out["evidence_chain"] = list(self.evidence_chain)
        if self.notes:
            out["notes"] = list(self.notes)
        return out


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A chunk found by search, with its citation."""

    chunk_id: int
    path: str
    title: str
    heading: str
    line_start: int
    line_end: int
    text: str
    score: float

    def as_dict(self) -> dict[str, object]:
        return {
            "chunk_id": self.chunk_id,
            "path": self.path,
            "title": self.title,
            "heading": self.heading,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "score": round(self.score, 4),
            "text": self.text,
        }


@dataclass(frozen=True, slots=True)
class EntityView:
    """One entity with everything known about it."""

    entity: EntityRow
    names: tuple[tuple[str, str], ...]
    types: tuple[str, ...]
    facts: tuple[FactRow, ...]
    incoming: tuple[FactRow, ...]

    def as_dict(self) -> dict[str, object]:
        return {
            "iri": self.entity.iri,
            "label": self.entity.label,
            "kind": self.entity.kind,
            "scope": self.entity.scope,
            "types": list(self.types),
            "names": [{"kind": k, "text": t} for k, t in self.names],
            "facts": [f.as_dict() for f in self.facts],
            "incoming": [f.as_dict() for f in self.incoming],
        }
