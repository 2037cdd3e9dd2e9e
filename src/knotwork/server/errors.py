"""The REST boundary for errors: ``KnotworkError`` → HTTP status, in one table.

Every error body has the same shape (``ErrorOut``): ``{"error": kind, "message": text}``,
plus ``detail`` for validation errors, so a client branches on ``error`` and shows
``message``. Malformed JSON and schema violations are 422 with the location of each
problem in the message; anything not in the table is a 500 that leaks no internals.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.routing import Match

from ..errors import (
    BackendUnavailable,
    ConfigError,
    Conflict,
    Forbidden,
    IngestError,
    InvalidQuery,
    KnotworkError,
    NotFound,
    QueryError,
    SchemaVersionError,
    StoreError,
)
from ..invalid import problems, where

# First isinstance match wins, so subclasses come before their bases.
STATUS: dict[type[KnotworkError], int] = {
    Forbidden: 403,
    NotFound: 404,
    Conflict: 409,
    InvalidQuery: 400,
    QueryError: 400,
    IngestError: 422,
    BackendUnavailable: 503,
    SchemaVersionError: 500,
    StoreError: 500,
    ConfigError: 500,
    KnotworkError: 500,
}


def status_for(exc: KnotworkError) -> int:
    return next(code for kind, code in STATUS.items() if isinstance(exc, kind))


def error_response(status: int, kind: str, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": kind, "message": message, **extra}, status_code=status)


async def _knotwork_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, KnotworkError)
    return error_response(status_for(exc), type(exc).__name__, str(exc))


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    """422 naming each bad field and why (``knotwork.invalid``: never the input sent back,
    nor a validator's boilerplate); malformed JSON says where the parser stopped."""
    assert isinstance(exc, RequestValidationError)
    detail = problems(exc.errors())
    parts = []
    for d in detail:
        if d["type"] == "json_invalid":
            at = d["loc"][-1] if len(d["loc"]) > 1 else 0
            parts.append(f"malformed JSON at character {at}: "
                         f"{d['msg'].removeprefix('malformed JSON (').removesuffix(')')}")
        elif d["loc"] == ["body"] and "json" not in request.headers.get("content-type", ""):
            # curl -d sends a form; FastAPI then reads the body as text, not JSON
            parts.append("the body must be JSON sent with 'Content-Type: application/json'"
                         f" (this one came as {request.headers.get('content-type') or 'none'})")
        else:
            parts.append(f"{where(d['loc'])}: {d['msg']}")
    return error_response(422, "ValidationError", "; ".join(parts) or "invalid request",
                          detail=detail)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    """Starlette's own errors (unknown route, wrong method) in the same body shape."""
    assert isinstance(exc, HTTPException)
    kind = HTTPStatus(exc.status_code).phrase.replace(" ", "")
    message = exc.detail if isinstance(exc.detail, str) else kind
    if exc.status_code == 404 and message == "Not Found":
        message = f"no route {request.method} {request.url.path}"
    response = error_response(exc.status_code, kind, message)
    response.headers.update(exc.headers or {})
    if exc.status_code == 405:
        response.headers["Allow"] = ", ".join(_methods(request))
    return response


def _methods(request: Request) -> list[str]:
    """Every method some route takes at this path: Starlette's 405 names only the first
    route that matched the path, so ``OPTIONS /wiki/pages`` said ``Allow: POST`` of a
    path that is also read with GET."""
    found: set[str] = set()
    for route in request.app.router.routes:
        match, _ = route.matches({**request.scope, "method": "-"})
        if match is Match.PARTIAL:
            found |= set(getattr(route, "methods", None) or ())
    return sorted(found)


def install(app: FastAPI) -> None:
    """Register the handlers that turn errors into ``ErrorOut`` bodies."""
    app.add_exception_handler(KnotworkError, _knotwork_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
