"""The ``add_context`` MCP tool: project documents of the served vault into records."""

# (no ``from __future__ import annotations``: ``type``'s choices are the installed parsers,
# known when the tool is registered, and the SDK reads the annotations at run time)

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from .. import limits as L
from ..core import Knotwork
from .server import Json, _hints, _result, _tool_errors, actor_of


def register(app: MCPServer[Any], kw: Knotwork, read_scopes: Sequence[str] | None) -> None:
    """Add the ``add_context`` tool to ``app``."""
    types = kw.parser_types()
    Parser: Any = Literal[types] if types else str  # noqa: N806
    # destructive: a file gone from the folder is deleted from its scope
    @app.tool(title="Add project documents",
              annotations=_hints(read_only=False, destructive=True, idempotent=True))
    def add_context(
        path: Annotated[str, Field(min_length=1, max_length=L.PATH_CHARS, description=(
            "A folder or file of the served vault, relative to it ('docs/adr')."))] = ".",
        namespace: Annotated[str | None, Field(max_length=L.NAMESPACE_CHARS, description=(
            "Records land in scopes {namespace}__{category}."))] = None,
        type: Annotated[Parser | None, Field(description=(
            "Force a parser: " + ", ".join(types) + "."))] = None,
        dry_run: Annotated[bool, Field(description="Report what would change; write "
                                                   "nothing.")] = False,
        ctx: Context | None = None,
    ) -> Json:
        """Read the vault's ADRs, feature specs, overviews, KEPs and RFCs into typed
        records (status, dates, deciders, supersession, tasks…), each fact citing its
        lines. Returns counts, warnings and per-file errors. On a server limited to
        scopes, a run whose records would land outside them is refused whole."""
        with _tool_errors():
            report = kw.add_context(path, namespace=namespace, type=type, dry_run=dry_run,
                                    vault_only=True, scopes=read_scopes, actor=actor_of(ctx),
                                    embed=False)
            if not dry_run:  # the answer does not wait for the model
                kw.embed_in_background()
            return _result(report.as_dict())
