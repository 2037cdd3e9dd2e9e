"""Query text helpers: which labels a question names, and the modules' own examples."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

from knotwork import Knotwork
from knotwork.retrieve import query, rank
from knotwork.retrieve.query import label_words, named_spans, words


@pytest.mark.parametrize("module", [query, rank])
def test_docstring_examples(module: object) -> None:
    failed, attempted = doctest.testmod(module)  # type: ignore[arg-type]
    assert attempted > 0 and failed == 0


def spans(question: str, *labels: str) -> dict[str, tuple[int, int]]:
    got = named_spans(words(question), {i: words(label) for i, label in enumerate(labels)})
    return {labels[i]: span for i, span in got.items()}


def test_a_label_is_named_whole_word_bounded_and_in_order() -> None:
    q = "Who directed Moving Violations, and was Frank Borzage older?"
    assert spans(q, "Moving Violations", "Frank Borzage", "Violations Moving") == {
        "Moving Violations": (2, 4), "Frank Borzage": (6, 8)}
    assert spans("movingviolations", "Moving Violations") == {}
    assert spans("Where is 200 West Street?", "200 West Street", "West Street") == {
        "200 West Street": (2, 5)}  # the longest match wins, as in prose mentions


def test_short_stop_word_and_number_labels_are_never_named() -> None:
    assert spans("What is it about 1958 and Tosca?", "It", "The Who", "1958", "Tosca", "abc"
                 ) == {"Tosca": (6, 7)}


def test_a_numbered_record_is_named_by_its_subject(tmp_path: Path) -> None:
    """ADRs, RFCs and KEPs are files like ``2000-const-generics.md``: asking about "const
    generics" names that record, even when another note says the words more often."""
    vault = tmp_path / "rfcs"
    vault.mkdir()
    (vault / "2000-const-generics.md").write_text(
        "- Feature Name: const_generics\n\n# Summary\n\nAllow types to be generic over"
        " constant values.\n", encoding="utf-8")
    (vault / "3935-project-goals.md").write_text(
        "# Goals\n\nConst generics everywhere: const generics in traits, const generics"
        " defaults, const generics for arrays.\n", encoding="utf-8")
    with Knotwork.open(vault, db=str(tmp_path / "kw.db"), embedder="none") as kw:
        kw.ingest()
        ctx = kw.context("const generics", explain=True)
    assert ctx.entities[0].label == "2000-const-generics"
    assert "named in the question" in ctx.entities[0].why
    assert label_words("2394-async_await") == ["async", "await"]
    assert label_words("1998 FIFA World Cup") == ["1998", "fifa", "world", "cup"]
