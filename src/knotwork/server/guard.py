"""ASGI guards of the REST door: JSON nesting depth and the headers every answer carries.

``JsonDepth`` refuses a JSON body nested deeper than ``MAX_JSON_DEPTH`` with the
documented 422 and the character where the limit was passed. Why: Python's parser gives
up on 100,000 nested brackets with a RecursionError, which FastAPI answered as a bare
400 "There was an error parsing the body"; no request knotwork takes nests past a few
levels. The scan costs one regular-expression pass over the brackets and quotes.

``SafeHeaders`` adds to every answer what a browser needs so a page or JSON of the store
cannot be sniffed as another type, framed by another site, or leak its URL as a referrer
to another site. Why ``same-origin`` and not ``no-referrer``: under ``no-referrer`` a
browser sends ``Origin: null`` with a form's POST, so the web page's own Approve buttons
were refused as posted from another site.
No CORS header is ever sent: browsers on other origins cannot read the API.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from . import errors

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_JSON_DEPTH = 64
_TOKENS = re.compile(rb'[\[\]{}"\\]')

SAFE_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
# For HTML (the /docs page): no framing, no plugins, forms post only here.
HTML_POLICY = b"frame-ancestors 'none'; object-src 'none'; base-uri 'self'; form-action 'self'"


def too_deep(body: bytes, limit: int = MAX_JSON_DEPTH) -> int | None:
    """The character offset where ``body``'s nesting passes ``limit``, or None.

    Brackets inside strings do not count; a backslash escapes the next byte in a string.
    Offsets count bytes, which are characters for the ASCII around brackets.
    """
    depth, in_string, skip_to = 0, False, -1
    for m in _TOKENS.finditer(body):
        at = m.start()
        if at < skip_to:
            continue
        ch = body[at]
        if in_string:
            if ch == 0x5C:  # backslash: the next byte is escaped
                skip_to = at + 2
            elif ch == 0x22:
                in_string = False
        elif ch == 0x22:
            in_string = True
        elif ch in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return at
        elif ch in (0x5D, 0x7D):
            depth -= 1
    return None


def replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the app ``body`` (read already by a middleware) as one
    message, then whatever ``receive`` brings next (a disconnect)."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if replayed:
            return await receive()
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


class JsonDepth:
    """Answer 422 to a JSON body nested deeper than ``limit``, before it is parsed."""

    def __init__(self, app: ASGIApp, limit: int = MAX_JSON_DEPTH) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            more = bool(message.get("more_body", False))
        body = b"".join(chunks)
        at = too_deep(body, self.limit) if body else None
        if at is not None:
            response = errors.error_response(
                422, "ValidationError", f"malformed JSON at character {at}: nested deeper "
                f"than {self.limit} levels", detail=[{"type": "json_invalid",
                                                      "loc": ["body", at],
                                                      "msg": "JSON nested too deep"}])
            await response(scope, receive, send)
            return
        await self.app(scope, replaying(body, receive), send)


class SafeHeaders:
    """Add ``SAFE_HEADERS`` to every answer, and a content policy to HTML ones."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                have = {k.lower() for k, _ in headers}
                headers += [(k, v) for k, v in SAFE_HEADERS if k not in have]
                html = any(k.lower() == b"content-type" and v.startswith(b"text/html")
                           for k, v in headers)
                if html and b"content-security-policy" not in have:
                    headers.append((b"content-security-policy", HTML_POLICY))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)
