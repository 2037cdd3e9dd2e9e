"""The invariants that define assembly, checked over generated tiers and budgets.

- the budget is never exceeded, except by pinned items (and every pinned item is kept);
- ``total_tokens`` is the exact count of the rendered text, the heading's plus the items';
- results come in merge order: tier priority, then score;
- of two copies of one text, the one kept is the copy of the higher-priority tier (then
  the higher score).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knotwork.assemble import Budget, Item, Tier, assemble
from knotwork.assemble.budget import counter
from knotwork.assemble.merge import normalise, order_key
from knotwork.assemble.render import heading
from knotwork.assemble.sources.memory import MemorySource
from knotwork.retrieve.budget import count_tokens

SETTINGS = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
TEXT = st.text(alphabet=st.sampled_from(list("abc heliograph. Dé!?🙂\n\t-—,:#>*")),
               min_size=1, max_size=240).filter(lambda t: t.strip())
SCORE = st.floats(min_value=-1.0, max_value=2.0, allow_nan=False)


@st.composite
def tier_sets(draw: st.DrawFn, *, texts: st.SearchStrategy[str] = TEXT) -> list[Tier]:
    tiers = []
    for n in range(draw(st.integers(1, 4))):
        items = tuple(Item(draw(texts), f"t{n}/i{i}", draw(SCORE), pinned=draw(
            st.booleans() if draw(st.integers(0, 4)) == 0 else st.just(False)))
            for i in range(draw(st.integers(0, 6))))
        tiers.append(Tier(f"tier{n}", draw(st.integers(1, 3)),
                          (MemorySource(f"m{n}", items, match="all"),),
                          top_k=draw(st.integers(1, 8)), pin=draw(st.integers(0, 5)) == 0))
    return tiers


@SETTINGS
@given(tiers=tier_sets(), max_tokens=st.integers(12, 400), partial=st.booleans(),
       per=st.sampled_from([None, 4.0]))
def test_the_budget_holds_but_for_pinned_items_and_the_count_is_exact(
        tiers: list[Tier], max_tokens: int, partial: bool, per: float | None) -> None:
    budget = Budget(max_tokens, chars_per_token=per, allow_partial=partial)
    out = assemble("heliograph deploys", tiers, budget)
    count = counter(budget)
    assert out.total_tokens == count(out.text)
    if out.total_tokens > max_tokens:
        assert all(r.item.pinned for r in out.results) and out.truncated
        assert out.overrun == out.total_tokens - max_tokens
    if per is None:  # the real tokenizer: the text's count is the sum of its blocks'
        assert out.total_tokens == count_tokens(heading(out.query)) + sum(
            r.item.tokens for r in out.results)
        assert out.total_tokens == count_tokens(out.text)
    assert sum(out.tier_counts.values()) == len(out.results)
    given_text = {i.source: i.content.strip() for t in tiers
                  for i in t.sources[0].items}  # type: ignore[attr-defined]
    for r in out.results:  # an item is whole, or (allow_partial) its first sentences
        original = given_text[r.item.source]
        assert r.item.content.strip() == original or (partial and r.cut and not r.item.pinned
                                               and original.startswith(r.item.content))


@SETTINGS
@given(tiers=tier_sets(), max_tokens=st.integers(12, 400))
def test_every_pinned_item_that_survives_the_merge_is_kept(tiers: list[Tier],
                                                           max_tokens: int) -> None:
    unlimited = assemble("q", tiers, Budget(None))
    pinned = {r.item.source for r in unlimited.results if r.item.pinned}
    cut = assemble("q", tiers, Budget(max_tokens))
    assert pinned <= {r.item.source for r in cut.results}
    assert not unlimited.truncated


@SETTINGS
@given(tiers=tier_sets(), max_tokens=st.one_of(st.none(), st.integers(12, 400)))
def test_results_come_in_tier_priority_then_score_order(tiers: list[Tier],
                                                        max_tokens: int | None) -> None:
    out = assemble("q", tiers, Budget(max_tokens))
    keys = [(r.priority, -r.item.score) for r in out.results]
    assert keys == sorted(keys)
    caps = {t.name: t.top_k for t in tiers}
    assert all(n <= caps[name] for name, n in out.tier_counts.items())


# few distinct short texts, spaced and cased differently: duplicates across tiers abound
SHORT = st.builds(lambda w, up, pad: (pad + (w.upper() if up else w) + pad),
                  st.sampled_from(["alpha beta", "gamma", "delta  epsilon", "zeta"]),
                  st.booleans(), st.sampled_from(["", " ", "\n"]))


@SETTINGS
@given(tiers=tier_sets(texts=SHORT))
def test_dedup_keeps_the_copy_of_the_higher_priority_tier(tiers: list[Tier]) -> None:
    tiers = [Tier(t.name, t.priority, t.sources, top_k=50, pin=t.pin) for t in tiers]
    out = assemble("q", tiers, Budget(None))
    kept = {normalise(r.item.content): r for r in out.results}
    assert len(kept) == len(out.results)  # no text twice
    for text, r in kept.items():
        copies = [(t.priority, -i.score, n) for n, t in enumerate(tiers)
                  for i in t.sources[0].items if normalise(i.content) == text]  # type: ignore[attr-defined]
        best = min(copies)
        assert (r.priority, -r.item.score) == best[:2]
        assert order_key(r)[:2] == best[:2]
    # every text some tier offered is there
    offered = {normalise(i.content) for t in tiers for i in t.sources[0].items}  # type: ignore[attr-defined]
    assert offered == set(kept)
