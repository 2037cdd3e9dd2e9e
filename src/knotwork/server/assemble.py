"""``POST /assemble``: context from the server's tiers of sources, fitted to a budget.

The tiers are the server's own (the ``assemble_config`` setting, else one tier: this
store); a request picks the question, the budget and per-tier ``top_k``/``min_score``,
never the sources, so a client cannot point the server at other hosts or folders.
"""

# (no ``from __future__ import annotations``: the routes are built per app, and FastAPI
# reads their annotations, which name models made in the function, at run time)

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, Field, create_model

from .. import limits as L
from ..core import Knotwork
from ..errors import KnotworkError
from .app import ERRORS, _known_params, _kw, _scopes
from .schemas import _Request


class TierOverride(_Request):
    top_k: int | None = Field(None, ge=1, le=200, description="The tier's item cap.")
    min_score: float | None = Field(None, description="Drop the tier's items scored below.")


def tier_names(kw: Knotwork) -> tuple[str, ...] | None:
    """The names of the server's tiers (None when its config cannot be read: then each
    call reports that)."""
    try:
        return kw.assemble_tiers()
    except (KnotworkError, OSError, ValueError):
        return None


def request_model(tiers: Sequence[str] | None) -> type[BaseModel]:
    """The request, with ``tiers`` an object of the server's own tier names, so the
    schema says which a call may change."""
    overrides: Any = dict[Annotated[str, Field(max_length=L.TIER_CHARS)], TierOverride]
    if tiers is not None:
        # one optional key per tier, no other key (aliased: a tier's name is any text)
        fields: dict[str, Any] = {f"tier_{i}": (TierOverride | None, Field(None, alias=name))
                                  for i, name in enumerate(tiers)}
        overrides = create_model("TierOverrides", __base__=_Request, **fields)
    return create_model(
        "AssembleRequest", __base__=_Request,
        query=(str, Field(min_length=1, max_length=L.QUERY_CHARS, pattern=r"\S",
                          description="What the agent asks about.")),
        max_tokens=(int | None, Field(None, ge=0, le=1_000_000, description=(
            "Token budget of the rendered text (0: none; default: the config's)."))),
        allow_partial=(bool | None, Field(None, description=(
            "Cut an item that does not fit at a sentence boundary (default: the config's)."))),
        tiers=(overrides | None, Field(None, description=(
            "Per-tier changes for this call: {\"notes\": {\"top_k\": 3}}."))),
        format=(Literal["json", "markdown"], Field("json", description=(
            "json: {results, total_tokens, truncated, tier_counts, errors}; markdown: the"
            " text total_tokens counts."))))


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


def router_for(tiers: Sequence[str] | None) -> APIRouter:
    """``POST /assemble`` for a server whose tiers are ``tiers``."""
    AssembleRequest: Any = request_model(tiers)  # noqa: N806
    router = APIRouter(responses=ERRORS, dependencies=[Depends(_known_params)])

    @router.post("/assemble", response_model=AssembledOut, tags=["read"],
                 responses={200: {"content": {"text/markdown": {}}}})
    def assemble(body: AssembleRequest, request: Request,
                 kw: Annotated[Knotwork, Depends(_kw)]) -> Any:
        """Context from tiers of sources queried in parallel, merged by tier priority
        then score, deduplicated and cut to the token budget; a failing source is
        reported in ``errors``, never fatal."""
        raw = body.tiers
        given = raw if isinstance(raw, dict) else raw.model_dump(
            by_alias=True, exclude_none=True) if raw is not None else {}
        tiers = {k: v.model_dump(exclude_none=True) if isinstance(v, BaseModel)
                 else {a: b for a, b in v.items() if b is not None} for k, v in given.items()}
        out = kw.assemble(body.query, max_tokens=body.max_tokens,
                          allow_partial=body.allow_partial, tiers=tiers,
                          scopes=_scopes(request, None))
        if body.format == "markdown":
            return Response(out.text, media_type="text/markdown; charset=utf-8")
        return out.as_dict()

    return router
