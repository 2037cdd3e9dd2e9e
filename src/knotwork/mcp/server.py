"""The MCP front end: knotwork's tools for an agent, spoken over stdio.

Each tool is a thin adapter: its typed parameters become the JSON schema the model sees,
it makes one facade call and returns a bounded answer as structured content *and* JSON
text (clients differ in which they read). Bounds are part of the contract, because a
model's context window is the scarce resource: ``context`` is cut to ``max_tokens``,
``search`` returns at most 50 chunks, ``get_entity`` and ``history`` page their facts.

Errors: a ``KnotworkError`` becomes a tool error (``isError``) whose text names the kind
and the reason, through the one table ``TOOL_ERRORS``; the SDK turns anything else into a
generic tool error, so no call can take the server down.

The server keeps the store current: ``serve_stdio`` catches up with the vault, then a
``VaultWatcher`` applies each edit through the same incremental path as ``ingest``.
stdout is the protocol, so logging goes to stderr only.

    >>> with Knotwork.open("vault") as kw:           # doctest: +SKIP
    ...     serve_stdio(kw)                           # blocks until the client hangs up
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any, Literal, NotRequired

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError
from typing_extensions import TypedDict  # pydantic needs it below Python 3.12

from .. import invalid
from .. import limits as L
from ..core import Knotwork
from ..errors import (
    ConfigError,
    Conflict,
    Forbidden,
    IngestError,
    InvalidQuery,
    KnotworkError,
    NotFound,
    QueryError,
    StoreError,
)
from ..types import SyncReport
from .shape import fit, md_entity, md_history, md_search, md_stats

log = logging.getLogger("knotwork.mcp")

INSTRUCTIONS = (
    "knotwork is a context graph built from a folder of Markdown notes plus facts agents "
    "assert. Start with `context` for a question; use `search` for exact passages, "
    "`get_entity` for one thing in full, `history` for how facts changed, `find` for "
    "entities by their facts ('status=accepted'), `recent_changes` for what changed. Every"
    " fact carries "
    "its source (file and lines): cite it. Record what you learn with `ingest_document` or "
    "`assert_fact`; correct mistakes with `retract_fact` (facts are never deleted). Keep a "
    "wiki: `search_wiki` before `context`, `write_page` to file a summary, entity or topic "
    "page (cite facts as kw:fact/<id>), `lint` to find what went stale."
)

# KnotworkError -> the label a model reads before the reason; first isinstance match wins.
TOOL_ERRORS: dict[type[KnotworkError], str] = {
    Forbidden: "forbidden",
    NotFound: "not found",
    Conflict: "conflict",
    InvalidQuery: "invalid arguments",
    QueryError: "invalid query",
    IngestError: "cannot ingest",
    ConfigError: "configuration error",
    StoreError: "store error",
    KnotworkError: "error",
}



def _hints(*, read_only: bool, destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(read_only_hint=read_only, destructive_hint=destructive,
                           idempotent_hint=idempotent, open_world_hint=False)


READ = _hints(read_only=True, destructive=False, idempotent=True)
# Re-sending a doc_id retracts the facts it no longer states; the same payload twice is a no-op.
REPLACE = _hints(read_only=False, destructive=True, idempotent=True)
ADD = _hints(read_only=False, destructive=False, idempotent=False)
RETRACT = _hints(read_only=False, destructive=True, idempotent=False)


class ContextOut(TypedDict):
    """The KnowledgeContext (``KnowledgeContext.as_dict``), published as the output schema."""

    query: str
    entities: list[dict[str, Any]]
    evidence: list[dict[str, Any]]
    summary: dict[str, Any]
    evidence_chain: NotRequired[list[str]]
    notes: NotRequired[list[str]]


class AgentEntity(TypedDict):
    """An entity the agent found in ``raw_content``."""

    name: Annotated[str, Field(max_length=L.NAME_CHARS, description=(
        "As written in the text, e.g. 'Postgres'."))]
    type: NotRequired[Annotated[str, Field(max_length=L.TYPE_CHARS, description=(
        "e.g. service, person, host."))]]
    supporting_text: NotRequired[Annotated[str, Field(
        max_length=L.SUPPORTING_TEXT_CHARS, description=(
            "Words of raw_content that mention it (default: the name itself)."))]]


class AgentRelation(TypedDict):
    """A relation between two entities, with the exact text that states it."""

    source: Annotated[str, Field(max_length=L.NAME_CHARS, description=(
        "Name of the subject entity."))]
    target: Annotated[str, Field(max_length=L.NAME_CHARS, description=(
        "Name of the object entity."))]
    type: Annotated[str, Field(max_length=L.TYPE_CHARS, description=(
        "The relation, e.g. 'runs_on', 'depends_on'."))]
    supporting_text: NotRequired[Annotated[str, Field(
        max_length=L.SUPPORTING_TEXT_CHARS, description=(
            "The words of raw_content that state it; without them the relation is "
            "dropped."))]]
    confidence: NotRequired[Annotated[float, Field(ge=0.0, le=1.0)]]


Json = Annotated[CallToolResult, dict[str, Any]]
Ref = Annotated[str, Field(min_length=1, max_length=L.REF_CHARS, description=(
    "The entity: its label ('Traefik'), an alias, its file path ('services/Traefik.md') "
    "or its IRI ('kw:note/services/Traefik')."))]


@contextmanager
def _tool_errors() -> Iterator[None]:
    """Turn a KnotworkError into a ToolError the model can read and act on."""
    try:
        yield
    except KnotworkError as exc:
        kind = next(label for t, label in TOOL_ERRORS.items() if isinstance(exc, t))
        raise ToolError(f"{kind}: {exc}") from exc


def _result(data: dict[str, Any], text: str | None = None) -> CallToolResult:
    """Structured content, and as text the prompt-ready Markdown (``shape``) or, for the
    write tools' short receipts, the same data as compact JSON."""
    body = text if text is not None else json.dumps(data, ensure_ascii=False,
                                                    separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=body)], structured_content=data)


def write_tools(app: MCPServer[Any]) -> list[str]:
    """The tools that write: every tool not annotated read-only (a tool added later is
    left out of a read-only server unless it says it only reads)."""
    manager = getattr(app, "_tool_manager", None)
    return [t.name for t in (manager.list_tools() if manager is not None else [])
            if t.annotations is None or t.annotations.read_only_hint is not True]


def _budget_field(default: int) -> Any:
    return Field(ge=100, le=32_000, description=(
        f"Token budget of the answer's text (default {default}): lists are cut from the end"
        " to fit, and `cut` says so."))


Budget4000 = Annotated[int, _budget_field(4000)]
Budget2000 = Annotated[int, _budget_field(2000)]


def _version() -> str:
    """The installed knotwork's version, for ``serverInfo`` (as REST's OpenAPI says it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("knotwork")
    except PackageNotFoundError:
        return "unknown"


class _Server(MCPServer[Any]):
    """The SDK's server, with tool arguments refused in knotwork's words.

    Why: the SDK sends a refused argument as Pydantic's text, with a documentation URL per
    problem and the input echoed back (``input_value='ssss…'``, a whole document); the
    model gets ``invalid arguments for <tool>: <field>: <why>`` instead
    (``knotwork.invalid``), the same words REST's 422 uses.
    """

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            raise ToolError(_refused(self, name, cause)) from cause


def _refused(app: MCPServer[Any], name: str, exc: ValidationError) -> str:
    manager = getattr(app, "_tool_manager", None)
    tool = manager.get_tool(name) if manager is not None else None
    takes = sorted(tool.parameters.get("properties", {})) if tool is not None else []
    parts = []
    for p in invalid.problems(exc.errors()):
        why = p["msg"]
        if p["type"] == "extra_forbidden":
            why = f"not an argument of {name} (it takes: {', '.join(takes) or 'none'})"
        parts.append(f"{invalid.where(p['loc'])}: {why}")
    return f"invalid arguments for {name}: " + "; ".join(parts)


def build_server(kw: Knotwork, *, scopes: Sequence[str] | None = None,
                 read_only: bool = False) -> MCPServer[Any]:
    """An MCP server whose tools read and write ``kw``; ``scopes`` limits what reads see,
    and ``read_only`` leaves out the tools that write (``write_tools``)."""
    app: MCPServer[Any] = _Server("knotwork", instructions=INSTRUCTIONS, log_level="WARNING",
                                    version=_version())
    read_scopes = list(scopes) if scopes else None
    # where its writes land: the store's scope, unless the server is limited to others
    write_scope = (None if not read_scopes or kw.settings.scope in read_scopes
                   else read_scopes[0])

    @app.tool(title="Context for a question", annotations=READ)
    def context(
        query: Annotated[str, Field(min_length=1, max_length=L.QUERY_CHARS, description=(
            "What you need to know about, in words: 'traefik', 'what runs on kota'."))],
        max_entities: Annotated[int, Field(ge=1, le=50, description=(
            "At most this many entities in the answer."))] = 10,
        expand_links: Annotated[bool, Field(description=(
            "Add the entities the direct hits link to (and are linked from)."))] = True,
        link_depth: Annotated[int, Field(ge=0, le=3, description=(
            "How many hops of links to follow from the direct hits."))] = 1,
        max_tokens: Annotated[int, Field(ge=100, le=32_000, description=(
            "Token budget of the answer (default 4000), counted in the format sent; "
            "lower-ranked entities, facts and evidence are cut to fit (summary.truncated "
            "says so)."))] = 4000,
        format: Annotated[Literal["markdown", "json"], Field(description=(
            "The text sent: markdown (prompt-ready, default) or json; the structured "
            "content is the same either way."))] = "markdown",
        as_of: Annotated[str | None, Field(description=(
            "Answer as the store stood at this ISO time ('2026-03-01T12:00:00Z')."))] = None,
        valid_at: Annotated[str | None, Field(description=(
            "Only facts that held in the world at this ISO date; a fact without valid "
            "time holds at every date."))] = None,
        trusts: Annotated[list[Literal["stated", "asserted", "extracted", "unreviewed",
                                       "approved", "rejected"]] | None, Field(description=(
            "Only facts of these trust states, e.g. ['stated', 'approved']; rejected "
            "facts appear only when named."))] = None,
        min_confidence: Annotated[float, Field(ge=0.0, le=1.0, description=(
            "Leave out facts below this confidence."))] = 0.0,
    ) -> Annotated[CallToolResult, ContextOut]:
        """Ranked, cited context for a question: the entities that match, their facts (each
        with its source file and lines), linked entities and supporting passages.

        The first tool to call. The answer never exceeds max_tokens."""
        with _tool_errors():
            _first_catch_up(kw)
            ctx = kw.context(query, max_entities=max_entities, expand_links=expand_links,
                             link_depth=link_depth, max_tokens=max_tokens, scopes=read_scopes,
                             as_of=as_of, valid_at=valid_at, trusts=trusts,
                             min_confidence=min_confidence, fmt=format)
            return _result(ctx.as_dict(), kw.render(ctx, format))

    @app.tool(title="Search passages", annotations=READ)
    def search(
        query: Annotated[str, Field(min_length=1, max_length=L.QUERY_CHARS, description=(
            "Words to find (full text)."))],
        k: Annotated[int, Field(ge=1, le=50, description="Number of passages.")] = 10,
        mode: Annotated[Literal["bm25", "vector", "hybrid"], Field(description=(
            "bm25: the words as written; vector: by meaning (needs embeddings); hybrid: "
            "both, fused."))] = "bm25",
        per_note: Annotated[int | None, Field(ge=1, le=50, description=(
            "At most this many passages of one note (default: no limit)."))] = None,
        max_tokens: Budget4000 = 4000,
    ) -> Json:
        """Search the notes' passages: each hit has its path, heading, line range and text.
        Use it to quote exact wording; use `context` for facts."""
        with _tool_errors():
            _first_catch_up(kw)
            hits = kw.search(query, k=k, scopes=read_scopes, mode=mode, per_note=per_note)
            return _result(*fit(_fresh(kw, {"query": query, "hits": [h.as_dict() for h in hits]}),
                                ("hits",), md_search, kw.count_tokens, max_tokens))

    @app.tool(title="Get one entity", annotations=READ)
    def get_entity(
        ref: Ref,
        max_facts: Annotated[int, Field(ge=1, le=500, description=(
            "List at most this many facts (and as many incoming links)."))] = 100,
        max_tokens: Budget4000 = 4000,
    ) -> Json:
        """One entity in full: its names, types, live facts with sources, and the facts of
        other entities that point at it. Fails with 'not found' for an unknown name."""
        with _tool_errors():
            _first_catch_up(kw)
            data = kw.entity(ref, scopes=read_scopes).as_dict()
        return _result(*fit(_fresh(kw, _capped(data, ("facts", "incoming"), max_facts)),
                            ("facts", "incoming"), md_entity, kw.count_tokens, max_tokens))

    @app.tool(title="Ingest a document", annotations=REPLACE)
    def ingest_document(
        doc_id: Annotated[str, Field(min_length=1, max_length=L.DOC_ID_CHARS, description=(
            "Stable id of the document, e.g. 'chat/2024-06-01-deploy'. Re-sending an id "
            "replaces that document: facts it no longer states are retracted."))],
        title: Annotated[str, Field(max_length=L.TITLE_CHARS, description=(
            "Title of the document."))],
        raw_content: Annotated[str, Field(min_length=1, max_length=L.RAW_CONTENT_CHARS,
                                          description=(
            "The full text (Markdown welcome); every supporting_text must occur in it."))],
        source: Annotated[str, Field(max_length=L.SOURCE_CHARS, description=(
            "Where the text came from (URL, chat)."))] = "",
        entities: Annotated[list[AgentEntity] | None, Field(
            max_length=L.ENTITIES_MAX, description="Entities the text names.")] = None,
        relations: Annotated[list[AgentRelation] | None, Field(
            max_length=L.RELATIONS_MAX, description=(
            "Relations the text states between entities (given here or already known)."))]
        = None,
        min_confidence: Annotated[float | None, Field(ge=0.0, le=1.0, description=(
            "Drop relations below this confidence (default: the store's setting)."))] = None,
        ctx: Context | None = None,
    ) -> Json:
        """Store a document you read or wrote, with the entities and relations you extracted
        from it. Each one must be backed by text in raw_content; those that are not (or whose
        endpoints are unknown, or whose confidence is too low) come back in `dropped` with
        the reason: fix and re-send."""
        with _tool_errors():
            return _result(kw.ingest_document(
                doc_id, title, source, raw_content, entities=[dict(e) for e in entities or ()],
                relations=[dict(r) for r in relations or ()], scope=write_scope,
                min_confidence=min_confidence, actor=actor_of(ctx)).as_dict())

    @app.tool(title="Assert a fact", annotations=ADD)
    def assert_fact(
        subject: Annotated[str, Field(min_length=1, max_length=L.SUBJECT_CHARS, description=(
            "The entity the fact is about (label, alias, path or IRI; a new name is fine)."))],
        predicate: Annotated[str, Field(min_length=1, max_length=L.PREDICATE_CHARS,
                                        description=(
            "The property or relation, e.g. 'runs_on', 'owner', 'port'."))],
        value: Annotated[str, Field(min_length=1, max_length=L.VALUE_CHARS, description=(
            "The value: a literal, or the name of another entity (see value_type)."))],
        value_type: Annotated[Literal["Literal", "Entity"], Field(description=(
            "'Entity' links to the entity named by value; 'Literal' stores text/number."))]
        = "Literal",
        datatype: Literal["string", "integer", "number", "boolean", "date", "datetime"]
        = "string",
        confidence: Annotated[float, Field(ge=0.0, le=1.0)] = 1.0,
        supporting_text: Annotated[str, Field(max_length=L.SUPPORTING_TEXT_CHARS,
                                              description="Why you believe it.")] = "",
        valid_from: Annotated[str | None, Field(max_length=L.DATE_CHARS, description=(
            "ISO date it holds from."))] = None,
        valid_to: Annotated[str | None, Field(max_length=L.DATE_CHARS, description=(
            "ISO date it holds until."))] = None,
        reason: Annotated[str | None, Field(max_length=L.REASON_CHARS, description=(
            "Recorded in the audit log."))] = None,
        ctx: Context | None = None,
    ) -> Json:
        """Record one fact you know (trust 'asserted', kept apart from what the notes say).
        Returns the stored fact with its id, which `retract_fact` takes."""
        with _tool_errors():
            row = kw.assert_fact(subject, predicate, value, value_type=value_type,
                                 datatype=datatype, confidence=confidence,
                                 supporting_text=supporting_text, valid_from=valid_from,
                                 valid_to=valid_to, scope=write_scope, reason=reason,
                                 actor=actor_of(ctx))
            return _result(row.as_dict())

    @app.tool(title="Retract a fact", annotations=RETRACT)
    def retract_fact(
        fact_id: Annotated[int, Field(ge=1, description="The fact's id (from any answer).")],
        reason: Annotated[str, Field(min_length=1, max_length=L.REASON_CHARS, description=(
            "Why it is wrong or stale."))],
        ctx: Context | None = None,
    ) -> Json:
        """Retract a fact that is wrong or no longer true. It is never deleted: `history`
        still shows it, with your reason. Fails if the id is unknown or already retracted.
        A fact stated in a note comes back when the note is re-ingested: edit the note."""
        with _tool_errors():
            return _result(kw.retract_fact(fact_id, reason=reason, scopes=read_scopes,
                                           actor=actor_of(ctx)).as_dict())

    @app.tool(title="History of an entity", annotations=READ)
    def history(
        ref: Ref,
        offset: Annotated[int, Field(ge=0, le=L.OFFSET_MAX,
                                     description="Skip this many facts.")] = 0,
        limit: Annotated[int, Field(ge=1, le=200, description="Facts per page.")] = 50,
        max_tokens: Budget4000 = 4000,
    ) -> Json:
        """Every fact ever recorded about an entity, retracted ones included, with the events
        (who, when, why) that touched them. Paged: follow next_offset until it is null."""
        with _tool_errors():
            _first_catch_up(kw)
            page = _fresh(kw, kw.history(ref, offset=offset, limit=limit,
                                              scopes=read_scopes).as_dict())
            data, text = fit(page, ("facts",), md_history, kw.count_tokens,
                             max_tokens)
            if data["cut"] and data["facts"]:  # the next page starts after what was shown
                data["next_offset"] = offset + len(data["facts"])
            return _result(data, text)

    @app.tool(title="Knowledge base statistics", annotations=READ)
    def stats(max_tokens: Budget2000 = 2000) -> Json:
        """Size of the knowledge base: documents, chunks, entities, live and retracted facts,
        events, and names that more than one note claims."""
        with _tool_errors():
            whole_store(read_scopes, "stats count every scope")
            return _result(*fit(_fresh(kw, kw.stats().as_dict()), ("ambiguous_names", "warnings"),
                                md_stats, kw.count_tokens, max_tokens))

    from . import notes

    notes.register(app, kw, read_scopes)
    from . import find as _find

    _find.register(app, kw, read_scopes)

    from . import wiki

    wiki.register(app, kw, read_scopes)
    from .assemble import register as register_assemble  # it imports this module's pieces

    register_assemble(app, kw, read_scopes)
    from . import ask as _ask

    _ask.register(app, kw, read_scopes)
    from . import add_context as _add_context

    _add_context.register(app, kw, read_scopes)
    if read_only:
        for name in write_tools(app):
            app.remove_tool(name)
    _strict_arguments(app)
    return app


def _as_sent(data: dict[str, Any]) -> dict[str, Any]:
    return data


def _strict_arguments(app: MCPServer[Any]) -> None:
    """Make every tool refuse an argument it does not take, or of another JSON type, and
    say so in its schema.

    Why unknown keys: the SDK's argument models ignore them, so ``max_token: 500`` (a
    typo) was silently dropped and the answer came back at the default budget. Why strict
    types: pydantic's lax mode took ``true`` for an integer, so ``retract_fact {"fact_id":
    true}`` retracted fact 1, ``"7"`` retracted fact 7, ``"yes"`` was a bool and ``"0.5"``
    a confidence. The SDK also decodes a string argument as JSON before validating
    (``"true"`` became a bool); arguments are validated as sent instead. The SDK offers no
    option for either; its tool list and argument models are reached as it builds them (a
    test checks both refusals, so an SDK that changes this shape is noticed, not lax).
    """
    manager = getattr(app, "_tool_manager", None)
    for tool in manager.list_tools() if manager is not None else []:
        model = tool.fn_metadata.arg_model
        config = model.model_config.copy()
        config["extra"] = "forbid"
        config["strict"] = True
        tool.fn_metadata.arg_model = type(model.__name__, (model,), {"model_config": config})
        object.__setattr__(tool.fn_metadata, "pre_parse_json", _as_sent)
        tool.parameters = {**tool.parameters, "additionalProperties": False}


def actor_of(ctx: Context | None) -> str | None:
    """Who a tool call writes as. Over HTTP (``/mcp``), the actor the REST door found for
    the request (``server.auth``: the token's name, ``X-Actor``, the client's address);
    over stdio, ``mcp:<clientInfo.name>`` from the client's ``initialize``; else None
    (the facade's own). Read from the call's context: calls run side by side."""
    if ctx is None:
        return None
    request = ctx.request_context.request
    state = getattr(request, "scope", {}).get("state") if request is not None else None
    if isinstance(state, dict) and isinstance(state.get("actor"), str):
        return str(state["actor"])
    params = ctx.session.client_params
    name = params.client_info.name if params is not None else ""
    name = "".join(c for c in name if c.isprintable()).strip()[:L.ACTOR_CHARS - 4]
    return f"mcp:{name}" if name else None


def whole_store(read_scopes: Sequence[str] | None, what: str) -> None:
    """``Forbidden`` on a server limited to scopes, for a tool whose answer spans them all."""
    if read_scopes:
        raise Forbidden(f"{what}: not for a server limited to {', '.join(read_scopes)}")


def home_scope(kw: Knotwork, read_scopes: Sequence[str] | None) -> None:
    """``Forbidden`` on a server limited to scopes that leave out the store's own (the
    wiki's)."""
    if read_scopes and kw.settings.scope not in read_scopes:
        raise Forbidden(f"the wiki is scope {kw.settings.scope!r}'s: not one of"
                        f" {', '.join(read_scopes)}", scope=kw.settings.scope)


def _capped(data: dict[str, Any], keys: Sequence[str], limit: int) -> dict[str, Any]:
    """Keep at most ``limit`` items of each list in ``keys``; say how many there were."""
    for key in keys:
        items = data[key]
        data[f"total_{key}"] = len(items)
        data[key] = items[:limit]
    return data


def _first_catch_up(kw: Knotwork) -> None:
    """A read during the first catch-up waits for it, bounded (``FIRST_CATCH_UP_WAIT``);
    past that it answers from the store as it stands, saying what is pending."""
    if kw.freshness is not None:
        kw.freshness.wait()


def _fresh(kw: Knotwork, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with ``index_fresh`` and ``pending_changes`` (when a catch-up is known)."""
    if kw.freshness is not None:
        fresh, pending = kw.freshness()
        data["index_fresh"], data["pending_changes"] = fresh, pending
    return data


def _log_report(report: SyncReport) -> None:
    log.info("applied: +%d ~%d -%d renamed %d, facts +%d -%d", report.added, report.updated,
             report.deleted, report.renamed, report.facts_added, report.facts_retracted)
    for issue in report.errors:
        log.warning("%s: %s", issue.path, issue.reason)


def serve_stdio(kw: Knotwork, *, scopes: Sequence[str] | None = None) -> None:
    """Catch up with the vault, watch it, and speak MCP on stdin/stdout until EOF.

    The watcher starts before the catch-up, so an edit made during the catch-up is seen
    by one or the other (applying a file twice is a no-op). The catch-up runs beside the
    server: a client's ``initialize`` is answered at once (a first sync of a large vault
    took longer than clients wait), and tools answer from the store as it stands.
    """
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="knotwork mcp %(levelname)s %(name)s: %(message)s")
    logging.getLogger("knotwork").setLevel(logging.INFO)
    server = build_server(kw, scopes=scopes)
    watcher = None
    if kw.vault is not None:
        watcher = kw.watcher(on_report=_log_report,
                             on_error=lambda exc: log.warning("watch: %s", exc)).start()
        kw.catch_up_in_background(
            on_report=_log_report, on_error=lambda exc: log.warning("catch-up failed: %s", exc))
    try:
        server.run("stdio")
    finally:
        if watcher is not None:
            watcher.stop()
