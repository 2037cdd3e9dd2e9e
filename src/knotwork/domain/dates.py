"""Calendar dates written in prose: "3 June, 2023", "June 3, 2023", "June 2023", "2023-06-03".

Each date is read as the span of days it names (a day, or a whole month), so a question
"in June 2023" and a heading "Chat session at 11:51 am on 3 June, 2023" can be compared:
``days_apart`` is 0 when the spans overlap. A year alone ("in 2023") is not read: it is
too often a number that is no date, and too coarse to tell one note from another.

>>> [(str(a), str(b)) for a, b in date_spans("on 3 June, 2023 and in May 2023")]
[('2023-06-03', '2023-06-03'), ('2023-05-01', '2023-05-31')]
>>> days_apart(date_spans("May 2023")[0], date_spans("2023-06-03")[0])
3
"""

from __future__ import annotations

import datetime as dt
import re

__all__ = ["Span", "date_spans", "days_apart"]

Span = tuple[dt.date, dt.date]  # first and last day

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_MONTH = "|".join((*_MONTHS, *(m[:3] for m in _MONTHS), "sept"))
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_DATE = re.compile(
    rf"\b(?:(?P<d1>{_DAY})\s+(?P<m1>{_MONTH})\.?,?\s+(?P<y1>\d{{4}})"  # 3 June, 2023
    rf"|(?P<m2>{_MONTH})\.?\s+(?P<d2>{_DAY}),?\s+(?P<y2>\d{{4}})"  # June 3, 2023
    rf"|(?P<m3>{_MONTH})\.?,?\s+(?P<y3>\d{{4}})"  # June 2023
    r"|(?P<iy>\d{4})-(?P<im>[01]\d)(?:-(?P<id>[0-3]\d))?)\b",  # 2023-06-03, 2023-06
    re.IGNORECASE)


def _month(name: str) -> int:
    return next(i for i, m in enumerate(_MONTHS, start=1) if m.startswith(name[:3].lower()))


def _whole_month(year: int, month: int) -> Span:
    first = dt.date(year, month, 1)
    following = dt.date(year + month // 12, month % 12 + 1, 1)
    return first, following - dt.timedelta(days=1)


def date_spans(text: str) -> list[Span]:
    """Each calendar date ``text`` writes, as its first and last day, in order."""
    out: list[Span] = []
    for m in _DATE.finditer(text):
        try:
            if m["iy"]:
                year, month = int(m["iy"]), int(m["im"])
                if m["id"]:
                    day = dt.date(year, month, int(m["id"]))
                    out.append((day, day))
                else:
                    out.append(_whole_month(year, month))
            elif m["y3"]:
                out.append(_whole_month(int(m["y3"]), _month(m["m3"])))
            else:
                year = int(m["y1"] or m["y2"])
                day = dt.date(year, _month(m["m1"] or m["m2"]),
                              int((m["d1"] or m["d2"]).rstrip("stndrh")))
                out.append((day, day))
        except ValueError:  # "31 June 2023", "2023-13": not a day of the calendar
            continue
    return out


def days_apart(a: Span, b: Span) -> int:
    """Days between two spans: 0 when they overlap."""
    if a[1] < b[0]:
        return (b[0] - a[1]).days
    if b[1] < a[0]:
        return (a[0] - b[1]).days
    return 0
