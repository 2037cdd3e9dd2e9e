"""MCP tools to read a whole note and to list notes (by folder, type, or recent change)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from .. import limits as L
from ..core import Knotwork
from ..errors import Forbidden
from .server import READ, Budget4000, Json, _first_catch_up, _fresh, _result, _tool_errors
from .shape import fit

__all__ = ["register"]


def register(app: MCPServer[Any], kw: Knotwork, read_scopes: Sequence[str] | None) -> None:
    """Add ``read_note`` and ``list_notes`` to ``app``: they read the server's own scope,
    so a server limited to other scopes refuses them."""

    def _own_scope() -> None:
        if read_scopes and kw.settings.scope not in read_scopes:
            raise Forbidden(f"the notes are in scope {kw.settings.scope!r}: not for a server"
                            f" limited to {', '.join(read_scopes)}", scope=kw.settings.scope)

    @app.tool(title="Read a note", annotations=READ)
    def read_note(
        ref: Annotated[str, Field(min_length=1, max_length=L.REF_CHARS, description=(
            "The note: its path ('services/Traefik.md'), title or any name it is known"
            " by."))],
        start_line: Annotated[int, Field(ge=1, description="First line to show.")] = 1,
        end_line: Annotated[int | None, Field(ge=1, description=(
            "Last line to show (default: the end, as far as the budget holds)."))] = None,
        max_tokens: Budget4000 = 4000,
    ) -> Json:
        """A note's whole current text, each line numbered as citations number them
        (`path:line`). Long notes are cut at the end to max_tokens: `cut` says so and
        `next_line` is where to go on."""
        with _tool_errors():
            _own_scope()
            _first_catch_up(kw)
            note = kw.read_note(ref)
            end = note.lines if end_line is None else min(end_line, note.lines)
            rows = list(range(start_line, end + 1))
            data: dict[str, Any] = {**note.as_dict(), "start_line": start_line, "rows": rows}
            del data["text"]

            def render(d: dict[str, Any]) -> str:
                shown = d["rows"]
                body = note.numbered(shown[0], shown[-1]) if shown else ""
                head = f"# {note.title or note.path}\n`{note.path}` · {note.lines} lines"
                return f"{head}\n\n{body}\n"

            data, text = fit(data, ("rows",), render, kw.count_tokens, max_tokens)
            shown = data.pop("rows")
            data.pop("total_rows", None)
            data["end_line"] = shown[-1] if shown else start_line - 1
            data["next_line"] = data["end_line"] + 1 if data["end_line"] < end else None
            data["text"] = note.numbered(shown[0], shown[-1]) if shown else ""
            return _result(_fresh(kw, data), text)

    @app.tool(title="List notes", annotations=READ)
    def list_notes(
        folder: Annotated[str | None, Field(max_length=L.PATH_CHARS, description=(
            "Only notes under this folder of the vault ('services')."))] = None,
        type: Annotated[str | None, Field(max_length=L.TYPE_CHARS, description=(
            "Only notes of this type (frontmatter `type`: 'adr', 'service')."))] = None,
        since: Annotated[str | None, Field(max_length=L.DATE_CHARS, description=(
            "Only notes changed at or after this ISO time, newest first: what changed"
            " while you were away."))] = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="At most this many.")] = 100,
        max_tokens: Budget4000 = 4000,
    ) -> Json:
        """The vault's notes with their paths, titles, types and when each last changed."""
        with _tool_errors():
            _own_scope()
            _first_catch_up(kw)
            items, total = kw.list_notes(folder=folder, doc_type=type, since=since,
                                         limit=limit)
            data: dict[str, Any] = {"notes": [i.as_dict() for i in items], "matched": total}

            def render(d: dict[str, Any]) -> str:
                lines = [f"# Notes ({d['matched']})", ""]
                lines += [f"- {n['path']} — {n['title'] or ''}"
                          + (f" ({n['type']})" if n["type"] else "") + f" · {n['updated_at']}"
                          for n in d["notes"]]
                if len(d["notes"]) < d["matched"]:
                    lines.append(f"\n_{len(d['notes'])} of {d['matched']} shown_")
                return "\n".join(lines) + "\n"

            return _result(*fit(_fresh(kw, data), ("notes",), render, kw.count_tokens,
                                max_tokens))
