"""Each text → words rule pinned on the inputs where the rules part ways: unicode,
hyphens, underscores, apostrophes and digits."""

from __future__ import annotations

import doctest

import pytest

from knotwork.domain import ids, names, ownership, words
from knotwork.domain.words import (
    label_initials,
    label_words,
    name_key,
    name_words,
    query_terms,
    written_acronyms,
)
from knotwork.domain.words import words as search_words


@pytest.mark.parametrize("module", [words, ids, names, ownership])
def test_docstring_examples(module: object) -> None:
    failed, attempted = doctest.testmod(module)  # type: ignore[arg-type]
    assert attempted > 0 and failed == 0


TEXT = "Don't split async_await-queue in Café 2024, Straße v2"


def test_search_words_keep_underscores_and_split_apostrophes() -> None:
    assert search_words(TEXT) == ["don", "t", "split", "async_await", "queue", "in", "café",
                                  "2024", "strasse", "v2"]


def test_name_words_split_underscores_too() -> None:
    assert name_words(TEXT) == ["don", "t", "split", "async", "await", "queue", "in", "café",
                                "2024", "strasse", "v2"]
    assert name_words("__--__") == []


def test_query_terms_drop_stop_words_and_repeats_unless_nothing_is_left() -> None:
    assert query_terms("the queue and THE Queue of Café") == ["queue", "café"]
    assert query_terms("the and of") == ["the", "and", "of"]
    assert query_terms(" ".join(f"w{i}" for i in range(40)), max_terms=3) == ["w0", "w1", "w2"]


def test_written_acronyms_are_capital_letters_only() -> None:
    assert written_acronyms("HPA, hpa, Hpa, K8S, NATO's ÉTÉ AB ABCDEF") == ["hpa", "nato", "été"]
    assert written_acronyms("no acronym here") == []


def test_label_words_drop_a_record_number_only_when_a_word_is_left() -> None:
    assert label_words("0001-use-postgres") == ["use", "postgres"]
    assert label_words("2024-05-01") == ["2024", "05", "01"]
    assert label_words("RFC 2094: Non-lexical lifetimes") == ["non", "lexical", "lifetimes"]


def test_label_initials() -> None:
    assert label_initials("Horizontal_Pod-Autoscaler") == ("hpa",)
    assert label_initials("Horizontal Pod") == ()
    assert label_initials("Top 10 Lists Ever") == ()


def test_name_key_is_one_normalised_key_not_words() -> None:
    decomposed = "Cafe\u0301.md"
    assert name_key(decomposed) == name_key("café") == "café"
    assert name_key("  /Ops\\Kestrel   Queue.MD") == "ops/kestrel queue"
    assert name_key("x.md/") == "x.md"  # ".md" is dropped before the slashes are
    assert name_key("Don't-split_me") == "don't-split_me"
