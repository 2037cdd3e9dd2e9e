"""``POST /assemble``: context from the server's tiers of sources, fitted to a budget.

The tiers are the server's own (the ``assemble_config`` setting, else one tier: this
store); a request picks the question, the budget and per-tier ``top_k``/``min_score``,
never the sources, so a client cannot point the server at other hosts or folders.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from ..core import Knotwork
from .app import ERRORS, _known_params, _kw, _scopes


class TierOverride(BaseModel):
    model_config = ConfigDict(extra="forbid")

    top_k: int | None = Field(None, ge=1, le=200, description="The tier's item cap.")
    min_score: float | None = Field(None, description="Drop the tier's items scored below.")


class AssembleRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=2000, description="What the agent asks about.")
    max_tokens: int | None = Field(None, ge=0, le=1_000_000, description=(
        "Token budget of the rendered text (0: none; default: the config's)."))
    allow_partial: bool | None = Field(None, description=(
        "Cut an item that does not fit at a sentence boundary (default: the config's)."))
    tiers: dict[str, TierOverride] | None = Field(None, description=(
        "Per-tier changes for this call: {\"notes\": {\"top_k\": 3}}."))
    format: Literal["json", "markdown"] = Field("json", description=(
        "json: {results, total_tokens, truncated, tier_counts, errors}; markdown: the text"
        " total_tokens counts."))


class AssembledItemOut(BaseModel):
    content: str
    source: str
    score: float
    tier: str
    tokens: int
    pinned: bool


class SourceErrorOut(BaseModel):
    tier: str
    source: str
    reason: str


class AssembledOut(BaseModel):
    results: list[AssembledItemOut]
    total_tokens: int
    truncated: bool
    tier_counts: dict[str, int]
    errors: list[SourceErrorOut]


router = APIRouter(responses=ERRORS, dependencies=[Depends(_known_params)])


@router.post("/assemble", response_model=AssembledOut, tags=["read"],
             responses={200: {"content": {"text/markdown": {}}}})
def assemble(body: AssembleRequest, request: Request,
             kw: Annotated[Knotwork, Depends(_kw)]) -> Any:
    """Context from tiers of sources queried in parallel, merged by tier priority then
    score, deduplicated and cut to the token budget; a failing source is reported in
    ``errors``, never fatal."""
    tiers = {k: v.model_dump(exclude_none=True) for k, v in (body.tiers or {}).items()}
    out = kw.assemble(body.query, max_tokens=body.max_tokens, allow_partial=body.allow_partial,
                      tiers=tiers, scopes=_scopes(request, None))
    if body.format == "markdown":
        return Response(out.text, media_type="text/markdown; charset=utf-8")
    return out.as_dict()
