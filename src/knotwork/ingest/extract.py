"""Turn a scanned note into ``FactDraft`` values: structure first, no model.

Input is what the scanner hands over: frontmatter ``Entry`` values and prose ``Block``
values (a paragraph, a list item, a heading or a table row, already masked so code
and comments cannot match). Each block is read once: inline fields, tags, an
observation or list relation, then the links that nothing else claimed, whose
predicate comes from the sentence around them.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import lru_cache
from types import MappingProxyType
from typing import Protocol
from unicodedata import category

from ..types import (
    SELF,
    EntityRef,
    FactDraft,
    Issue,
    LiteralValue,
    NameRef,
    ObjectRef,
    SelfRef,
    Span,
)
from .dialects import current as current_dialect
from .frontmatter import Entry
from .lexicon import (
    DETERMINERS,
    exact_relation,
    infer_relation,
    known_key,
    may_be_key,
    normalize_key,
    normalize_relation,
)
from .links import (
    Field,
    Link,
    find_fields,
    find_mdlinks,
    find_reflinks,
    find_tags,
    find_wikilinks,
    name_ref,
    observation,
    reference_label,
    typed_literal,
    wikilink_target,
)
from .timestamps import epoch_literal

VERSION = "1"
_NO_REFERENCES: Mapping[str, str] = MappingProxyType({})
INFERRED_CONFIDENCE = 0.8
MAX_VALUES_PER_KEY = 1000  # a YAML alias bomb must not turn into millions of facts
MAX_DEPTH = 16  # nesting deeper than this in frontmatter is data, not note metadata

# Predicates whose values are spelled differently from their key.
_SPECIAL_PREDICATES = {"tags": "tag", "aliases": "alias"}

# A list relation's phrase: 1-4 words, no sentence punctuation, optional **emphasis**.
_PHRASE = re.compile(r"[ \t]*\**([^\W\d][\w'’\-]*(?:[ \t]+[\w'’\-]+){0,3})\**[ \t]*\Z")
# What may follow a list relation's first link: more links (\x01), separators,
# "and" in five languages, a "(context)", #tags, a final period.
_RELATION_REST = re.compile(
    r"(?:[\s,;&/+.]|\x01|\([^()\n]*\)|#[\w/\-]+|(?<!\w)(?:and|und|e|et|y|or|oder|o|ou)(?!\w))*\Z",
    re.IGNORECASE,
)
# Sentence ends: ". ", "! ", "? ", "; " (or the end of the text); in tables also a cell bar.
_BOUNDARY = re.compile(r"[.!?;](?=\s|\Z)")
_TABLE_BOUNDARY = re.compile(r"[.!?;](?=\s|\Z)|(?<!\\)\|")
# The period of "e.g.", "i.e.", "z.B.", "cf.", "vs.": it ends no sentence a fact cites, or
# "Proxies, e.g. [[Traefik]], sit in front" cited "[[Traefik]], sit in front". Only the
# supporting text heeds it: where a link's relation is read from stays as it was.
_ABBREVIATION = re.compile(r"(?:\b[^\W\d_]\.[^\W\d_]|\b(?:cf|vs|viz|vgl|bzw|approx|incl))\.\Z",
                           re.IGNORECASE)
_LETTER = re.compile(r"[^\W_]")  # a letter or digit: a sentence that says something
_TAG_SPLIT = re.compile(r"[,\s]+")
# Text between two links that only lists them: ", ", " and ", " und ", " e ", " y ", "&".
_COORDINATION = re.compile(
    r"[\s,;*_]*(?:(?:and|und|e|et|y|or|oder|o|ou|&|as well as|sowie)[\s*_]*)?\Z",
    re.IGNORECASE,
)

# A field written as a line of its own, "Key: value", with the key of one to four words,
# maybe emphasised ("**Status:** Accepted", "**Date**: 2020-01-01"; "RFC PR #:" is "RFC
# PR"): adr-tools writes "Date: 2017-07-04" under an ADR's title, and a Rust RFC opens
# with "- Start Date: 2016-08-18". Possessive: a line of prose fails at its fifth word
# instead of trying every split of the first four (that cost 10 µs a note).
_LINE_FIELD = re.compile(
    r"(?P<em>\*\*|__|\*|_)?(?P<key>[^\W\d_][\w'’\-#]*+(?:[ \t]++[\w'’\-#]++){0,3}+)"
    r"(?:(?(em)(?P=em))[ \t]*:|[ \t]*:(?(em)(?P=em)))[ \t]+(?P<value>\S.*?)[ \t]*\Z")
# Sections whose whole body, one short line, is the value of their heading's key
# ("## Status" / "Accepted" in an ADR): what a one-line section under another heading
# says is prose about it, not its value.
_SECTION_KEYS = frozenset({"status", "date", "owner", "author", "team", "role"})
# A heading that names a relation to other notes: the links that open its list items are
# that relation ("## Dependencies" / "- [[Postgres]]"), not ``links_to``.
_LIST_SECTION_KEYS = frozenset({"depends_on", "part_of", "uses", "runs_on", "owner", "author",
                                "team", "superseded_by", "located_at"})
# What may stand before the first link of such an item: blanks and emphasis.
_LEAD = re.compile(r"[\s*_]*\Z")
# A longer value (links counted by their text) is prose, such as a README's "- Source: …"
_FIELD_VALUE_MAX = 120
# Markup a field's literal value is read without: a link as its text, code, emphasis.
_VALUE_WIKILINK = re.compile(r"!?\[\[([^\]|]*)(?:\|([^\]]*))?\]\]")
_VALUE_MDLINK = re.compile(r"!?\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])")
_VALUE_MARKUP = re.compile(r"\*\*|__|`")
# What may stand before a value and is no part of it: emoji (and their joiners and
# variation selectors), other symbols.
_DECORATION = frozenset({"So", "Sk", "Mn", "Cf"})
_HeaderField = tuple[Field, str]  # a field of a line of its own, and its extractor
# An identifier opening a heading or a title: capitals and digits joined by hyphens,
# holding a digit ("TASK-ALR-001", "ADR-7", "KEP-3017"), then the rest after a separator
# ("### TASK-ALR-001: Define alert rules").
_IDENTIFIER = re.compile(r"(?P<id>[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)"
                         r"(?:[ \t]*[:–—][ \t]*|\.[ \t]+|[ \t]+|\Z)(?P<rest>.*)")

_Relation = tuple[str, EntityRef]  # the predicate and subject an inferred link got
# A fact's supporting text is its line (or sentence) up to this many characters; past it,
# the part around what the fact was read from. Why: each of a long line's links kept the
# whole line, so a 40 KB one-line note with 300 links stored 12 MB of supporting text.
_SUPPORT_MAX = 600
_SUPPORT_BEFORE = 60  # of it before the fact's position: answers quote the first 160


@dataclass(slots=True)
class Block:
    """Prose lines read together; ``masked`` and ``raw`` align character for character."""

    first: int  # 1-based file line of the first line
    masked: list[str]
    raw: list[str]
    content: int = 0  # column where the first line's content starts (after "- ", "## ")
    list_item: bool = False
    task: bool = False
    table: bool = False
    level: int = 0  # a heading's level (1-6); 0 for any other block


@dataclass(slots=True)
class Sink:
    """Collect facts, keeping the first of each identity, and issues.

    Names differing only in case or spacing are one name (their ``key``); the first
    spelling met in the note is used for all, so they also dedupe as one fact.
    """

    facts: dict[tuple[object, ...], FactDraft] = field(default_factory=dict)
    issues: list[Issue] = field(default_factory=list)
    spellings: dict[str, NameRef] = field(default_factory=dict)  # name key → first NameRef
    # label -> destination
    references: Mapping[str, str] = field(default_factory=lambda: _NO_REFERENCES)

    def add(
        self, subject: EntityRef, predicate: str, obj: ObjectRef, span: Span, text: str,
        extractor: str, confidence: float = 1.0, qualifiers: tuple[tuple[str, str], ...] = (),
        column: int = 0,
    ) -> None:
        # One spelling per name within a note: [[Kota]] and [[kota]] are one fact.
        if isinstance(obj, NameRef):
            obj = self.spellings.setdefault(obj.key, obj)
        if isinstance(subject, NameRef):
            subject = self.spellings.setdefault(subject.key, subject)
        # FactDraft.identity() (valid_from/to are None here), each ref by a plain token
        identity = (_token(subject), predicate, _token(obj), qualifiers)
        if not predicate or identity in self.facts:
            return
        self.facts[identity] = FactDraft(subject, predicate, obj, span, text, extractor,
                                         VERSION, confidence, qualifiers=qualifiers,
                                         column=column)


def _window(text: str, pos: int, lo: int = 0, hi: int | None = None) -> str:
    """``text[lo:hi]``, or when it is longer than ``_SUPPORT_MAX`` the part of it around
    ``pos`` (an offset in ``text``), cut at blanks where it can be, with "…" where it was
    cut. The bounds are given, not a slice: a megabyte line holding a thousand links
    would be copied once per fact."""
    hi = len(text) if hi is None else hi
    if hi - lo <= _SUPPORT_MAX:
        return text[lo:hi]
    start = max(lo, pos - _SUPPORT_BEFORE)
    if start > lo:
        blank = text.find(" ", start, max(start, pos))
        start = blank + 1 if blank >= 0 else start
    end = min(hi, start + _SUPPORT_MAX)
    if end < hi:
        blank = text.rfind(" ", max(pos, start) + 1, end)
        end = blank if blank > start else end
    return ("…" if start > lo else "") + text[start:end].strip() + ("…" if end < hi else "")


def _cited(text: str, table: bool) -> str:
    """A cited stretch of a line, blanks trimmed; in a table row a cell's closing bar is
    not its text ("Web runs on [[Host A]]", not "… [[Host A]] |"). A whole row keeps its
    bars: it reads as a row."""
    text = text.strip()
    if table and text.endswith("|") and not text.startswith("|") and text[-2:-1] != "\\":
        text = text[:-1].rstrip()
    return text


def sentence_ends(masked: str, table: bool = False) -> list[int]:
    """Offsets just past each sentence end of ``masked`` (". ", "! ", "? ", "; ", and in a
    table row each cell bar); links, code and comments must already be blanked in it, so
    "[[A. B]]" is never cut."""
    pattern = _TABLE_BOUNDARY if table else _BOUNDARY
    return [m.end() for m in pattern.finditer(masked)]


def _support_ends(masked: str, ends: list[int]) -> list[int]:
    """``ends`` without the periods of abbreviations: where a supporting text may stop."""
    return [e for e in ends
            if masked[e - 1] != "." or not _ABBREVIATION.search(masked, max(0, e - 8), e)]


def _sentence(ends: list[int], start: int, end: int, lo: int, hi: int) -> tuple[int, int]:
    """The bounds of the sentence(s) holding ``[start, end)``, kept within the line
    ``[lo, hi)``; ``ends`` are where sentences may stop, ascending."""
    first = bisect_right(ends, start)  # the ends at or before ``start``
    last = bisect_left(ends, max(end, start + 1))  # the first end at or past ``end``
    return (max(lo, ends[first - 1]) if first else lo,
            min(hi, ends[last]) if last < len(ends) else hi)


def _support_bounds(
    letters_of: Callable[[], list[int]], ends: list[int], start: int, end: int, lo: int,
    hi: int,
) -> tuple[int, int]:
    """The bounds a fact read from ``[start, end)`` of the line ``[lo, hi)`` cites: the
    sentence(s) holding it, or the line when they say nothing else.

    Why the line then: a sentence holding nothing but links and tags besides what the fact
    was read from (a trailing "#tag", a table cell "[[X]]") is no evidence of it.
    ``letters_of()`` gives where the text has a letter or digit outside its links and tags
    (``_plain_letters``; asked only when the sentence is not the line), ``ends`` where
    sentences may stop. Both are bisected, never scanned: a sentence of a megabyte line
    may hold thousands of facts.
    """
    first, last = _sentence(ends, start, end, lo, hi)
    if (first, last) == (lo, hi):
        return lo, hi
    letters, after = letters_of(), max(start, end)
    says = (bisect_left(letters, start) > bisect_left(letters, first)
            or bisect_left(letters, last) > bisect_left(letters, after))
    return (first, last) if says else (lo, hi)


def _plain_letters(masked: str) -> list[int]:
    """Where ``masked`` (links blanked) has a letter or digit outside its tags, in order."""
    if "#" in masked:
        masked = _TAG_IN_TEXT.sub(lambda m: "\x01" * (m.end() - m.start()), masked)
    return [m.start() for m in _LETTER.finditer(masked)]


def _blank_links(text: str, links: list[Link], fill: str) -> str:
    """``text`` with each link's characters replaced by ``fill``."""
    parts, last = [], 0
    for link in links:
        parts.append(text[last:link.start])
        parts.append(fill * (link.end - link.start))
        last = link.end
    parts.append(text[last:])
    return "".join(parts)


def blank_note_links(text: str, references: Mapping[str, str] = _NO_REFERENCES) -> str:
    """``text`` (one line, code and comments masked) with every link to a note blanked,
    character for character: what lies inside such a link is the link's, not prose.

    A relative ``.md`` link counts whatever folder its note is in (resolved from the top,
    one that would leave the vault is still a link to a note).
    """
    notes = [link for link in _line_links(text, references)
             if link.target is not None or link.escaped is not None]
    return _blank_links(text, notes, " ") if notes else text


def _line_links(text: str, references: Mapping[str, str] = _NO_REFERENCES,
                note_dir: str = "") -> list[Link]:
    """The links of masked ``text`` in order: wikilinks, Markdown links and reference links
    to the ``references`` defined, none inside another. Relative links resolve from
    ``note_dir`` (the vault's top by default: enough where only where a link lies counts,
    not where it points)."""
    links = find_wikilinks(text) if "[[" in text else []
    if "](" in text:
        links = _merge(links, find_mdlinks(text, note_dir))
    if references and "]" in text:
        links = _with_references(links, find_reflinks(text, note_dir, references))
    return links


def sentence_text(raw: str, masked: str, start: int, end: int, table: bool = False) -> str:
    """The supporting text of what lies at ``raw[start:end]``, read from the one line
    ``raw``: the sentence holding it, capped as every supporting text is.

    ``masked`` is ``raw`` with code and comments blanked, character for character; links
    are blanked here. What cites a line without a ``BlockContext`` (a mention) uses this,
    so its sentence ends where a link's or a tag's does.
    """
    if "[" in masked and (links := _line_links(masked)):
        masked = _blank_links(masked, links, "\x01")
    ends = _support_ends(masked, sentence_ends(masked, table))
    lo, hi = _support_bounds(lambda: _plain_letters(masked), ends, start, end, 0, len(raw))
    return _cited(_window(raw, start, lo, hi), table)


def _token(ref: ObjectRef) -> object:
    """A key equal for equal refs, hashed in C: a frozen dataclass hashes in Python.

    Within one sink a name has one spelling, so a ``NameRef`` is equal to another exactly
    when their keys are; a string, a tuple and None never equal one another.
    """
    if isinstance(ref, NameRef):
        return ref.key
    if isinstance(ref, LiteralValue):
        return (ref.value, ref.datatype)
    return None if isinstance(ref, SelfRef) else ref


def extract_facts(
    path: str, entries: Iterable[Entry], blocks: Iterable[Block],
    references: Mapping[str, str] = _NO_REFERENCES, *,
    extractors: Sequence[Extractor] | None = None,
) -> tuple[tuple[FactDraft, ...], tuple[Issue, ...]]:
    """Return the deduplicated facts of a note and the non-fatal issues met on the way.

    ``references`` are the note's link reference definitions (``[label]: destination``),
    labels folded by ``reference_label``: "[text][label]" and "[label]" are links to them.
    ``extractors``: the per-block rules, run in order on each block (default
    ``BLOCK_EXTRACTORS``).
    """
    rules = BLOCK_EXTRACTORS if extractors is None else tuple(extractors)
    sink = Sink(references=references)
    stated: set[str] = set()  # the keys the frontmatter states: the body's do not repeat them
    for entry in entries:
        stated.add(_entry_facts(entry, sink))
    note_dir = path.rpartition("/")[0]
    blocks = blocks if isinstance(blocks, list) else list(blocks)
    header, records = _header_fields(blocks, stated, sink)
    # the relation the current heading names, for the list items under it
    section: str | None = None
    if header or records:
        for i, block in enumerate(blocks):
            if block.level:
                section = _list_section(block)
            fields = header.get(i)
            subject = records.get(i, SELF)
            if fields is not None:
                reader = BlockContext(block, path, note_dir, sink, subject, section)
                reader.line_fields(fields)
                reader.read(rules)
            elif _may_hold_structure(block.masked):
                BlockContext(block, path, note_dir, sink, subject, section).read(rules)
    else:  # most notes: no field lines or records, and no index to keep
        for block in blocks:
            if block.level:
                section = _list_section(block)
            if _may_hold_structure(block.masked):
                BlockContext(block, path, note_dir, sink, SELF, section).read(rules)
    return tuple(sink.facts.values()), tuple(sink.issues)


def _list_section(heading: Block) -> str | None:
    """The relation a heading names for the list items under it, down to the next heading
    of any level: "## Dependencies", "## Owners", "## Teil von" (``_LIST_SECTION_KEYS``).
    """
    text = _heading_text(heading)
    found = known_key(text) if may_be_key(text) else None
    return found if found in _LIST_SECTION_KEYS else None


def _header_fields(blocks: Sequence[Block], stated: set[str], sink: Sink
                   ) -> tuple[dict[int, list[_HeaderField]], dict[int, EntityRef]]:
    """The fields a note writes as lines of their own, by the index of their block; and
    the blocks that speak of a record rather than of the note, with that record.

    Fields on lines of their own stand in two places:
    - a head: the blocks right after an opening "# Title" (or the top), or after a
      record's heading, up to the next heading, as long as every line of them is
      "Key: value". One such line counts only when the lexicon knows its key ("Date:",
      "Stato:"): a note opening with "Note: call Bob" states no field, one opening with
      two such lines does;
    - a section whose heading is one of ``_SECTION_KEYS`` and whose whole body is one
      short line ("## Status" / "Accepted").
    A key the frontmatter states is left to it.

    A record is a section headed by an identifier ("### TASK-ALR-001: Define alert
    rules", ``opening_identifier``) that holds fields: a feature spec's task, say. Its fields (on
    lines of their own or ``key:: value``), down to the next heading of its level or
    above, describe the record, not the note: a task's "status:: done" is not the
    feature's. The record is ``part_of`` the note and titled by the rest of its heading
    (written to ``sink`` here). Links, tags and prose under it stay the note's.

    Each rule is a function of its own: the generic one (``_head_fields``) and those
    drawn from ADRs (``_section_fields``) and feature specs (``_record_headings``,
    ``_records``), so a parser for one kind of document can apply only its own.
    """
    out: dict[int, list[_HeaderField]] = {}
    heads = [i for i, b in enumerate(blocks) if b.level > 1]
    note_head = 1 if blocks and blocks[0].level == 1 else 0
    found, extents = _record_headings(blocks, heads)
    for start in [note_head, *(h + 1 for h, _, _ in found)]:
        _head_fields(blocks, start, stated if start == note_head else frozenset(), out)
    in_record = {i for extent in extents for i in extent}
    _section_fields(blocks, heads, stated, in_record, out)
    return out, _records(blocks, found, extents, out, sink)


_Record = tuple[int, NameRef, str]  # a record's heading index, its name, its title


def _head_fields(blocks: Sequence[Block], start: int, stated: AbstractSet[str],
                 out: dict[int, list[_HeaderField]]) -> None:
    """The generic rule: the "Key: value" lines from ``start`` to the first other block,
    when two or more, or one the lexicon knows; a key in ``stated`` is left out."""
    n = len(blocks)
    head: list[tuple[int, Field]] = []
    i = start
    while (i < n and not blocks[i].level and not blocks[i].table
           and not blocks[i].task):
        fields = _line_fields(blocks[i])
        if fields is None:
            break
        head.extend((i, f) for f in fields)
        i += 1
    if len(head) >= 2 or (head and known_key(head[0][1].key)):
        for i, f in head:
            # the frontmatter speaks for the note, not for its records
            if normalize_key(f.key) not in stated:
                out.setdefault(i, []).append((f, "header_field"))


def _section_fields(blocks: Sequence[Block], heads: list[int], stated: set[str],
                    in_record: set[int], out: dict[int, list[_HeaderField]]) -> None:
    """An ADR's rule: a section headed by one of ``_SECTION_KEYS`` whose whole body is
    one short line ("## Status" / "Accepted") is that key's value."""
    n = len(blocks)
    for i in heads:
        if i + 1 >= n:
            continue
        body = blocks[i + 1]
        # the cheap tests first: most sections hold more, and other, than one line
        if body.level or len(body.raw) != 1 or body.table or len(body.raw[0]) > (
                2 * _FIELD_VALUE_MAX) or (
                i + 2 < n and not blocks[i + 2].level and "[" not in blocks[i + 2].raw[0]):
            continue
        key = known_key(_heading_text(blocks[i]))
        if key not in _SECTION_KEYS or (key in stated and i + 1 not in in_record) or (
                not _link_lines(blocks, i + 2)):
            continue
        if body.list_item and key in _LIST_SECTION_KEYS and "[" in body.raw[0]:
            continue  # "## Owners" / "- [[Ada]]" / "- [[Bob]]": every item's (_list_section)
        line = body.masked[0]
        value = line[body.content:].strip()
        if not value:
            continue
        start = line.index(value[0], body.content)
        plain = _plain_value(body.raw[0][start:start + len(value)])
        if len(plain) > _FIELD_VALUE_MAX or (key == "date" and not any(map(str.isdigit, plain))):
            continue  # "## Data" (a date in Italian) over a line of prose about data
        out.setdefault(i + 1, []).append(
            (Field(start, key, value, start, start + len(value)), "section_field"))


def _record_headings(blocks: Sequence[Block], heads: list[int]
                     ) -> tuple[list[_Record], list[range]]:
    """A spec's rule, its first half: the headings opening with an identifier, and the
    blocks under each down to the next heading of its level or above."""
    n = len(blocks)
    found: list[_Record] = []
    for h in heads:
        if "-" not in blocks[h].raw[0]:
            continue  # no identifier: most headings, told at memchr speed
        opening = opening_identifier(_heading_text(blocks[h]))
        if opening is not None:
            found.append((h, NameRef.of(opening[0]), opening[1]))
    extents = []
    for h, _, _ in found:
        end = h + 1
        while end < n and not 0 < blocks[end].level <= blocks[h].level:
            end += 1
        extents.append(range(h + 1, end))
    return found, extents


def _records(blocks: Sequence[Block], found: list[_Record], extents: list[range],
             out: dict[int, list[_HeaderField]], sink: Sink) -> dict[int, EntityRef]:
    """A spec's rule, its second half: each identified section holding fields is a
    record, ``part_of`` the note and titled by its heading; its blocks describe it."""
    records: dict[int, EntityRef] = {}
    for (h, ref, title), inside in zip(found, extents, strict=True):
        if not any(i in out or "::" in "".join(blocks[i].masked) for i in inside):
            continue  # "## GPT-4 results" over prose: a heading, not a record
        for i in inside:
            records[i] = ref
        heading = blocks[h]
        span, text = _span(heading.first), _window(heading.raw[0].strip(), 0)
        sink.add(ref, "part_of", SELF, span, text, "record")
        if title:
            sink.add(ref, "title", LiteralValue(title), span, text, "record")
    return records


def opening_identifier(text: str) -> tuple[str, str] | None:
    """The identifier ``text`` opens with and the rest of it ("TASK-ALR-001: Define
    alert rules" → ("TASK-ALR-001", "Define alert rules")), or None."""
    m = _IDENTIFIER.match(text)
    if m is None or not any(c.isdigit() for c in m.group("id")):
        return None
    return m.group("id"), m.group("rest").strip()


def _link_lines(blocks: Sequence[Block], start: int) -> bool:
    """Whether the blocks from ``start`` to the next heading are single lines holding a
    link: a key section's line is its value when nothing else follows it ("Accepted",
    then "Amended by [17. Data](0017-data.md)", as adr-tools writes), not when prose does.
    """
    for block in blocks[start:]:
        if block.level:
            return True
        line = block.raw[0]
        if len(block.raw) != 1 or len(line) > _FIELD_VALUE_MAX * 2 or (
                "](" not in line and "[[" not in line):
            return False
    return True


def _heading_text(block: Block) -> str:
    return block.raw[0][block.content:].strip().strip("#*_ \t")


def _line_fields(block: Block) -> list[Field] | None:
    """Each line of ``block`` as a "Key: value" field (offsets into its lines joined by
    "\\n"), or None when a line is something else."""
    out: list[Field] = []
    pos = 0
    for n, line in enumerate(block.masked):
        if ":" not in line:
            return None  # most first paragraphs: prose, told at memchr speed
        start = block.content if n == 0 else len(line) - len(line.lstrip())
        m = _LINE_FIELD.match(line, start)
        if m is None or len(_plain_value(block.raw[n][m.start("value"):m.end("value")])) > (
                _FIELD_VALUE_MAX):
            return None
        out.append(Field(pos + m.start(), m.group("key"), m.group("value"),
                         pos + m.start("value"), pos + m.end("value")))
        pos += len(line) + 1
    return out


def _plain_value(raw: str) -> str:
    """A field's value as text: links as what they show, no code marks or emphasis, no
    emoji before it ("✅ Accepted" is "Accepted"; "#1234" stays)."""
    text = _VALUE_WIKILINK.sub(lambda m: m.group(2) or m.group(1), raw)
    text = _VALUE_MDLINK.sub(lambda m: m.group(1), text)
    text = " ".join(_VALUE_MARKUP.sub("", text).split())
    i = 0
    while i < len(text) and (text[i] in " *_" or category(text[i]) in _DECORATION):
        i += 1
    return text[i:].rstrip(" *_")


def _may_hold_structure(lines: list[str]) -> bool:
    """Lines without "[", "#" or "::" hold no link, tag or field: skip them unread.

    That holds for list items too: an observation starts with "[category]" and a list
    relation needs a link.

    Plain substring tests, not a regex: they run at memchr speed on long prose lines.
    A block is most often one line: test it as is, else the lines joined (no "::" can
    span the "\n" between them).
    """
    text = lines[0] if len(lines) == 1 else "\n".join(lines)
    return "[" in text or "#" in text or "::" in text


# ---------------------------------------------------------------- frontmatter


def _entry_facts(entry: Entry, sink: Sink) -> str:
    """Emit one fact per value of a frontmatter key (title is a label, not a fact);
    return the key's predicate."""
    canon = normalize_key(entry.key)
    if canon == "title":
        return canon
    # a block list's items each cite their own lines (a one-item list is read as the list)
    parts: list[tuple[object, Span, str]]
    if entry.items and isinstance(entry.value, list) and len(entry.value) == len(entry.items):
        parts = [([item], span, text)
                 for item, (span, text) in zip(entry.value, entry.items, strict=True)]
    else:
        parts = [(entry.value, entry.span, entry.line_text)]
    count = 0
    for value, span, text in parts:
        for predicate, leaf in _leaves(canon, value):
            if count >= MAX_VALUES_PER_KEY:
                return canon
            count += 1
            predicate = _SPECIAL_PREDICATES.get(predicate, predicate)
            for obj in _yaml_objects(predicate, leaf):
                sink.add(SELF, predicate, obj, span, _window(text, 0), "frontmatter")
    return canon


class _Target(str):
    """A wikilink target recovered from unquoted YAML: ``key: [[X]]`` parses as [['X']]."""


def _leaves(predicate: str, value: object, depth: int = 0) -> Iterator[tuple[str, object]]:
    """Flatten lists (one leaf per item) and mappings (``owner: {team: x}`` → owner_team).

    ``depth`` stops a recursive YAML anchor (a list that contains itself).
    """
    if depth > MAX_DEPTH:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(f"{predicate}_{normalize_key(str(k))}", v, depth + 1)
    elif isinstance(value, list | tuple | set):
        for item in value:
            if isinstance(item, list) and len(item) == 1 and isinstance(item[0], str):
                yield predicate, _Target(item[0])
            else:
                yield from _leaves(predicate, item, depth + 1)
    elif value is not None:
        yield predicate, value


def _yaml_objects(predicate: str, value: object) -> list[ObjectRef]:
    """Return the fact objects one YAML scalar stands for."""
    if isinstance(value, _Target) and predicate not in ("tag", "alias"):
        target = wikilink_target(value)
        return [name_ref(target)] if target else []
    if isinstance(value, bool):
        return [LiteralValue("true" if value else "false", "boolean")]
    if isinstance(value, int):
        return [epoch_literal(predicate, value) or LiteralValue(str(value), "integer")]
    if isinstance(value, float):
        return [LiteralValue(repr(value), "number")]
    if isinstance(value, datetime):  # before date: a datetime is a date
        return [LiteralValue(value.isoformat(), "datetime")]
    if isinstance(value, date):
        return [LiteralValue(value.isoformat(), "date")]
    return _string_objects(predicate, str(value).strip())


def _string_objects(predicate: str, text: str) -> list[ObjectRef]:
    """Tags split on commas/blanks; strings holding ``[[links]]`` become entities."""
    if not text:
        return []
    if predicate == "tag":
        return [LiteralValue(t.lstrip("#")) for t in _TAG_SPLIT.split(text) if t.lstrip("#")]
    if predicate != "alias" and "[[" in text:
        links = [link.target for link in find_wikilinks(text) if link.target]
        if links:
            return list(links)
    return [LiteralValue(text)]


# ---------------------------------------------------------------- body


class Extractor(Protocol):
    """A per-block rule: read facts from one prose block into the note's sink.

    The rules of a note run in order on each block (``BLOCK_EXTRACTORS``), sharing the
    block's context: a link one rule claims (``block.consumed``, link indexes) is left
    alone by those after it, so the order is part of what a note gives.
    """

    name: str
    version: str

    def extract(self, block: BlockContext, sink: Sink) -> None:
        """Add what ``block`` says to ``sink`` (``block.add`` cites it), claiming links."""
        ...


class BlockContext:
    """One prose block as the extractors read it: its text, its links, the links a rule
    claimed (``consumed``), the subject its fields describe and the relation its section
    names; offsets are into the block's lines joined by "\\n"."""

    __slots__ = ("block", "path", "sink", "subject", "section", "text", "raw", "starts",
                 "links", "consumed", "_ends", "_support", "_letters", "_masked")

    def __init__(self, block: Block, path: str, note_dir: str, sink: Sink,
                 subject: EntityRef = SELF, section: str | None = None) -> None:
        self.block, self.path, self.sink = block, path, sink
        self.subject = subject  # what the block's fields describe: the note, or a record
        self.section = section  # the relation the item's heading names (``_list_section``)
        if len(block.masked) == 1:  # most blocks are one line: skip the joins
            self.text, self.raw, self.starts = block.masked[0], block.raw[0], [0]
        else:
            self.text = "\n".join(block.masked)
            self.raw = "\n".join(block.raw)
            self.starts = [0]
            for line in block.masked[:-1]:
                self.starts.append(self.starts[-1] + len(line) + 1)
        self.links = _line_links(self.text, sink.references, note_dir)
        self.consumed: set[int] = set()  # indexes of links another extractor claimed
        self._ends: list[int] | None = None
        self._support: list[int] | None = None
        self._letters: list[int] | None = None
        self._masked: dict[str, str] = {}

    def read(self, extractors: Sequence[Extractor]) -> None:
        """Report the links escaping the vault, then run ``extractors`` in order."""
        for link in self.links:
            if link.escaped is not None:
                issue = Issue(self.path, f"link escapes the vault: {link.escaped}",
                              self.line_of(link.start), fatal=False)
                self.sink.issues.append(issue)
        for extractor in extractors:
            extractor.extract(self, self.sink)

    def in_list(self) -> bool:
        """Whether the block is a list item that is no task: what the list rules read."""
        return self.block.list_item and not self.block.task

    # -- positions

    def line_of(self, pos: int) -> int:
        if len(self.starts) == 1:
            return self.block.first
        return self.block.first + bisect_right(self.starts, pos) - 1

    def column_of(self, pos: int, line_pos: int) -> int:
        """``pos`` as a column of the line holding ``line_pos`` (past its end when
        ``pos`` lies on a later line)."""
        if len(self.starts) == 1:
            return pos
        return pos - self.starts[bisect_right(self.starts, line_pos) - 1]

    def add(
        self, pos: int, predicate: str, obj: ObjectRef, extractor: str,
        qualifiers: tuple[tuple[str, str], ...] = (), end: int = 0, whole_line: bool = False,
        subject: EntityRef = SELF,
    ) -> None:
        """Add a fact about the note (or ``subject``) read from ``[pos, end)`` (``end``
        0: from ``pos``).

        Its source is the line holding ``pos``, its text the sentence(s) of that line
        holding what it was read from (``_support_bounds``): a paragraph written as one
        long line gave each of its facts the whole paragraph. ``whole_line``: the fact was
        read from the whole line (an observation, a list relation). The column stays
        ``pos``'s: on a line cut into chunks it picks the piece holding the fact.
        """
        if len(self.starts) == 1:
            index, lo, hi = 0, 0, len(self.text)
        else:
            index = bisect_right(self.starts, pos) - 1
            lo = self.starts[index]
            hi = lo + len(self.block.raw[index])
        if not whole_line:
            lo, hi = _support_bounds(self.plain_letters, self.support_ends(), pos, end,
                                     lo, hi)
        text = _cited(_window(self.raw, pos, lo, hi), self.block.table)
        self.sink.add(subject, predicate, obj, _span(self.block.first + index), text,
                      extractor, qualifiers=qualifiers, column=pos - self.starts[index])

    # -- inline fields, fields on lines of their own, and tags

    def line_fields(self, fields: list[_HeaderField]) -> None:
        """The fields the block holds as lines of their own (``_header_fields``), read
        before the rest so that their links are theirs."""
        for f, extractor in fields:
            # a status section's line keeps its links for themselves ("Superseded by
            # [[ADR-7]]" is a status, and a link the sentence names); any other field's
            # links are its value ("## Owner" / "[[Ada]]")
            self.field(f, extractor, links=not (extractor == "section_field"
                                                and f.key == "status"))

    def fields(self) -> None:
        if "::" not in self.text:
            return  # no field: skip the call
        for f in find_fields(self.text):
            self.field(f)

    def field(self, f: Field, extractor: str = "inline_field", *, links: bool = True) -> None:
        """A field's facts: one per note its value links to, else its value as a literal
        (``links`` False: always the literal, the links left to the sentence)."""
        canon = normalize_key(f.key)
        predicate = _SPECIAL_PREDICATES.get(canon, canon)
        if not f.value or (predicate == "title" and extractor != "inline_field"):
            return  # "Title: …" at a note's head: a title names, as the frontmatter's does
        inside = range(0)  # the links starting inside the value
        if links and self.links:  # (links come in order: a bisection)
            inside = range(bisect_left(self.links, f.value_start, key=_start),
                           bisect_left(self.links, f.value_end, key=_start))
        linked = False
        for i in inside:
            target = self.links[i].target
            if target is not None and not self.links[i].embed:
                self.add(f.start, predicate, target, extractor, end=f.value_end,
                         subject=self.subject)
                linked = True
        if linked:
            self.consumed.update(inside)
            return
        raw_value = self.raw[f.value_start:f.value_end]
        if inside or extractor != "inline_field":
            # a link to no note (a web page) reads as its text: "[rfcs#1721](https://…)"
            raw_value = _plain_value(raw_value)
            if not raw_value:
                return
        if predicate == "tag":
            for tag in _TAG_SPLIT.split(raw_value):
                if tag.lstrip("#"):
                    self.add(f.start, "tag", LiteralValue(tag.lstrip("#")), extractor,
                             end=f.value_end, subject=self.subject)
        elif predicate == "alias":
            self.add(f.start, "alias", LiteralValue(raw_value), extractor, end=f.value_end,
                     subject=self.subject)
        else:
            self.add(f.start, predicate, typed_literal(raw_value), extractor, end=f.value_end,
                     subject=self.subject)

    def tags(self) -> None:
        if "#" not in self.text:
            return
        dotted = current_dialect() == "dendron"
        for pos, tag in find_tags(self.masked_links(), dotted=dotted):
            self.add(pos, "tag", LiteralValue(tag), "tag")

    def masked_links(self, fill: str = "\x00") -> str:
        """The block text with every link blanked: no tag or sentence end inside a link."""
        if not self.links:
            return self.text
        done = self._masked.get(fill)
        if done is None:
            done = self._masked[fill] = _blank_links(self.text, self.links, fill)
        return done

    # -- list items

    def first_line_end(self) -> int:
        return self.starts[1] - 1 if len(self.starts) > 1 else len(self.text)

    def observation(self) -> None:
        """``- [category] text #tag (context)`` → an ``observation`` literal."""
        content = self.block.content
        if not self.text.startswith("[", content):
            return  # the common list item: no "[category]" to match
        found = observation(self.text[content:self.first_line_end()])
        if found is None:
            return
        category, start, end = found
        if reference_label(category) in self.sink.references:
            return  # "- [RFC 42] text" with a "[rfc 42]: url" definition is a link
        raw = self.raw[content + start:content + end]
        value = " ".join(_strip_tags(raw).split())
        if value:
            self.add(content, "observation", LiteralValue(value), "observation",
                     qualifiers=(("category", category.casefold()),), whole_line=True)

    def list_relation(self) -> None:
        """``- relation_type [[Target]] (context)`` → SELF relation_type Target.

        Only the item's first line counts: a continuation line is prose about it.
        """
        line_end = self.first_line_end()
        note_links = [i for i, link in enumerate(self.links)
                      if link.target is not None and not link.embed and link.end <= line_end]
        if not note_links:
            return
        first = self.links[note_links[0]]
        phrase = self.text[self.block.content:first.start]
        m = _PHRASE.match(phrase)
        rest = self.masked_links("\x01")[first.end:line_end]
        if m is None or not _RELATION_REST.match(rest):
            return
        predicate = _list_predicate(m.group(1))
        if predicate is None:
            return
        for i in note_links:
            target = self.links[i].target
            assert target is not None
            self.consumed.add(i)
            self.add(self.links[i].start, predicate, target, "list_relation", whole_line=True)

    def section_list(self, predicate: str) -> None:
        """Under "## Dependencies": ``- [[Postgres]]`` → SELF depends_on Postgres.

        The links that open the item's first line count, and those joined to them by
        "," or "and" ("- [[kota]] and [[vega]]"); "- See [[Runbook]]" only links. A link
        another extractor claimed ("- uses [[X]]") stays its.
        """
        line_end = self.first_line_end()
        before = self.block.content
        for i, link in enumerate(self.links):
            if link.start >= line_end or link.target is None or link.embed or (
                    i in self.consumed):
                return
            between = self.text[before:link.start]
            if not (_LEAD.match(between) if before == self.block.content
                    else _COORDINATION.match(between)):
                return
            self.consumed.add(i)
            self.add(link.start, predicate, link.target, "section_list", whole_line=True)
            before = link.end

    # -- links in sentences

    def sentence_links(self) -> None:
        """Emit a fact per link nothing else claimed; track the previous link per sentence."""
        prev: Link | None = None
        relation: _Relation | None = None  # what the previous link in the sentence got
        prev_sentence = -1
        ends: list[int] | None = None
        for i, link in enumerate(self.links):
            if link.target is None:
                continue
            if link.embed:
                self.add(link.start, "embeds", link.target, "wikilink")
                continue
            if ends is None:
                ends = self.sentence_ends()
            sentence = bisect_right(ends, link.start)  # boundaries before it
            if prev_sentence != sentence:
                prev, relation = None, None
            if i in self.consumed:
                relation = None
            else:
                relation = self.link_fact(link, prev, relation, ends, sentence)
            prev, prev_sentence = link, sentence

    def link_fact(
        self, link: Link, prev: Link | None, prev_relation: _Relation | None,
        ends: list[int], sentence: int,
    ) -> _Relation | None:
        """Infer the predicate from the text before the link, else ``links_to``.

        A link joined to the previous one by only "," or "and" shares its relation:
        "owns [[kota]], [[vega]] and [[Traefik]]" owns all three. ``ends`` are the
        block's sentence ends, ``sentence`` the index of the link's sentence.
        """
        assert link.target is not None
        start = ends[sentence - 1] if sentence else 0
        between = self.text[prev.end if prev else start:link.start]
        predicate = infer_relation(between)
        subject: EntityRef = SELF
        if predicate is not None and predicate != "links_to":
            if prev is not None and prev.target is not None and exact_relation(between):
                subject = prev.target  # "[[Traefik]] runs on [[kota]]": Traefik runs on kota
        elif prev_relation is not None and _COORDINATION.match(between):
            predicate, subject = prev_relation
        else:
            self.add(link.start, "links_to", link.target, link.kind)
            return None
        # the sentence cited runs on past an abbreviation's period ("e.g. [[X]]")
        support = self.support_ends()
        first = bisect_right(support, link.start)
        start, end = self.sentence_bounds(support[first - 1] if first else 0, link, support)
        span = _span(self.line_of(start), self.line_of(end - 1))
        # the column is the link's: the sentence may start pieces earlier on a cut line
        self.sink.add(subject, predicate, link.target, span,
                      _cited(_window(self.raw, link.start, start, end), self.block.table),
                      link.kind,
                      INFERRED_CONFIDENCE, column=self.column_of(link.start, start))
        return predicate, subject

    def sentence_bounds(self, start: int, link: Link, ends: list[int]) -> tuple[int, int]:
        """Return the ``[start, end)`` of the sentence holding ``link``, blanks trimmed."""
        j = bisect_left(ends, link.end + 1)
        end = ends[j] if j < len(ends) else len(self.text)
        text = self.text
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        return start, end

    def sentence_ends(self) -> list[int]:
        """Offsets just past each sentence end (". ", "! ", "? ", "; ", table bars)."""
        if self._ends is None:
            self._ends = sentence_ends(self.masked_links("\x01"), self.block.table)
        return self._ends

    def plain_letters(self) -> list[int]:
        """``_plain_letters`` of the block, found once."""
        if self._letters is None:
            self._letters = _plain_letters(self.masked_links("\x01"))
        return self._letters

    def support_ends(self) -> list[int]:
        """Where a supporting text may stop: the sentence ends but an abbreviation's."""
        if self._support is None:
            self._support = _support_ends(self.text, self.sentence_ends())
        return self._support


@dataclass(slots=True)
class _Rule:
    """A built-in extractor: a method of ``BlockContext``, run when ``when`` holds."""

    name: str
    run: Callable[[BlockContext], None]
    when: Callable[[BlockContext], bool] | None = None
    version: str = VERSION

    def extract(self, block: BlockContext, sink: Sink) -> None:
        if self.when is None or self.when(block):
            self.run(block)


def _section_list(block: BlockContext) -> None:
    assert block.section is not None
    block.section_list(block.section)


# The per-block rules in the order they claim links: a field's links are its value, an
# observation or a list relation ("- uses [[X]]") claims its links before the section's
# relation does, and a sentence gives a fact only for the links nothing else claimed.
BLOCK_EXTRACTORS: tuple[Extractor, ...] = (
    _Rule("inline_field", BlockContext.fields),
    _Rule("tag", BlockContext.tags),
    _Rule("observation", BlockContext.observation, BlockContext.in_list),
    _Rule("list_relation", BlockContext.list_relation, BlockContext.in_list),
    _Rule("section_list", _section_list,
          lambda b: b.section is not None and b.in_list()),
    _Rule("sentence_links", BlockContext.sentence_links),
)


def _merge(wiki: list[Link], md: list[Link]) -> list[Link]:
    """Join both kinds in text order; a Markdown link overlapping a wikilink is dropped.

    ``[[X]](y.md)`` matches both patterns; the wikilink is what Obsidian renders. But
    ``[[3]](https://…)``, a link to no note whose text is the wikilink, is a citation
    written "[3]" (rust_rfcs 2169, KEP 2718): the Markdown link wins, so no note "3".
    """
    if wiki:
        cites = {m.start for m in md if m.target is None and not m.embed}
        wiki = [w for w in wiki if w.embed or w.start not in cites]
        md = [m for m in md if not _overlaps(wiki, m)]
    return sorted(wiki + md, key=_start)


def _overlaps(links: list[Link], other: Link) -> bool:
    """Whether ``other`` overlaps one of ``links``, which come in order and do not overlap
    one another (so their ends ascend too): only the last one starting before ``other``
    ends may. A bisection, not a scan: a megabyte line holds many thousands of links."""
    i = bisect_left(links, other.end, key=_start) - 1
    return i >= 0 and links[i].end > other.start


def _start(link: Link) -> int:
    return link.start


def _with_references(links: list[Link], refs: list[Link]) -> list[Link]:
    """Join reference links to the others in text order, but none inside another link:
    "[[X]]" and "[t](u)" hold bracket pairs that are not references."""
    refs = [r for r in refs if not _overlaps(links, r)] if links else refs
    return sorted(links + refs, key=_start) if refs else links


@lru_cache(maxsize=4096)
def _span(line: int, end: int | None = None) -> Span:
    """Spans are immutable and repeat: build each one once."""
    return Span(line, line if end is None else end)


def _list_predicate(phrase: str) -> str | None:
    """Return the relation of a list item's phrase, or None when it reads as prose.

    A known phrase ("depends on", "Dipende da") or an unknown lower-case one
    ("implements", "inspired_by") is a relation, as basic-memory writes them; a phrase
    that merely *ends* in a known one ("Traefik runs on"), a lone article, or an unknown
    capitalised one ("Create", "Monitoring lives in") reads as a sentence and is left to
    sentence inference.
    """
    known = exact_relation(phrase)
    if known is not None:
        return known
    if infer_relation(phrase) is not None or phrase.casefold() in DETERMINERS:
        return None
    if phrase[0].isupper() and "_" not in phrase:
        return None  # "- Create [[templates]]": an imperative sentence, not a relation type
    if not _relation_shaped(phrase):
        return None  # "- look them up using [[X]]", "- published the [[X]]": prose
    return normalize_relation(phrase)


# The words a two-word relation type may end in ("inspired by", "works with").
_RELATION_PREPOSITIONS = frozenset(
    "by to of on in with from for at into onto as via over under after before against"
    " von zu mit auf aus di da con su de par avec sur por para en".split())
_KEY_PARTS = re.compile(r"[_\-]")


def _relation_shaped(phrase: str) -> bool:
    """Whether an unknown phrase is written as a relation type, not as words of a
    sentence: one key of at most three parts ("implements", "inspired_by",
    "blocked-by-review"), or a word and a preposition ("inspired by")."""
    words = phrase.split()
    if len(words) == 1:
        parts = [p for p in _KEY_PARTS.split(words[0]) if p]
        return 0 < len(parts) <= 3 and all(p.isalpha() for p in parts)
    return (len(words) == 2 and words[0].isalpha()
            and words[1].casefold() in _RELATION_PREPOSITIONS)


# "#tag" as find_tags sees it, to drop tags from an observation's text.
_TAG_IN_TEXT = re.compile(r"(?<![^\s(])#[\w/\-]*[^\W\d][\w/\-]*")


def _strip_tags(text: str) -> str:
    return _TAG_IN_TEXT.sub("", text)
