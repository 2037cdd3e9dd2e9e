"""Find the inline syntax that carries structure: links, tags, inline fields, list items.

Every finder works on *masked* text: the scanner has already replaced code spans and
comments by ``\\x00`` and list/quote markers by spaces, one character for one, so offsets
here are offsets into the file's own lines and nothing inside code is ever matched.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from datetime import date, datetime
from functools import lru_cache
from typing import NamedTuple
from urllib.parse import unquote

from ..types import LiteralValue, NameRef
from .dialects import current as current_dialect
from .dialects import split_wikilink

# [[Target]], [[Target|alias]], [[Target#Heading]], [[Target^block]]; "!" before it
# (an embed) is looked at by hand: a literal first "[[" lets the regex engine skip ahead.
# No "[" or "]" inside, and never across lines.
_WIKILINK = re.compile(r"\[\[([^\[\]\n]*)\]\]")

# [text](dest "title"): link text may hold one level of brackets ("[a [b] c](x.md)"),
# the destination is either <angle bracketed, spaces allowed> or has balanced parens.
_MD_LINK = re.compile(
    r"\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"
    r"\(\s*(<[^<>\n]*>|(?:[^\s()]|\([^\s()]*\))+)"
    r"""(?:\s+(?:"[^"\n]*"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"""
)

# A reference link "[text][label]", "[label][]" or "[label]" alone (a shortcut): a link
# only when the note defines the label ("[label]: destination", anywhere in it).
_REF_LINK = re.compile(r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\](?:\[([^\[\]\n]*)\])?")

# A scheme ("https:", "mailto:", "obsidian:") or protocol-relative "//host": not a note.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:|//")

# #tag, #nested/tag, #tag-with_dash; find_tags keeps only those after the start, a
# blank or "(" so that "http://x/#frag", "a#b" and "\#escaped" are no tags.
_TAG = re.compile(r"#([\w/\-]+)")
_DOTTED_TAG = re.compile(r"#([\w/\-]+(?:\.[\w/\-]+)*)")  # Dendron's #stage.seed

# Dataview "key:: value" filling a whole line. Here and in the inline forms "::" must be
# followed by a blank (or the end), so code paths like "std::vector" and "[std::fs]" in
# prose are not fields.
_LINE_FIELD = re.compile(
    r"^[ \t]*(?P<key>[\w*][\w *\-/.'’]{0,60}?)[ \t]*::(?:[ \t]+(?P<value>[^\n]*)|[ \t]*$)",
    re.MULTILINE,
)
# Dataview inline "[key:: value]" and "(key:: value)"; values may hold [[links]].
_KEY = r"(?P<key>[\w*][\w *\-/.'’]{0,60}?)"
_BRACKET_FIELD = re.compile(
    rf"\[{_KEY}::(?=[ \t\]])[ \t]*(?P<value>(?:\[\[[^\[\]\n]*\]\]|[^\[\]\n])*)\]"
)
_PAREN_FIELD = re.compile(
    rf"\({_KEY}::(?=[ \t)])[ \t]*(?P<value>(?:\[\[[^\[\]\n]*\]\]|[^()\n])*)\)"
)

# "- [category] text": not a task box ("[ ]", "[x]", any single character), not a
# Markdown link "[t](u)" or reference "[t][r]", not an inline field "[k:: v]".
_OBSERVATION = re.compile(r"\[(?P<cat>[^\[\]\n:]{2,40})\](?![(\[:])[ \t]+(?P<text>\S.*)")
# A trailing "(context)" of an observation line.
_TRAILING_CONTEXT = re.compile(r"[ \t]*\([^()\n]*\)[ \t]*\Z")

_INT = re.compile(r"[+-]?\d+\Z")
_NUMBER = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?\Z|[+-]?\d+[eE][+-]?\d+\Z")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
_DATETIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\Z"
)


@lru_cache(maxsize=65536)
def name_ref(text: str) -> NameRef:
    """``NameRef.of`` memoised: a vault names the same notes over and over."""
    return NameRef.of(text)


class Link(NamedTuple):
    """A link found in masked text; ``target`` is None when it names no other note."""

    start: int
    end: int
    kind: str  # "wikilink" | "mdlink"
    target: NameRef | None
    embed: bool = False
    escaped: str | None = None  # the destination of a relative link that left the vault


class Field(NamedTuple):
    """A Dataview inline field; ``value_start``/``value_end`` are offsets in the text."""

    start: int
    key: str
    value: str
    value_start: int
    value_end: int


def wikilink_target(inner: str) -> str:
    """Return the note part of a wikilink's inside ("" for a same-note ``[[#Heading]]``),
    read in the dialect in force (``dialects.split_wikilink``).

    In a table the alias bar is escaped (``[[Target\\|alias]]``), so a backslash right
    before the bar belongs to the escape, not to the target.
    """
    return split_wikilink(inner, current_dialect())


@lru_cache(maxsize=65536)
def _wikilink_ref(inner: str, dialect: str) -> NameRef | None:
    """The note a wikilink's inside names in ``dialect``, memoised like ``name_ref``."""
    target = split_wikilink(inner, dialect)
    return name_ref(target) if target else None


def find_wikilinks(text: str) -> list[Link]:
    """Return every ``[[...]]`` in ``text``, embeds flagged."""
    out: list[Link] = []
    dialect = current_dialect()
    for m in _WIKILINK.finditer(text):
        ref = _wikilink_ref(m.group(1), dialect)
        start = m.start()
        embed = start > 0 and text[start - 1] == "!"
        out.append(Link(start - embed, m.end(), "wikilink", ref, embed))
    return out


def resolve_relative(dest: str, note_dir: str) -> tuple[str | None, bool]:
    """Resolve a Markdown link destination to a vault path without ``.md``.

    Returns ``(path, escaped)``: ``path`` is None for URLs, anchors and non-notes;
    ``escaped`` is True when the link climbs out of the vault root. A leading ``/``
    means the vault root (how Obsidian writes "absolute path in vault" links).
    """
    if dest.startswith("<"):
        dest = dest[1:-1]
    if _SCHEME.match(dest):
        return None, False
    dest = unquote(dest.split("#", 1)[0].split("?", 1)[0]).strip()
    if not dest.lower().endswith(".md"):
        return None, False
    joined = dest.lstrip("/") if dest.startswith("/") else posixpath.join(note_dir, dest)
    norm = posixpath.normpath(joined)
    if norm == ".." or norm.startswith("../"):
        return None, True
    return norm[:-3], False


def find_mdlinks(text: str, note_dir: str) -> list[Link]:
    """Return every inline Markdown link (images and URLs too, with ``target=None``).

    Links that name nothing are still returned so their spans can be masked before
    tags are looked for (``[a](#frag)`` holds no tag).
    """
    out: list[Link] = []
    for m in _MD_LINK.finditer(text):
        start = m.start()
        if start > 0 and text[start - 1] == "!":  # an image ![alt](src) is not a relation
            out.append(Link(start - 1, m.end(), "mdlink", None, True))
            continue
        path, escaped = resolve_relative(m.group(2), note_dir)
        ref = name_ref(path) if path else None
        out.append(Link(start, m.end(), "mdlink", ref, False, m.group(2) if escaped else None))
    return out


def reference_label(label: str) -> str:
    """A link reference label as labels are matched: case-folded, blanks collapsed."""
    return " ".join(label.split()).casefold()


def find_reflinks(text: str, note_dir: str, references: Mapping[str, str]) -> list[Link]:
    """Return every reference link whose label ``references`` (label -> destination)
    defines, resolved as an inline link to the same destination would be.

    "[text][label]" names its label, "[label][]" and a lone "[label]" name themselves;
    an undefined label is no link, just brackets (CommonMark). Matches inside wikilinks
    or inline links are left to the caller, which knows those spans.
    """
    out: list[Link] = []
    for m in _REF_LINK.finditer(text):
        start = m.start()
        if start > 0 and text[start - 1] == "\\":
            continue  # "\\[not a link]"
        label = m.group(3) or m.group(2)
        dest = references.get(reference_label(label))
        if dest is None:
            continue
        if m.group(1):  # an image ![alt][ref] is not a relation
            out.append(Link(start, m.end(), "mdlink", None, True))
            continue
        path, escaped = resolve_relative(dest, note_dir)
        ref = name_ref(path) if path else None
        out.append(Link(start, m.end(), "mdlink", ref, False, dest if escaped else None))
    return out


def find_tags(text: str, *, dotted: bool = False) -> list[tuple[int, str]]:
    """Return ``(offset, tag)`` for each ``#tag`` (``#123`` is a number, not a tag);
    ``dotted``: a tag may hold dots, as Dendron's hierarchical ``#stage.seed`` does (a
    dot that ends a sentence is not part of it)."""
    out: list[tuple[int, str]] = []
    for m in (_DOTTED_TAG if dotted else _TAG).finditer(text):
        start = m.start()
        before = text[start - 1] if start else " "
        if not (before.isspace() or before == "(") or text[start - 2:start] == "](":
            continue  # "a#b", "/#frag", and "](#anchor)" of a link whose text wrapped
        if before != "(" and _opens_attributes(text, start):
            continue  # "## Title { #id }": a heading's id attribute (Pandoc, kramdown)
        tag = m.group(1).rstrip("/")
        if any(c.isalpha() or c == "_" for c in tag):
            out.append((start, tag))
    return out


def _opens_attributes(text: str, pos: int) -> bool:
    """True when only blanks lie between a "{" and ``pos`` (walked back, not copied)."""
    i = pos - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    return i >= 0 and text[i] == "{"


def find_fields(text: str) -> list[Field]:
    """Return the Dataview inline fields of ``text`` in order of appearance."""
    out: list[Field] = []
    if "::" not in text:
        return out
    for m in _BRACKET_FIELD.finditer(text):
        out.append(_field(m))
    for m in _PAREN_FIELD.finditer(text):
        out.append(_field(m))
    inline = [f.start for f in out]
    for m in _LINE_FIELD.finditer(text):
        # A line holding "[k:: v]" is prose around that field, not a "key:: value" line.
        if m.group("value") is not None and not any(m.start() <= s < m.end() for s in inline):
            out.append(_field(m))
    out.sort(key=lambda f: f.start)
    return out


def _field(m: re.Match[str]) -> Field:
    """Build a Field; "**Status**" keys lose their emphasis like Dataview's do."""
    key = m.group("key").strip().strip("*_ ").strip()
    raw = m.group("value")
    lead = len(raw) - len(raw.lstrip())
    value = raw.strip()
    start = m.start("value") + lead
    return Field(m.start(), key, value, start, start + len(value))


def observation(content: str) -> tuple[str, int, int] | None:
    """Match ``[category] text`` at the start of a list item's content.

    Returns ``(category, text_start, text_end)`` with offsets into ``content``; the end
    excludes a trailing ``(context)``.
    """
    m = _OBSERVATION.match(content)
    if m is None or "\x00" in m.group("cat"):  # "- [`code`] text" is no category
        return None
    category = m.group("cat").strip()
    if not category:
        return None  # "- [  ] item": a task box typed with two blanks (KEP checklists)
    start = m.start("text")
    ctx = _TRAILING_CONTEXT.search(content, start)
    end = ctx.start() if ctx and ctx.start() > start else len(content.rstrip())
    if content[start:end].rstrip().endswith(":"):
        return None  # "- [Optional] Aggregation method:": a template's slot, no statement
    return category, start, end


def typed_literal(value: str) -> LiteralValue:
    """Infer a literal's datatype from how it is written (``42``, ``true``, ``2024-05-01``)."""
    low = value.lower()
    if low in ("true", "false"):
        return LiteralValue(low, "boolean")
    if _INT.match(value):
        return LiteralValue(str(int(value)), "integer")
    if _NUMBER.match(value):
        return LiteralValue(repr(float(value)), "number")
    if _DATE.match(value):
        try:
            return LiteralValue(date.fromisoformat(value).isoformat(), "date")
        except ValueError:
            return LiteralValue(value)
    if _DATETIME.match(value):
        try:
            return LiteralValue(datetime.fromisoformat(value).isoformat(), "datetime")
        except ValueError:
            return LiteralValue(value)
    return LiteralValue(value)
