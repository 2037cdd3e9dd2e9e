"""Who a request is, and what it may do: the server's token and the store's tokens.

``TokenAuth`` (the outermost middleware) finds the request's principal:

- the server's own ``--token``: every scope, reads and writes;
- a live store token (``knotwork token create``): its scopes only, and no writes when
  it is read-only;
- no credentials: allowed only while the server has no ``--token`` and the store no live
  token (a loopback server nobody locked), with every right.

Credentials come as ``Authorization: Bearer <secret>`` or, for the web page, the
``knotwork_token`` cookie its sign-in form sets. Anything else is 401. A request outside
the principal's rights is 403, and each refusal is written to the audit log (``denied``)
with the token's name, the method and the path, never the secret.

Who writes (``actor``, recorded on every event a request's writes make): a store
token's name (``token:<name>``); else what the ``X-Actor`` header says (at most
``limits.ACTOR_CHARS`` printable characters, not starting ``token:``, which only a token
earns; anything else is 400); else ``rest:<client address>`` (``mcp:<client address>`` at
``/mcp``). It travels with the request (``request.state.actor``), never through shared
state: the server answers requests side by side.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Sequence
from typing import Any

import anyio.to_thread
from fastapi import Request
from starlette.datastructures import Headers

from .. import limits as L
from ..core import Knotwork
from ..errors import Forbidden
from ..results import Principal
from . import errors

log = logging.getLogger("knotwork.server")

COOKIE = "knotwork_token"
ACTOR_HEADER = "X-Actor"
FULL = Principal(name="server", scopes=(), read_only=False)
# requests a read-only token may make although their method writes: these POSTs read
_READS = {("POST", "/context"), ("POST", "/assemble"), ("POST", "/ask"), ("POST", "/find")}
_OPEN = ("/ui/login", "/ui/static/")  # the sign-in form and its stylesheet


def _credential(scope: dict[str, Any]) -> str:
    headers = Headers(scope=scope)
    scheme, _, given = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and given.strip():
        # header text arrives decoded as Latin-1: its bytes again are what was sent
        return given.strip().encode("latin-1", errors="replace").decode("utf-8", "replace")
    for part in headers.get("cookie", "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE and value:
            return value
    return ""


def is_write(method: str, path: str) -> bool:
    """Whether a request writes. MCP's messages all come as POSTs: a read-only token's MCP
    server has no tool that writes instead (``mcp_http``)."""
    return (method not in ("GET", "HEAD", "OPTIONS") and (method, path) not in _READS
            and not (path == "/mcp" or path.startswith("/mcp/")))


class TokenAuth:
    """Put the request's ``Principal`` in ``request.state.principal`` or answer 401/403."""

    def __init__(self, app: Any, kw: Knotwork, token: str | None) -> None:
        self.app = app
        self.kw = kw
        self.token = token.encode() if token else None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        secret = _credential(scope)
        principal = await anyio.to_thread.run_sync(self._principal, secret)
        path = scope.get("path", "")
        if principal is None and not path.startswith(_OPEN):
            await self._refuse(scope, receive, send, path)
            return
        principal = principal or Principal(name="anonymous", scopes=("-",), read_only=True)
        if principal.read_only and is_write(scope["method"], path) and \
                not path.startswith(_OPEN):
            await anyio.to_thread.run_sync(deny, self.kw, principal, scope["method"], path,
                                           "read-only token")
            message = "this token is read-only: it cannot write"
            if path.startswith("/ui"):
                from starlette.responses import HTMLResponse

                await HTMLResponse(f"<!doctype html><title>Refused</title><p>{message}."
                                   ' <a href="/">Back</a></p>', status_code=403)(
                    scope, receive, send)
                return
            await errors.error_response(403, "Forbidden", message)(scope, receive, send)
            return
        try:
            who = request_actor(scope, principal)
        except ValueError as exc:
            await errors.error_response(400, "BadRequest", str(exc))(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        state["principal"], state["actor"] = principal, who
        await self.app(scope, receive, send)

    def _principal(self, secret: str) -> Principal | None:
        if self.token is not None and secret and hmac.compare_digest(
                secret.encode("utf-8", "replace"), self.token):
            return FULL
        if secret:
            return self.kw.authenticate(secret)
        if self.token is None and not any(t.revoked_at is None for t in self.kw.tokens()):
            return FULL  # nothing locks this server
        return None

    async def _refuse(self, scope: dict[str, Any], receive: Any, send: Any, path: str) -> None:
        if path == "/" or path.startswith("/ui"):
            from starlette.responses import RedirectResponse

            await RedirectResponse("/ui/login", status_code=303)(scope, receive, send)
            return
        response = errors.error_response(401, "Unauthorized", "missing or wrong bearer token:"
                                         " send 'Authorization: Bearer <token>'")
        response.headers["WWW-Authenticate"] = "Bearer"
        await response(scope, receive, send)


def request_actor(scope: dict[str, Any], principal: Principal) -> str:
    """Who a request writes as (the module's rule); ``ValueError`` for a bad ``X-Actor``."""
    if principal.token_id is not None:
        return principal.name
    door = "mcp" if scope.get("path", "").startswith("/mcp") else "rest"
    raw = Headers(scope=scope).get(ACTOR_HEADER)
    if raw is None:
        client = scope.get("client")
        return f"{door}:{client[0] if client else 'unknown'}"
    # header text arrives decoded as Latin-1: its bytes again are what was sent
    said = raw.strip().encode("latin-1", errors="replace").decode("utf-8", "replace")
    if not said or len(said) > L.ACTOR_CHARS or not said.isprintable() or "\ufffd" in said:
        raise ValueError(f"the {ACTOR_HEADER} header must be 1 to {L.ACTOR_CHARS} printable"
                         " characters of UTF-8 (who makes the request, e.g. 'agent:planner')")
    if said.lower().startswith("token:"):
        raise ValueError(f"the {ACTOR_HEADER} header may not start with 'token:': that names"
                         " a store token, which the request must send instead")
    return said


def actor(request: Request) -> str:
    """Who this request writes as (``request_actor``, found by ``TokenAuth``)."""
    found = getattr(request.state, "actor", None)
    return found if isinstance(found, str) else "rest:unknown"


def deny(kw: Knotwork, principal: Principal, method: str, path: str, why: str,
         scope: str | None = None) -> None:
    """Log a refused request (the server log and the store's audit log)."""
    log.warning("denied %s %s to %s: %s", method, path, principal.name, why)
    kw.log_event("denied", scope=scope, reason=why, actor=principal.name,
                 detail={"method": method, "path": path, "token": principal.token_id})


def principal(request: Request) -> Principal:
    found = getattr(request.state, "principal", None)
    return found if isinstance(found, Principal) else FULL


def read_scopes(request: Request, asked: Sequence[str] | None) -> list[str] | None:
    """The scopes a read sees: those asked for (each one the token's), else the token's,
    else the server's (``--scope``). Asking for a scope outside the token's is 403."""
    p = principal(request)
    base: list[str] | None = request.app.state.scopes
    if not p.scopes:
        return list(asked) if asked else base
    outside = [s for s in asked or () if s not in p.scopes]
    if outside:
        deny(request.app.state.kw, p, request.method, request.url.path,
             f"scope {outside[0]} is not this token's", scope=outside[0])
        raise Forbidden(f"this token may not read scope {outside[0]!r}", scope=outside[0])
    return list(asked) if asked else list(p.scopes)


def write_scope(request: Request, asked: str | None) -> str | None:
    """The scope a write goes to: the one asked for, else the store's default; outside
    the token's scopes it is 403 (a token's first scope is its default)."""
    p = principal(request)
    if not p.scopes:
        return asked
    kw: Knotwork = request.app.state.kw
    target = asked or (kw.settings.scope if kw.settings.scope in p.scopes else p.scopes[0])
    if target not in p.scopes:
        deny(kw, p, request.method, request.url.path, f"scope {target} is not this token's",
             scope=target)
        raise Forbidden(f"this token may not write scope {target!r}", scope=target)
    return target


def whole_store(request: Request, what: str = "stats count every scope") -> None:
    """Refuse a scoped token what spans every scope (``/stats``, ``/lint``)."""
    p = principal(request)
    if p.scopes:
        deny(request.app.state.kw, p, request.method, request.url.path, what)
        raise Forbidden(f"{what}: not for a token limited to {', '.join(p.scopes)}")


def home_scope(request: Request) -> str:
    """The store's own scope (``--scope``: the wiki's, and extraction's), which a scoped
    token reaches only when it is one of the token's; else 403."""
    kw: Knotwork = request.app.state.kw
    home = kw.settings.scope
    read_scopes(request, [home])
    return home


def denied(request: Request, exc: Forbidden) -> Forbidden:
    """Log a ``Forbidden`` the facade raised for this request; the error to re-raise."""
    deny(request.app.state.kw, principal(request), request.method, request.url.path,
         str(exc), scope=exc.scope)
    return exc
