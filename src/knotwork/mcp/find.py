"""MCP tools for structured reads: ``find`` (entities by their live facts) and
``recent_changes`` (documents changed since a time)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from .. import limits as L
from ..core import Knotwork
from .server import READ, Budget4000, Json, _first_catch_up, _fresh, _result, _tool_errors
from .shape import fit, md_changes, md_find

__all__ = ["register"]


def register(app: MCPServer[Any], kw: Knotwork, read_scopes: Sequence[str] | None) -> None:
    """Add ``find`` and ``recent_changes`` to ``app``; both read ``read_scopes`` only."""

    @app.tool(title="Find entities by their facts", annotations=READ)
    def find(
        where: Annotated[list[Annotated[str, Field(min_length=1, max_length=L.VALUE_CHARS)]]
                         | None, Field(max_length=L.WHERE_MAX, description=(
            "Conditions that must all hold: 'status=accepted' (a key as notes spell it, "
            "the value without case), 'owner=[[Dana]]' (that entity), 'owner' (any "
            "value)."))] = None,
        type: Annotated[str | None, Field(max_length=L.TYPE_CHARS, description=(
            "Only entities of this type: 'adr', 'service'."))] = None,
        limit: Annotated[int, Field(ge=1, le=L.FIND_MAX, description=(
            "At most this many entities, by label."))] = 50,
        max_tokens: Budget4000 = 4000,
    ) -> Json:
        """Entities whose live facts say what you ask ('status=accepted' of type 'adr'),
        each with the facts that matched and their source lines: cite them. A structured
        question; use `context` for a question in words."""
        with _tool_errors():
            _first_catch_up(kw)
            found = kw.find(where or [], type=type, scopes=read_scopes, limit=limit).as_dict()
            return _result(*fit(_fresh(kw, found), ("entities",), md_find, kw.count_tokens,
                                max_tokens))

    @app.tool(title="Recent changes", annotations=READ)
    def recent_changes(
        since: Annotated[str, Field(min_length=1, max_length=L.SPAN_CHARS, description=(
            "A span back from now ('7d', '12h', '30m', '2w') or an ISO time."))] = "1d",
        limit: Annotated[int, Field(ge=1, le=L.CHANGES_MAX, description=(
            "At most this many changes, newest first."))] = 100,
        max_tokens: Budget4000 = 4000,
    ) -> Json:
        """Notes created, edited, renamed or deleted since a time, newest first, with who
        changed them: what happened while you were away. Read one with `read_note`."""
        with _tool_errors():
            _first_catch_up(kw)
            got = kw.recent_changes(since=since, limit=limit, scopes=read_scopes).as_dict()
            return _result(*fit(_fresh(kw, got), ("changes",), md_changes, kw.count_tokens,
                                max_tokens))
