"""REST routes of the structured reads: ``POST /find`` (entities by their live facts) and
``GET /changes`` (documents changed since a time). A scoped token reads its scopes only."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import ConfigDict, Field, model_validator

from .. import limits as L
from ..core import Knotwork
from . import auth
from .review import SINCE
from .schemas import FactOut, _Request, _Response

router = APIRouter(tags=["read"])  # create_app adds the error table and the query check


# What ``retrieve.find.parse_where`` takes: a key holding a letter or digit, then nothing or
# ``=`` and a value that is not blank.
WHERE = r"^[^=]*[^\W_][^=]*(=.*\S.*)?$"


class FindRequest(_Request):
    """``{"where": ["status=accepted"], "type": "adr"}``: every condition must hold, and
    there is one at least (a ``where`` or a ``type``)."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"anyOf": [
        {"required": ["type"], "properties": {"type": {"type": "string"}}},
        {"required": ["where"], "properties": {"where": {"minItems": 1}}}]})

    where: list[Annotated[str, Field(min_length=1, max_length=L.VALUE_CHARS, pattern=WHERE)]
                ] = Field(default_factory=list, max_length=L.WHERE_MAX, description=(
        "KEY=VALUE a live fact must say (KEY as notes spell it: Status, status; VALUE "
        "without case); KEY alone: any value; VALUE as [[Name]]: that entity only."))
    type: str | None = Field(None, min_length=1, max_length=L.TYPE_CHARS, pattern=r"\S",
                             description="Only entities of this type.")
    scopes: list[Annotated[str, Field(max_length=L.SCOPE_CHARS)]] | None = Field(
        None, max_length=L.SCOPES_MAX, description="Read only these scopes.")
    limit: int = Field(50, ge=1, le=L.FIND_MAX, description="At most this many entities.")

    @model_validator(mode="after")
    def _one_condition(self) -> FindRequest:
        if not self.where and self.type is None:
            raise ValueError("find needs a condition: a where (KEY=VALUE) or a type")
        return self


class FoundOut(_Response):
    iri: str
    label: str
    kind: str
    scope: str
    types: list[str]
    facts: list[FactOut]


class FindOut(_Response):
    """The entities by label, each with the facts (and their sources) that matched."""

    where: list[dict[str, Any]]
    entities: list[FoundOut]
    limit: int
    truncated: bool


class ChangeOut(_Response):
    event_id: int
    at: str
    actor: str
    change: Literal["created", "edited", "renamed", "deleted"]
    scope: str
    path: str
    previous_path: str | None
    document_id: int
    version_id: int | None
    title: str | None
    facts_added: int
    facts_retracted: int


class ChangesOut(_Response):
    since: str
    changes: list[ChangeOut]
    limit: int
    truncated: bool


@router.post("/find", response_model=FindOut, response_model_exclude_unset=True)
def find(body: FindRequest, request: Request) -> dict[str, object]:
    """Entities whose live facts say every KEY=VALUE asked, with each fact's citation."""
    kw: Knotwork = request.app.state.kw
    return kw.find(body.where, type=body.type, scopes=auth.read_scopes(request, body.scopes),
                   limit=body.limit).as_dict()


@router.get("/changes", response_model=ChangesOut)
def changes(request: Request,
            since: Annotated[str, Query(max_length=L.SPAN_CHARS, pattern=SINCE, description=(
                "A span back from now (7d, 12h, 30m, 2w) or an ISO time."))] = "1d",
            limit: Annotated[int, Query(ge=1, le=L.CHANGES_MAX)] = 100,
            scope: Annotated[list[str] | None, Query(max_length=L.SCOPES_MAX,
                                                     description="Limit to scopes.")] = None
            ) -> dict[str, object]:
    """Documents created, edited, renamed or deleted since a time, newest first, by whom."""
    kw: Knotwork = request.app.state.kw
    return kw.recent_changes(since=since, limit=limit,
                             scopes=auth.read_scopes(request, scope)).as_dict()
