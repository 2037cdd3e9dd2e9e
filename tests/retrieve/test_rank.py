"""Ranking functions against small hand-computed examples."""

from __future__ import annotations

import math

import pytest

from knotwork.retrieve import rank


def test_rrf_by_hand() -> None:
    runs = [[(1, 9.0), (2, 5.0)], [(2, 0.9), (3, 0.8)]]
    got = rank.rrf(runs, k=60)
    assert got[1] == pytest.approx(1 / 61)
    assert got[2] == pytest.approx(1 / 62 + 1 / 61)
    assert got[3] == pytest.approx(1 / 62)
    assert max(got, key=got.__getitem__) == 2


def test_zscore_by_hand() -> None:
    # run A: scores 3, 1 -> mean 2, sd 1 -> z = +1, -1; run B: 0.5, 0.1 -> z = +1, -1
    runs = [[(1, 3.0), (2, 1.0)], [(2, 0.5), (3, 0.1)]]
    got = rank.zscore_sum(runs, weights=[0.3, 0.7])
    assert got[1] == pytest.approx(0.3 * 1 + 0.7 * -1)  # missing in B -> B's min z
    assert got[2] == pytest.approx(0.3 * -1 + 0.7 * 1)
    assert got[3] == pytest.approx(0.3 * -1 + 0.7 * -1)


def test_fusion_by_name_lists_valid_names() -> None:
    assert rank.fusion("rrf") is rank.rrf
    with pytest.raises(ValueError, match="rrf, zscore"):
        rank.fusion("borda")


def test_hub_factor_and_linked_score() -> None:
    assert rank.hub_factor(0) == rank.hub_factor(5) == 1.0
    assert rank.hub_factor(20) == pytest.approx(1 / (1 + math.log1p(15) / 2))
    assert rank.hub_factor(100) < rank.hub_factor(20) < 1.0
    assert rank.linked_score(0.8, 0.5, 0) == pytest.approx(0.8 * 0.5 * 0.5)


def test_signals_combine_as_the_best_plus_a_share_of_the_rest(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert rank.combine_signals([]) == 0.0
    assert rank.combine_signals([0.6, 0.5]) == 0.6  # the tuned default: the best alone
    monkeypatch.setattr(rank, "EXTRA_SIGNAL_WEIGHT", 0.5)
    assert rank.combine_signals([0.6, 0.5, 0.4]) == pytest.approx(0.6 + 0.5 * 0.9)


def test_label_score_follows_coverage() -> None:
    assert rank.label_score(1.0) == pytest.approx(rank.LABEL_BASE + rank.LABEL_SPAN)
    assert rank.label_score(0.5) < rank.label_score(1.0)
    assert rank.label_score(7.0) == rank.label_score(1.0)
