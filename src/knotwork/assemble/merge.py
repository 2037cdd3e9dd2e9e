"""Merge the tiers' items: tier priority, then score; per-tier caps; duplicates dropped.

Pure functions over ``Ranked`` values. Two items are one when any of these agree:

- their ``source`` (the same chunk or entity reached twice);
- their normalised content (Unicode NFKC, case-folded, whitespace collapsed, Markdown
  quote marks and list bullets dropped): the same text however it was spaced or quoted;
- the first 200 characters of it (the seed's rule, on normalised text);
- one contained in the other, when the shorter has at least ``_CONTAINED_MIN``
  characters: a chunk that is quoted whole inside a longer one says nothing new.

The copy kept is the one that comes first in merge order (the higher-priority tier, then
the higher score); when a dropped copy was pinned, the kept one is pinned instead, so
what had to be in the context still is.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import replace

from .model import Item, Override, Ranked, Tier

PREFIX_CHARS = 200
_CONTAINED_MIN = 80
_MARKS = re.compile(r"^[ \t]*(?:>[ \t]?)+|^[ \t]*[-*+][ \t]+", re.MULTILINE)
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """The text two copies of one passage share: NFKC, case-folded, quote marks and
    bullets dropped, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text)
    text = _MARKS.sub(" ", text)
    return _SPACE.sub(" ", text).strip().casefold()


def order_key(r: Ranked) -> tuple[int, float, int]:
    """Merge order: tier priority (lower first), then score (higher first), then the
    tier's place in the config and the item's arrival."""
    return (r.priority, -r.item.score, r.order)


def rank(tiers: Iterable[tuple[int, Tier, Iterable[Item]]]) -> list[Ranked]:
    """Every tier's items as ``Ranked``, in merge order; a pinned tier pins its items."""
    out: list[Ranked] = []
    for index, tier, items in tiers:
        for n, item in enumerate(items):
            if tier.pin and not item.pinned:
                item = replace(item, pinned=True)
            out.append(Ranked(item, tier.name, tier.priority, index * 1_000_000 + n))
    out.sort(key=order_key)
    return out


def merge(ranked: Iterable[Ranked], tiers: Iterable[Tier],
          overrides: Mapping[str, Override] | None = None) -> list[Ranked]:
    """Keep, in merge order, each tier's best ``top_k`` items scored at least ``min_score``
    that no earlier kept item duplicates (see the module docstring)."""
    limits: dict[str, tuple[int, float | None]] = {}
    for t in tiers:
        o = (overrides or {}).get(t.name, Override())
        limits[t.name] = (t.top_k if o.top_k is None else o.top_k,
                          t.min_score if o.min_score is None else o.min_score)
    kept: list[Ranked] = []
    texts: list[str] = []
    by_key: dict[str, int] = {}
    counts: dict[str, int] = {}
    for r in sorted(ranked, key=order_key):
        top_k, min_score = limits.get(r.tier, (0, None))
        if (min_score is not None and r.item.score < min_score) or counts.get(r.tier, 0) >= top_k:
            continue
        text = normalise(r.item.content)
        keys = ("s:" + r.item.source, "c:" + text, "p:" + text[:PREFIX_CHARS])
        dup = next((by_key[k] for k in keys if k in by_key), None)
        if dup is None and len(text) >= _CONTAINED_MIN:
            dup = next((i for i, t in enumerate(texts) if text in t), None)
        if dup is not None:
            if r.item.pinned and not kept[dup].item.pinned:
                kept[dup] = replace(kept[dup], item=replace(kept[dup].item, pinned=True))
            continue
        for k in keys:
            by_key.setdefault(k, len(kept))
        kept.append(r)
        texts.append(text)
        counts[r.tier] = counts.get(r.tier, 0) + 1
    return kept
