"""Chunks: heading paths, splitting long sections, exact line spans."""

from __future__ import annotations

from knotwork.ingest import parse_markdown
from knotwork.types import ChunkDraft, ParsedDocument, Span


def parse(text: str, **kw: int) -> ParsedDocument:
    doc = parse_markdown("n/Note.md", text.encode(), **kw)
    assert isinstance(doc, ParsedDocument), doc
    return doc


def assert_exact(doc: ParsedDocument) -> None:
    """Every chunk is exactly the file's lines ``line_start..line_end`` joined by "\\n", or
    a piece of the one line it cites (a line over the budget is cut at blanks), found in
    that line at the piece's column."""
    lines = doc.text.replace("\r\n", "\n").split("\n")
    for i, chunk in enumerate(doc.chunks):
        assert chunk.ord == i
        whole = "\n".join(lines[chunk.span.line_start - 1:chunk.span.line_end])
        assert (chunk.text, chunk.column) == (whole, 0) or (
            chunk.span.line_start == chunk.span.line_end
            and whole.startswith(chunk.text, chunk.column))
        assert chunk.text.strip()


def test_heading_paths_and_preamble() -> None:
    doc = parse(
        "---\ntitle: T\n---\n"
        "Preamble text.\n\n"
        "# One\nbody 1\n"
        "## Two ##\nbody 2\n"
        "### Three\nbody 3\n"
        "## Four\nbody 4\n"
        "# Five\n"
    )
    assert [(c.heading_path, c.span) for c in doc.chunks] == [
        ((), Span(4, 4)),
        (("One",), Span(6, 7)),
        (("One", "Two"), Span(8, 9)),
        (("One", "Two", "Three"), Span(10, 11)),
        (("One", "Four"), Span(12, 13)),
        (("Five",), Span(14, 14)),
    ]
    assert doc.chunks[1].text == "# One\nbody 1"
    assert_exact(doc)


def test_skipped_levels_and_setext() -> None:
    doc = parse("### Deep\na\n# Top\nb\n\nSetext Title\n============\nc\n\nSub\n---\nd\n")
    assert [c.heading_path for c in doc.chunks] == [
        ("Deep",), ("Top",), ("Setext Title",), ("Setext Title", "Sub")]
    assert_exact(doc)


def test_hash_without_space_is_not_a_heading() -> None:
    doc = parse("#tag line\n####### seven\n# Real\n")
    assert [c.heading_path for c in doc.chunks] == [(), ("Real",)]


def test_whitespace_only_sections_are_skipped() -> None:
    doc = parse("\n\n# A\n\n\n# B\n\n   \n")
    assert [(c.heading_path, c.text) for c in doc.chunks] == [(("A",), "# A"), (("B",), "# B")]


def test_long_section_splits_at_paragraphs() -> None:
    para = "word " * 60  # ~300 chars, ~75 tokens
    text = "# Long\n\n" + "\n\n".join(para.strip() for _ in range(8)) + "\n"
    doc = parse(text, chunk_tokens=100)
    assert len(doc.chunks) > 3
    assert all(c.heading_path == ("Long",) for c in doc.chunks)
    assert doc.chunks[0].text.startswith("# Long")
    assert all(len(c.text) / 4 <= 100 for c in doc.chunks)
    assert_exact(doc)
    covered = [n for c in doc.chunks for n in range(c.span.line_start, c.span.line_end + 1)]
    assert len(covered) == len(set(covered))


def test_no_line_or_two_is_left_over_as_a_chunk_of_its_own() -> None:
    # greedy packing cut [heading + both paragraphs] and left the link definition alone
    text = ("## Goals\n\n" + "goal " * 100 + "\n\n" + "more " * 72 + "[plan]\n\n"
            "[plan]: https://example.org/plan\n")
    doc = parse(text)  # a budget of 880 characters
    assert [(c.span.line_start, c.span.line_end) for c in doc.chunks] == [(1, 3), (5, 7)]
    assert_exact(doc)
    # ...but never past the budget: here the paragraph before would make the last 882
    text = "## H\n\n" + "a " * 20 + "\n\n" + "b " * 380 + "\n\n" + "c " * 60 + "\n"
    doc = parse(text)
    assert [(c.span.line_start, c.span.line_end) for c in doc.chunks] == [(1, 5), (7, 7)]
    # a list too big for one chunk is packed by lines: its last line ("custom
    # controller.", the end of an item) goes with lines before it, and what follows the
    # list joins its end instead of starting a chunk of its own
    items = "\n".join(f"- step {i}: " + "run the job " * 6 for i in range(14))
    doc = parse(f"# Steps\n\n{items}\n  custom controller.\n\nDone.\n", chunk_tokens=100)
    sizes = [len(c.text) for c in doc.chunks]
    assert all(size <= 400 for size in sizes) and min(sizes) >= 100, sizes
    assert doc.chunks[-1].text.endswith("custom controller.\n\nDone.")
    assert_exact(doc)


def test_fenced_code_is_not_split_unless_it_alone_is_too_big() -> None:
    code = "```\n" + "\n\n".join(f"line {i} " * 5 for i in range(10)) + "\n```"
    doc = parse(f"# C\n\nintro\n\n{code}\n\nafter\n", chunk_tokens=150)
    fenced = [c for c in doc.chunks if "```" in c.text]
    assert len(fenced) == 1 and fenced[0].text.count("```") == 2
    assert_exact(doc)
    big = "```\n" + "\n".join(f"line {i} " * 10 for i in range(60)) + "\n```"
    doc = parse(f"# C\n{big}\n", chunk_tokens=100)
    assert len(doc.chunks) > 3
    assert all(len(c.text) / 4 <= 100 for c in doc.chunks)
    assert_exact(doc)


def test_a_single_overlong_line_is_cut_into_pieces_that_cite_it() -> None:
    doc = parse("# H\n" + "x" * 1700 + "\n", chunk_tokens=50)
    assert [len(c.text) for c in doc.chunks] == [3] + [200] * 8 + [100]
    assert_exact(doc)
    words = " ".join(f"word{i}" for i in range(400))  # one paragraph written as one line
    doc = parse(f"# H\n\n{words}\n\nafter\n", chunk_tokens=50)
    pieces = [c for c in doc.chunks if c.span.line_start == 3]
    assert len(pieces) > 10 and all(len(c.text) <= 200 for c in pieces)
    assert " ".join(c.text for c in pieces) == words  # cut at blanks, nothing lost
    assert doc.chunks[-1].text == "after"
    assert_exact(doc)


def test_a_paragraph_written_as_one_line_stays_whole_up_to_eight_budgets() -> None:
    # a scientific abstract is one line: cut in two or three, BM25 scored its parts apart
    for size, whole in ((1600, True), (1601, False)):
        doc = parse("# H\n\n" + "x" * size + "\n", chunk_tokens=50)  # a budget: 200
        assert (len([c for c in doc.chunks if c.span.line_start == 3]) == 1) is whole
        assert_exact(doc)


def test_crlf_chunks() -> None:
    doc = parse("# A\r\none\r\n\r\n# B\r\ntwo\r\n")
    assert doc.chunks == (
        ChunkDraft(0, ("A",), "# A\none", Span(1, 2)),
        ChunkDraft(1, ("B",), "# B\ntwo", Span(4, 5)),
    )


def test_an_empty_section_joins_the_deeper_one_after_it() -> None:
    doc = parse("# A\nintro\n## Routing\n\n### Routers\nrules here\n## Next\n\n## Last\nbody\n")
    assert_exact(doc)
    assert [(c.heading_path, c.span) for c in doc.chunks] == [
        (("A",), Span(1, 2)),
        (("A", "Routing", "Routers"), Span(3, 6)),  # "## Routing" has no body of its own
        (("A", "Next"), Span(7, 7)),  # a sibling follows: nothing deeper to join
        (("A", "Last"), Span(9, 10)),
    ]


def test_comment_only_lines_make_no_chunk_and_edge_no_chunk() -> None:
    """A KEP's template instructions (one comment before its title) are no chunk; a
    comment inside a paragraph stays in its chunk, as the file has it."""
    doc = parse("<!--\n**Note:** fill this in.\n\n- [x] Pick a SIG.\n-->\n"
                "# KEP-1: Title\n\n<!-- toc -->\nText one.\n<!-- inline -->\nText two.\n"
                "<!-- /toc -->\n\n## Empty\n\n%% only a note %%\n\n### Full\n\nBody.\n")
    assert_exact(doc)
    assert [(c.heading_path, c.text) for c in doc.chunks] == [
        (("KEP-1: Title",), "# KEP-1: Title\n\n<!-- toc -->\nText one.\n<!-- inline -->\n"
                           "Text two."),
        # a section of only a comment joins the deeper one after it, as an empty one does
        (("KEP-1: Title", "Empty", "Full"), "## Empty\n\n%% only a note %%\n\n### Full\n\n"
                                            "Body."),
    ]


def test_a_run_of_empty_sections_joins_the_first_section_with_text() -> None:
    doc = parse("## Proposal\n\n### User Stories\n\n#### Story 1\n\nText one.\n\n"
                "#### Story 2\n\nText two.\n")
    assert_exact(doc)
    assert [(c.heading_path, c.text) for c in doc.chunks] == [
        (("Proposal", "User Stories", "Story 1"),
         "## Proposal\n\n### User Stories\n\n#### Story 1\n\nText one."),
        (("Proposal", "User Stories", "Story 2"), "#### Story 2\n\nText two."),
    ]


def test_a_template_section_left_as_it_came_makes_no_chunk() -> None:
    """A heading over only the template's comment answers nothing; an empty heading the
    author wrote alone, or one holding a link, stays a chunk."""
    doc = parse("## Goals\n\n<!--\nList the goals.\n-->\n\n## Non-Goals\n\nNone at all, yet.\n\n"
                "## Risks\n\n## Links [[Runbook]]\n\n<!-- add more -->\n")
    assert_exact(doc)
    assert [c.heading_path for c in doc.chunks] == [("Non-Goals",), ("Risks",),
                                                   ("Links [[Runbook]]",)]
