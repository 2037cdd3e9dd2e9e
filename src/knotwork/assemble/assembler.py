"""Assemble context: every tier's sources in parallel, merged, deduplicated, budgeted.

    >>> from knotwork.assemble.sources.memory import MemorySource
    >>> tiers = [Tier("facts", 1, (MemorySource("m", (Item("Heliograph deploys on Fridays.",
    ...                                                        "ops.md:3", 0.9),)),), top_k=3)]
    >>> out = assemble("how does heliograph deploy", tiers, Budget(max_tokens=500))
    >>> [r.item.source for r in out.results], out.truncated
    (['ops.md:3'], False)

Each source runs in a daemon thread (``pool``) with its own timeout; one that raises,
answers an error or is still running at its deadline is reported in ``errors`` (tier,
source, reason) and the assembly goes on without it. The slowest source bounds the wait
by its timeout, never longer.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence

from ..errors import InvalidQuery
from .budget import pack
from .merge import merge, rank
from .model import Assembled, Budget, ContextSource, Fetched, Item, Override, SourceError, Tier
from .pool import POOL, DaemonPool, Task


def assemble(query: str, tiers: Sequence[Tier], budget: Budget, *,
             overrides: Mapping[str, Override] | None = None,
             pool: DaemonPool = POOL) -> Assembled:
    """The context for ``query`` from ``tiers``, fitted to ``budget``."""
    if not query or not query.strip():
        raise InvalidQuery("query is empty")
    overrides = check_overrides(tiers, overrides or {})
    start = time.monotonic()
    jobs: list[tuple[int, Tier, ContextSource, float, Task[Fetched]]] = []
    for index, tier in enumerate(tiers):
        o = overrides.get(tier.name, Override())
        limit = tier.top_k if o.top_k is None else o.top_k
        for source in tier.sources:
            timeout = tier.timeouts.get(source.name, tier.timeout)
            jobs.append((index, tier, source, timeout, pool.submit(
                Fetcher(source, query, limit, budget.max_tokens))))
    found: dict[int, list[Item]] = {i: [] for i in range(len(tiers))}
    errors: list[SourceError] = []
    for index, tier, source, timeout, task in jobs:
        if not task.wait(start + timeout - time.monotonic()):
            errors.append(SourceError(tier.name, source.name,
                                      f"timed out after {timeout:g} s"))
            continue
        if task.error is not None:
            errors.append(SourceError(tier.name, source.name, _reason(task.error)))
            continue
        fetched = task.value
        if not isinstance(fetched, Fetched):
            errors.append(SourceError(tier.name, source.name,
                                      f"fetch returned {type(fetched).__name__}, not Fetched"))
            continue
        if fetched.error:
            errors.append(SourceError(tier.name, source.name, fetched.error))
        good, bad = _valid(fetched.items if isinstance(fetched.items, list | tuple) else
                           [fetched.items])
        if bad:
            errors.append(SourceError(tier.name, source.name, bad))
        found[index].extend(good)
    ranked = rank((i, t, found[i]) for i, t in enumerate(tiers))
    packed = pack(query, merge(ranked, tiers, overrides), budget)
    counts = {t.name: 0 for t in tiers}
    for r in packed.results:
        counts[r.tier] += 1
    return Assembled(query, packed.results, packed.text, packed.total_tokens, packed.truncated,
                     counts, tuple(errors), packed.overrun, budget.max_tokens)


class Fetcher:
    """One source's call, as a task (a class, not a closure: it names what it runs)."""

    def __init__(self, source: ContextSource, query: str, limit: int, budget: int | None
                 ) -> None:
        self.source, self.query, self.limit, self.budget = source, query, limit, budget

    def __call__(self) -> Fetched:
        return self.source.fetch(self.query, limit=self.limit, budget=self.budget)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _valid(items: Sequence[object]) -> tuple[list[Item], str | None]:
    """The well-formed items, and a reason when some were not (text, citation, a finite
    score): a source's bad item is reported, never passed on to the prompt."""
    good: list[Item] = []
    bad = 0
    for item in items:
        if (isinstance(item, Item) and isinstance(item.content, str) and item.content.strip()
                and isinstance(item.source, str) and isinstance(item.score, int | float)
                and math.isfinite(item.score)):
            good.append(Item(item.content, item.source, float(item.score), 0,
                             bool(item.pinned)))
        else:
            bad += 1
    return good, (f"{bad} item(s) without text, a source string or a finite score were"
                  " left out" if bad else None)


def check_overrides(tiers: Sequence[Tier], overrides: Mapping[str, Override]
                    ) -> dict[str, Override]:
    """``overrides`` checked: each names a tier, with a positive top_k and a finite
    min_score."""
    names = [t.name for t in tiers]
    for name, o in overrides.items():
        if name not in names:
            raise InvalidQuery(f"no tier named {name!r} to override; tiers: {', '.join(names)}")
        if o.top_k is not None and (isinstance(o.top_k, bool) or not isinstance(o.top_k, int)
                                    or o.top_k < 1):
            raise InvalidQuery(f"tier {name!r}: top_k must be a positive integer, got"
                               f" {o.top_k!r}")
        if o.min_score is not None and (not isinstance(o.min_score, int | float)
                                        or not math.isfinite(o.min_score)):
            raise InvalidQuery(f"tier {name!r}: min_score must be a number, got"
                               f" {o.min_score!r}")
    return dict(overrides)
