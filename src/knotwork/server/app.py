"""The REST front end: a FastAPI app over one ``Knotwork`` facade (``knotwork serve``).

Every route parses a Pydantic model, makes one facade call and returns its ``as_dict``
shape; routes are plain ``def`` so FastAPI runs them in its thread pool (the facade is
synchronous, and the store gives each thread its own connection). Errors go through the
one table in ``server.errors``.

Safety by default: the app binds 127.0.0.1; ``check_bind`` refuses any other address
without a token, and with a token (the server's, or any the store holds) every request
needs ``Authorization: Bearer <token>`` (``server.auth``: scopes, read-only tokens).
Bodies over ``max_body`` bytes are refused with 413 before
any parsing. With a vault, the app catches up at start and a watcher keeps the store
current while it runs.

    >>> kw = Knotwork.open("vault")                         # doctest: +SKIP
    >>> serve(kw, host="127.0.0.1", port=3030)              # doctest: +SKIP
"""

from __future__ import annotations

import ipaddress
import logging
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping, Sequence
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any, Literal

import anyio.to_thread
import uvicorn
from fastapi import APIRouter, Depends, FastAPI, Path, Query, Request, Response
from fastapi.dependencies.models import Dependant
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.datastructures import Headers

from .. import limits as L
from ..core import Knotwork
from ..errors import ConfigError
from ..types import SyncReport
from . import auth, errors, guard
from .auth import TokenAuth
from .mcp_http import McpOverHttp
from .review import router as review_router
from .schemas import (
    ISO_TIME,
    ContextOut,
    ContextRequest,
    DocumentRequest,
    EntityOut,
    ErrorOut,
    FactOut,
    FactRequest,
    HealthOut,
    HistoryOut,
    IngestOut,
    SearchOut,
    StatsOut,
)
from .web import router as web_router

log = logging.getLogger("knotwork.server")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 3030
MAX_BODY = 2 * 1024 * 1024
_DRAIN_LIMIT = 64 * 1024 * 1024  # read (and drop) this much of an oversized body, then hang up

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 404, 409, 413, 422)}


# ---------------------------------------------------------------- binding and middleware


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_token(token: str | None) -> None:
    """Refuse a token anyone could guess or no client could send.

    Why: ``KNOTWORK_TOKEN='  '`` passed as "a token" and let a server bind 0.0.0.0 behind
    a secret of two blanks, and ``--token a`` was one guess away. A token must be at least
    ``limits.TOKEN_MIN_CHARS`` characters with no blank at either end (a header's value
    is sent trimmed, so such a token could never match).
    """
    if token is None:
        return
    if not token.strip():
        raise ConfigError("the token is blank: give a secret of at least "
                          f"{L.TOKEN_MIN_CHARS} characters", key="token")
    if token != token.strip():
        raise ConfigError("the token starts or ends with a blank, which no client can send"
                          " in a header: remove it", key="token")
    if len(token) < L.TOKEN_MIN_CHARS:
        raise ConfigError(f"the token is {len(token)} characters long; use at least "
                          f"{L.TOKEN_MIN_CHARS} (e.g. python -c 'import secrets; "
                          "print(secrets.token_urlsafe(24))')", key="token")


def check_bind(host: str, token: str | None) -> None:
    """Refuse to expose the store beyond this machine without a token, or with a weak one."""
    check_token(token)
    if not is_loopback(host) and not token:
        raise ConfigError(
            f"refusing to bind {host} without a token: anyone who can reach it could read "
            "and change the store", key="token",
            hint="pass --token or set KNOTWORK_TOKEN, or bind 127.0.0.1")


class BodyLimit:
    """Answer 413 to a body over ``limit`` bytes before anything parses it.

    Why drain: a client still sending a body it was refused sees a reset connection
    instead of the 413; reading (and dropping) a bounded amount lets it read the answer.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit():
            if int(declared) <= self.limit:
                await self.app(scope, receive, send)  # the server enforces the declared length
                return
            # refused by its header: drain what comes within a second, then answer (a client
            # that declares gigabytes and sends a few bytes waited for its own time-out)
            with anyio.move_on_after(1.0):
                await self._drain(receive, 0, True)
            await self._refuse(scope, receive, send)
            return
        chunks: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            size += len(message.get("body", b""))
            more = bool(message.get("more_body", False))
            if size > self.limit:
                await self._drain(receive, size, more)
                await self._refuse(scope, receive, send)
                return
            chunks.append(message.get("body", b""))
        await self.app(scope, guard.replaying(b"".join(chunks), receive), send)

    async def _drain(self, receive: Receive, size: int, more: bool) -> None:
        while more and size <= _DRAIN_LIMIT:
            message = await receive()
            size += len(message.get("body", b""))
            more = message["type"] == "http.request" and bool(message.get("more_body"))

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = errors.error_response(
            413, "PayloadTooLarge", f"request body is larger than {self.limit} bytes; "
            "split the document or raise the server's limit")
        response.headers["Connection"] = "close"
        await response(scope, receive, send)


# ---------------------------------------------------------------- routes

def _known_params(request: Request) -> None:
    """Refuse a query parameter the route does not take, as a body's unknown field is: a
    misspelt ``?mdoe=vector`` was silently answered as if it were not there."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    known = _query_names(route.dependant)
    unknown = [k for k in dict.fromkeys(request.query_params) if k not in known]
    if unknown:
        raise RequestValidationError([
            {"type": "extra_forbidden", "loc": ("query", k), "msg": "unknown parameter",
             "ctx": {"takes": sorted(known)}} for k in unknown])


def _query_names(dependant: Dependant) -> set[str]:
    names = {p.alias for p in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


router = APIRouter(responses=ERRORS, dependencies=[Depends(_known_params)])


def _kw(request: Request) -> Knotwork:
    kw: Knotwork = request.app.state.kw
    return kw


def _scopes(request: Request, asked: Sequence[str] | None) -> list[str] | None:
    """The scopes a read sees (``auth.read_scopes``: a token sees its own only)."""
    return auth.read_scopes(request, asked)


KW = Annotated[Knotwork, Depends(_kw)]
Ref = Annotated[str, Path(max_length=L.REF_CHARS, description=(
    "The entity's iri, label, alias or file path (URL-encoded; slashes allowed)."))]
AsOf = Annotated[str | None, Query(max_length=L.DATE_CHARS, pattern=ISO_TIME,
                                   description="ISO 8601 time.")]


@router.post("/context", response_model=ContextOut, tags=["read"],
             responses={200: {"content": {"text/markdown": {}}}})
def context(body: ContextRequest, request: Request, kw: KW) -> Response:
    """Ranked, cited context for a query: the KnowledgeContext (JSON) or Markdown.

    The body is returned exactly as rendered, because ``max_tokens`` counts that text.
    """
    ctx = kw.context(body.query, max_entities=body.max_entities, link_depth=body.link_depth,
                     expand_links=body.expand_links, max_tokens=body.max_tokens,
                     scopes=_scopes(request, body.scopes), as_of=body.as_of,
                     valid_at=body.valid_at, min_confidence=body.min_confidence,
                     trusts=body.trusts,
                     explain=body.explain, fmt=body.format)
    media = "application/json" if body.format == "json" else "text/markdown; charset=utf-8"
    return Response(kw.render(ctx, body.format), media_type=media)


@router.get("/search", response_model=SearchOut, tags=["read"])
def search(request: Request, kw: KW,
           q: Annotated[str, Query(min_length=1, max_length=L.QUERY_CHARS,
                                   description="Words.")],
           k: Annotated[int, Query(ge=1, le=50, description="Number of chunks.")] = 10,
           scope: Annotated[list[str] | None, Query(max_length=L.SCOPES_MAX,
                                                    description="Limit to scopes.")] = None,
           mode: Annotated[Literal["bm25", "vector", "hybrid"], Query(description=(
               "Full text, vectors, or both fused."))] = "bm25"
           ) -> dict[str, Any]:
    """Search over chunks (full text, vectors or both), each with its path, heading and
    lines."""
    hits = kw.search(q, k=k, scopes=_scopes(request, scope), mode=mode)
    return {"query": q, "hits": [h.as_dict() for h in hits]}


# Declared before /entities/{ref} because ``:path`` refs may contain slashes.
@router.get("/entities", response_model=EntityOut, response_model_exclude_unset=True,
            tags=["read"])
def entity_by_query(request: Request, kw: KW,
                    ref: Annotated[str, Query(min_length=1, max_length=L.REF_CHARS,
                                              description=(
                        "The entity's iri, label, alias or file path: any text, one that "
                        "ends in /facts included."))],
                    as_of: AsOf = None) -> dict[str, object]:
    """One entity, named in the query string: ``/entities/reports/facts`` is the facts of
    ``reports``, so a note at ``reports/facts.md`` is reached as ``?ref=reports/facts``."""
    return kw.entity(ref, as_of=as_of, scopes=_scopes(request, None)).as_dict()


@router.get("/entities/{ref:path}/facts", response_model=list[FactOut],
            response_model_exclude_unset=True, tags=["read"])
def entity_facts(ref: Ref, request: Request, kw: KW,
                 history: Annotated[bool, Query(description="Include retracted facts.")] = False,
                 as_of: AsOf = None) -> list[dict[str, object]]:
    """Facts whose subject is the entity, with provenance; ``history`` adds retracted ones."""
    return [f.as_dict() for f in kw.facts(ref, history=history, as_of=as_of,
                                          scopes=_scopes(request, None))]


@router.get("/entities/{ref:path}", response_model=EntityOut,
            response_model_exclude_unset=True, tags=["read"])
def entity(ref: Ref, request: Request, kw: KW,
           as_of: AsOf = None) -> dict[str, object]:
    """One entity: names, types, its facts and the facts that point at it."""
    return kw.entity(ref, as_of=as_of, scopes=_scopes(request, None)).as_dict()


@router.get("/history", response_model=HistoryOut, response_model_exclude_unset=True,
            tags=["read"])
def history(request: Request, kw: KW,
            entity: Annotated[str, Query(min_length=1, max_length=L.REF_CHARS,
                                         description="The entity.")],
            offset: Annotated[int, Query(ge=0, le=L.OFFSET_MAX)] = 0,
            limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> dict[str, Any]:
    """Every fact ever recorded about an entity and the events that touched them, paged."""
    return kw.history(entity, offset=offset, limit=limit,
                      scopes=_scopes(request, None)).as_dict()


@router.post("/documents", response_model=IngestOut, tags=["write"])
def documents(body: DocumentRequest, request: Request, kw: KW) -> dict[str, object]:
    """Agent ingest: store raw text with the entities and relations extracted from it.

    Items that cannot be backed by the text come back in ``dropped`` with the reason.
    """
    return kw.ingest_document(
        body.doc_id, body.title, body.source, body.raw_content,
        entities=[e.model_dump(exclude_none=True) for e in body.entities],
        relations=[r.model_dump(exclude_none=True) for r in body.relations],
        scope=auth.write_scope(request, body.scope),
        min_confidence=body.min_confidence, actor=auth.actor(request)).as_dict()


@router.post("/facts", status_code=201, response_model=FactOut,
             response_model_exclude_unset=True, tags=["write"])
def assert_fact(body: FactRequest, request: Request, kw: KW) -> dict[str, object]:
    """Assert one fact (trust ``asserted``); answers the stored fact with its id."""
    return kw.assert_fact(body.subject, body.predicate, body.value, value_type=body.value_type,
                          datatype=body.datatype, confidence=body.confidence,
                          supporting_text=body.supporting_text, valid_from=body.valid_from,
                          valid_to=body.valid_to, scope=auth.write_scope(request, body.scope),
                          reason=body.reason, actor=auth.actor(request)).as_dict()


@router.delete("/facts/{fact_id}", response_model=FactOut, response_model_exclude_unset=True,
               tags=["write"])
def retract_fact(fact_id: Annotated[int, Path(ge=1, description="The fact's id.")],
                 request: Request, kw: KW,
                 reason: Annotated[str, Query(
                     min_length=1, max_length=L.REASON_CHARS, pattern=r"\S",
                     description="Why the fact is wrong or stale (required).")]
                 ) -> dict[str, object]:
    """Retract a fact (never deleted); ``?reason=`` says why and is required.

    Why no body: a DELETE's body is ignored by many clients and proxies, and a reason
    that could come in either place could be declared required in neither."""
    return kw.retract_fact(fact_id, reason=reason, scopes=_scopes(request, None),
                           actor=auth.actor(request)).as_dict()


@router.get("/health", response_model=HealthOut, tags=["meta"])
def health(request: Request, kw: KW) -> dict[str, object]:
    """Liveness, the store in use and whether a watcher keeps it current."""
    return {"status": "ok", "version": _version(), "store": str(kw.store.path),
            "vault": str(kw.vault) if kw.vault else None,
            "watching": request.app.state.watcher is not None}


@router.get("/stats", response_model=StatsOut, tags=["meta"])
def stats(request: Request, kw: KW) -> dict[str, object]:
    """Counts of documents, chunks, entities, facts and events (not for a scoped token:
    its counts span every scope)."""
    auth.whole_store(request)
    return kw.stats().as_dict()


def _version() -> str:
    try:
        return version("knotwork")
    except PackageNotFoundError:
        return "unknown"


# ---------------------------------------------------------------- the app


def _log_report(report: SyncReport) -> None:
    log.info("applied: +%d ~%d -%d renamed %d, facts +%d -%d", report.added, report.updated,
             report.deleted, report.renamed, report.facts_added, report.facts_retracted)
    for issue in report.errors:
        log.warning("%s: %s", issue.path, issue.reason)


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Start watching (then catch up) with the vault; stop watching at shutdown.

    The watcher starts first so an edit during the catch-up is seen by one or the other.
    """
    kw: Knotwork = app.state.kw
    if app.state.sync_vault and kw.vault is not None:
        app.state.watcher = kw.watcher(
            on_report=_log_report, on_error=lambda exc: log.warning("watch: %s", exc)).start()
        # text, facts and links before serving; their vectors after, beside the requests
        _log_report(await anyio.to_thread.run_sync(lambda: kw.ingest(embed=False)))
        kw.embed_in_background(lambda exc: log.warning("embedding: %s", exc))
    try:
        async with anyio.create_task_group() as tasks:  # MCP over HTTP's session managers
            app.state.mcp.tasks = tasks
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()
    finally:
        if app.state.watcher is not None:
            app.state.watcher.stop()
            app.state.watcher = None


def create_app(kw: Knotwork, *, token: str | None = None, max_body: int = MAX_BODY,
               scopes: Sequence[str] | None = None, sync_vault: bool = True) -> FastAPI:
    """The REST app over ``kw``; with ``token``, every request must present it."""
    check_token(token)
    # docs_url/redoc_url: FastAPI's pages load from a CDN; ``server.docs`` serves /docs
    app = FastAPI(title="knotwork", version=_version(), lifespan=_lifespan, docs_url=None,
                  redoc_url=None, description="A local-first context graph for AI agents:"
                  " Markdown in, cited and current context out.")
    app.state.kw = kw
    app.state.scopes = list(scopes) if scopes else None
    app.state.sync_vault = sync_vault
    app.state.watcher = None
    app.include_router(router)
    from . import assemble as _assemble  # they import this module's pieces
    from . import wiki

    app.include_router(wiki.router_for(tuple(
        c.strip() for c in kw.settings.wiki_categories.split(",") if c.strip())))
    app.include_router(_assemble.router_for(_assemble.tier_names(kw)))
    from . import llm as _llm

    app.include_router(_llm.router, responses={**ERRORS, 503: {"model": ErrorOut}},
                       dependencies=[Depends(_known_params)])
    from . import add_context as _add_context

    app.include_router(_add_context.router_for(kw.parser_types()), responses=ERRORS,
                       dependencies=[Depends(_known_params)])
    app.include_router(review_router, responses=ERRORS, dependencies=[Depends(_known_params)])
    from .find import router as find_router

    app.include_router(find_router, responses=ERRORS, dependencies=[Depends(_known_params)])
    app.include_router(web_router)
    from .docs import router as docs_router

    app.include_router(docs_router)
    app.state.mcp = McpOverHttp(kw, app.state.scopes)
    app.mount("/mcp", app.state.mcp)
    errors.install(app)
    app.add_middleware(guard.JsonDepth)  # inside the body limit: it reads a bounded body
    app.add_middleware(BodyLimit, limit=max_body)
    # outermost: refuse before reading bodies
    app.add_middleware(TokenAuth, kw=kw, token=token)
    app.add_middleware(guard.SafeHeaders)  # outermost: every answer, a 401 too
    return app


def serve(kw: Knotwork, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
          token: str | None = None, scopes: Sequence[str] | None = None,
          log_level: str = "info") -> None:
    """Run the app under uvicorn until Ctrl-C or SIGTERM; refuses an unsafe bind.

    Call it from the main thread (it installs a SIGTERM handler, as uvicorn does).
    """
    check_bind(host, token)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="knotwork serve %(levelname)s %(name)s: %(message)s")
    logging.getLogger("knotwork").setLevel(logging.INFO)
    app = create_app(kw, token=token, scopes=scopes)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level=log_level,
                                           lifespan="on"))
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal; with
    # SIGTERM mapped to KeyboardInterrupt, both end here and the caller can close the store.
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        server.run()
    except KeyboardInterrupt:
        log.info("stopped")
    finally:
        signal.signal(signal.SIGTERM, previous)
