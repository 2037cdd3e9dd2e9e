"""A fact's supporting text is the sentence of its line that states it, not the whole line.

Editors that do not hard-wrap write a paragraph as one line: each fact of it cited the
whole paragraph, where one sentence is the evidence.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from knotwork.ingest import parse_markdown
from knotwork.ingest.extract import _window
from knotwork.ingest.mentions import ChunkText, MentionFinder, _place, _tokens
from knotwork.types import FactDraft, NameRef, ParsedDocument

PARAGRAPH = ("We moved the queue last spring. Background is in [[Migration Plan]] for now! "
             "The old host is tagged #legacy; it still runs Kestrel Queue jobs. Ask Vega why.")


def parse(text: str) -> ParsedDocument:
    doc = parse_markdown("notes/Note.md", text.encode())
    assert isinstance(doc, ParsedDocument), doc
    return doc


def cited(doc: ParsedDocument) -> dict[str, str]:
    """Each fact's supporting text by its object's text or value."""
    return {f.object.text if isinstance(f.object, NameRef) else f.object.value:  # type: ignore[union-attr]
            f.supporting_text for f in doc.facts}


def mentions(text: str, *labels: str, line_start: int = 1) -> dict[str, FactDraft]:
    finder = MentionFinder([(label, label.casefold()) for label in labels])
    drafts = finder.find([ChunkText(line_start, text)])
    return {d.object.text: d for d in drafts}  # type: ignore[union-attr]


def test_a_paragraph_lines_link_tag_and_mention_each_cite_their_sentence() -> None:
    doc = parse(f"# Note\n\n{PARAGRAPH}\n")
    assert cited(doc) == {"Migration Plan": "Background is in [[Migration Plan]] for now!",
                          "legacy": "The old host is tagged #legacy;"}
    assert {f.span.line_start for f in doc.facts} == {3}
    found = mentions(f"# Note\n\n{PARAGRAPH}\n", "Kestrel Queue", "Vega")
    assert found["Kestrel Queue"].supporting_text == "it still runs Kestrel Queue jobs."
    assert found["Vega"].supporting_text == "Ask Vega why."
    assert found["Vega"].span.line_start == 3


def test_an_abbreviation_ends_no_sentence() -> None:
    doc = parse("Proxies, e.g. [[Traefik]], sit in front. Caches, i.e. #varnish, do not.\n")
    assert cited(doc) == {"Traefik": "Proxies, e.g. [[Traefik]], sit in front.",
                          "varnish": "Caches, i.e. #varnish, do not."}
    # a relation inferred after one cites the sentence from its start too
    doc = parse("We host a few, e.g. [[Traefik]] runs on [[kota]]. Done.\n")
    assert cited(doc)["kota"] == "We host a few, e.g. [[Traefik]] runs on [[kota]]."
    found = mentions("It ran. Brokers, e.g. Kestrel Queue, were slow.", "Kestrel Queue")
    assert found["Kestrel Queue"].supporting_text == "Brokers, e.g. Kestrel Queue, were slow."


def test_a_sentence_end_inside_a_link_cuts_nothing() -> None:
    doc = parse("It ran. See [[Dr. No. 2]] and [the spec. v2](Spec.md) here. Done.\n")
    assert cited(doc) == {
        "Dr. No. 2": "See [[Dr. No. 2]] and [the spec. v2](Spec.md) here.",
        "notes/Spec": "See [[Dr. No. 2]] and [the spec. v2](Spec.md) here.",
    }
    found = mentions("It ran. See [[Dr. No. 2]] about Vega. Done.", "Vega")
    assert found["Vega"].supporting_text == "See [[Dr. No. 2]] about Vega."


def test_an_inline_fields_value_is_cited_whole() -> None:
    doc = parse("It ran. We agreed [decision:: use it. Then ship] yesterday. Done.\n")
    assert cited(doc) == {
        "use it. Then ship": "We agreed [decision:: use it. Then ship] yesterday."}


def test_what_is_read_from_a_whole_list_item_cites_it_whole() -> None:
    doc = parse("- [idea] Cache it. Then measure #perf\n"
                "- depends_on [[Postgres]]; [[Redis]].\n"
                "- a plain item about [[Kota]]\n"
                "- Done here. Next see [[Vega]].\n")
    assert cited(doc) == {
        "Cache it. Then measure": "- [idea] Cache it. Then measure #perf",
        "perf": "Then measure #perf",
        "Postgres": "- depends_on [[Postgres]]; [[Redis]].",
        "Redis": "- depends_on [[Postgres]]; [[Redis]].",
        "Kota": "- a plain item about [[Kota]]",  # no sentence end: the line, as before
        "Vega": "Next see [[Vega]].",
    }


def test_a_table_row_cites_the_cell_that_says_something() -> None:
    doc = parse("| Service | Notes |\n|---|---|\n"
                "| [[Loki]] | stores logs. Kept for [[Retention]] days |\n"
                "| Web runs on [[Host A]] | #edge \\| x |\n\n"
                "We moved it. It works now. #done\n")
    assert cited(doc) == {
        "Loki": "| [[Loki]] | stores logs. Kept for [[Retention]] days |",  # a bare cell
        "Retention": "Kept for [[Retention]] days",  # the cell, not its closing bar
        "Host A": "Web runs on [[Host A]]",  # the relation too
        "edge": "#edge \\| x",  # an escaped bar is the cell's text
        "done": "We moved it. It works now. #done",  # a trailing tag tags the line
    }
    found = mentions("| x | Vega |\n| y | runs on Kestrel Queue. Fast |\n"
                     "| z | Ask Orion first |", "Vega", "Kestrel Queue", "Orion")
    assert found["Vega"].supporting_text == "| x | Vega |"
    assert found["Kestrel Queue"].supporting_text == "runs on Kestrel Queue."
    assert found["Orion"].supporting_text == "Ask Orion first"


def test_a_long_sentence_is_windowed_around_its_fact() -> None:
    filler = " ".join(f"word{i}" for i in range(150))  # about 1200 characters, no end
    line = f"{filler} [[Deep]] {filler}. Then [[Short]] here."
    doc = parse(line + "\n")
    deep = next(f for f in doc.facts if f.object == NameRef.of("Deep"))
    sentence = line[:line.index(". Then") + 1]
    assert deep.supporting_text == _window(sentence, deep.column)
    assert len(deep.supporting_text) <= 602 and "[[Deep]]" in deep.supporting_text[:160]
    assert cited(doc)["Short"] == "Then [[Short]] here."
    # and a long line without a sentence end keeps what it had
    doc = parse(f"{filler} [[Deep]] {filler}\n")
    (fact,) = doc.facts
    assert fact.supporting_text == _window(f"{filler} [[Deep]] {filler}", fact.column)
    found = mentions(f"{filler} Vega {filler}. Then Kestrel Queue here.", "Vega",
                     "Kestrel Queue")
    assert found["Vega"].supporting_text.startswith("…") and len(
        found["Vega"].supporting_text) <= 602
    assert found["Kestrel Queue"].supporting_text == "Then Kestrel Queue here."


def test_a_wrapped_paragraph_cites_the_sentence_within_each_line() -> None:
    doc = parse("It was slow before the move. The proxy #edge then\n"
                "moved to [[Kota]] in May. Later [[Vega]] took\n"
                "over the jobs.\n")
    assert cited(doc) == {"edge": "The proxy #edge then",
                          "Kota": "moved to [[Kota]] in May.",
                          "Vega": "Later [[Vega]] took"}
    assert [f.span.line_start for f in doc.facts] == [1, 2, 2]
    assert [f.column for f in doc.facts] == [39, 9, 32]
    found = mentions("It was slow. The proxy then\nmoved to Kestrel Queue in May. Later Vega\n"
                     "took over.", "Kestrel Queue", "Vega")
    assert found["Kestrel Queue"].supporting_text == "moved to Kestrel Queue in May."
    assert found["Vega"].supporting_text == "Later Vega"
    assert found["Vega"].span.line_start == 2


@given(st.text(alphabet=st.characters(max_codepoint=127)) | st.text(), st.integers(1, 3))
def test_a_mentions_words_are_placed_where_they_are(text: str, count: int) -> None:
    # each run of words the scanner sees is found where it is (off ASCII, or not at all)
    words = _tokens(text)
    for index in range(max(0, len(words) - count + 1)):
        label = tuple(words[index:index + count])
        place = _place(text, index, label)
        if place is None:
            assert not text.isascii()
            continue
        start, end = place
        assert tuple(_tokens(text[start:end])) == label
        assert len(_tokens(text[:start])) == index
