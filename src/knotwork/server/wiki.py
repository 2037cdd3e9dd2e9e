"""The wiki's REST routes: pages, the log, and ``GET /lint``.

``POST /wiki/pages`` writes a page (ingested before the answer), ``GET /wiki/pages``
lists them, ``GET /wiki/pages/{category}/{title}`` reads one, ``GET /wiki/search``
searches them, ``GET /wiki/log`` reads the log and ``GET /lint`` returns the findings
(``{"findings": […]}``, as ``knotwork lint --json`` prints them).
"""

# (no ``from __future__ import annotations``: the routes are built per app, and FastAPI
# reads their annotations, which name models made in the function, at run time)

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from .. import limits as L
from ..errors import NotFound, UnsafePath
from . import auth
from .app import ERRORS, KW, _known_params

LintKind = Literal["broken_link", "missing_page", "orphan_page", "isolated_page",
                   "duplicate_entity", "contradiction", "stale_claim", "low_confidence"]
# What ``wiki.names`` takes for a title: no NUL, a letter or digit to name the file by, and
# no way out of the wiki folder (a ``..`` part, a root, a home, a drive), blanks trimmed.
TITLE = (r"^(?!\s*(~?[/\\]|[A-Za-z]:[/\\]))(?![\s\S]*?(^\s*|[/\\])\.\.([/\\]|\s*$))"
         r"(?=[\s\S]*[^\W_])[^\x00]+$")


def router_for(categories: Sequence[str]) -> APIRouter:
    """The wiki's routes, with ``category`` declared as one of ``categories`` (the
    ``wiki_categories`` setting), so the schema says which a request may name."""
    Category: Any = Literal[tuple(categories)] if categories else str  # noqa: N806
    router = APIRouter(responses=ERRORS, dependencies=[Depends(_known_params)],
                       tags=["wiki"])

    class PageRequest(BaseModel):
        # the title's rule looks ahead, which only Python's engine does
        model_config = ConfigDict(extra="forbid", strict=True, regex_engine="python-re")

        category: Category = Field(description="One of the wiki_categories setting.")
        title: str = Field(min_length=1, max_length=L.PAGE_TITLE_CHARS, pattern=TITLE,
                           description="Names the page.")
        content: str = Field(min_length=1, max_length=L.PAGE_CONTENT_CHARS,
                             pattern=r"^[^\x00]+$", description=(
            "Markdown; link as [[Name]], cite facts as kw:fact/<id>. No NUL character."))
        summary: str = Field("", max_length=L.PAGE_SUMMARY_CHARS, pattern=r"^[^\x00]*$",
                             description="One line for index.md.")

    @router.post("/wiki/pages", status_code=201)
    def write_page(body: PageRequest, request: Request, kw: KW) -> dict[str, object]:
        """Write (or rewrite) a wiki page: a Markdown file in the vault, ingested before
        this answers, listed in index.md and logged in log.md (a token whose scopes lack
        the wiki's scope is refused)."""
        auth.write_scope(request, kw.settings.scope)
        return kw.write_wiki_page(body.category, body.title, body.content,
                                  summary=body.summary, actor=auth.actor(request)).as_dict()

    @router.get("/wiki/pages")
    def list_pages(request: Request, kw: KW, category: Annotated[Category | None, Query(
                       description="Only this category.")] = None) -> dict[str, Any]:
        """The wiki's pages: path, category, title and summary."""
        auth.home_scope(request)
        return {"pages": [p.as_dict() for p in kw.list_pages(category)]}

    @router.get("/wiki/pages/{category}/{title:path}")
    def read_page(request: Request, kw: KW,
                  category: Annotated[Category, Path(description="The page's category.")],
                  title: Annotated[str, Path(max_length=L.PAGE_TITLE_CHARS, pattern=r"[^\W_]",
                                             description=(
                      "The page's title (URL-encoded; slashes allowed)."))]
                  ) -> dict[str, object]:
        """One page with its text; 404 for an unknown title, and for one no page can
        have (a path out of the wiki, no letter or digit)."""
        auth.home_scope(request)
        try:
            return kw.read_page(category, title).as_dict()
        except UnsafePath as exc:
            raise NotFound("page", f"{category}/{title}",
                           message=f"no page {category}/{title}: {exc}") from None

    @router.get("/wiki/search")
    def search_wiki(request: Request, kw: KW,
                    q: Annotated[str, Query(min_length=1, max_length=L.QUERY_CHARS,
                                            pattern=r"\S")],
                    k: Annotated[int, Query(ge=1, le=50)] = 10) -> dict[str, Any]:
        """The pages best matching the words, one hit per page (the fast path)."""
        auth.home_scope(request)
        return {"query": q, "hits": [h.as_dict() for h in kw.search_wiki(q, k=k)]}

    @router.get("/wiki/log")
    def get_log(request: Request, kw: KW,
                last_n: Annotated[int, Query(ge=1, le=1000)] = 20) -> dict[str, Any]:
        """The last changes to the wiki, oldest first."""
        auth.home_scope(request)
        return {"entries": [e.as_dict() for e in kw.get_log(last_n)]}

    @router.get("/lint")
    def lint(request: Request, kw: KW, kind: Annotated[list[LintKind] | None, Query(
                 description="Only these kinds (repeatable).")] = None,
             min_confidence: Annotated[float | None, Query(ge=0.0, le=1.0)] = None
             ) -> dict[str, Any]:
        """What is broken, orphaned, contradictory or stale, with no model: each finding
        has kind, severity, path, line, message, subject, fact ids and a fix. Not for a
        scoped token: some checks (duplicate names) span every scope."""
        auth.whole_store(request, "lint's findings span every scope")
        found = kw.lint(kinds=kind, min_confidence=min_confidence)
        return {"findings": [f.as_dict() for f in found]}

    return router
