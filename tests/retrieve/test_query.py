"""Query text helpers: which labels a question names, and the modules' own examples."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

from knotwork import Knotwork
from knotwork.retrieve import pipeline, query, rank
from knotwork.retrieve.query import label_words, named_spans, words
from knotwork.types import KnowledgeContext


@pytest.mark.parametrize("module", [pipeline, query, rank])
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


def test_a_plural_names_a_singular_label_and_back() -> None:
    assert spans("Which Kestrel Queues run here?", "Kestrel Queue") == {"Kestrel Queue": (1, 3)}
    assert spans("the access policy", "Access Policies") == {"Access Policies": (1, 3)}
    assert spans("our status page", "Statu Page") == {}  # "status" is no plural


def test_short_stop_word_and_number_labels_are_never_named() -> None:
    assert spans("What is it about 1958 and Tosca?", "It", "The Who", "1958", "Tosca", "abc"
                 ) == {"Tosca": (6, 7)}


def ask(tmp_path: Path, files: dict[str, str], *questions: str) -> list[KnowledgeContext]:
    """Write ``files`` (vault path → text) into a vault, ingest it, answer ``questions``."""
    vault = tmp_path / "vault"
    for path, text in files.items():
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_text(text, encoding="utf-8")
    with Knotwork.open(vault, db=str(tmp_path / "kw.db"), embedder="none") as kw:
        kw.ingest()
        return [kw.context(q, explain=True) for q in questions]


def labels(ctx: KnowledgeContext) -> list[str]:
    return [e.label for e in ctx.entities]


def test_a_numbered_record_is_named_by_its_subject(tmp_path: Path) -> None:
    """ADRs, RFCs and KEPs are files like ``2000-const-generics.md``: asking about "const
    generics" names that record, even when another note says the words more often."""
    [ctx] = ask(tmp_path, {
        "2000-const-generics.md": "- Feature Name: const_generics\n\n# Summary\n\nAllow"
                                  " types to be generic over constant values.\n",
        "3935-project-goals.md": "# Goals\n\nConst generics everywhere: const generics in"
                                 " traits, const generics defaults, const generics for"
                                 " arrays.\n"}, "const generics")
    assert ctx.entities[0].label == "2000-const-generics"
    assert "named in the question" in ctx.entities[0].why
    assert label_words("2394-async_await") == ["async", "await"]
    assert label_words("1998 FIFA World Cup") == ["1998", "fifa", "world", "cup"]


def test_a_named_note_whose_text_matches_too_wins_a_tie_with_text_alone(
        tmp_path: Path) -> None:
    """Both notes' best chunks score the same; the one the question also names goes first,
    whichever was ingested first (the lower id used to win)."""
    [ctx] = ask(tmp_path, {
        "2033-experimental-coroutines.md": "## Motivation\n\nAsync await syntax, async"
                                           " await syntax everywhere.\n",
        "2394-async_await.md": "## Summary\n\nAdd async await syntax to the language, so"
                               " that futures can be written as plainly as the blocking"
                               " code they replace.\n"}, "async await syntax")
    assert labels(ctx) == ["2394-async_await", "2033-experimental-coroutines"]
    assert "named in the question" in ctx.entities[0].why


def test_a_record_titled_by_its_identifier_is_named_by_its_subject(tmp_path: Path) -> None:
    """Every KEP is a README.md titled "KEP-1441: kubectl debug": asking about the
    graduation criteria for kubectl debug names that KEP, not the one whose text says
    "kubectl debug" and "graduation criteria" most."""
    kep = "<!--\n- [x] Pick a hosting SIG.\n-->\n# KEP-{}: {}\n\n{}\n"
    [ctx] = ask(tmp_path, {
        "1441/README.md": kep.format("1441", "kubectl debug", "Run an ephemeral container"
                                     " to debug a pod.\n\n## Graduation Criteria\n\nBeta"
                                     " after one release."),
        "4292/README.md": kep.format("4292", "Custom profiling support in kubectl debug"
                                     " command", "Profiles for kubectl debug. Graduation"
                                     " criteria: kubectl debug profiles graduate with"
                                     " kubectl debug; the criteria follow kubectl debug."),
    }, "graduation criteria for kubectl debug")
    assert ctx.entities[0].label == "KEP-1441: kubectl debug"
    assert "named in the question" in ctx.entities[0].why


def test_an_acronym_label_is_named_by_the_words_it_abbreviates(tmp_path: Path) -> None:
    """``2094-nll.md`` is the record about non-lexical lifetimes: a question that spells
    the words out names it, even when its text never does (here it is not otherwise a hit
    at all). A capitalised word ("Cat") is a word, not an acronym."""
    nll, cat = ask(tmp_path, {
        "2094-nll.md": "## Summary\n\nExtend the borrow checker so that a borrow lasts as"
                       " long as its last use, not its whole scope.\n",
        "2025-two-phase.md": "## Summary\n\nNon-lexical lifetimes make two-phase reads"
                             " possible; non-lexical lifetimes come first.\n",
        "Cat.md": "# Cat\n\nA small animal.\n",
        "trophies.md": "# Trophies\n\nThe Canadian Army Trophy was a tank gunnery"
                       " contest.\n",
    }, "what did non-lexical lifetimes change", "who won the Canadian Army Trophy")
    found = {e.label: e for e in nll.entities}
    assert "named in the question by its initials" in found["2094-nll"].why
    assert labels(nll)[:2] == ["2025-two-phase", "2094-nll"]
    assert "Cat" not in labels(cat)


def test_initialisms_skip_stop_words_and_numbers() -> None:
    assert query.initialisms(words("Bureau of Labor Statistics")) == {}
    assert query.initialisms(words("the 2094 non lexical lifetimes")) == {"nll": (2, 5)}
    assert query.initialisms(words("a b")) == {}


def test_an_acronym_in_capitals_names_the_label_it_abbreviates(tmp_path: Path) -> None:
    """"HPA" names "Horizontal Pod Autoscaler" even where its text never says HPA; in
    lower case "war" is a word, not "Web Application Resource"."""
    hpa, war, usa = ask(tmp_path, {f"{title}.md": f"# {title}\n\n{text}\n" for title, text in {
        "Horizontal Pod Autoscaler": "Scales a workload's replicas on observed metrics.",
        "Web Application Resource": "A packaged web application archive.",
        "Scaling": "Workloads scale out when the HPA says so; the war on toil goes on.",
        "United States of America": "A country.",
    }.items()}, "how does the HPA scale", "the war on toil", "USA")
    why = {e.label: e.why for e in hpa.entities}
    assert "named in the question by its acronym" in why["Horizontal Pod Autoscaler"]
    assert hpa.entities[0].label == "Horizontal Pod Autoscaler"
    assert "Web Application Resource" not in labels(war)
    assert usa.entities[0].label == "United States of America"  # its words but "of"
