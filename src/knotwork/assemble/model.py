"""The values of context assembly: items, what a source answers, tiers and the result.

Everything here is a frozen value; the sources, the merge, the budget and the renderer
exchange nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class Item:
    """One piece of context a source returned: its text, where it came from, its score.

    ``source`` names the item itself (a citation such as ``services/Traefik.md:24-33`` or
    an id such as ``qdrant:archive/17``): two items with one ``source`` are one item.
    ``tokens`` is filled in by the budget (the tokens of the item as rendered); a source
    leaves it 0. ``pinned`` items are always kept, whatever the budget.
    """

    content: str
    source: str
    score: float = 0.0
    tokens: int = 0
    pinned: bool = False


@dataclass(frozen=True, slots=True)
class Fetched:
    """What one source answered: its items, or the reason it could not."""

    items: tuple[Item, ...] = ()
    error: str | None = None


@runtime_checkable
class ContextSource(Protocol):
    """A place context comes from: this store, another knotwork, a vector database, …

    ``fetch`` returns at most ``limit`` items for ``query``, best first; ``budget`` is the
    assembly's token budget (None: none), a hint that bounds the work. A source reports
    what went wrong in ``Fetched.error`` or by raising: either way the assembly goes on
    and the reason lands in ``Assembled.errors``. ``name`` is how errors name it.
    """

    @property
    def name(self) -> str: ...

    def fetch(self, query: str, *, limit: int, budget: int | None) -> Fetched: ...


@dataclass(frozen=True, slots=True)
class Tier:
    """A named group of sources queried in parallel; a lower ``priority`` comes first.

    ``top_k`` caps the tier's items after the merge (and is each source's ``limit``);
    ``min_score`` drops items scored below it (None: none); ``pin`` pins every item of the tier;
    ``timeout`` (seconds) bounds each source of the tier that sets none of its own.
    """

    name: str
    priority: int
    sources: tuple[ContextSource, ...]
    top_k: int = 5
    min_score: float | None = None  # None: keep every score
    pin: bool = False
    timeout: float = 5.0
    timeouts: Mapping[str, float] = field(default_factory=dict)  # source name -> seconds


@dataclass(frozen=True, slots=True)
class Budget:
    """The token budget: ``max_tokens`` (None: no limit) counted with the real tokenizer
    (``encoding``), or as ``len(text) / chars_per_token`` when that is set; with
    ``allow_partial`` an item that does not fit is cut at a sentence boundary."""

    max_tokens: int | None = 6000
    encoding: str = "o200k_base"
    chars_per_token: float | None = None
    allow_partial: bool = False


@dataclass(frozen=True, slots=True)
class Override:
    """Per-call changes to one tier."""

    top_k: int | None = None
    min_score: float | None = None


@dataclass(frozen=True, slots=True)
class SourceError:
    """A source that failed: its tier, its name, and why."""

    tier: str
    source: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"tier": self.tier, "source": self.source, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Ranked:
    """An item as merged: with its tier and the tier's priority."""

    item: Item
    tier: str
    priority: int
    order: int = 0  # the tier's position in the config, then the item's arrival: ties
    cut: bool = False  # the budget kept only its first sentences (``allow_partial``)


@dataclass(frozen=True, slots=True)
class Assembled:
    """The assembled context: kept items in merge order, the rendered ``text`` and its
    exact token count, whether anything was cut, per-tier counts and the failures.

    ``overrun`` is how many tokens past ``max_tokens`` the pinned items alone went (then
    ``truncated`` is true); 0 otherwise.
    """

    query: str
    results: tuple[Ranked, ...]
    text: str
    total_tokens: int
    truncated: bool
    tier_counts: Mapping[str, int]
    errors: tuple[SourceError, ...]
    overrun: int = 0
    max_tokens: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape: ``{results, total_tokens, truncated, tier_counts, errors}``."""
        return {
            "results": [{"content": r.item.content, "source": r.item.source,
                         "score": r.item.score, "tier": r.tier, "tokens": r.item.tokens,
                         "pinned": r.item.pinned} for r in self.results],
            "total_tokens": self.total_tokens,
            "truncated": self.truncated,
            "tier_counts": dict(self.tier_counts),
            "errors": [e.as_dict() for e in self.errors],
        }
