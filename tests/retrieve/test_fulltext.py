"""Capped term counts prune exactly the terms that exact counts would."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from knotwork.retrieve.fulltext import frequencies
from knotwork.retrieve.query import selective_terms


class _Counts:
    """Document frequencies from a dict, honouring ``cap`` as a store does."""

    def __init__(self, df: dict[str, int]) -> None:
        self.df = df
        self.read = 0  # postings a real index would have read

    def term_frequencies(self, words: Sequence[str], *, table: str = "chunk",
                         cap: int | None = None, scopes: Sequence[str] | None = None
                         ) -> list[tuple[str, int]]:
        out = [(w, self.df[w] if cap is None else min(self.df[w], cap)) for w in words]
        self.read += sum(n for _, n in out)
        return out


@given(st.lists(st.integers(0, 300_000), min_size=1, max_size=6))
def test_capped_counts_choose_the_same_terms(dfs: list[int]) -> None:
    df = {f"w{i}": n for i, n in enumerate(dfs)}
    terms = list(df)
    exact = selective_terms([(w, df[w]) for w in terms])
    counts = _Counts(df)
    assert selective_terms(frequencies(counts, terms, table="chunk")) == exact  # type: ignore[arg-type]


def test_a_rare_term_spares_reading_a_common_one() -> None:
    counts = _Counts({"kestrel": 3, "note": 90_000})
    kept = selective_terms(frequencies(counts, ["kestrel", "note"], table="chunk"))  # type: ignore[arg-type]
    assert kept == ["kestrel"]
    assert counts.read <= 1_004
