"""Timestamps written as numbers: Dendron's ``created: 1608240000000`` is a date.

Dendron stamps every note with ``created`` and ``updated`` in epoch milliseconds, and
other tools write epoch seconds; read as integers they answer no question about time.
A whole number under a key that names a moment, in the range of the years 2001-2099,
is read as that moment (UTC), a typed ``datetime`` literal.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from ..types import LiteralValue

__all__ = ["epoch_literal"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# keys that name a moment: created, updated, modified, date, time, timestamp, and
# those ending in _at, _on, _date, _time, _ts (created_at, last_modified_date)
_MOMENT_KEY = re.compile(
    r"(?:created|updated|modified|changed|date|time|timestamp|ts|published|edited)\Z"
    r"|_(?:at|on|date|time|ts|timestamp)\Z|\A(?:date|time)_"
)
_SECONDS = (1_000_000_000, 4_102_444_800)  # 2001-09-09 .. 2100-01-01
_MILLIS = (_SECONDS[0] * 1000, _SECONDS[1] * 1000)


def epoch_literal(predicate: str, value: int) -> LiteralValue | None:
    """``value`` as a UTC ``datetime`` literal when ``predicate`` names a moment and the
    number is epoch seconds or milliseconds of this century; None otherwise."""
    if not _MOMENT_KEY.search(predicate):
        return None
    if _MILLIS[0] <= value < _MILLIS[1]:
        moment = _EPOCH + timedelta(milliseconds=value)
    elif _SECONDS[0] <= value < _SECONDS[1]:
        moment = _EPOCH + timedelta(seconds=value)
    else:
        return None
    return LiteralValue(moment.isoformat(), "datetime")
