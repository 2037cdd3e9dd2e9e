"""Invariants that make citations trustworthy, over generated Markdown."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from knotwork.ingest import parse_markdown
from knotwork.types import Issue, ParsedDocument

NAMES = st.sampled_from(["kota", "Traefik", "Alice Smith", "ops/Kota", "Ünïcode", "a.b"])
WORDS = st.sampled_from([
    "runs on", "depends on", "läuft auf", "dipende da", "the", "and", "see", "uses", "x",
    "Le service dépend de", "se ejecuta en", ";", ".", "!", "?", "(ctx)", "`code`",
    "<!-- c -->", "%% o %%", "#tag", "#123", "key:: 1", "[k:: v]", "**b**", "\\|", "|",
])


@st.composite
def inline(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.integers(0, 6))
        name = draw(NAMES)
        if kind == 0:
            parts.append(f"[[{name}]]")
        elif kind == 1:
            parts.append(f"[[{name}|alias]]")
        elif kind == 2:
            parts.append(f"![[{name}]]")
        elif kind == 3:
            parts.append(f"[t](../{name}.md)")
        else:
            parts.append(draw(WORDS))
    return " ".join(parts)


@st.composite
def block(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 9))
    text = draw(inline())
    if kind == 0:
        return "#" * draw(st.integers(1, 7)) + " " + text
    if kind == 1:
        return f"- {text}\n  - {draw(inline())}"
    if kind == 2:
        return f"- [{draw(st.sampled_from(['idea', 'x', ' ']))}] {text}"
    if kind == 3:
        fence = draw(st.sampled_from(["```", "~~~", "````"]))
        return f"{fence}\n{text}\n# not heading\n{fence}"
    if kind == 4:
        return f"    {text}"
    if kind == 5:
        return f"| {text} | b |\n|---|---|\n| [[T\\|a]] | {draw(inline())} |"
    if kind == 6:
        return f"<!--\n{text}\n-->"
    if kind == 7:
        return f"{text}\n{draw(st.sampled_from(['===', '---', 'more']))}"
    return text


@st.composite
def document(draw: st.DrawFn) -> bytes:
    body = "\n\n".join(draw(st.lists(block(), max_size=12)))
    if draw(st.booleans()):
        front = draw(st.sampled_from([
            "title: T\ntags: [a, b]\nowner: \"[[Bob]]\"",
            "aliases: x\nbad: [unclosed",
            "",
            "nested:\n  a: 1\n  b: [[X]]",
        ]))
        body = f"---\n{front}\n---\n{body}"
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = body.replace("\n", newline)
    data = text.encode()
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    return data


def file_lines(doc: ParsedDocument) -> list[str]:
    lines = doc.text.split("\n")
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def check(doc: ParsedDocument) -> None:
    lines = file_lines(doc)
    last_end = 0
    for i, chunk in enumerate(doc.chunks):
        assert chunk.ord == i
        whole = "\n".join(lines[chunk.span.line_start - 1:chunk.span.line_end])
        if chunk.span.line_start == last_end:  # the next piece of a line cut into pieces
            assert chunk.span.line_end == last_end and chunk.column > 0
            assert whole.startswith(chunk.text, chunk.column)
        else:
            assert last_end < chunk.span.line_start <= chunk.span.line_end <= len(lines)
            assert (chunk.text, chunk.column) == (whole, 0) or (
                chunk.span.line_start == chunk.span.line_end and chunk.column == 0
                and whole.startswith(chunk.text))
        assert chunk.text.strip()
        last_end = chunk.span.line_end
    for fact in doc.facts:
        span = fact.span
        assert 1 <= span.line_start <= span.line_end <= len(lines)
        source = "\n".join(lines[span.line_start - 1:span.line_end])
        # a long sentence is quoted around the fact, with "…" where it was cut
        assert fact.supporting_text and fact.supporting_text.strip("…") in source
        if span.line_start == span.line_end:  # the column is a place in the cited line
            assert 0 <= fact.column < max(1, len(source))
        assert fact.predicate and fact.trust == "stated"
    identities = [f.identity() for f in doc.facts]
    assert len(identities) == len(set(identities))
    for issue in doc.issues:
        assert not issue.fatal


@settings(max_examples=300, deadline=None)
@given(document())
def test_chunks_and_citations_quote_the_file(data: bytes) -> None:
    doc = parse_markdown("dir/Note.md", data, chunk_tokens=40)
    assert isinstance(doc, ParsedDocument)
    check(doc)
    assert parse_markdown("dir/Note.md", data, chunk_tokens=40) == doc


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_parses_and_keeps_the_invariants(text: str) -> None:
    result = parse_markdown("Note.md", text.encode("utf-8", "surrogatepass"))
    if isinstance(result, Issue):  # lone surrogates are invalid UTF-8; NUL is binary
        assert result.fatal
        return
    check(result)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_give_a_document_or_a_fatal_issue(data: bytes) -> None:
    result = parse_markdown("Note.md", data)
    assert isinstance(result, ParsedDocument | Issue)
    if isinstance(result, ParsedDocument):
        check(result)
    else:
        assert result.fatal


# Lines the generator above does not write: head fields, one-line key sections, records,
# link definitions, and lines and sections far over a chunk budget
FIELDS = st.sampled_from([
    "Date: 2020-01-02", "Status: Accepted", "**Status:** Proposed", "- Feature Name: `x`",
    "- Start Date: 2020-01-01", "## Status", "Accepted", "Superseded by [[ADR-2]]",
    "### TASK-A-1: Do it", "wave:: 3", "depends_on:: [[TASK-A-2]]", "[ref]: https://x.org/a",
    "[n]: other.md", "# KEP-12: Title", "Owner: [[Bob]]", "Team: Platform",
    "word " * 120, "long " * 500, "x" * 3000, "- item " + "y " * 150, "  continuation.",
    "## Dependencies", "## Owners", "- [[A]] and [[B]] too", "- [[C]]", "<!--", "-->",
    "%% note %%", "===",
])


@st.composite
def record_document(draw: st.DrawFn) -> bytes:
    parts = draw(st.lists(st.one_of(block(), FIELDS), max_size=20))
    return "".join(p + draw(st.sampled_from(["\n", "\n\n"])) for p in parts).encode()


@settings(max_examples=200, deadline=None)
@given(record_document(), st.sampled_from([20, 40, 220]))
def test_fields_records_and_long_sections_keep_the_invariants(data: bytes, tokens: int) -> None:
    doc = parse_markdown("dir/Note.md", data, chunk_tokens=tokens)
    assert isinstance(doc, ParsedDocument)
    check(doc)
    for chunk in doc.chunks:  # over the budget only what cannot be cut between lines
        if len(chunk.text) > tokens * 4:
            assert chunk.span.line_start == chunk.span.line_end or any(
                mark in chunk.text for mark in ("```", "~~~", "    ")), chunk
