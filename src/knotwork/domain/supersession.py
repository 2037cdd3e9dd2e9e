"""A record's live status when another document says it is superseded.

ADR-0004 saying "Supersedes ADR-0002" states, in ADR-0004's document, that ADR-0002's
status is ``superseded`` (``ingest.parsers.adr``); ADR-0002's own file still says
``accepted``. Both facts are live, each owned by the document that states it, so an edit
to either retracts exactly its own. Which one is ADR-0002's live status is decided when
it is read: a ``superseded`` status outranks any other, from whichever file. Remove the
sentence from ADR-0004 (or delete the file) and its fact is retracted: the status
ADR-0002 states is its live one again, with nothing rebuilt.

>>> from types import SimpleNamespace as F
>>> rows = [F(predicate="status", value="accepted", retracted_at=None),
...         F(predicate="status", value="superseded", retracted_at=None)]
>>> [r.value for r in live_status(rows)]
['superseded']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

__all__ = ["SUPERSEDED", "live_status"]

SUPERSEDED = "superseded"


class _Fact(Protocol):
    @property
    def predicate(self) -> str: ...
    @property
    def value(self) -> str: ...
    @property
    def retracted_at(self) -> str | None: ...


F = TypeVar("F", bound=_Fact)


def live_status(facts: Sequence[F]) -> list[F]:
    """One entity's ``facts`` without the live ``status`` facts that a live
    ``superseded`` status outranks (retracted facts, the history, are all kept).

    Why one entity's: a record's facts are stated under several entity rows (the note,
    and each name another document calls it by), all of them the record.
    """
    if not any(f.predicate == "status" and f.retracted_at is None
               and f.value.casefold() == SUPERSEDED for f in facts):
        return list(facts)
    return [f for f in facts
            if not (f.predicate == "status" and f.retracted_at is None
                    and f.value.casefold() != SUPERSEDED)]
