"""A question's date against the dates in each chunk's title and headings.

A question often places itself in time ("What did Maria start, as mentioned on 3 June,
2023?", "… in August 2023?"), and notes often say when they were written in their title or
a heading (a journal's "2023-06-03", a meeting's "Chat session at 11:51 am on 3 June,
2023"). Full text sees "June" and "2023" as two words among many — every chunk of every
June note holds them — and vectors hardly see dates at all. Here the date is read as a
span of days (``domain.dates``) and a chunk whose title or heading path names a date near
it gains, in the units of the query's own fused scores: ``DATE_GAIN`` × the spread between
its first and tenth score, × ``exp(-days apart / DATE_DAYS)``. A question without a date
costs nothing (one regular expression); one with a date reads its candidates' rows once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from ..domain.dates import date_spans, days_apart
from ..store import StoreReader

__all__ = ["DATE_DAYS", "DATE_GAIN", "by_date"]

# Measured on LoCoMo (31 of its 383 questions name a date; bench/README.md) and on every
# other set, whose questions and headings name none and are unchanged: 0.5 and 1 × the
# spread, 3, 7 and 15 days; the gains grow with both, and 1 / 15 moved no question whose
# date was far from its answer's below where it was.
DATE_GAIN = 1.0
DATE_DAYS = 15.0


def by_date(reader: StoreReader, query: str, scores: Mapping[int, float]
            ) -> dict[int, float]:
    """``scores`` (chunk id → fused score), each chunk dated near the question raised.

    >>> by_date(None, "no date here", {1: 2.0})  # type: ignore[arg-type]
    {1: 2.0}
    """
    asked = date_spans(query)
    if not asked or len(scores) < 2:
        return dict(scores)
    ordered = sorted(scores.values(), reverse=True)
    spread = ordered[0] - ordered[min(9, len(ordered) - 1)]
    if spread <= 0:
        return dict(scores)
    out = dict(scores)
    for cid, row in reader.chunks(list(scores)).items():
        said = date_spans(f"{row.title}\n{row.heading_path}")
        if said:
            near = min(days_apart(a, b) for a in asked for b in said)
            out[cid] += DATE_GAIN * spread * math.exp(-near / DATE_DAYS)
    return out
