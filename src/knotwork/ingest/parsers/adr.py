"""Architecture decision records: Nygard (adr-tools) and MADR 2–4.

Facts, each citing its lines: ``number``, ``title``, ``status`` (normalised to proposed ·
accepted · rejected · deprecated · superseded), ``date`` (ISO), ``decider`` /
``consulted`` / ``informed``, ``chosen_option``, ``considered_option``, ``consequence``,
and ``supersedes`` / ``superseded_by`` / ``amends`` / ``amended_by`` to the other ADR
(by the link's file, else by ``ADR-NNNN``, else by the link's text).

Supersession is stated by whichever file says it: "Supersedes ADR-0002" in ADR-0004
gives ADR-0004 ``supersedes`` ADR-0002 and, about ADR-0002, ``superseded_by`` ADR-0004
and ``status = superseded`` — facts ADR-0004's document owns, so removing the sentence
(or the file) retracts them, and ADR-0002 is no longer superseded, with no rebuild.
A ``status = superseded`` stated about an ADR outranks the status its own file gives
when its live status is read (``knotwork.domain.supersession``).

>>> p = AdrParser()
>>> p.matches("docs/adr/0004-use-postgres.md", b""), p.matches("notes/a.md", b"")
(True, False)
"""

from __future__ import annotations

import posixpath
import re

from ...types import SELF, EntityRef, Issue, NameRef, ParsedDocument
from ..markdown import HEADING
from .typed import Facts, Source, iso_date, metadata, read_typed, split_list, typed_document

__all__ = ["AdrParser", "normalise_status"]

VERSION = "1"
STATUSES = ("proposed", "accepted", "rejected", "deprecated", "superseded")
_WORDS = {
    "accepted": "accepted", "approved": "accepted", "adopted": "accepted",
    "agreed": "accepted", "decided": "accepted", "done": "accepted", "active": "accepted",
    "implemented": "accepted", "final": "accepted", "complete": "accepted",
    "completed": "accepted",
    "proposed": "proposed", "proposal": "proposed", "draft": "proposed",
    "pending": "proposed", "review": "proposed", "open": "proposed", "wip": "proposed",
    "incomplete": "proposed", "hold": "proposed", "discussion": "proposed",
    "discussing": "proposed", "new": "proposed", "considered": "proposed",
    "rejected": "rejected", "declined": "rejected", "refused": "rejected",
    "abandoned": "rejected", "withdrawn": "rejected",
    "deprecated": "deprecated", "obsolete": "deprecated", "retired": "deprecated",
    "superseded": "superseded", "superseeded": "superseded", "replaced": "superseded",
    "supersceded": "superseded",
}
# "0004-use-postgres.md", "ADR-004-x.md", "adr_12.md"
_FILE_NUMBER = re.compile(r"(?:adr[-_ ]?)?(\d{1,5})(?:[-_ .]|\Z)", re.IGNORECASE)
_TITLE_NUMBER = re.compile(r"(?:ADR[-_ #]*)?(\d{1,5})(?:[.:)\]]|\s+[-–—:]|\s)\s*(.*)",
                           re.IGNORECASE)
_ADR_ID = re.compile(r"\bADR[-_ ]?#?\s?(\d{1,5})\b", re.IGNORECASE)
_FOLDERS = frozenset({"adr", "adrs", "decisions", "decision-records", "decision_records",
                      "architecture-decisions", "architecture-decision-records",
                      "architecture-decision-record", "decision-log"})
_NAME = re.compile(r"(?:adr[-_]\S*|\d{3,5}-[^/]*)\.md\Z", re.IGNORECASE)
_RELATIONS = (
    ("superseded_by", r"(?:superseded|superseeded|replaced|supersceded)\s+by"),
    ("amended_by", r"amended\s+by"),
    ("supersedes", r"supersedes|supersede|replaces"),
    ("amends", r"amends"),
)
_RELATION = re.compile("|".join(f"(?P<{k}>\\b(?:{p})\\b)" for k, p in _RELATIONS),
                       re.IGNORECASE)
_INVERSE = {"supersedes": "superseded_by", "superseded_by": "supersedes",
            "amends": "amended_by", "amended_by": "amends"}
_ITEM = re.compile(r"\s*(?:[-*+]|\d+[.)])\s+(.*)")
_CHOSEN = re.compile(r"\**chosen\s+option\**\s*:?\**\s*(?P<v>.+)", re.IGNORECASE)
# what the ADR parser states in place of the note parser's reading of the same fields
OWNED = frozenset({"status", "date", "decider", "deciders", "decision_makers", "consulted",
                   "informed", "supersedes", "superseded_by", "amends", "amended_by",
                   "number", "chosen_option", "title"})


def normalise_status(text: str) -> str | None:
    """"✅ Accepted" → accepted, "Superseded by [3](…)" → superseded, "on hold" →
    proposed; None for a word no ADR status means."""
    words = re.findall(r"[a-z]+", text.lower())
    for word in words[:4]:
        if word in _WORDS:
            return _WORDS[word]
    return None


def adr_id(number: int) -> str:
    return f"ADR-{number:04d}"


class AdrParser:
    """Read ADRs (``detect = "name"``: ``ADR-*``, ``adr-*``, ``NNNN-*.md`` under an
    ``adr``/``decisions``/``decision-records`` folder); ``--type adr`` reads any file."""

    type = "adr"
    version = VERSION
    detect = "name"
    category = "project_decisions"

    def matches(self, path: str, head: bytes) -> bool:
        name = posixpath.basename(path)
        if not name.lower().endswith(".md"):
            return False
        if name.lower().startswith("adr-") or name.lower().startswith("adr_"):
            return name.lower() not in ("adr-template.md", "adr_template.md")
        folder = posixpath.basename(posixpath.dirname(path)).lower()
        return folder in _FOLDERS and re.match(r"\d{3,5}-", name) is not None

    def parse(self, path: str, data: bytes, *, max_bytes: int, chunk_tokens: int
              ) -> ParsedDocument | Issue:
        read = read_typed(path, data, max_bytes=max_bytes, chunk_tokens=chunk_tokens,
                          extractor="adr", version=VERSION)
        if isinstance(read, Issue):
            return read
        base, facts = read
        src = facts.source
        number, title = _number_title(src, base.title)
        names: list[tuple[str, str]] = []
        first = _title_line(src)
        metadata(facts, "adr", "adr", first)
        if number is not None:
            facts.add("number", adr_id(number), first)
            names.append((adr_id(number), "alias"))
        if title:
            facts.add("title", title, first)
            names.append((title, "alias"))
        else:
            facts.warn("no title: the ADR has no '# Title' line or frontmatter title", first)
        if not any(True for _ in src.prose()):
            facts.warn("front matter only: the ADR has no text", first)
        _status(src, facts)
        _date(src, facts)
        for key, pred in (("deciders", "deciders"), ("decision-makers", "deciders"),
                          ("consulted", "consulted"), ("informed", "informed")):
            _people(src, facts, key, pred)
        _options(src, facts)
        _consequences(src, facts)
        _relations(src, facts)
        if not src.section("context", "context and problem statement", "problem statement",
                           "context and problem", "background"):
            facts.warn("no '## Context' section", first)
        if not src.section("decision", "decision outcome", "decisions", "outcome"):
            facts.warn("no '## Decision' or '## Decision Outcome' section", first)
        return typed_document(base, facts, doc_type="adr", owned=OWNED, names=names,
                              title=base.title)


def _title_line(src: Source) -> int:
    for s in src.sections:
        if s.level == 1:
            return s.line
    return src.body_start + 1 if src.body_start < len(src.lines) else 1


def _number_title(src: Source, label: str) -> tuple[int | None, str]:
    """The ADR's number (frontmatter, file name, title) and its title without it."""
    title = label
    number: int | None = None
    h1 = next((s.title for s in src.sections if s.level == 1), "")
    entry = src.entry("title")
    text = str(entry.value).strip() if entry is not None and entry.value else h1
    m = _TITLE_NUMBER.match(text) if text else None
    if m and m.group(2).strip():
        number, title = int(m.group(1)), m.group(2).strip().strip("*_ ")
    elif text:
        title = text
    else:  # untitled: the file name's words ("0004-use-postgres" → "use postgres")
        title = ""
    m = _FILE_NUMBER.match(src.stem)
    if m:  # the file name numbers the ADR: adr-tools and MADR both name files so
        number = int(m.group(1))
    for key in ("number", "id", "adr"):
        e = src.entry(key)
        if e is not None and e.value is not None:
            got = re.search(r"\d+", str(e.value))
            if got:
                number = int(got.group())
                break
    return number, title


def _status(src: Source, facts: Facts) -> None:
    """The status: frontmatter ``status``, else a "Status: X" line in the header, else a
    ``## Status`` section's first line; two statuses are warned about, the first kept."""
    found: list[tuple[int, str, int]] = []  # line, text, end line
    entry = src.entry("status")
    if entry is not None and entry.value is not None and str(entry.value).strip():
        found.append((entry.span.line_start, str(entry.value), entry.span.line_end))
    for line, value in src.header_fields().get("status", []):
        if value.strip():
            found.append((line, value, line))
    for section in src.sections_named("status", "state", "decision status"):
        body = src.body(section)
        if body:
            found.append((body[0][0], body[0][1], body[0][0]))
        else:
            facts.warn("the '## Status' section is empty", section.line)
    if not found:
        return
    line, text, end = found[0]
    for other in found[1:]:
        if normalise_status(other[1]) != normalise_status(text):
            facts.warn(f"two statuses: {text.strip()!r} (line {line}) and "
                       f"{other[1].strip()!r} (line {other[0]}); the first is used", other[0])
            break
    status = normalise_status(text)
    if status is None:
        facts.warn(f"unknown status {text.strip()!r}: not one of {', '.join(STATUSES)}", line)
        facts.add("status_text", text.strip(), line, end=end)
        return
    facts.add("status", status, line, end=end)


def _date(src: Source, facts: Facts) -> None:
    entry = src.entry("date", "decision_date", "decision-date", "created")
    candidates: list[tuple[int, object]] = []
    if entry is not None and entry.value not in (None, ""):
        candidates.append((entry.span.line_start, entry.value))
    for key in ("date", "decision_date", "decided", "created"):
        candidates += src.header_fields().get(key, [])
    for section in src.sections_named("date"):
        body = src.body(section)
        if body:
            candidates.append(body[0])
    for line, value in candidates:
        iso = iso_date(value)
        if iso is None:
            facts.warn(f"date {str(value).strip()!r} is no date (YYYY-MM-DD expected)", line)
            continue
        facts.add("date", iso, line)
        return


def _people(src: Source, facts: Facts, key: str, predicate: str) -> None:
    """One fact per person (``deciders``, ``consulted``, ``informed``): a link to a note
    is that entity, other words a literal."""
    entry = src.entry(key)
    if entry is not None and entry.value not in (None, ""):
        facts.entry_values(entry, predicate)
        return
    for line, value in src.header_fields().get(key.replace("-", "_"), []):
        for person in split_list(value):
            facts.add(predicate, person, line)


def _options(src: Source, facts: Facts) -> None:
    section = src.section("considered options", "options considered", "options")
    if section is not None:
        for line, _ in src.body(section):
            item = _ITEM.match(src.raw(line))
            if item:
                facts.add("considered_option", _shown(item.group(1)), line)
    outcome = src.section("decision outcome", "decision", "outcome")
    lines = src.prose(outcome.start, outcome.end) if outcome else src.prose()
    for line, text in lines:
        m = _CHOSEN.search(text)
        if m:
            raw = src.raw(line)[m.start("v"):]
            value = re.split(r'"\s*,|”\s*,|,\s*because\b|\s+because\b', raw, maxsplit=1)[0]
            facts.add("chosen_option", _shown(value), line)
            return


def _shown(text: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\[\[([^\]|]*)(?:\|([^\]]*))?\]\]", lambda m: m.group(2) or m.group(1), text)
    return text.strip().strip("\"'“”*_`").strip().rstrip(".,").strip("\"'“”")


def _consequences(src: Source, facts: Facts) -> None:
    for section in src.sections_named("consequences", "consequence"):
        body = [(line, text) for line, text in src.prose(section.start, section.end)
                if src.kinds[line - 1] != HEADING]
        items = [(line, m.group(1)) for line, _ in body if (m := _ITEM.match(src.raw(line)))]
        for line, _ in items[:30] if items else body[:1]:
            raw = src.raw(line).strip()
            value = re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", raw)
            facts.add("consequence", _shown(value)[:300], line)
        return


def _relations(src: Source, facts: Facts) -> None:
    """Supersedes / superseded by / amends / amended by, wherever the file says it (the
    frontmatter status "superseded by ADR-0123" too), to the ADR each names."""
    lines = list(src.prose())
    entry = src.entry("status")
    if entry is not None and isinstance(entry.value, str):
        lines.insert(0, (entry.span.line_start, src.raw(entry.span.line_start)))
    for kind in _INVERSE:  # frontmatter ``supersedes: "[[ADR-0002]]"`` (one or a list)
        field = src.entry(kind)
        if field is None:
            continue
        values = field.value if isinstance(field.value, list) else [field.value]
        items = list(field.items)
        for n, value in enumerate(values):
            if value is None or isinstance(value, dict | list):
                continue
            line = (items[n][0] if n < len(items) else field.span).line_start
            for part in split_list(str(value)):
                target = _named(part)
                if target is not None:
                    _relate(facts, kind, target, line, partly=False)
    for line, text in lines:
        for m in _RELATION.finditer(text):
            kind = m.lastgroup or ""
            target = _target(src, line, text, m.end())
            if target is None:
                continue
            _relate(facts, kind, target, line, partly=_partly(text, m.start()))


def _relate(facts: Facts, kind: str, target: EntityRef, line: int, *, partly: bool) -> None:
    """This ADR ``kind`` (supersedes, amends, ...) ``target``, and the inverse about the
    target; a whole supersession also states the target's status ``superseded``."""
    facts.add(kind, target, line)
    facts.add(_INVERSE[kind], SELF, line, subject=target)
    if kind == "supersedes" and not partly:
        facts.add("status", "superseded", line, subject=target)


def _named(text: str) -> EntityRef | None:
    """The ADR a frontmatter value names: ``[[ADR-0002]]`` (the note linked), ``ADR-2`` or
    ``0002`` (by number), else the title or note name written."""
    text = text.strip().strip("\"'")
    link = re.fullmatch(r"\[\[([^\]|#^]+)(?:[#^][^\]|]*)?(?:\|[^\]]*)?\]\]", text)
    if link:
        return NameRef.of(link.group(1).strip())
    m = _ADR_ID.fullmatch(text) or re.fullmatch(r"#?(\d{1,5})", text)
    if m:
        return NameRef.of(adr_id(int(m.group(1))))
    return NameRef.of(text) if text else None


def _partly(text: str, pos: int) -> bool:
    return re.search(r"\b(?:in\s+part|partly|partially)\s*$", text[:pos], re.IGNORECASE) is not None


def _target(src: Source, line: int, text: str, pos: int) -> EntityRef | None:
    """The ADR a relation phrase ending at ``pos`` names: its first link within a few
    words (by the ADR number of the file it links, else the note it names), else an
    ``ADR-NNNN`` written out."""
    rest = text[pos:pos + 160]
    for start, _, shown, ref in src.links(line, text):
        if start < pos or start > pos + 40:
            continue
        if ref is not None:
            own = src.path[:-3] if src.path.lower().endswith(".md") else src.path
            return None if ref.key == NameRef.of(own).key else ref
        m = _ADR_ID.search(shown) or (re.fullmatch(r"\s*(\d{1,5})\b.*", shown) if shown else None)
        if m:
            return NameRef.of(adr_id(int(m.group(1))))
        if shown:
            return NameRef.of(shown)
    m = _ADR_ID.match(rest.lstrip(" :*_\"'["))
    if m:
        return NameRef.of(adr_id(int(m.group(1))))
    return None
