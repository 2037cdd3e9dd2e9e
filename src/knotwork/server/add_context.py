"""``POST /add-context``: project documents of the served vault into typed records."""

# (no ``from __future__ import annotations``: the routes are built per app, and FastAPI
# reads their annotations, which name models made in the function, at run time)

import logging
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field, create_model

from .. import limits as L
from ..core import Knotwork
from ..errors import Forbidden
from . import auth
from .schemas import _Request

log = logging.getLogger("knotwork.server")

# What ``checks.globs`` takes: not blank, inside the vault (no leading or trailing slash,
# no ".." part, no drive)
GLOB = (r"^(?!\s*[/\\])(?![\s\S]*[/\\]\s*$)(?!\s*[\s\S]:[/\\])"
        r"(?!(\s*|[\s\S]*[/\\])\.\.([/\\]|\s*$))[\s\S]*\S")


class AddContextRequest(_Request):
    # the glob rule looks ahead, which only Python's engine does
    model_config = ConfigDict(extra="forbid", strict=True, regex_engine="python-re")

    path: Annotated[str, Field(min_length=1, max_length=L.PATH_CHARS, pattern=r"^[^\x00]+$",
                               description=(
        "A folder or file of the served vault: relative to it, or absolute inside it.")
    )] = "."
    namespace: Annotated[str | None, Field(max_length=L.NAMESPACE_CHARS,
                                           pattern=r"[A-Za-z0-9]", description=(
        "Scopes are {namespace}__{category}; default the project folder's name."))] = None
    type: Annotated[str | None, Field(max_length=L.PARSER_CHARS, pattern=r"\S", description=(
        "Read every file with this parser (adr, feature-spec, overview, kep, rfc, note)."))
    ] = None
    force: bool = False
    dry_run: bool = False
    pattern: Annotated[list[Annotated[str, Field(max_length=L.PATTERN_CHARS, pattern=GLOB)]]
                       | None, Field(min_length=1, max_length=L.PATTERNS_MAX,
                                     description="Globs (default **/*.md).")] = None


class AddContextOut(BaseModel):
    files: int
    records_added: int
    records_updated: int
    unchanged: int
    warnings: list[dict[str, Any]]
    errors: list[dict[str, Any]]


def router_for(parser_types: Sequence[str]) -> APIRouter:
    """``POST /add-context`` with ``type`` one of ``parser_types`` (the installed parsers)."""
    Parser: Any = Literal[tuple(parser_types)] if parser_types else str  # noqa: N806
    Request_: Any = create_model(  # noqa: N806
        "AddContextRequest", __base__=AddContextRequest,
        type=(Parser | None, Field(None, description=(
            "Read every file with this parser: " + ", ".join(parser_types) + "."))))
    router = APIRouter()

    @router.post("/add-context", response_model=AddContextOut, tags=["write"])
    def add_context(body: Request_, request: Request) -> dict[str, object]:
        """Read ADRs, feature specs, overviews, KEPs, RFCs and docs of the served vault into
        typed records (a path outside the vault is refused, and so is a scoped token whose
        records would land in a scope not its own)."""
        kw: Knotwork = request.app.state.kw
        try:
            report = kw.add_context(body.path, namespace=body.namespace, type=body.type,
                                    force=body.force, dry_run=body.dry_run,
                                    patterns=body.pattern, vault_only=True,
                                    scopes=auth.principal(request).scopes or None,
                                    actor=auth.actor(request), embed=False)
        except Forbidden as exc:  # a record would land outside the token's scopes
            raise auth.denied(request, exc) from None
        if not body.dry_run:  # the answer does not wait for the model
            kw.embed_in_background(lambda exc: log.warning("embedding: %s", exc))
        return report.as_dict()

    return router
