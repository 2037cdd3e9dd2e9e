"""The wiki's MCP tools: write, read, list and search pages, read the log, lint.

Registered by ``build_server`` (``register``); each tool is one facade call, its answer
bounded (pages and findings are capped and say how many there were).
"""

# (no ``from __future__ import annotations``: a category is one of the wiki_categories
# setting, known when the tools are registered, and the SDK reads annotations at run time)

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from .. import limits as L
from ..core import Knotwork
from .server import (
    ADD,
    READ,
    Json,
    _capped,
    _result,
    _tool_errors,
    actor_of,
    home_scope,
    whole_store,
)

Title = Annotated[str, Field(min_length=1, max_length=L.PAGE_TITLE_CHARS, description=(
    "The page's title, e.g. 'Incident 42: memory leak'. It names the page: writing the same"
    " title again updates it."))]
Kind = Literal["broken_link", "missing_page", "orphan_page", "isolated_page",
               "duplicate_entity", "contradiction", "stale_claim", "low_confidence"]


def register(app: MCPServer[Any], kw: Knotwork, read_scopes: Sequence[str] | None) -> None:
    """Add the wiki tools to ``app``. The wiki is the store's scope's: a server limited
    to other scopes refuses its tools, and ``lint`` (whose checks span every scope) is
    refused on any server limited to scopes."""
    cats = tuple(c.strip() for c in kw.settings.wiki_categories.split(",") if c.strip())
    Name: Any = Literal[cats] if cats else str  # noqa: N806
    Category: Any = Annotated[Name, Field(description=(  # noqa: N806
        "The page's category: 'summary' (of one source), 'entity' (one thing), 'topic' (a"
        " synthesis across sources); this wiki's are " + ", ".join(cats) + "."))]

    @app.tool(title="Write a wiki page", annotations=ADD)
    def write_page(
        category: Category, title: Title,
        content: Annotated[str, Field(min_length=1, max_length=L.PAGE_CONTENT_CHARS, description=(
            "The page in Markdown: link entities as [[Name]], cite facts as kw:fact/<id>"
            " (ids from `context`), so `lint` can tell when a claim goes stale."))],
        summary: Annotated[str, Field(max_length=L.PAGE_SUMMARY_CHARS, description=(
            "One line for the wiki's index.md."))] = "",
        ctx: Context | None = None,
    ) -> Json:
        """Write (or rewrite) a Markdown page in the vault's wiki folder. It is ingested
        before this returns (searchable at once), listed in index.md and logged in log.md.
        Returns its path in the vault and what changed."""
        with _tool_errors():
            home_scope(kw, read_scopes)
            return _result(kw.write_wiki_page(category, title, content, summary=summary,
                                              actor=actor_of(ctx)).as_dict())

    @app.tool(title="Read a wiki page", annotations=READ)
    def read_page(category: Category, title: Title) -> Json:
        """One wiki page with its text. Fails with 'not found' for an unknown title."""
        with _tool_errors():
            home_scope(kw, read_scopes)
            return _result(kw.read_page(category, title).as_dict())

    @app.tool(title="List wiki pages", annotations=READ)
    def list_pages(
        category: Annotated[Name | None, Field(description="Only this category.")] = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="At most this many.")] = 200,
    ) -> Json:
        """The wiki's pages (path, category, title, summary), by category."""
        with _tool_errors():
            home_scope(kw, read_scopes)
            pages = [p.as_dict() for p in kw.list_pages(category)]
            return _result(_capped({"pages": pages}, ("pages",), limit))

    @app.tool(title="Search the wiki", annotations=READ)
    def search_wiki(
        query: Annotated[str, Field(min_length=1, max_length=L.QUERY_CHARS, description=(
            "Words to find in the wiki's pages."))],
        k: Annotated[int, Field(ge=1, le=50, description="Pages to return.")] = 10,
    ) -> Json:
        """Search the wiki's pages first (the fast path): one hit per page, with its best
        passage and lines. Fall back to `context` when it finds nothing good."""
        with _tool_errors():
            home_scope(kw, read_scopes)
            return _result({"query": query,
                            "hits": [h.as_dict() for h in kw.search_wiki(query, k=k)]})

    @app.tool(title="Wiki log", annotations=READ)
    def get_log(
        last_n: Annotated[int, Field(ge=1, le=500, description="Last entries.")] = 20,
    ) -> Json:
        """The last changes to the wiki (time, actor, action, page), oldest first."""
        with _tool_errors():
            home_scope(kw, read_scopes)
            return _result({"entries": [e.as_dict() for e in kw.get_log(last_n)]})

    @app.tool(title="Lint the vault", annotations=READ)
    def lint(
        kinds: Annotated[list[Kind] | None, Field(description="Only these kinds.")] = None,
        max_findings: Annotated[int, Field(ge=1, le=1000, description=(
            "At most this many findings."))] = 100,
    ) -> Json:
        """What is broken, orphaned, contradictory or stale in the vault and its wiki, with
        no model: each finding has kind, severity, path, line, the fact ids and a fix."""
        with _tool_errors():
            whole_store(read_scopes, "lint's findings span every scope")
            found = [f.as_dict() for f in kw.lint(kinds=kinds)]
            return _result(_capped({"findings": found}, ("findings",), max_findings))
