"""The MCP ``assemble`` tool: context from the server's tiers of sources, in a budget."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field
from typing_extensions import TypedDict

from .. import limits as L
from ..core import Knotwork


class TierOverride(TypedDict, total=False):
    """Per-call changes to one tier."""

    top_k: Annotated[int, Field(ge=1, le=200, description="The tier's item cap.")]
    min_score: Annotated[float, Field(description="Drop its items scored below this.")]


class AssembledOut(TypedDict):
    """``{results, total_tokens, truncated, tier_counts, errors}``."""

    results: list[dict[str, Any]]
    total_tokens: int
    truncated: bool
    tier_counts: dict[str, int]
    errors: list[dict[str, str]]


def register(app: MCPServer[Any], kw: Knotwork, read_scopes: Sequence[str] | None) -> None:
    from .server import _result, _tool_errors

    # read-only, but open-world: a tier may ask other servers
    hints = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=True)

    @app.tool(title="Assemble context from tiers of sources", annotations=hints)
    def assemble(
        query: Annotated[str, Field(min_length=1, max_length=L.QUERY_CHARS, description=(
            "What you need context about, in words."))],
        max_tokens: Annotated[int | None, Field(ge=100, le=200_000, description=(
            "Token budget of the text (default: the server's config). Pinned items are"
            " kept even past it (truncated then says so)."))] = None,
        allow_partial: Annotated[bool | None, Field(description=(
            "Cut an item that does not fit at a sentence boundary."))] = None,
        tiers: Annotated[dict[Annotated[str, Field(max_length=L.TIER_CHARS)], TierOverride]
                         | None, Field(description=(
            "Per-tier changes for this call, e.g. {\"notes\": {\"top_k\": 3}}."))] = None,
        format: Annotated[Literal["json", "markdown"], Field(description=(
            "The text content: the JSON answer, or the Markdown citing each item (which"
            " total_tokens counts)."))] = "json",
    ) -> Annotated[CallToolResult, AssembledOut]:
        """Context for a question from every tier of sources the server is configured with
        (this store, other knotwork servers, vector collections), queried in parallel,
        merged by tier priority then score, deduplicated and cut to the token budget.
        Each result cites its source; a source that failed is listed in `errors`."""
        with _tool_errors():
            out = kw.assemble(query, max_tokens=max_tokens, allow_partial=allow_partial,
                              tiers={k: dict(v) for k, v in (tiers or {}).items()},
                              scopes=read_scopes)
            data = out.as_dict()
            return _result(data, out.text if format == "markdown" else None)
