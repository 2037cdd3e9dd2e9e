"""Ranking functions against small hand-computed examples."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    # the tuned default: the best, and the rest only as a tie-breaker
    assert rank.combine_signals([0.6]) == 0.6
    assert 0.6 < rank.combine_signals([0.6, 0.5]) < 0.601
    assert rank.combine_signals([0.6, 0.5]) < rank.combine_signals([0.6, 0.5, 0.1])
    monkeypatch.setattr(rank, "EXTRA_SIGNAL_WEIGHT", 0.5)
    assert rank.combine_signals([0.6, 0.5, 0.4]) == pytest.approx(0.6 + 0.5 * 0.9)


def test_label_score_follows_coverage() -> None:
    assert rank.label_score(1.0) == pytest.approx(rank.LABEL_BASE + rank.LABEL_SPAN)
    assert rank.label_score(0.5) < rank.label_score(1.0)
    assert rank.label_score(7.0) == rank.label_score(1.0)


def test_term_weight_is_bm25_idf() -> None:
    assert rank.term_weight(1, 1000) == pytest.approx(math.log(1 + 999.5 / 1.5))
    assert rank.term_weight(10, 1000) < rank.term_weight(1, 1000)
    assert rank.term_weight(5, 0) > 0  # an unknown corpus size never goes negative


def test_cover_order_by_hand() -> None:
    # a holds term 0, b the same term, c term 1; both terms weigh 1 (total 2).
    items = [("a", 0.9, frozenset({0})), ("b", 0.8, frozenset({0})), ("c", 0.7, frozenset({1}))]
    got = rank.cover_order(items, [1.0, 1.0], gain=0.5, link_gain=0.0)
    assert [p.key for p in got] == ["a", "c", "b"]
    assert [p.score for p in got] == pytest.approx([0.9 + 0.25, 0.7 + 0.25, 0.8])
    assert [p.cover for p in got] == pytest.approx([0.5, 0.5, 0.0])
    assert [p.key for p in rank.cover_order(items, [1.0, 1.0], gain=0.0)] == ["a", "b", "c"]
    assert len(rank.cover_order(items, [1.0, 1.0], limit=2)) == 2


def test_cover_order_credits_a_link_to_an_item_placed_above() -> None:
    # b and c hold the same new term; b is linked with a (conf 0.7), c is not.
    items = [("a", 0.9, frozenset({0})), ("c", 0.72, frozenset({1})), ("b", 0.7, frozenset({1}))]
    links = {"a": {"b": 0.7}, "b": {"a": 0.7}}
    got = rank.cover_order(items, [1.0, 1.0], links=links, gain=0.5, link_gain=0.1)
    assert [p.key for p in got] == ["a", "b", "c"]
    assert got[1].linked_to == "a" and got[1].link == pytest.approx(0.1 * 0.7 * 0.9)
    assert got[1].score == pytest.approx(0.7 + 0.25 + 0.1 * 0.7 * 0.9)
    assert got[0].linked_to is None  # nothing above the first pick


def test_cover_order_scores_never_rise_down_the_list() -> None:
    # b's link credit from a (placed first) would lift it above a's own score.
    items = [("a", 0.5, frozenset()), ("b", 0.49, frozenset())]
    got = rank.cover_order(items, [], links={"b": {"a": 1.0}}, link_gain=0.5)
    assert [p.key for p in got] == ["a", "b"]
    assert got[1].score == got[0].score == 0.5


def _naive_cover_order(items, weights, links, gain, link_gain):  # type: ignore[no-untyped-def]
    """The same greedy without the early exit, for the property test below."""
    left = sorted(items, key=lambda it: (-it[1], it[0]))
    total = sum(weights[t] for t in frozenset().union(*(h for _, _, h in left))) or 1.0
    placed: dict[int, float] = {}
    covered: frozenset[int] = frozenset()
    out = []
    while left:
        def value(it, covered=covered):  # type: ignore[no-untyped-def]
            key, score, held = it
            link = max((c * placed[p] for p, c in links.get(key, {}).items() if p in placed),
                       default=0.0)
            return score + gain * sum(weights[t] for t in held - covered) / total \
                + link_gain * link
        best = max(left, key=lambda it: (value(it), -left.index(it)))
        left.remove(best)
        placed[best[0]] = best[1]
        covered |= best[2]
        out.append(best[0])
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.frozensets(st.integers(0, 4))), min_size=1,
                max_size=12),
       st.lists(st.floats(0.1, 5), min_size=5, max_size=5),
       st.sets(st.tuples(st.integers(0, 11), st.integers(0, 11))),
       st.sampled_from([0.0, 0.5, 1.0]), st.sampled_from([0.0, 0.1, 0.5]))
def test_cover_order_early_exit_changes_nothing(raw, weights, pairs, gain, link_gain) -> None:  # type: ignore[no-untyped-def]
    items = [(i, s, held) for i, (s, held) in enumerate(raw)]
    links: dict[int, dict[int, float]] = {}
    for a, b in pairs:
        if a != b and a < len(items) and b < len(items):
            links.setdefault(a, {})[b] = links.setdefault(b, {})[a] = 0.7
    got = [p.key for p in rank.cover_order(items, weights, links=links, gain=gain,
                                           link_gain=link_gain)]
    assert got == _naive_cover_order(items, weights, links, gain, link_gain)
