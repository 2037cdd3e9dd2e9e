"""The audit log read back: every event since a time (``knotwork audit --since 7d``)."""

from __future__ import annotations

import re
from dataclasses import asdict
from datetime import UTC, datetime, timedelta

from ..errors import InvalidQuery
from ..store import StoreReader, record_time

_SPAN = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def since_time(since: str, *, now: datetime | None = None) -> str:
    """``7d``, ``12h``, ``30m``, ``2w`` back from now, or an ISO date or time, as a record
    time."""
    m = _SPAN.match(since)
    try:
        if m:
            delta = timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})
            return record_time((now or datetime.now(UTC)) - delta)
        return record_time(datetime.fromisoformat(since.strip()))
    except OverflowError:  # a span of a million weeks, year 1 at +14:00 (once a 500)
        raise InvalidQuery(f"--since {since!r} is outside the years 1 to 9999") from None
    except ValueError:
        raise InvalidQuery(f"--since must be a span (7d, 12h, 30m, 2w) or an ISO date or"
                           f" time, got {since!r}") from None


def events(reader: StoreReader, *, since: str | None, limit: int | None = 1000,
           scopes: tuple[str, ...] = ()) -> list[dict[str, object]]:
    """Events, oldest first, at or after ``since`` (all of them when None); with
    ``scopes``, the newest ``limit`` of those scopes' events (the others' are never
    counted)."""
    at = since_time(since) if since else None
    if not scopes:
        return [asdict(e) for e in reversed(reader.events(limit=limit, since=at))]
    out: list[dict[str, object]] = []
    for e in reader.events(limit=None, since=at):
        if e.scope in scopes:
            out.append(asdict(e))
            if limit is not None and len(out) >= limit:
                break
    return out[::-1]
