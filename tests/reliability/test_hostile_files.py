"""Hostile files: each costs itself an error (file, line, reason) or bounded work, never
the sync, and the store still holds every invariant (``knotwork check``).

Hypothesis writes Markdown and YAML from hostile pieces (deep nesting, aliases, NUL,
invalid UTF-8, UTF-16, CR and CRLF, many links, long lines); fixed cases add a billion
laughs, a 50 MB file, a 1 MB line, 100,000 links, symlink loops and escapes, odd names.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knotwork import Knotwork, limits
from knotwork.ingest import parse_markdown
from knotwork.types import Issue, ParsedDocument

PIECES = [
    "---\n", "key: value\n", "a: &x [1, 2]\nb: *x\n", "[" * 200, "{" * 200, "- " * 300,
    "[[Note]]", "[[Note|alias]]", "![[embed]]", "[t](../../../etc/passwd)", "[[", "]]",
    "# H\n", "```\n", "<!--", "-->", "%%", "#tag ", "key:: value\n", "\x00", "\r", "\r\n",
    "\ufeff", "é", "\U0001f600", "\u202e", "\n", " " * 100, "x" * 5000, "|a|b|\n",
    "---\ntitle: [[[\n---\n", "*" * 500, ">" * 300,
]


def _chaos(parts: list[str], raw: bytes, codec: str) -> bytes:
    text = "".join(parts)
    data = text.encode(codec, errors="replace" if codec == "latin-1" else "surrogatepass")
    if codec == "utf-16-le":
        data = b"\xff\xfe" + data
    return data + raw


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=40), st.binary(max_size=64),
       st.sampled_from(["utf-8", "utf-16-le", "latin-1"]))
def test_any_bytes_parse_to_a_note_or_an_issue_in_bounded_time(parts: list[str], raw: bytes,
                                                               codec: str) -> None:
    data = _chaos(parts, raw, codec)
    started = time.monotonic()
    out = parse_markdown("hostile.md", data)
    assert time.monotonic() - started < 5
    assert isinstance(out, ParsedDocument | Issue)
    if isinstance(out, ParsedDocument):
        assert "\x00" not in out.text
        lines = out.text.splitlines() or [""]
        for f in out.facts:  # every citation points into the text
            assert 1 <= f.span.line_start <= f.span.line_end <= max(len(lines), 1) + 1


def _hostile_vault(root: Path, outside: Path) -> dict[str, str]:
    """The files, and what each must come to: 'note' or a reason's beginning."""
    root.mkdir()
    expect: dict[str, str] = {}

    def put(name: str, data: bytes, what: str) -> None:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
        expect[name] = what

    laughs = "---\n" + "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10)) + "---\n# L\n"
    put("laughs.md", laughs.encode(), "note")
    put("deep-yaml.md", ("---\nk: " + "[" * 10_000 + "]" * 10_000 + "\n---\n# D\n").encode(),
        "note")
    put("deep-md.md", ("> " * 5000 + "quote\n" + "- " * 5000 + "item\n").encode(), "note")
    put("nul.md", b"# N\n" + b"text\n" * 3000 + b"\x00", "binary file")
    put("bad-utf8.md", b"# B\n\n\xff\xfe\xfd broken\n", "invalid UTF-8")
    put("utf16.md", b"\xff\xfe" + "# Sixteen\n\n[[Note]]\n".encode("utf-16-le"), "note")
    put("cr.md", b"# CR\r\rline one\rline two [[Note]]\r", "note")
    put("crlf.md", b"---\r\ntype: x\r\n---\r\n# CRLF\r\n\r\n[[Note]]\r\n", "note")
    put("long-line.md", b"# Long\n\n" + b"word " * 200_000 + b"\n", "note")
    links = "# Many\n\n" + "\n".join(f"- [[Note {i}]]" for i in range(100_000)) + "\n"
    put("links.md", links.encode(), "note")
    big = root / "big.md"
    with open(big, "wb") as f:  # 50 MB, sparse: refused by its size, never read
        f.truncate(50 * 1024 * 1024)
    expect["big.md"] = "file too large"
    for odd in ("-dash.md", "new\nline.md", "spa ce.md", "ü-ñ.md", "#hash.md", "CON.md",
                "x" * 240 + ".md", ".hidden.md", "a\\b.md"):
        put(odd, f"# {odd!r}\n\ntext\n".encode(), "note")
    (outside / "secret.md").write_text("# Secret\n", encoding="utf-8")
    os.symlink(outside / "secret.md", root / "escape.md")
    expect["escape.md"] = "path escapes the vault"
    os.symlink("loop-b.md", root / "loop-a.md")
    os.symlink("loop-a.md", root / "loop-b.md")
    expect["loop-a.md"] = expect["loop-b.md"] = "cannot read: symlink loop"
    os.symlink(root, root / "self")  # a folder loop: not followed
    os.mkfifo(root / "fifo.md")
    expect["fifo.md"] = "not a regular file"
    return expect


def test_a_vault_of_hostile_files_syncs_each_to_a_note_or_an_error(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    vault = tmp_path / "vault"
    expect = _hostile_vault(vault, outside)
    with Knotwork.open(vault, db=str(tmp_path / "s.db"), embedder="none") as kw:
        started = time.monotonic()
        report = kw.ingest()
        took = time.monotonic() - started
        fatal = {e.path: e.reason for e in report.errors if e.fatal}
        for name, what in expect.items():
            if what == "note":
                assert name not in fatal, (name, fatal.get(name))
            else:
                assert fatal.get(name, "").startswith(what), (name, fatal.get(name))
        notes = sum(1 for w in expect.values() if w == "note")
        assert report.added == notes
        capped = [e for e in report.errors if e.path == "links.md"]
        assert capped and f"{limits.FACTS_PER_NOTE:,} are kept" in capped[0].reason
        assert took < 30, took  # the 100k-link note is bounded by the facts cap
        check = kw.check()
        assert check.ok, check.problems
        again = kw.ingest()
        assert (again.added, again.updated, again.deleted) == (0, 0, 0)
