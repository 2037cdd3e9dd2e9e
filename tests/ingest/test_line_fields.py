"""Fields written as lines of their own: a note's head ("Date: 2017-07-04" under an ADR's
title, an RFC's "- Start Date:" list) and one-line key sections ("## Status" / "Accepted").
"""

from __future__ import annotations

import pytest

from knotwork.ingest import parse_markdown
from knotwork.types import LiteralValue, NameRef, ParsedDocument


def parse(text: str, path: str = "decisions/0008-x.md") -> ParsedDocument:
    doc = parse_markdown(path, text.encode())
    assert isinstance(doc, ParsedDocument), doc
    return doc


def fields(doc: ParsedDocument) -> list[tuple[str, str, str, int, str]]:
    """(predicate, value or link key, extractor, line, supporting text) of each field fact."""
    out = []
    for f in doc.facts:
        if f.extractor in ("header_field", "section_field"):
            obj = f.object
            value = obj.value if isinstance(obj, LiteralValue) else obj.key  # type: ignore[union-attr]
            out.append((f.predicate, value, f.extractor, f.span.line_start, f.supporting_text))
    return out


NYGARD = """# 8. Postgres on Puppetmaster

Date: 2017-07-04

## Status

Accepted

## Context

We keep [[Puppetmaster]] on its own database.
"""


def test_an_adr_tools_record_gives_its_date_and_status() -> None:
    doc = parse(NYGARD)
    assert fields(doc) == [
        ("date", "2017-07-04", "header_field", 3, "Date: 2017-07-04"),
        ("status", "Accepted", "section_field", 7, "Accepted"),
    ]
    date = next(f for f in doc.facts if f.predicate == "date")
    assert date.object == LiteralValue("2017-07-04", "date")
    # the rest of the note reads as before
    assert [f.predicate for f in doc.facts if f.extractor == "wikilink"] == ["links_to"]


def test_a_status_keeps_its_words_and_its_link_names_the_newer_record() -> None:
    doc = parse("# 3. Outline\n\nDate: 2017-06-30\n\n## Status\n\n"
                "✅ Superseded by [9. Use Puppet](0009-puppet.md)\n\n## Context\n\nx\n")
    assert ("status", "Superseded by 9. Use Puppet", "section_field", 7,
            "✅ Superseded by [9. Use Puppet](0009-puppet.md)") in fields(doc)
    link = next(f for f in doc.facts if f.extractor == "mdlink")
    target = NameRef("decisions/0009-puppet", "decisions/0009-puppet")
    assert (link.predicate, link.object) == ("superseded_by", target)


RFC = """- Feature Name: `crt_link`
- Start Date: 2016-08-18
- RFC PR #: [rust-lang/rfcs#1721](https://github.com/rust-lang/rfcs/pull/1721)
- Rust Issue: [rust-lang/rust#37406](https://github.com/rust-lang/rust/issues/37406)

## Summary

Enable the compiler to select how a target links to its C runtime.
"""


def test_an_rfc_header_list_gives_a_fact_per_line_under_any_key() -> None:
    got = [(p, v, line) for p, v, _, line, _ in fields(parse(RFC, "text/1721-crt-link.md"))]
    assert got == [("feature_name", "crt_link", 1), ("start_date", "2016-08-18", 2),
                   ("rfc_pr", "rust-lang/rfcs#1721", 3), ("rust_issue", "rust-lang/rust#37406", 4)]


def test_a_head_field_linking_a_note_points_at_it() -> None:
    doc = parse("# Sync\n\n**Status:** Proposed\n**Owner**: [[Carol]] and [[Dan]]\n\nText.\n")
    assert [(p, v) for p, v, *_ in fields(doc)] == [
        ("status", "Proposed"), ("owner", "carol"), ("owner", "dan")]
    assert not any(f.predicate == "links_to" for f in doc.facts)  # the field's, not a link's


@pytest.mark.parametrize("text", [
    "# Groceries\n\nNote: call Bob about the milk.\n\nMore.\n",  # one line, a key no table knows
    "# Plan\n\nWe met. Status: unclear\n",  # prose around it
    "# Plan\n\nIntro paragraph.\n\nDate: 2020-01-01\n",  # not at the head
    "# Plan\n\n## Context\n\nDate: 2020-01-01\n",  # under another heading
    "# Plan\n\nSee https://example.org: it moved\n",  # no key
    "# Plan\n\nStatus:: active\n",  # an inline field, read as one (once)
    "# Plan\n\n## Status\n\nAccepted, after a long talk.\n\nThen we changed it again.\n",
    "# Plan\n\n## Data\n\nNightly job durations for the team\n",  # "data" is a date in Italian
    "# Plan\n\n## Status\n\n" + "word " * 40 + "\n",  # a paragraph, not a value
    "# Plan\n\n- Source: " + "long words " * 20 + "\n- Licence: MIT\n",  # a README's list
    "# Plan\n\n- [ ] Date: pick one\n- [ ] Status: ask\n",  # tasks
])
def test_what_is_not_a_field_line(text: str) -> None:
    assert fields(parse(text)) == []


def test_a_status_line_followed_by_link_lines_only() -> None:
    doc = parse("# 10. Layout\n\n## Status\n\nAccepted\n\nAmended by [[ADR-17]]\n\n"
                "## Context\n\nText.\n")
    assert [(p, v) for p, v, *_ in fields(doc)] == [("status", "Accepted")]


def test_two_lines_of_unknown_keys_at_the_head_are_fields() -> None:
    doc = parse("Attendees: Alice and Bob\nAgenda: planning\n\nDiscussion.\n", "meet.md")
    assert [(p, v) for p, v, *_ in fields(doc)] == [("attendees", "Alice and Bob"),
                                                    ("agenda", "planning")]


def test_the_frontmatter_wins_over_the_body() -> None:
    doc = parse("---\nstatus: accepted\ndate: 2024-05-10\n---\n" + NYGARD)
    assert fields(doc) == []
    assert sorted((f.predicate, f.extractor) for f in doc.facts
                  if f.predicate in ("status", "date")) == [
        ("date", "frontmatter"), ("status", "frontmatter")]


def test_a_title_line_names_nothing_and_tags_split() -> None:
    doc = parse("Title: Other\nTags: ops, #edge\n\nText.\n", "t.md")
    assert doc.title == "t"
    assert [(p, v) for p, v, *_ in fields(doc)] == [("tag", "ops"), ("tag", "edge")]


def test_other_languages_keys() -> None:
    doc = parse("# Entscheidung\n\nDatum: 2021-03-04\n\n## Stato\n\nAccettato\n", "d.md")
    assert [(p, v) for p, v, *_ in fields(doc)] == [("date", "2021-03-04"),
                                                    ("status", "Accettato")]


def test_an_inline_field_naming_a_web_page_keeps_its_text() -> None:
    # before, a field whose value held only a link to no note gave no fact at all
    doc = parse("Docs:: [the guide](https://example.org/guide)\n", "f.md")
    facts = [(f.predicate, f.object, f.extractor) for f in doc.facts]
    assert facts == [("docs", LiteralValue("the guide"), "inline_field")]


def test_values_lose_their_decoration_but_not_their_signs() -> None:
    doc = parse("# T\n\n- Status: **Accepted** 🎉\n- RFC PR: #1234\n- Owner: 👩‍💻 Ada\n", "t.md")
    assert [(p, v) for p, v, *_ in fields(doc)] == [
        ("status", "Accepted 🎉"), ("rfc_pr", "#1234"), ("owner", "Ada")]


def test_an_owner_section_linking_a_note_points_at_it() -> None:
    doc = parse("# T\n\n## Owner\n\n[[Ada Lovelace]]\n\n## Notes\n\nx\n", "t.md")
    assert [(p, v) for p, v, *_ in fields(doc)] == [("owner", "ada lovelace")]
    assert not any(f.predicate == "links_to" for f in doc.facts)
