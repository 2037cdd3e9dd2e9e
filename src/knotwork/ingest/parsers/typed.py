"""What the typed parsers (ADR, KEP, RFC, feature spec, overview) share.

A typed parser reads a file as the generic note parser does (its chunks, names, links and
frontmatter facts) and then states the fields its kind of document defines, each cited at
its own lines: ``Source`` is the file as sections and lines (code and comments masked),
``Facts`` collects the typed facts, and ``typed_document`` puts them in place of the
generic parser's facts of the same fields. Every fact is one the document states about
itself or about a record it holds, so the ownership rule holds: an edit retracts exactly
what the document no longer says.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime

from ...types import (
    SELF,
    EntityRef,
    FactDraft,
    Issue,
    LiteralValue,
    NameDecl,
    NameRef,
    ObjectRef,
    ParsedDocument,
    Span,
    name_key,
)
from ..frontmatter import Entry, Frontmatter, read_frontmatter
from ..links import find_mdlinks, find_wikilinks
from ..markdown import (
    CODE,
    HEADING,
    ScannedLine,
    decode,
    read_markdown,
    scan_body,
    split_lines,
)
from ..validity import apply_validity

__all__ = ["Facts", "Section", "Source", "iso_date", "metadata", "typed_document"]

_SUPPORT_MAX = 600
# "**Status:** Accepted", "- Start Date: 2016-08-18", "Date: 26/03/2018"
_FIELD_LINE = re.compile(
    r"[ \t]*(?:[-*+][ \t]+)?(?P<em>\*\*|__)?(?P<key>[A-Za-z][\w '#/\-]{0,40}?)[ \t]*"
    r"(?:(?(em)(?P=em))[ \t]*:|:[ \t]*(?(em)(?P=em)))[ \t]*(?P<value>.*?)[ \t]*\Z")
_WIKILINK = re.compile(r"\[\[([^\]|#^]+)(?:[#^][^\]|]*)?(?:\|[^\]]*)?\]\]")
_MONTHS = {m: i for i, m in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august",
     "september", "october", "november", "december"), 1)}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9


@dataclass(frozen=True, slots=True)
class Section:
    """A heading and the lines under it down to the next heading of its level or above.

    ``line`` is the heading's 1-based line; ``start``/``end`` the 0-based range of the
    lines under it (``end`` exclusive).
    """

    level: int
    title: str
    line: int
    start: int
    end: int

    @property
    def key(self) -> str:
        return heading_key(self.title)


def heading_key(text: str) -> str:
    """A heading as compared: lower case, no emphasis, numbering or trailing colon."""
    text = re.sub(r"^[\d.]+\s+", "", text.strip().strip("*_#` \t"))
    return " ".join(text.rstrip(":").lower().split())


@dataclass(slots=True)
class Source:
    """One file's text as the typed parsers read it."""

    path: str
    text: str
    lines: list[str]
    entries: tuple[Entry, ...]
    body_start: int
    masked: list[str]  # per file line: the prose as masked, "" for code and frontmatter
    kinds: list[int]
    sections: list[Section]

    @classmethod
    def read(cls, path: str, data: bytes, max_bytes: int) -> Source | Issue:
        text = decode(path, data, max_bytes)
        if isinstance(text, Issue):
            return text
        return cls.of(path, text)

    @classmethod
    def of(cls, path: str, text: str) -> Source:
        lines = split_lines(text) if text else []
        front = read_frontmatter(path, lines)
        scanned, _, hidden = scan_body(lines, front.body_start)
        return cls.scanned(path, text, lines, front, scanned, hidden)

    @classmethod
    def scanned(cls, path: str, text: str, lines: list[str], front: Frontmatter,
                scanned: Sequence[ScannedLine], hidden: frozenset[int]) -> Source:
        """``of`` from a reading already made of ``text`` (``read_markdown``'s)."""
        masked = [""] * front.body_start
        kinds = [CODE] * front.body_start
        for k, line in enumerate(scanned):
            i = front.body_start + k
            kinds.append(line.kind)
            masked.append("" if line.kind == CODE or i in hidden
                          else (line.masked or "").replace("\x00", " "))
        heads = [(front.body_start + k, line.level, line.heading)
                 for k, line in enumerate(scanned) if line.kind == HEADING]
        sections = []
        for n, (i, level, title) in enumerate(heads):
            end = next((j for j, lv, _ in heads[n + 1:] if lv <= level), len(lines))
            sections.append(Section(level, title, i + 1, i + 1, end))
        return cls(path, text, lines, front.entries, front.body_start, masked, kinds, sections)

    @property
    def note_dir(self) -> str:
        return self.path.rpartition("/")[0]

    @property
    def stem(self) -> str:
        return posixpath.basename(self.path).rsplit(".", 1)[0]

    def entry(self, *keys: str) -> Entry | None:
        """The frontmatter entry of the first of ``keys`` (compared case-insensitively,
        "-" and " " as "_") that the file states."""
        want = [_fold(k) for k in keys]
        by_key = {_fold(e.key): e for e in self.entries}
        for k in want:
            if k in by_key:
                return by_key[k]
        return None

    def sections_named(self, *names: str) -> list[Section]:
        """The sections whose heading is one of ``names`` (as ``heading_key`` folds)."""
        want = {heading_key(n) for n in names}
        return [s for s in self.sections if s.key in want]

    def section(self, *names: str) -> Section | None:
        found = self.sections_named(*names)
        return found[0] if found else None

    def prose(self, start: int = 0, end: int | None = None) -> Iterator[tuple[int, str]]:
        """The non-blank prose lines of ``start..end`` (0-based), as (1-based line,
        masked text)."""
        stop = len(self.lines) if end is None else end
        for i in range(max(start, self.body_start), stop):
            if self.kinds[i] != CODE and self.masked[i].strip():
                yield i + 1, self.masked[i]

    def body(self, section: Section) -> list[tuple[int, str]]:
        """The prose lines under ``section`` before any deeper heading."""
        out = []
        for line, text in self.prose(section.start, section.end):
            if self.kinds[line - 1] == HEADING:
                break
            out.append((line, text))
        return out

    def head_lines(self) -> list[tuple[int, str]]:
        """The prose lines before the first heading after an opening title (or before
        the first heading of all): where "Key: value" lines of a header stand."""
        out: list[tuple[int, str]] = []
        seen_title = False
        for line, text in self.prose():
            if self.kinds[line - 1] == HEADING:
                # the title: an opening "# Title", or a first heading of any level
                # ("## RFC: Make the authors field optional")
                if not seen_title and not out and (
                        self.level(line) == 1 or line == self._first_prose()):
                    seen_title = True
                    continue
                break
            out.append((line, text))
        return out

    def header_fields(self, limit: int = 40) -> dict[str, list[tuple[int, str]]]:
        """The "Key: value" lines of the head (``head_lines``), by folded key; each
        value with its line (a key written twice keeps both)."""
        out: dict[str, list[tuple[int, str]]] = {}
        for line, _ in self.head_lines()[:limit]:
            # the line as written: masking blanks code ("`const_generics`")
            m = _FIELD_LINE.match(self.raw(line))
            if m is None:
                continue
            out.setdefault(_fold(m.group("key")), []).append((line, m.group("value")))
        return out

    def _first_prose(self) -> int:
        return next((line for line, _ in self.prose()), 0)

    def level(self, line: int) -> int:
        """The level of the heading at ``line`` (1-based), 0 for any other line."""
        for s in self.sections:
            if s.line == line:
                return s.level
        return 0

    def raw(self, line: int) -> str:
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""

    def links(self, line: int, text: str) -> list[tuple[int, int, str, NameRef | None]]:
        """The links of one masked line: (start, end, shown text, note it names)."""
        raw = self.raw(line)
        out = []
        for link in find_wikilinks(text):
            inner = raw[link.start + 2 + link.embed:link.end - 2]
            shown = inner.split("|", 1)[-1]
            out.append((link.start, link.end, shown.strip(), link.target))
        for link in find_mdlinks(text, self.note_dir):
            if link.embed:
                continue
            close = raw.find("](", link.start)
            shown = raw[link.start + 1:close] if close > 0 else ""
            out.append((link.start, link.end, shown.strip(), link.target))
        return sorted(out, key=lambda t: t[0])


def _fold(key: str) -> str:
    return re.sub(r"[\s\-]+", "_", key.strip().lower())


def iso_date(value: object) -> str | None:
    """A date as ISO ``YYYY-MM-DD``: a YAML date, "2017-06-30", "2017/06/30",
    "26/03/2018" (day first, unless the first number cannot be a day... or a month),
    "26.03.2018", "March 4, 2020", "4 March 2020", "2020-03-04T10:00"; else None."""
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if not isinstance(value, str):
        return None
    text = value.strip().strip("*_`\"'()[]").strip()
    m = re.match(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)", text)
    if m:
        return _make(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    m = re.match(r"(\d{1,2})[/.\-](\d{1,2})[/.\-](\d{4})(?!\d)", text)
    if m:
        a, b, y = int(m.group(1)), int(m.group(2)), int(m.group(3))
        # day first (as the ADRs of UK projects write it), unless that cannot be
        return _make(y, b, a) if b <= 12 else _make(y, a, b)
    m = re.match(r"([A-Za-z]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})", text)
    if m and m.group(1).lower() in _MONTHS:
        return _make(int(m.group(3)), _MONTHS[m.group(1).lower()], int(m.group(2)))
    m = re.match(r"(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]+)\.?,?\s+(\d{4})", text)
    if m and m.group(2).lower() in _MONTHS:
        return _make(int(m.group(3)), _MONTHS[m.group(2).lower()], int(m.group(1)))
    return None


def _make(y: int, m: int, d: int) -> str | None:
    try:
        return date(y, m, d).isoformat()
    except ValueError:
        return None


@dataclass(slots=True)
class Facts:
    """The typed facts of one document, the first of each identity kept, and its
    warnings (each with the file's line)."""

    source: Source
    extractor: str
    version: str
    facts: dict[tuple[object, ...], FactDraft] = field(default_factory=dict)
    issues: list[Issue] = field(default_factory=list)

    def add(self, predicate: str, value: ObjectRef | str, line: int, *,
            subject: EntityRef = SELF, end: int | None = None, text: str | None = None
            ) -> None:
        obj = LiteralValue(value) if isinstance(value, str) else value
        if isinstance(obj, LiteralValue) and not obj.value.strip():
            return
        identity = (subject, predicate, obj)
        if identity in self.facts:
            return
        support = (text if text is not None else self.source.raw(line)).strip()
        if len(support) > _SUPPORT_MAX:
            support = support[:_SUPPORT_MAX]
        self.facts[identity] = FactDraft(subject, predicate, obj,
                                         Span(line, max(line, end or line)), support,
                                         self.extractor, self.version)

    def warn(self, reason: str, line: int | None = None) -> None:
        self.issues.append(Issue(self.source.path, reason, line, fatal=False))

    def entry_values(self, entry: Entry, predicate: str, *, subject: EntityRef = SELF
                     ) -> list[str]:
        """Each scalar of a frontmatter entry (a list's items, or a comma list) as a
        literal fact citing the entry (an item of a block list its own line)."""
        values = entry.value if isinstance(entry.value, list) else [entry.value]
        items = list(entry.items)
        out = []
        for n, value in enumerate(values):
            if value is None or isinstance(value, dict | list):
                continue
            text = str(value)
            parts = [text] if isinstance(entry.value, list) or _WIKILINK.fullmatch(
                text.strip()) else _split_keeping_links(text)
            span = items[n][0] if n < len(items) else entry.span
            for part in parts:
                link = _WIKILINK.fullmatch(part.strip())
                obj: ObjectRef | str = NameRef.of(link.group(1).strip()) if link else (
                    part.strip())
                self.add(predicate, obj, span.line_start, subject=subject,
                         end=span.line_end, text=items[n][1] if n < len(items)
                         else entry.line_text)
                out.append(link.group(1).strip() if link else part.strip())
        return out


def _split_keeping_links(text: str) -> list[str]:
    """ "[[Ada]], Bob" → ["[[Ada]]", "Bob"]: a comma list whose links stay links."""
    parts = re.split(r"\s*(?:,|;|\band\b|&)\s*", text)
    return [p.strip(" *_`\"'<>") for p in parts if p.strip(" *_`\"'<>")]


def split_list(text: str) -> list[str]:
    """ "Ada, Bob and Cy" → ["Ada", "Bob", "Cy"]; markup and links read as text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\[\[([^\]|]*)(?:\|([^\]]*))?\]\]", lambda m: m.group(2) or m.group(1), text)
    parts = re.split(r"\s*(?:,|;|\band\b|&)\s*", text)
    return [p.strip(" *_`\"'<>") for p in parts if p.strip(" *_`\"'<>")]


def read_typed(path: str, data: bytes, *, max_bytes: int, chunk_tokens: int,
               extractor: str, version: str) -> tuple[ParsedDocument, Facts] | Issue:
    """What every typed parser starts from: the note parser's reading of the file (the base
    ``typed_document`` puts the typed facts in), and an empty ``Facts`` over its text."""
    read = read_markdown(path, data, max_bytes=max_bytes, chunk_tokens=chunk_tokens)
    if isinstance(read, Issue):
        return read
    base = read.document
    source = Source.scanned(path, base.text, read.lines, read.front, read.scanned,
                            read.hidden)
    return base, Facts(source, extractor, version)


def metadata(facts: Facts, entity_type: str, parser_type: str, line: int = 1, *,
             subject: EntityRef = SELF) -> None:
    """The standard metadata of a record: ``entity_type``, ``source_file``,
    ``parser_type`` and ``parser_version``, cited at ``line`` (the record's first).
    ``created_at``/``updated_at`` are the store's: when the record's facts were first and
    last recorded, never facts a parse could change."""
    text = facts.source.raw(line)
    facts.add("entity_type", entity_type, line, subject=subject, text=text)
    facts.add("source_file", facts.source.path, line, subject=subject, text=text)
    facts.add("parser_type", parser_type, line, subject=subject, text=text)
    facts.add("parser_version", facts.version, line, subject=subject, text=text)


def typed_document(base: ParsedDocument, facts: Facts, *, doc_type: str,
                   owned: Iterable[str], names: Sequence[tuple[str, str]] = (),
                   title: str | None = None, drop_subjects: Iterable[NameRef] = ()
                   ) -> ParsedDocument:
    """``base`` (the note parser's reading) with the typed facts in place of its facts of
    the ``owned`` predicates about the document itself, the extra ``names`` (text, kind)
    declared, and the typed warnings added. The note parser's facts about the records in
    ``drop_subjects`` (a spec's tasks) are left to the typed facts too."""
    drop = frozenset(owned)
    records = frozenset(r.key for r in drop_subjects)
    mine = facts.facts
    # a link the typed facts read as a relation ("supersedes [ADR-0002](…)") is theirs
    related = {(f.subject, f.object, f.span.line_start) for f in mine.values()
               if isinstance(f.object, NameRef)}
    kept = [f for f in base.facts
            if not (f.subject == SELF and f.predicate in drop)
            and not (isinstance(f.subject, NameRef) and f.subject.key in records)
            and (f.subject, f.predicate, f.object) not in mine
            and (f.subject, f.object, f.span.line_start) not in related]
    decls = list(base.names)
    have = {n.key for n in decls}
    for text, kind in names:
        key = name_key(text)
        if key and key not in have:
            have.add(key)
            decls.append(NameDecl(key, text, "alias" if kind not in ("title",) else "title"))
    if doc_type and not any(f.subject == SELF and f.predicate == "type" for f in kept):
        facts.add("type", doc_type, _first_line(facts.source))
    # the typed facts get the valid time the note gives (a decision record's date), as the
    # note parser's own facts did; the dates it could not read were reported already
    combined, dated = apply_validity(base.path, (*kept, *mine.values()))
    return replace(base, facts=combined, names=tuple(decls),
                   doc_type=doc_type, title=title or base.title,
                   issues=(*base.issues, *facts.issues,
                           *(i for i in dated if i not in base.issues)))


def _first_line(source: Source) -> int:
    for line, _ in source.prose():
        return line
    return 1
