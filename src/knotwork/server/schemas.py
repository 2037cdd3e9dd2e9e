"""Pydantic models at the REST edge: what a request may say and what a response carries.

Requests forbid unknown keys, so a misspelt option (``max_entites``) is a 422 naming it
rather than a silently ignored default. Responses mirror the ``as_dict`` shapes in
``knotwork.types`` and allow extra keys, so a field added there reaches clients before
this file learns about it; routes serialise them with ``exclude_unset`` so absent keys
stay absent (``datatype`` only on literals, ``value_label`` only on entity values).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Confidence = Annotated[float, Field(ge=0.0, le=1.0)]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Response(BaseModel):
    model_config = ConfigDict(extra="allow")


# ---------------------------------------------------------------- requests


class ContextRequest(_Request):
    """The seed's request shape (``{"query": "traefik", "max_entities": 10}``) and more."""

    query: str = Field(min_length=1, max_length=2000, description="What the agent asks about.")
    max_entities: int | None = Field(None, ge=1, le=200,
                                     description="At most this many entities (default 20).")
    expand_links: bool = Field(True, description="Follow links from the direct hits.")
    link_depth: int | None = Field(None, ge=0, le=3, description="Link hops (default 1).")
    max_tokens: int | None = Field(None, ge=0, le=200_000, description=(
        "Cut the rendered answer to this many tokens: 0 for no limit, else at least 50."))
    scopes: list[str] | None = Field(None, description="Read only these scopes.")
    as_of: str | None = Field(None, description="Answer as the store stood at this ISO time.")
    valid_at: str | None = Field(None, description=(
        "Only facts that held in the world at this ISO date (a fact without valid time "
        "holds at every date)."))
    trusts: list[Literal["stated", "asserted", "extracted", "unreviewed", "approved",
                         "rejected"]] | None = Field(None, description=(
        "Only facts of these trust states (a union: stated, approved is what the notes "
        "state plus what a reviewer approved); rejected facts only when named."))
    min_confidence: Confidence = 0.0
    explain: bool = Field(False, description="Say why each entity scored as it did.")
    format: Literal["json", "markdown"] = Field(
        "json", description="json: the KnowledgeContext; markdown: prompt-ready text.")


class AgentEntityIn(BaseModel):
    """An entity the agent found; extra keys are kept with it (and echoed when dropped)."""

    model_config = ConfigDict(extra="allow")
    name: str
    type: str | None = None
    supporting_text: str | None = None


class AgentRelationIn(BaseModel):
    model_config = ConfigDict(extra="allow")
    source: str
    target: str
    type: str
    supporting_text: str | None = None
    confidence: float | None = None


class DocumentRequest(_Request):
    """Agent ingest: raw text plus the entities and relations extracted from it."""

    doc_id: str = Field(min_length=1, max_length=200)
    title: str = ""
    source: str = ""
    raw_content: str = Field(min_length=1)
    entities: list[AgentEntityIn] = Field(default_factory=list)
    relations: list[AgentRelationIn] = Field(default_factory=list)
    min_confidence: Confidence | None = None
    scope: str | None = None


class FactRequest(_Request):
    """One fact to assert (trust ``asserted``)."""

    subject: str = Field(min_length=1)
    predicate: str = Field(min_length=1)
    value: str = Field(min_length=1)
    value_type: Literal["Literal", "Entity"] = "Literal"
    datatype: Literal["string", "integer", "number", "boolean", "date", "datetime"] = "string"
    confidence: Confidence = 1.0
    supporting_text: str = ""
    valid_from: str | None = None
    valid_to: str | None = None
    scope: str | None = None
    reason: str | None = None


class RetractRequest(_Request):
    reason: str = Field(min_length=1, description="Why the fact is wrong or stale.")


# ---------------------------------------------------------------- responses


class SourceOut(_Response):
    path: str
    line_start: int
    line_end: int
    chunk_id: int | None = None
    supporting_text: str = ""


class FactOut(_Response):
    """``FactRow.as_dict``: a stored fact with its provenance."""

    id: int
    subject: str
    subject_label: str
    predicate: str
    value: str
    value_type: Literal["Entity", "Literal"]
    value_label: str | None = None
    datatype: str | None = None
    confidence: float
    trust: str
    review: str
    scope: str
    recorded_at: str
    retracted_at: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    extractor: str
    actor: str | None = None
    source: SourceOut | None = None
    qualifiers: dict[str, str] | None = None


class NameOut(_Response):
    kind: str
    text: str


class EntityOut(_Response):
    """``EntityView.as_dict``: one entity with its names, types, facts and incoming links."""

    iri: str
    label: str
    kind: str
    scope: str
    types: list[str]
    names: list[NameOut]
    facts: list[FactOut]
    incoming: list[FactOut]


class SearchHitOut(_Response):
    chunk_id: int
    path: str
    title: str
    heading: str
    line_start: int
    line_end: int
    score: float
    text: str


class SearchOut(_Response):
    query: str
    hits: list[SearchHitOut]


class SummaryOut(_Response):
    total_entities: int
    total_facts: int
    direct_hits: int
    linked_additions: int
    semantic_hits: int = 0
    tokens: int = 0
    truncated: bool = False


class ContextEntityOut(_Response):
    iri: str
    label: str
    types: list[str]
    relevance: Literal["Direct", "Linked", "Semantic"]
    score: float
    facts: list[dict[str, Any]]
    incoming: list[dict[str, Any]] | None = None
    why: list[str] | None = None


class ContextOut(_Response):
    """The KnowledgeContext: the seed's shape plus evidence and a richer summary."""

    query: str
    entities: list[ContextEntityOut]
    evidence: list[dict[str, Any]]
    summary: SummaryOut
    evidence_chain: list[str] | None = None
    notes: list[str] | None = None


class DroppedOut(_Response):
    kind: Literal["entity", "relation"]
    item: dict[str, Any]
    reason: str


class IngestOut(_Response):
    doc_id: str
    status: Literal["created", "updated", "unchanged"]
    chunk_count: int
    nodes_added: int
    edges_added: int
    facts_added: int
    facts_retracted: int
    dropped: list[DroppedOut]


class HistoryOut(_Response):
    """One page of an entity's history: facts (retracted included) and their events."""

    entity: str
    offset: int
    total_facts: int
    next_offset: int | None
    facts: list[FactOut]
    events: list[dict[str, Any]]


class StatsOut(_Response):
    documents: int
    chunks: int
    entities: int
    facts: int
    retracted_facts: int
    events: int
    ambiguous_names: list[dict[str, Any]]
    documents_with_warnings: int = 0
    warnings: list[dict[str, Any]] = Field(default_factory=list, description=(
        "The warnings of live documents (malformed frontmatter and the like), first 100."))
    store: str


class HealthOut(_Response):
    status: Literal["ok"]
    version: str
    store: str
    vault: str | None
    watching: bool


class ErrorOut(_Response):
    """Every 4xx/5xx body: the error's kind and a message a person can act on."""

    error: str
    message: str
    detail: list[dict[str, Any]] | None = None
