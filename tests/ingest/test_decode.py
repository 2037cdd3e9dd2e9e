"""Bytes in: fatal issues for files that cannot be notes, exact text for those that can."""

from __future__ import annotations

import hashlib

from knotwork.ingest import parse_markdown
from knotwork.types import Issue, NameDecl, ParsedDocument


def parse(data: bytes, path: str = "notes/Note.md", **kw: int) -> ParsedDocument:
    doc = parse_markdown(path, data, **kw)
    assert isinstance(doc, ParsedDocument), doc
    return doc


def test_binary_file_is_fatal() -> None:
    issue = parse_markdown("img.md", b"PNG\x00\x01\x02 [[x]]")
    assert issue == Issue("img.md", "binary file", None, fatal=True)


def test_a_nul_anywhere_keeps_the_file_out_with_its_line() -> None:
    # one rule for the whole file: a NUL after the first 8 KB was stored silently
    data = b"a\n" * 4500 + b"b\x00"
    issue = parse_markdown("a.md", data)
    assert isinstance(issue, Issue) and issue.fatal
    assert issue.reason == "binary file: a NUL byte at byte 9001" and issue.line == 4501


def test_utf16_and_utf32_with_a_bom_are_read() -> None:
    text = "---\nowner: \"[[Zoë]]\"\n---\n# Café\n\nRuns on [[kota]].\r\n"
    for codec, bom in (("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"),
                       ("utf-32-le", b"\xff\xfe\x00\x00")):
        doc = parse(bom + text.encode(codec), "Café.md")
        assert doc.title == "Café", codec
        assert {f.predicate for f in doc.facts} >= {"owner", "runs_on"}, codec
    broken = parse_markdown("x.md", b"\xff\xfe" + "ab".encode("utf-16-le") + b"\x00")
    assert isinstance(broken, Issue) and "invalid UTF-16-LE" in broken.reason
    nul = parse_markdown("x.md", b"\xff\xfe" + "a\nb\x00".encode("utf-16-le"))
    assert isinstance(nul, Issue) and nul.line == 2 and "NUL" in nul.reason


def test_file_over_the_limit_is_fatal() -> None:
    issue = parse_markdown("big.md", b"x" * 101, max_bytes=100)
    assert isinstance(issue, Issue) and issue.fatal
    assert issue.reason == "file too large: 101 bytes > limit 100"


def test_huge_file_under_the_default_limit_parses() -> None:
    data = ("# H\n\n" + ("word " * 40 + "\n\n") * 5000).encode()
    doc = parse(data)
    assert len(doc.chunks) > 100


def test_invalid_utf8_reports_byte_and_line() -> None:
    data = b"---\ntitle: x\n---\nok line\nbad \xff here\n"
    issue = parse_markdown("bad.md", data)
    assert isinstance(issue, Issue) and issue.fatal
    bad = data.index(b"\xff")
    assert issue.reason == f"invalid UTF-8 at byte {bad}"
    assert issue.line == 5


def test_invalid_utf8_on_a_crlf_file() -> None:
    data = b"a\r\nb\r\n\xc3("
    issue = parse_markdown("bad.md", data)
    assert isinstance(issue, Issue) and issue.line == 3


def test_empty_file() -> None:
    doc = parse(b"", "Empty.md")
    assert doc.text == "" and doc.chunks == () and doc.facts == () and doc.issues == ()
    assert doc.title == "Empty" and doc.doc_type == "note"
    assert doc.names == (NameDecl("empty", "Empty", "path"),)
    assert doc.content_hash == hashlib.sha256(b"").hexdigest() and doc.size == 0


def test_hash_size_and_text_keep_the_file_as_is() -> None:
    data = b"\xef\xbb\xbf# T\r\nline\r\n"
    doc = parse(data)
    assert doc.text == "# T\r\nline\r\n"  # BOM dropped, CRLF kept
    assert doc.content_hash == hashlib.sha256(data).hexdigest()
    assert doc.size == len(data)


def test_bom_does_not_shift_lines_and_frontmatter_still_found() -> None:
    data = "\ufeff---\ntitle: Bom\n---\n# H\nsee [[X]]\n".encode()
    doc = parse(data)
    assert doc.title == "Bom"
    (fact,) = doc.facts
    assert fact.span.line_start == 5
    assert doc.chunks[0].span.line_start == 4


def test_crlf_line_numbers_and_chunk_text() -> None:
    data = b"---\r\ntags: [a]\r\n---\r\n# Head\r\n\r\nText with [[Link]].\r\n"
    doc = parse(data)
    (chunk,) = doc.chunks
    assert chunk.text == "# Head\n\nText with [[Link]]."
    assert chunk.span.line_start == 4 and chunk.span.line_end == 6
    link = next(f for f in doc.facts if f.predicate == "links_to")
    assert link.span.line_start == 6 and "\r" not in link.supporting_text
    tag = next(f for f in doc.facts if f.predicate == "tag")
    assert tag.span.line_start == 2


def test_frontmatter_only() -> None:
    doc = parse(b"---\ntitle: Only\ntype: person\n---\n")
    assert doc.chunks == ()
    assert doc.title == "Only" and doc.doc_type == "person"
    assert [f.predicate for f in doc.facts] == ["type"]


def test_unterminated_frontmatter_is_body_with_a_warning() -> None:
    doc = parse(b"---\ntitle: x\nno end\n")
    assert doc.title == "Note"
    assert doc.issues == (Issue("notes/Note.md", "unterminated YAML frontmatter", 1, False),)
    assert doc.chunks[0].span.line_start == 1


def test_whitespace_only_file_has_no_chunks() -> None:
    assert parse(b"\n  \n\t\n").chunks == ()
