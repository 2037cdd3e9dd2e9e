"""Pure scoring functions: every number in a context answer comes from one of these.

Each returns a score and is small enough to check by hand (``tests/retrieve/test_rank.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

EXACT_SCORE = 1.0
ENTITY_BASE, ENTITY_SPAN = 0.55, 0.35
CHUNK_BASE, CHUNK_SPAN = 0.45, 0.35
CITED_FACTOR = 0.9
EXTRA_SIGNAL_BONUS = 0.05
HOP_DECAY = 0.5
HUB_FREE_DEGREE = 5


def entity_hit_score(bm25: float, best: float) -> float:
    """A label/alias/literal full-text hit, scaled against the best hit of the query."""
    return ENTITY_BASE + ENTITY_SPAN * (bm25 / best if best > 0 else 0.0)


def chunk_hit_score(bm25: float, best: float) -> float:
    """A chunk-text hit, a little below a label hit of the same strength."""
    return CHUNK_BASE + CHUNK_SPAN * (bm25 / best if best > 0 else 0.0)


def combine_signals(scores: Sequence[float]) -> float:
    """The best signal, plus a small bonus per extra independent signal (at most two)."""
    if not scores:
        return 0.0
    ordered = sorted(scores, reverse=True)
    return min(1.0, ordered[0] + EXTRA_SIGNAL_BONUS * min(2, len(ordered) - 1))


def hub_factor(degree: int) -> float:
    """Damp nodes linked from everything: a hub tells little about any one query.

    1.0 up to ``HUB_FREE_DEGREE`` live facts, then falling with the log of the excess:
    degree 20 → 0.42, degree 100 → 0.30.
    """
    excess = max(0, degree - HUB_FREE_DEGREE)
    return 1.0 / (1.0 + math.log1p(excess) / 2.0)


def linked_score(parent: float, confidence: float, degree: int, *, decay: float = HOP_DECAY
                 ) -> float:
    """Score of an entity reached over one fact from a scored parent."""
    return parent * decay * confidence * hub_factor(degree)


# ------------------------------------------------------------------ fusion by name


def rrf(runs: Sequence[Sequence[tuple[int, float]]], *, k: int = 60) -> dict[int, float]:
    """Reciprocal rank fusion: sum of 1 / (k + rank) over runs (rank from 1)."""
    out: dict[int, float] = {}
    for run in runs:
        for rank, (item, _) in enumerate(run, start=1):
            out[item] = out.get(item, 0.0) + 1.0 / (k + rank)
    return out


def zscore_sum(runs: Sequence[Sequence[tuple[int, float]]], *,
               weights: Sequence[float] | None = None) -> dict[int, float]:
    """Weighted sum of z-normalised scores; an item missing from a run gets that run's min."""
    weights = weights or [1.0] * len(runs)
    out: dict[int, float] = {}
    normed: list[dict[int, float]] = []
    for run in runs:
        vals = [s for _, s in run]
        if not vals:
            normed.append({})
            continue
        mean = sum(vals) / len(vals)
        sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / len(vals)) or 1.0
        normed.append({i: (s - mean) / sd for i, s in run})
    items = {i for run in runs for i, _ in run}
    for item in items:
        total = 0.0
        for w, z in zip(weights, normed, strict=True):
            if z:
                total += w * z.get(item, min(z.values()))
        out[item] = total
    return out


FUSIONS: dict[str, Callable[..., dict[int, float]]] = {"rrf": rrf, "zscore": zscore_sum}


def fusion(name: str) -> Callable[..., dict[int, float]]:
    """Pick a fusion function by name; unknown names list the valid ones."""
    try:
        return FUSIONS[name]
    except KeyError:
        raise ValueError(f"unknown fusion {name!r}; valid: {', '.join(sorted(FUSIONS))}"
                         ) from None
