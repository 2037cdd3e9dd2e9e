"""The adaptive fusion: BM25 weighed by the store's size, agreement between the lists."""

from __future__ import annotations

import math

import pytest

from knotwork.config import Settings
from knotwork.retrieve import adaptive, rank


def test_by_hand() -> None:
    # n = 256: BM25 weight 16 / 16 = 1; z over the given moments; 2 is in both lists' top
    runs = [[(1, 4.0), (2, 2.0)], [(2, 0.9), (3, 0.5)]]
    got = adaptive.adaptive_sum(runs, stats=[(0.0, 2.0), (0.5, 0.2)], n=256, bonus=0.25)
    assert got[1] == pytest.approx(2.0 + -0.0)  # missing in the vector run: its min z, 0
    assert got[2] == pytest.approx(1.0 + 2.0 + 0.25)
    assert got[3] == pytest.approx(1.0 + 0.0)  # missing in BM25: its min z, 1


def test_bm25_voice_does_not_grow_with_the_store() -> None:
    # A term held by one chunk of N scores s there and 0 elsewhere: its corpus z-score is
    # ~√N. Weighted by the store's size, that top hit counts the same at N = 100 and 10,000.
    def top_share(n: int) -> float:
        mean, sd = rank.bm25_moments([5.0], n) or (0.0, 1.0)
        z_top = (5.0 - mean) / sd
        return adaptive.bm25_weight(n) * z_top

    assert top_share(100) == pytest.approx(top_share(10_000), rel=0.01)
    assert math.sqrt(10_000 / 100) == pytest.approx(
        adaptive.bm25_weight(100) / adaptive.bm25_weight(10_000))


def test_agreement_breaks_a_tie_between_the_lists() -> None:
    # 10 is BM25's second and the vectors' second; 1 and 20 each top one list alone
    bm25 = [(1, 3.0), (10, 2.9), *((i, 1.0) for i in range(2, 9))]
    vec = [(20, 0.8), (10, 0.79), *((i, 0.1) for i in range(30, 37))]
    got = adaptive.adaptive_sum([bm25, vec], stats=[None, None], n=256)
    assert max(got, key=got.__getitem__) == 10
    without = adaptive.adaptive_sum([bm25, vec], stats=[None, None], n=256, bonus=0.0)
    assert got[10] - without[10] == pytest.approx(adaptive.AGREE_BONUS)


def test_needs_two_runs_and_is_the_default() -> None:
    with pytest.raises(ValueError, match="BM25 run and a vector run"):
        adaptive.adaptive_sum([[(1, 1.0)]], stats=[None], n=10)
    assert rank.fusion("adaptive") is adaptive.adaptive_sum
    assert Settings().fusion == "adaptive"
