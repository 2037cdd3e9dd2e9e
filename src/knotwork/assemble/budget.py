"""Fit merged items to a token budget, counting the text as rendered.

Pinned items are always kept, even when they alone exceed the budget (the result is
then ``truncated`` and says by how much: ``overrun``). The others are taken in merge
order while they fit; one that does not is skipped (a later, shorter one may still fit)
or, with ``allow_partial``, cut after the last whole sentence that fits. The rendered
text is counted once more as a whole, so ``total_tokens`` is exact under any counter:
where pieces cost a token more together than apart, the last unpinned item goes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ..errors import InvalidQuery
from ..retrieve.budget import token_counter
from .model import Budget, Ranked
from .render import block, heading, render_markdown

Count = Callable[[str], int]

# after a sentence's end mark (and any closing quote or bracket) and the space after it,
# or at a line break: where a cut leaves whole sentences
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+|\n+")


def counter(budget: Budget) -> Count:
    """How ``budget`` counts: the real tokenizer, or ``chars_per_token`` as a fallback."""
    if budget.chars_per_token:
        per = budget.chars_per_token
        return lambda text: math.ceil(len(text) / per)
    return token_counter(budget.encoding)


@dataclass(frozen=True, slots=True)
class Packed:
    results: tuple[Ranked, ...]
    text: str
    total_tokens: int
    truncated: bool
    overrun: int


def pack(query: str, merged: Sequence[Ranked], budget: Budget,
         count: Count | None = None) -> Packed:
    """The items of ``merged`` that fit ``budget.max_tokens``, with their token counts."""
    count = count or counter(budget)
    limit = budget.max_tokens
    head = count(heading(query))
    if limit is not None and head > limit:
        raise InvalidQuery(f"max_tokens {limit} cannot hold even the heading of the answer"
                           f" ({head} tokens with the question itself); raise it")
    costed = [_costed(r, count) for r in merged]
    used = head + sum(r.item.tokens for r in costed if r.item.pinned)
    keep: list[Ranked | None] = [r if r.item.pinned else None for r in costed]
    truncated = False
    for i, r in enumerate(costed):
        if r.item.pinned:
            continue
        if limit is None or used + r.item.tokens <= limit:
            keep[i], used = r, used + r.item.tokens
            continue
        truncated = True
        part = _cut(r, limit - used, count) if budget.allow_partial else None
        if part is not None:
            keep[i], used = part, used + part.item.tokens
    kept = [r for r in keep if r is not None]
    text = render_markdown(query, kept)
    total = count(text)
    while limit is not None and total > limit:
        # a counter whose pieces do not add up (chars_per_token rounds each up, so never
        # this way; encodings not segmented might): drop the last unpinned item
        last = next((i for i in range(len(kept) - 1, -1, -1) if not kept[i].item.pinned), None)
        if last is None:
            break
        del kept[last]
        text, truncated = render_markdown(query, kept), True
        total = count(text)
    overrun = max(0, total - limit) if limit is not None else 0
    return Packed(tuple(kept), text, total, truncated or overrun > 0, overrun)


def _costed(r: Ranked, count: Count) -> Ranked:
    return replace(r, item=replace(r.item, tokens=count(block(r))))


def _cut(r: Ranked, room: int, count: Count) -> Ranked | None:
    """``r`` cut after the most whole sentences whose block fits ``room``; None when not
    even the first does (or the item is one sentence)."""
    text = r.item.content.strip()
    ends = [m.start() for m in _SENTENCE_END.finditer(text) if 0 < m.start() < len(text)]
    best: Ranked | None = None
    lo, hi = 0, len(ends) - 1
    while lo <= hi:  # the block grows with the prefix: binary search the longest that fits
        mid = (lo + hi) // 2
        part = _costed(replace(r, item=replace(r.item, content=text[:ends[mid]]), cut=True),
                       count)
        if part.item.tokens <= room:
            best, lo = part, mid + 1
        else:
            hi = mid - 1
    return best
