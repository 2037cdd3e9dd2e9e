"""Hybrid fusion that carries from one corpus to another: BM25 scaled by √N, agreement.

The z-score fusion (``rank.zscore_sum``) adds corpus-wide z-scores with fixed weights.
Those weights were chosen on SciFact (9,902 chunks) and did not carry: on LoCoMo's
conversations (~110 chunks a store) the default hybrid lost to BM25 alone (note MRR
0.688 against 0.795). The reason is a scale law, not a taste of the corpus: a term held
by m of N chunks scores about ``s`` there and ~0 elsewhere, so BM25's top z-score is
about ``√(N/m)`` — it grows with the corpus — while a cosine's z-score does not depend
on N. A fixed weight gave BM25 0.43 of the top's weight at N = 9,902 and 0.24 at
N = 110. Here BM25's z-scores are weighted ``BM25_SCALE / √N`` (0.163 at N = 9,902:
the share 0.14 / 0.86 the fixed weights gave it there), so its voice no longer depends on
the size of the store, while the per-query evidence stays in the scores: a query whose
rare words one chunk holds still stands out by its BM25 z-score, one that every chunk
half matches does not.

Then agreement, the evidence the two lists give together: a chunk both put in their first
``AGREE_DEPTH`` gains ``AGREE_BONUS`` (in vector z units, ~1/16 of a typical top hit's).
Measured (``bench/README.md``, "Fusion that carries"), ``search`` hybrid with this
fusion is at or above the better of BM25 and vectors on every set we have.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

__all__ = ["AGREE_BONUS", "AGREE_DEPTH", "BM25_SCALE", "NAMED_SCALE", "adaptive_sum",
           "bm25_weight", "context_scale"]

# BM25's weight is BM25_SCALE / √N against the vector side's 1 (N: live chunks). 16 gives
# SciFact (N = 9,902) the ratio 0.163, the old fixed weights' 0.14 / 0.86; swept on the
# sets of bench/README.md at 12, 16, 20, 25, 30 — 16 was the one at or above both inputs
# on every set (Rust RFCs held out).
BM25_SCALE = 16.0
# ``context`` fuses its chunk hits with this same function (``pipeline._fused``), at this
# scale, or at NAMED_SCALE for a question that writes a name few chunks hold
# (``context_scale``). 42.6 is the old fixed weights' 0.3 / 0.7 at SciFact's size. Swept
# on every set but the Rust RFCs (bench/README.md, "Context fuses by the evidence"): 8, 16,
# 25, 42.6 for every question; 8 and 16 against 42.6 by the name rule. 16 / 42.6 was the
# one that kept HotpotQA's graph R@2 at 0.92 and gained on LoCoMo, KEPs and ADRs.
NAMED_SCALE = 42.6
AGREE_DEPTH = 10
AGREE_BONUS = 0.25


def bm25_weight(n: int, scale: float = BM25_SCALE) -> float:
    """BM25's weight against the vector side's 1 in a store of ``n`` live chunks.

    >>> round(bm25_weight(9902), 3), round(bm25_weight(100), 2), bm25_weight(0)
    (0.161, 1.6, 16.0)
    """
    return scale / math.sqrt(max(n, 1))


def context_scale(named: Sequence[str], df: Mapping[str, int], n: int) -> float:
    """BM25's scale in ``context`` for a question whose name words (``named``, from
    ``domain.words.named_words``) have the chunk counts ``df`` in a store of ``n``.

    ``NAMED_SCALE`` when one of them is held by at most √n chunks (a name the store spells
    in few places: "Rex Maughan", "Greg Gianforte"), else ``BM25_SCALE``. Why: a question
    that names something rare is answered by the text that spells it, which vectors only
    approximate; a name every chunk holds (the two speakers of a chat) tells nothing, and
    a question in other words than the note's ("a cluster that manages the other
    clusters") is where vectors count. In ``search`` the same rule measured no better
    (SciFact nDCG@10 0.7415 against 0.7419, HotpotQA 0.9443 against 0.9413, LoCoMo MRR
    0.793 against 0.796), so ``search`` keeps one scale.

    >>> context_scale(["maughan"], {"maughan": 2}, 5000)
    42.6
    >>> context_scale(["caroline"], {"caroline": 90}, 94)  # every chunk of a chat
    16.0
    """
    bar = math.sqrt(max(n, 1))
    return NAMED_SCALE if any(0 < df.get(t, 0) <= bar for t in named) else BM25_SCALE


def adaptive_sum(runs: Sequence[Sequence[tuple[int, float]]], *,
                 stats: Sequence[tuple[float, float] | None], n: int,
                 scale: float = BM25_SCALE, bonus: float = AGREE_BONUS,
                 depth: int = AGREE_DEPTH, unembedded: Collection[int] = ()
                 ) -> dict[int, float]:
    """Fuse ``[bm25 run, vector run]`` (each ``(item, score)`` best first).

    Each run's scores become z-scores over the corpus (``stats``: (mean, sd), else the
    run's own items'); an item a run lacks gets that run's lowest. BM25's count
    ``bm25_weight(n, scale)``, the vector's 1, and an item in the first ``depth`` of both
    gains ``bonus``.

    ``unembedded``: items that have no vector yet (a store part-way through embedding).
    The vector run could not rank them, so its lowest would call them dissimilar and let
    every embedded item pass them: at a quarter of the chunks embedded, KEPs' hybrid MRR
    fell from BM25's 0.71 to 0.42 (bench/README.md, "While the vectors are made"). Such an
    item takes the vector z-score found at its own BM25 rank instead, as if the vectors
    ranked it as BM25 does (their lowest past the run's end).

    >>> out = adaptive_sum([[(1, 9.0), (2, 1.0)], [(2, 0.9), (3, 0.5)]],
    ...                    stats=[(0.0, 1.0), (0.0, 0.1)], n=1024, bonus=0.5)
    >>> sorted(out, key=lambda i: -out[i]), [round(out[i], 2) for i in (1, 2, 3)]
    ([2, 1, 3], [9.5, 10.0, 5.5])
    """
    if len(runs) != 2:
        raise ValueError(f"adaptive fusion takes a BM25 run and a vector run, got {len(runs)}")
    weights = (bm25_weight(n, scale), 1.0)
    normed: list[dict[int, float]] = []
    for run, given in zip(runs, stats, strict=True):
        if not run:
            normed.append({})
            continue
        if given is not None:
            mean, sd = given
        else:
            vals = [s for _, s in run]
            mean = sum(vals) / len(vals)
            sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / len(vals))
        sd = sd or 1.0
        normed.append({i: (s - mean) / sd for i, s in run})
    both = {i for i, _ in runs[0][:depth]} & {i for i, _ in runs[1][:depth]}
    floors = [min(z.values()) if z else 0.0 for z in normed]
    if unembedded and normed[1]:
        # a copy: the vector side's z-scores, with those it could not see at BM25's ranks
        by_rank = sorted(normed[1].values(), reverse=True)
        normed[1] = dict(normed[1])
        for rank_at, (item, _) in enumerate(runs[0]):
            if item in unembedded and item not in normed[1]:
                normed[1][item] = by_rank[rank_at] if rank_at < len(by_rank) else floors[1]
    out: dict[int, float] = {}
    for item in {i for run in runs for i, _ in run}:
        total = sum(w * z.get(item, low) for w, z, low in zip(weights, normed, floors,
                                                               strict=True) if z)
        out[item] = total + (bonus if item in both else 0.0)
    return out
