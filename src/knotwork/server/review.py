"""REST routes of the review queue (``GET /review``, ``POST /review/{decision}``) and of
the audit log (``GET /audit``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import Field

from .. import limits as L
from ..core import Knotwork
from . import auth
from .schemas import ISO_TIME, _Request

router = APIRouter(tags=["review"])  # create_app adds the error table and the query check
# What ``trust.audit.since_time`` reads: a span back from now, or an ISO date or time.
SINCE = rf"^\s*[0-9]{{1,5}}\s*[smhdw]\s*$|{ISO_TIME}"


class DecisionRequest(_Request):
    """Which facts to decide on: ``fact_ids``, or every fact the filter selects."""

    fact_ids: list[Annotated[int, Field(ge=1)]] = Field(default_factory=list,
                                                         max_length=L.FACT_IDS_MAX)
    status: list[Literal["unreviewed", "approved", "rejected"]] | None = None
    trust: list[Literal["stated", "asserted", "extracted"]] = Field(default_factory=list)
    predicate: str | None = Field(None, max_length=L.PREDICATE_CHARS)
    entity: str | None = Field(None, max_length=L.REF_CHARS)
    reason: str | None = Field(None, max_length=L.REASON_CHARS)


@router.get("/review")
def review_queue(request: Request,
                 status: Annotated[list[Literal["unreviewed", "approved", "rejected"]] | None,
                                   Query(description="Review statuses.")] = None,
                 trust: Annotated[list[Literal["stated", "asserted", "extracted"]] | None,
                                  Query(description="How the facts came in.")] = None,
                 predicate: Annotated[str | None, Query(max_length=L.PREDICATE_CHARS,
                                                        description="One predicate.")] = None,
                 entity: Annotated[str | None, Query(max_length=L.REF_CHARS,
                                                     description="Facts about it.")] = None,
                 limit: Annotated[int, Query(ge=1, le=500)] = 50,
                 offset: Annotated[int, Query(ge=0, le=L.OFFSET_MAX)] = 0
                 ) -> dict[str, object]:
    """The facts awaiting review, oldest first, each with its evidence; paged."""
    kw: Knotwork = request.app.state.kw
    return kw.review_queue(status=status or ["unreviewed"], trusts=trust or [],
                           predicate=predicate, entity=entity,
                           scopes=auth.read_scopes(request, None), limit=limit,
                           offset=offset).as_dict()


@router.post("/review/{decision}")
def review_decide(decision: Literal["approve", "reject", "reopen"], body: DecisionRequest,
                  request: Request) -> dict[str, Any]:
    """Approve, reject or reopen facts (ids, or all a filter selects); the request's actor
    (the token's name, else ``X-Actor``, else the client's address) is recorded as the
    reviewer, with the reason."""
    kw: Knotwork = request.app.state.kw
    return kw.review(decision, body.fact_ids, status=body.status, trusts=body.trust,
                     predicate=body.predicate, entity=body.entity,
                     scopes=auth.read_scopes(request, None), reason=body.reason,
                     reviewer=auth.actor(request)).as_dict()


@router.get("/audit", tags=["meta"])
def audit(request: Request,
          since: Annotated[str | None, Query(max_length=L.SPAN_CHARS, pattern=SINCE,
                                             description=(
              "A span back from now (7d, 12h, 30m, 2w) or an ISO time."))] = None,
          limit: Annotated[int, Query(ge=1, le=10_000)] = 1000) -> dict[str, Any]:
    """The audit log, oldest first. A scoped token sees the events of its scopes only."""
    kw: Knotwork = request.app.state.kw
    scopes = auth.read_scopes(request, None)
    events = kw.audit(since=since, limit=limit, scopes=scopes)
    return {"since": since, "events": events}
