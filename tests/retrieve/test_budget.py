"""Counting an answer by segments gives exactly the count of the whole text."""

from __future__ import annotations

import functools
import json
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from knotwork import Knotwork
from knotwork.retrieve import TokenCounter, count_tokens
from knotwork.retrieve.budget import segments

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "vault"
ENCODINGS = ["o200k_base", "cl100k_base"]

# Characters that decide where pieces end: newlines, blanks, every kind of punctuation
# (the `/` a punctuation run takes after a newline, the apostrophe of contractions),
# digits, letters of both cases, marks, other scripts and Unicode spaces.
_ALPHABET = st.sampled_from(list(
    "\n\n\n\r\t   {}[]\"\"',:./\\-_#*|>`'sStT019aAzZ\u00e9\u0301\u00df\u4e2d\u0416"
    "\u00a0\u2028\u3000\U0001f600"))
_TEXT = st.text(alphabet=_ALPHABET, max_size=120)


@functools.cache
def _public(encoding: str) -> Any:
    """The tokenizer package's public API, which ``count_tokens`` loads around."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # its resource loading
        import bpe_openai

        return bpe_openai.get_encoding(encoding)


def _json_values() -> st.SearchStrategy[object]:
    leaves = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                       st.floats(allow_nan=False, allow_infinity=False), _TEXT)
    keys = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
    return st.recursive(leaves, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)), max_leaves=12)


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=300, deadline=None)
@given(text=_TEXT)
@example(text="a,\n/b")
@example(text="x\n  \ny")
@example(text='q{"a')
@example(text="it\n's")
def test_segments_sum_to_the_whole_for_any_text(encoding: str, text: str) -> None:
    assert TokenCounter(encoding)(text) == count_tokens(text, encoding=encoding)


@settings(max_examples=500, deadline=None)
@given(text=_TEXT)
@example(text='{"a\n b{"Z\n/x')
def test_segments_end_where_the_cut_rule_says(text: str) -> None:
    # the rule of ``budget._CUT_DICT`` and ``_CUT_LINE`` written as one alternation, the
    # way it was first written: the faster pair must cut exactly where it did
    ends = [m.end() for m in re.finditer(r'\{"(?=[a-z])|\n(?=[ \t]*[!-.0-~])', text)]
    assert "".join(segments(text)) == text
    assert [len(s) for s in segments(text)] == [
        b - a for a, b in zip([0, *ends], [*ends, len(text)], strict=True)]


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=200, deadline=None)
@given(value=_json_values())
def test_segments_sum_to_the_whole_for_json(encoding: str, value: object) -> None:
    for text in (json.dumps(value, ensure_ascii=False, separators=(",", ":")),
                 json.dumps(value, ensure_ascii=False, indent=2)):
        assert TokenCounter(encoding)(text) == count_tokens(text, encoding=encoding)


def test_a_rendered_answer_is_counted_exactly_and_then_from_the_cache(tmp_path: Path) -> None:
    kw = Knotwork.open(EXAMPLES, db=str(tmp_path / "kw.db"), embedder="none")
    kw.ingest()
    ctx = kw.context("traefik", max_tokens=0)
    counter = TokenCounter()
    for fmt in ("json", "markdown"):
        text = kw.render(ctx, fmt)
        assert len(segments(text)) > 10  # the answer really is cut into segments
        assert counter(text) == count_tokens(text)
    cached = dict(counter._cache)
    assert counter(kw.render(ctx, "json")) == count_tokens(kw.render(ctx, "json"))
    assert counter._cache == cached  # a second count encodes nothing new


def test_other_encodings_are_counted_whole() -> None:
    text = "a\n  b\n{\"k\":1}"
    counter = TokenCounter("voyage3_base")
    assert counter(text) == count_tokens(text, encoding="voyage3_base")
    assert counter._cache == {}


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=200, deadline=None)
@given(text=_TEXT)
@example(text="lone \ud800 surrogate")
def test_counts_equal_the_tokenizer_packages_own_api(encoding: str, text: str) -> None:
    expected = len(_public(encoding).encode_ordinary(text))
    assert count_tokens(text, encoding=encoding) == expected


def test_a_tight_budget_keeps_the_best_entity_before_lower_ranked_evidence(
        tmp_path: Path) -> None:
    kw = Knotwork.open(EXAMPLES, db=str(tmp_path / "kw.db"), embedder="none")
    kw.ingest()
    whole = kw.context("who runs the message queue", max_tokens=0)
    for budget in (300, 500):
        ctx = kw.context("who runs the message queue", max_tokens=budget)
        assert ctx.summary.truncated and ctx.summary.tokens <= budget
        assert [e.label for e in ctx.entities] == [whole.entities[0].label]
        assert len(ctx.entities[0].facts) < len(whole.entities[0].facts)
