"""``POST /add-context``: project documents of the served vault into typed records."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from ..core import Knotwork
from ..errors import Forbidden
from . import auth

router = APIRouter()


class AddContextRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: Annotated[str, Field(min_length=1, description=(
        "A folder or file of the served vault: relative to it, or absolute inside it.")
    )] = "."
    namespace: Annotated[str | None, Field(description=(
        "Scopes are {namespace}__{category}; default the project folder's name."))] = None
    type: Annotated[str | None, Field(description=(
        "Read every file with this parser (adr, feature-spec, overview, kep, rfc, note)."))
    ] = None
    force: bool = False
    dry_run: bool = False
    pattern: Annotated[list[str] | None, Field(description="Globs (default **/*.md).")] = None


class AddContextOut(BaseModel):
    files: int
    records_added: int
    records_updated: int
    unchanged: int
    warnings: list[dict[str, Any]]
    errors: list[dict[str, Any]]


@router.post("/add-context", response_model=AddContextOut, tags=["write"])
def add_context(body: AddContextRequest, request: Request) -> dict[str, object]:
    """Read ADRs, feature specs, overviews, KEPs, RFCs and docs of the served vault into
    typed records (a path outside the vault is refused, and so is a scoped token whose
    records would land in a scope not its own)."""
    kw: Knotwork = request.app.state.kw
    try:
        report = kw.add_context(body.path, namespace=body.namespace, type=body.type,
                                force=body.force, dry_run=body.dry_run,
                                patterns=body.pattern, vault_only=True,
                                scopes=auth.principal(request).scopes or None)
    except Forbidden as exc:  # a record would land outside the token's scopes
        raise auth.denied(request, exc) from None
    return report.as_dict()
