"""The MCP ``ask`` tool: a cited answer from the configured model.

Registered only when a model is configured (``llm_url`` and ``llm_model``): a server
without one lists no tool that could call a model, and calls none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from .. import limits as L
from ..core import Knotwork

# It reads the store, but calls a remote model: open-world, and not idempotent (a model
# may word its answer otherwise each time).
ASK = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=False,
                      open_world_hint=True)


def register(app: MCPServer[Any], kw: Knotwork, read_scopes: Sequence[str] | None) -> None:
    """Add ``ask`` to ``app`` when ``kw`` has a model configured."""
    if not kw.llm_configured():
        return
    from .server import _result, _tool_errors

    @app.tool(title="Ask the notes", annotations=ASK)
    def ask(
        question: Annotated[str, Field(min_length=1, max_length=L.QUERY_CHARS, description=(
            "A question about the notes, in words."))],
        max_tokens: Annotated[int, Field(ge=200, le=32_000, description=(
            "Token budget of the context the model is given."))] = 3000,
    ) -> Annotated[CallToolResult, dict[str, Any]]:
        """An answer written by the configured model from the notes only, citing
        [path:line] after each claim, or the fixed refusal when the notes do not answer.
        Every citation is checked against the notes: `flagged` counts those that do not
        hold (a line that does not exist, quoted words the line lacks). Prefer `context`
        when you can read the facts yourself: it costs no model call."""
        with _tool_errors():
            answer = kw.ask(question, max_tokens=max_tokens, scopes=read_scopes)
            return _result(answer.as_dict())
