"""Pure scoring functions: every number in a context answer comes from one of these.

Each returns a score and is small enough to check by hand (``tests/retrieve/test_rank.py``).
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from .adaptive import adaptive_sum

K = TypeVar("K", bound=Hashable)

EXACT_SCORE = 1.0
LABEL_BASE, LABEL_SPAN = 0.4, 0.2
CHUNK_BASE, CHUNK_SPAN = 0.4, 0.5
CITED_FACTOR = 0.9
# Tuned on HotpotQA dev50 (bench/README.md): the best signal alone ranks best; a share of
# the others only rewarded entities named in many ways, not the relevant ones. The share
# is not 0 but a tie-breaker: a note the question names (0.9) whose text also matches
# goes before a note whose text alone matches as well (0.9), where the lower id won
# before ("async await syntax" gave 2033-experimental-coroutines over 2394-async_await).
# HotpotQA dev50 graph: the same nDCG@10 0.9602, R@2 0.91, R@5 0.98 as with 0.
EXTRA_SIGNAL_WEIGHT = 0.001
HOP_DECAY = 0.5
# A hit linked with an entity placed above it gains this share of that entity's score
# (times the link's confidence): small, so it reorders close calls (the second hop of a
# question) without burying text relevance.
DIRECT_LINK_FACTOR = 0.1
HUB_FREE_DEGREE = 5
# A question that spells out a note's whole name is about that note as surely as the note
# whose text matches it best is: the same score as the best chunk hit.
NAMED_SCORE = CHUNK_BASE + CHUNK_SPAN
# Holding every question word the entities above lack is worth the whole span of a text
# hit (best over weakest): coverage is text evidence too, measured against what is missing.
COVER_GAIN = CHUNK_SPAN


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

    >>> round(combine_signals([0.9, 0.6]), 4), combine_signals([0.9])
    (0.9006, 0.9)
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

    A direct hit keeps its own score instead; its links count when the entities are
    ordered (``cover_order``: a link with an entity placed above it).
    """
    return parent * decay * confidence * hub_factor(degree)


def term_weight(df: int, n: int) -> float:
    """A query term's weight: BM25's IDF for a term held by ``df`` of ``n`` chunks.

    >>> round(term_weight(1, 1000), 2), round(term_weight(500, 1000), 2)
    (6.5, 0.69)
    """
    return math.log(1.0 + (max(n, df) - df + 0.5) / (df + 0.5))


@dataclass(frozen=True, slots=True)
class Pick(Generic[K]):
    """One place of ``cover_order``: the item, its new score and what it was credited for."""

    key: K
    score: float
    cover: float = 0.0  # share of the coverable term weight it added
    link: float = 0.0  # link credit
    linked_to: K | None = None  # the entity above it that credit came from


def cover_order(items: Sequence[tuple[K, float, frozenset[int]]], weights: Sequence[float],
                *, links: Mapping[K, Mapping[K, float]] | None = None,
                gain: float = COVER_GAIN, link_gain: float = DIRECT_LINK_FACTOR,
                limit: int | None = None) -> list[Pick[K]]:
    """Order ``(key, score, held terms)`` one pick at a time by score plus what each adds.

    Each pick maximises ``score + gain × cover + link_gain × conf × score(p)``: ``cover``
    is the weight of the query terms the item holds and no item placed above it holds,
    over the weight of every term some item holds (``weights[t]`` for term ``t``); the last
    part is its best link (``links[key][p] = conf``) with an item ``p`` placed above it.
    For the coverage part this is the greedy maximiser of ``Σ score + gain × coverage``,
    a monotone submodular set function, so coverage credits only shrink as the list grows.
    A link credit can grow (a pick links to one placed just before it), so a pick's score
    is capped at the score above it: scores never rise down the list.

    Why: the parts of a multi-part question ("the birthplace of X is a port city of what
    bay?") are answered by different notes, and the note that answers the second part is
    usually one the first note names. After the note about X, the next most useful note
    holds the words X's note lacks ("port", "bay") and is linked from it — not a second
    note about X. Ties go to the higher input score, then the lower key.

    >>> [(p.key, round(p.score, 2)) for p in cover_order(
    ...     [("a", 0.9, frozenset({0})), ("b", 0.8, frozenset({0})),
    ...      ("c", 0.7, frozenset({1}))], [1.0, 1.0], gain=0.5)]
    [('a', 1.15), ('c', 0.95), ('b', 0.8)]
    """
    order = sorted(items, key=lambda it: (-it[1], it[0]))
    keys = [k for k, _, _ in order]
    scores = [sc for _, sc, _ in order]
    masks = [sum(1 << t for t in held) for _, _, held in order]
    mask_weight: dict[int, float] = {}

    def weight(mask: int) -> float:
        if mask not in mask_weight:
            mask_weight[mask] = sum(w for t, w in enumerate(weights) if mask >> t & 1)
        return mask_weight[mask]

    total = weight(functools.reduce(operator.or_, masks, 0)) or 1.0
    new = [weight(m) for m in masks]  # weight each item would add now
    link = [0.0] * len(order)  # its best conf × score of a linked item placed above
    via: list[K | None] = [None] * len(order)
    where = {k: i for i, k in enumerate(keys)}
    credits: dict[K, list[tuple[int, float]]] = {}  # placing key p credits these items
    for k, neighbours in (links or {}).items():
        if k in where:
            for p, conf in neighbours.items():
                credits.setdefault(p, []).append((where[k], conf))
    left = list(range(len(order)))  # kept in score order: ties go to the earlier
    covered = 0
    out: list[Pick[K]] = []
    limit = len(order) if limit is None else limit
    while left and len(out) < limit:
        best, value = left[0], -math.inf
        for i in left:
            v = scores[i] + gain * new[i] / total + link_gain * link[i]
            if v > value:
                best, value = i, v
        left.remove(best)
        gained = masks[best] & ~covered
        if gained:
            covered |= gained
            for i in left:
                if masks[i] & gained:
                    new[i] = weight(masks[i] & ~covered)
        for i, conf in credits.get(keys[best], ()):
            if conf * scores[best] > link[i]:
                link[i], via[i] = conf * scores[best], keys[best]
        if out and value > out[-1].score:
            value = out[-1].score
        out.append(Pick(keys[best], value, weight(gained) / total, link_gain * link[best],
                        via[best]))
    return out


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


# BM25 weight, vector weight for the z-score fusion over corpus-wide z-scores (swept on
# SciFact train: 0.7 → 0.725, 0.8 → 0.736, 0.85 → 0.7399, 0.86 → 0.7408, 0.87 → 0.7383,
# 0.9 → 0.731; bench/README.md)
HYBRID_WEIGHTS = (0.14, 0.86)
# ``context`` once fused with these at weights 0.3 / 0.7 (SciFact graph 0.7005 → 0.7181);
# it fuses as ``search`` does now (``adaptive``, ``pipeline._fused``; bench/README.md).

# How far above the corpus's mean similarity to the question (in its standard deviations)
# a chunk only vectors found must be to count: every chunk is some vector's nearest
# neighbour, and on a 17-note vault "node-altair" returned all 17 notes, 14 of them
# unrelated people. Measured on bench/guard.py --full (bench/README.md).
VECTOR_FLOOR_Z = 1.5


def vector_worth_showing(similarity: float, moments: tuple[float, float] | None) -> bool:
    """Whether a chunk only vectors found is similar enough to the question to show:
    ``VECTOR_FLOOR_Z`` deviations above the corpus mean (``moments``: mean, sd). Without
    the corpus's moments there is nothing to measure against, and every hit counts.

    >>> vector_worth_showing(0.5, (0.1, 0.1)), vector_worth_showing(0.2, (0.1, 0.1))
    (True, False)
    """
    if moments is None or moments[1] <= 0:
        return True
    return (similarity - moments[0]) / moments[1] >= VECTOR_FLOOR_Z


def bm25_moments(top: Sequence[float], n: int) -> tuple[float, float] | None:
    """BM25's (mean, sd) over ``n`` chunks, from the top scores (the rest score ~0).

    Why: z-scores over a top-k list alone stretch its small differences; over the
    corpus, a strong hit stands out as it should. Rows outside the top k are taken as 0,
    which slightly understates the spread on very common terms.

    >>> bm25_moments([], 10), bm25_moments([3.0, 1.0], 4)
    (None, (1.0, 1.224744871391589))
    """
    if not top:
        return None
    n = max(n, len(top))
    mean = sum(top) / n
    var = max(sum(s * s for s in top) / n - mean * mean, 1e-12)
    return mean, math.sqrt(var)


FUSIONS: dict[str, Callable[..., dict[int, float]]] = {
    "adaptive": adaptive_sum, "rrf": rrf, "zscore": zscore_sum}


def fusion(name: str) -> Callable[..., dict[int, float]]:
    """Pick a fusion function by name; unknown names list the valid ones."""
    try:
        return FUSIONS[name]
    except KeyError:
        raise ValueError(f"unknown fusion {name!r}; valid: {', '.join(sorted(FUSIONS))}"
                         ) from None
