"""Pure scoring functions: every number in a context answer comes from one of these.

Each returns a score and is small enough to check by hand (``tests/retrieve/test_rank.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

EXACT_SCORE = 1.0
LABEL_BASE, LABEL_SPAN = 0.4, 0.2
CHUNK_BASE, CHUNK_SPAN = 0.4, 0.5
CITED_FACTOR = 0.9
# A chunk found only by its vector counts for this share of a text hit of the same rank:
# on HotpotQA dev50, full weight let vector-only passages push gold ones out of the top
# (graph R@2 0.79 / R@5 0.96); 0.6 keeps them as candidates behind the text (0.83 / 0.98).
SEMANTIC_FACTOR = 0.6
# Tuned on HotpotQA dev50 (bench/README.md): the best signal alone ranks best; a share of
# the others only rewarded entities named in many ways, not the relevant ones.
EXTRA_SIGNAL_WEIGHT = 0.0
HOP_DECAY = 0.5
# A direct hit that a better hit names gains this share of a linked score: small, so it
# reorders close calls (the second hop of a question) without burying text relevance.
DIRECT_LINK_FACTOR = 0.1
HUB_FREE_DEGREE = 5


def label_score(coverage: float) -> float:
    """A hit on an entity's label, by the share of the label's words the query holds.

    Why coverage and not the label's BM25: "Rex Riot" shares one word with a question about
    "Rex Maughan" and would score as high; a label the query names in full is the signal.
    """
    return LABEL_BASE + LABEL_SPAN * max(0.0, min(1.0, coverage))


def chunk_hit_score(bm25: float, best: float) -> float:
    """A chunk-text hit, scaled against the best chunk hit of the query."""
    return CHUNK_BASE + CHUNK_SPAN * (bm25 / best if best > 0 else 0.0)


def combine_signals(scores: Sequence[float]) -> float:
    """The best signal plus a share (``EXTRA_SIGNAL_WEIGHT``) of the others.

    >>> combine_signals([0.9, 0.6])
    0.9
    """
    if not scores:
        return 0.0
    best = max(scores)
    return best + EXTRA_SIGNAL_WEIGHT * (sum(scores) - best)


def hub_factor(degree: int) -> float:
    """Damp nodes linked from everything: a hub tells little about any one query.

    1.0 up to ``HUB_FREE_DEGREE`` live facts, then falling with the log of the excess:
    degree 20 → 0.42, degree 100 → 0.30.
    """
    excess = max(0, degree - HUB_FREE_DEGREE)
    return 1.0 / (1.0 + math.log1p(excess) / 2.0)


def linked_score(parent: float, confidence: float, degree: int, *, decay: float = HOP_DECAY
                 ) -> float:
    """Score of an entity reached over one fact from a scored parent.

    For an entity that is also a direct hit, this is added to its direct score: a passage
    the best hit names is likelier the second hop of the question than one that is not.
    """
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
               weights: Sequence[float] | None = None,
               stats: Sequence[tuple[float, float] | None] | None = None) -> dict[int, float]:
    """Weighted sum of z-normalised scores; an item missing from a run gets that run's min.

    ``stats`` gives a run's (mean, sd) over everything it could have returned (the whole
    corpus); without it the run's own items are used, which a top-k cut skews.
    """
    weights = weights or [1.0] * len(runs)
    out: dict[int, float] = {}
    normed: list[dict[int, float]] = []
    for n, run in enumerate(runs):
        vals = [s for _, s in run]
        if not vals:
            normed.append({})
            continue
        given = stats[n] if stats else None
        if given is not None:
            mean, sd = given
        else:
            mean = sum(vals) / len(vals)
            sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / len(vals))
        sd = sd or 1.0
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
