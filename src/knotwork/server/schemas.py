"""Pydantic models at the REST edge: what a request may say and what a response carries.

Requests forbid unknown keys, so a misspelt option (``max_entites``) is a 422 naming it
rather than a silently ignored default, and take each field only in its own JSON type
(strict: ``false`` is no confidence, ``0`` no bool, ``"5"`` no integer). Every string and
list is bounded by ``knotwork.limits``, the numbers every interface shares; the schema
declares what the facade checks (a date's form, a ``doc_id``'s characters, the value a
``datatype`` takes), so a request the schema admits is one the route accepts. Responses
mirror the ``as_dict`` shapes in ``knotwork.types`` and allow extra keys, so a field
added there reaches clients before this file learns about it; routes serialise them with
``exclude_unset`` so absent keys stay absent (``datatype`` only on literals,
``value_label`` only on entity values).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from .. import limits as L

Confidence = Annotated[float, Field(ge=0.0, le=1.0)]
# What ``checks.instant`` parses: a date, or a date and time with an optional offset.
_YEAR = r"(000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})"  # 0001-9999
_LEAP = r"([0-9]{2}(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)"
# A calendar date: each month's days, and February 29 of leap years only.
_DATE = (rf"({_YEAR}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]"
         rf"|30)|02-(0[1-9]|1[0-9]|2[0-8]))|{_LEAP}-02-29)")
ISO_TIME = (rf"^\s*{_DATE}([T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{{1,6}})?)?"
            r"(Z|[+-](0[0-9]|1[0-4]):[0-5][0-9])?)?\s*$")
# What ``sync.agent`` takes for a doc_id: letters, digits, . - _ / and spaces, no ".." part,
# not only spaces.
DOC_ID = r"^(?!(.*/)?\.\.(/|$))(?! *$)[\w.\-/ ]{1,200}$"


def _time(description: str) -> Any:
    return Field(None, max_length=L.DATE_CHARS, pattern=ISO_TIME, description=description,
                 json_schema_extra={"format": "iso-8601", "examples": ["2026-03-01",
                                                                       "2026-03-01T12:00:00Z"]})


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _Response(BaseModel):
    model_config = ConfigDict(extra="allow")


# ---------------------------------------------------------------- requests


class ContextRequest(_Request):
    """The seed's request shape (``{"query": "traefik", "max_entities": 10}``) and more."""

    query: str = Field(min_length=1, max_length=L.QUERY_CHARS, pattern=r"\S",
                       description="What the agent asks about.")
    max_entities: int | None = Field(None, ge=1, le=200,
                                     description="At most this many entities (default 20).")
    expand_links: bool = Field(True, description="Follow links from the direct hits.")
    link_depth: int | None = Field(None, ge=0, le=3, description="Link hops (default 1).")
    # (not Literal[0]: a Literal takes false and 0.0 for 0)
    max_tokens: Annotated[int, Field(ge=0, le=0)] | Annotated[int, Field(ge=50, le=200_000)] \
        | None = Field(
        None, description="Cut the rendered answer to this many tokens: 0 for no limit,"
                          " else at least 50.")
    scopes: list[Annotated[str, Field(max_length=L.SCOPE_CHARS)]] | None = Field(
        None, max_length=L.SCOPES_MAX, description="Read only these scopes.")
    as_of: str | None = _time("Answer as the store stood at this ISO 8601 time.")
    valid_at: str | None = _time("Only facts that held in the world at this ISO 8601 date (a"
                                 " fact without valid time holds at every date).")
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

    model_config = ConfigDict(extra="allow", strict=True)
    name: str = Field(max_length=L.NAME_CHARS)
    type: str | None = Field(None, max_length=L.TYPE_CHARS)
    supporting_text: str | None = Field(None, max_length=L.SUPPORTING_TEXT_CHARS)


class AgentRelationIn(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)
    source: str = Field(max_length=L.NAME_CHARS)
    target: str = Field(max_length=L.NAME_CHARS)
    type: str = Field(max_length=L.TYPE_CHARS)
    supporting_text: str | None = Field(None, max_length=L.SUPPORTING_TEXT_CHARS)
    confidence: Confidence | None = None


class DocumentRequest(_Request):
    """Agent ingest: raw text plus the entities and relations extracted from it."""

    # the doc_id pattern looks ahead (no ".." part), which only Python's engine does
    model_config = ConfigDict(extra="forbid", strict=True, regex_engine="python-re")

    doc_id: str = Field(min_length=1, max_length=L.DOC_ID_CHARS, pattern=DOC_ID, description=(
        "Letters, digits, '.', '-', '_', '/' and spaces; no '..' part."))
    title: str = Field("", max_length=L.TITLE_CHARS)
    source: str = Field("", max_length=L.SOURCE_CHARS)
    raw_content: str = Field(min_length=1, max_length=L.RAW_CONTENT_CHARS,
                             pattern=r"^(?=[^\x00]*\S)[^\x00]*$",
                             description="The text: not blank, no NUL character.")
    entities: list[AgentEntityIn] = Field(default_factory=list, max_length=L.ENTITIES_MAX)
    relations: list[AgentRelationIn] = Field(default_factory=list, max_length=L.RELATIONS_MAX)
    min_confidence: Confidence | None = None
    scope: str | None = Field(None, max_length=L.SCOPE_CHARS)


# A Literal's value, by its datatype, as ``checks.check_datatype`` reads it.
DATATYPE_RULES: list[JsonValue] = [
    {"if": {"properties": {"value_type": {"const": "Literal"}, "datatype": {"const": kind}},
            "required": ["datatype"]},
     "then": {"properties": {"value": {"pattern": pattern}}}}
    for kind, pattern in (
        ("integer", r"^\s*[-+]?[0-9]{1,18}\s*$"),
        ("number", r"^\s*[-+]?([0-9]{1,18}(\.[0-9]{0,18})?|\.[0-9]{1,18})([eE][-+]?[0-9]{1,2})?"
                   r"\s*$"),
        ("boolean", r"^\s*([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])\s*$"),
        ("date", rf"^\s*{_DATE}\s*$"),
        ("datetime", ISO_TIME))]


class FactRequest(_Request):
    """One fact to assert (trust ``asserted``)."""

    model_config = ConfigDict(extra="forbid", strict=True,
                              json_schema_extra={"allOf": DATATYPE_RULES})
    subject: str = Field(min_length=1, max_length=L.SUBJECT_CHARS, pattern=r"\S")
    predicate: str = Field(min_length=1, max_length=L.PREDICATE_CHARS, pattern=r"\w")
    value: str = Field(min_length=1, max_length=L.VALUE_CHARS, pattern=r"\S")
    value_type: Literal["Literal", "Entity"] = "Literal"
    datatype: Literal["string", "integer", "number", "boolean", "date", "datetime"] = Field(
        "string", description="A Literal value must read as its datatype (see the allOf).")
    confidence: Confidence = 1.0
    supporting_text: str = Field("", max_length=L.SUPPORTING_TEXT_CHARS)
    valid_from: str | None = _time("ISO 8601 date or time the fact holds from.")
    valid_to: str | None = _time("ISO 8601 date or time the fact holds until.")
    scope: str | None = Field(None, max_length=L.SCOPE_CHARS)
    reason: str | None = Field(None, max_length=L.REASON_CHARS)


class RetractRequest(_Request):
    reason: str = Field(min_length=1, max_length=L.REASON_CHARS, pattern=r"\S",
                        description="Why the fact is wrong or stale.")


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


class ErrorDetail(_Response):
    """One refused field of a 422: where (``["body", "subject"]``), the kind of problem,
    and why, in words (``"at most 1000 characters"``); never the value sent."""

    loc: list[str | int]
    type: str
    msg: str


class ErrorOut(_Response):
    """Every 4xx/5xx body: the error's kind and a message a person can act on (a 422's
    ``detail``: each refused field)."""

    error: str
    message: str
    detail: list[ErrorDetail] | None = None
