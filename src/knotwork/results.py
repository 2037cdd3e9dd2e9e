"""What the facade's methods answer: frozen records with their JSON shape.

Each is what one ``Knotwork`` method returns; ``as_dict()`` is its JSON shape, the one
the CLI prints and the REST and MCP front ends return. Apart from ``types`` because a
query never makes one: each dataclass costs ~0.8 ms to create at import, and every
process (every CLI call) imports ``types``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .types import FactRow

__all__ = ["AmbiguousName", "Compacted", "DocumentIngested", "DocumentWarning", "Embedded",
           "History", "Principal", "ReviewPage", "Reviewed", "Stats", "TokenInfo"]


class _Result:
    """``as_dict()`` from the fields in order, and ``result["name"]`` reads one of them
    as ``as_dict()`` has it (these results were plain dicts, read by key)."""

    __slots__ = ()

    def as_dict(self) -> dict[str, object]:
        return {name: _plain(getattr(self, name)) for name in self.__dataclass_fields__}  # type: ignore[attr-defined]

    def __getitem__(self, key: str) -> object:
        if key not in self.__dataclass_fields__:  # type: ignore[attr-defined]
            raise KeyError(key)
        return _plain(getattr(self, key))  # that field alone, not the whole as_dict()


def _plain(value: object) -> object:
    """A field as JSON holds it: records as dicts, tuples as lists."""
    if isinstance(value, _Result | FactRow):
        return value.as_dict()
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return dict(value)
    return value


@dataclass(frozen=True, slots=True)
class Embedded(_Result):
    """What ``Knotwork.embed`` did: chunks embedded, their tokens, the model, the time,
    and the processes that ran the model (more than 1: ``embed.pool``)."""

    embedded: int
    tokens: int
    embedder: str | None
    seconds: float
    workers: int = 1


@dataclass(frozen=True, slots=True)
class Compacted(_Result):
    """What ``Knotwork.compact`` gave back (``bytes_freed``) and the store's size after."""

    chunks_removed: int
    versions_packed: int
    bytes_freed: int
    store_bytes: int


@dataclass(frozen=True, slots=True)
class History(_Result):
    """One page of an entity's history: its facts (retracted ones too) and their events;
    ``next_offset`` is the next page's offset, None after the last."""

    entity: str
    offset: int
    total_facts: int
    next_offset: int | None
    facts: tuple[FactRow, ...]
    events: tuple[dict[str, object], ...]


@dataclass(frozen=True, slots=True)
class DocumentIngested(_Result):
    """What ``Knotwork.ingest_document`` stored, and the items it dropped (with reasons)."""

    doc_id: str
    status: Literal["created", "updated", "unchanged"]
    chunk_count: int
    nodes_added: int
    edges_added: int
    facts_added: int
    facts_retracted: int
    dropped: tuple[dict[str, object], ...]


@dataclass(frozen=True, slots=True)
class AmbiguousName(_Result):
    """A name more than one note declares, with their paths (the winner first)."""

    name: str
    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DocumentWarning(_Result):
    """A live document's warning (malformed frontmatter and the like), at its line."""

    path: str
    line: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class Stats(_Result):
    """The store's counts, how far embedding got, and what the next sync would redo."""

    documents: int
    tombstones: int
    versions: int
    chunks: int
    entities: int
    facts: int
    retracted_facts: int
    events: int
    embedded_chunks: int
    embedding_status: str
    embedder: str
    ambiguous_names: tuple[AmbiguousName, ...]
    documents_with_warnings: int
    warnings: tuple[DocumentWarning, ...]
    to_reread: int
    mentions_to_find_again: bool
    store: str
    vault: str | None = None  # the folder the store syncs (its scope's last full sync)


@dataclass(frozen=True, slots=True)
class ReviewPage(_Result):
    """One page of the review queue (``Knotwork.review_queue``): the facts awaiting a
    decision, each with its evidence (``source.supporting_text``), and how many in all."""

    total: int
    offset: int
    next_offset: int | None
    facts: tuple[FactRow, ...]


@dataclass(frozen=True, slots=True)
class Reviewed(_Result):
    """What ``Knotwork.review`` decided: the facts changed, by whom and why."""

    status: Literal["approved", "rejected", "unreviewed"]
    reviewer: str
    reason: str | None
    fact_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Principal(_Result):
    """Who a request is: a store token's name, its scopes (empty: every scope) and
    whether it may write. The server's own ``--token`` is the one with every right."""

    name: str
    scopes: tuple[str, ...]
    read_only: bool
    token_id: int | None = None

    def may_read(self, scope: str) -> bool:
        return not self.scopes or scope in self.scopes


@dataclass(frozen=True, slots=True)
class TokenInfo(_Result):
    """A token as listed (never its secret); ``secret`` only once, when it is created."""

    id: int
    name: str
    scopes: tuple[str, ...]
    read_only: bool
    created_at: str
    revoked_at: str | None
    secret: str | None = None
