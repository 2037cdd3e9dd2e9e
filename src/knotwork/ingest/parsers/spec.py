"""Feature specs: one record for the feature and one per task, N entities from one file.

The feature is the file's own entity, named by its id (``FEAT-…``: frontmatter ``id`` /
``feature_id``, a ``Feature ID:`` line, an id opening the title, else the file name:
``FEATURE-SPEC-auth.md`` is ``FEAT-AUTH``). Its facts: ``feature_id``, ``name``,
``status``, ``priority``, ``objective`` and ``phase`` (the items of ``## Objectives`` /
``## Goals`` and ``## Phases``), ``depends_on`` (the items of ``## Dependencies``; an id
or a link is an entity, other words a literal ``dependency``).

A task is a section headed by its id (``### TASK-AUTH-001: Implement JWT tokens``) or a
row of a task table whose first cell is one. Its facts: ``task_id``, ``name``,
``status``, ``priority``, ``wave``, ``depends_on`` (entities), ``implementation_mode``,
``part_of`` the feature, each citing its line. A task id written twice is warned about
(with both lines) and the first kept.

>>> FeatureSpecParser().matches("docs/FEATURE-SPEC-auth.md", b"")
True
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

from ...types import SELF, EntityRef, Issue, NameRef, ParsedDocument
from .typed import Facts, Source, metadata, read_typed, split_list, typed_document

__all__ = ["FeatureSpecParser"]

VERSION = "1"
_TASK_ID = re.compile(r"\bTASK-[A-Z0-9]+(?:-[A-Z0-9]+)*\b")
_FEAT_ID = re.compile(r"\bFEAT-[A-Z0-9]+(?:-[A-Z0-9]+)*\b")
_ANY_ID = re.compile(r"\b(?:TASK|FEAT)-[A-Z0-9]+(?:-[A-Z0-9]+)*\b")
_HEADING_ID = re.compile(r"(?P<id>TASK-[A-Z0-9]+(?:-[A-Z0-9]+)*)\s*(?:[:–—.)-]\s*)?(?P<rest>.*)")
_FIELD = re.compile(r"[ \t]*(?:[-*+][ \t]+)?(?:\[[ xX]\][ \t]+)?(?P<em>\*\*|__)?"
                    r"(?P<key>[A-Za-z][\w ]{0,30}?)(?(em)(?P=em))?[ \t]*::?[ \t]*"
                    r"(?:\*\*|__)?[ \t]*(?P<value>.*?)[ \t]*\Z")
_KEYS = {
    "status": "status", "state": "status", "priority": "priority", "wave": "wave",
    "depends on": "depends_on", "depends_on": "depends_on", "dependencies": "depends_on",
    "dependency": "depends_on", "blocked by": "depends_on", "requires": "depends_on",
    "implementation mode": "implementation_mode", "implementation_mode": "implementation_mode",
    "mode": "implementation_mode", "complexity": "complexity", "estimate": "estimate",
    "feature": "feature", "feature id": "feature_id", "feature_id": "feature_id",
    "id": "id", "name": "name", "title": "name", "owner": "owner", "assignee": "owner",
}
_NONE = frozenset({"", "none", "n/a", "-", "—", "[]", "nothing"})
OWNED = frozenset({"status", "priority", "feature_id", "name", "objective", "phase",
                   "dependency"})


class FeatureSpecParser:
    """Read a feature spec (``FEATURE-SPEC-*.md``, ``FEAT-*.md``)."""

    type = "feature-spec"
    version = VERSION
    detect = "name"
    category = "feature_specs"

    def matches(self, path: str, head: bytes) -> bool:
        name = posixpath.basename(path).lower()
        return name.endswith(".md") and name.startswith(("feature-spec", "feat-"))

    def parse(self, path: str, data: bytes, *, max_bytes: int, chunk_tokens: int
              ) -> ParsedDocument | Issue:
        read = read_typed(path, data, max_bytes=max_bytes, chunk_tokens=chunk_tokens,
                          extractor="feature_spec", version=VERSION)
        if isinstance(read, Issue):
            return read
        base, facts = read
        src = facts.source
        h1 = next((s for s in src.sections if s.level == 1), None)
        first = h1.line if h1 else 1
        feature_id, fid_line = _feature_id(src, h1.title if h1 else "")
        metadata(facts, "feature-spec", "feature-spec", first)
        names: list[tuple[str, str]] = []
        if feature_id:
            facts.add("feature_id", feature_id, fid_line or first)
            names.append((feature_id, "alias"))
        else:
            facts.warn("no feature id (FEAT-…) in the frontmatter, title or file name", first)
        entry = src.entry("title", "name")
        name = str(entry.value) if entry is not None and entry.value else (
            h1.title if h1 else "")
        name = re.sub(r"^(?:Feature(?: Spec(?:ification)?)?\s*:\s*)", "", name, flags=re.I)
        name = re.sub(r"^FEAT-[\w-]+?\s*[:–—]\s*|^FEAT-[\w-]+\Z", "", name.strip(),
                      flags=re.I).strip(" :–—-")
        if name:
            facts.add("name", name, first)
            names.append((name, "alias"))
        fields = src.header_fields()
        for key, predicate in (("status", "status"), ("priority", "priority")):
            entry = src.entry(key)
            if entry is not None and entry.value not in (None, ""):
                facts.add(predicate, str(entry.value).strip().lower(), entry.span.line_start,
                          text=entry.line_text)
            elif fields.get(key):
                line, value = fields[key][0]
                facts.add(predicate, _plain(value).lower(), line)
        _items(src, facts, ("objectives", "goals", "objective"), "objective")
        _items(src, facts, ("phases", "phase", "milestones"), "phase", subheadings=True)
        _dependencies(src, facts)
        tasks = _tasks(src, facts, feature_id)
        if not tasks:
            facts.warn("no tasks: no section or table row opens with a TASK-… id", first)
        return typed_document(base, facts, doc_type="feature-spec", owned=OWNED, names=names,
                              drop_subjects=tasks)


def _plain(text: str) -> str:
    text = re.sub(r"\[\[([^\]|]*)(?:\|([^\]]*))?\]\]", lambda m: m.group(2) or m.group(1), text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return text.strip().strip("*_`\"' ").strip()


def _feature_id(src: Source, title: str) -> tuple[str | None, int]:
    for key in ("feature_id", "id", "feature"):
        entry = src.entry(key)
        if entry is not None and entry.value:
            m = _FEAT_ID.search(str(entry.value))
            if m:
                return m.group(), entry.span.line_start
    for key in ("feature_id", "id"):
        for line, value in src.header_fields().get(key, []):
            m = _FEAT_ID.search(value)
            if m:
                return m.group(), line
    m = _FEAT_ID.search(title)
    if m:
        return m.group(), 0
    stem = src.stem.upper()
    m = re.match(r"FEATURE-SPEC-(.+)", stem)
    if m:
        return "FEAT-" + re.sub(r"[^A-Z0-9]+", "-", m.group(1)).strip("-"), 0
    m = _FEAT_ID.match(stem)
    return (m.group(), 0) if m else (None, 0)


def _items(src: Source, facts: Facts, headings: tuple[str, ...], predicate: str, *,
           subheadings: bool = False) -> None:
    for section in src.sections_named(*headings):
        for line, _ in src.prose(section.start, section.end):
            raw = src.raw(line)
            level = src.level(line)
            if level and subheadings:
                facts.add(predicate, _plain(raw.lstrip("#")), line)
                continue
            m = re.match(r"\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.*)", raw)
            if m and not level and raw[:1] not in " \t":
                facts.add(predicate, _plain(m.group(1))[:200], line)
        return


def _dependencies(src: Source, facts: Facts) -> None:
    for section in src.sections_named("dependencies", "depends on", "prerequisites"):
        for line, text in src.body(section):
            raw = src.raw(line)
            refs = _refs(src, line, text, raw)
            if refs:
                for ref in refs:
                    facts.add("depends_on", ref, line)
            else:
                m = re.match(r"\s*(?:[-*+]|\d+[.)])\s+(.*)", raw)
                if m and _plain(m.group(1)).lower() not in _NONE:
                    facts.add("dependency", _plain(m.group(1))[:200], line)
        return


def _refs(src: Source, line: int, text: str, raw: str) -> list[EntityRef]:
    """The entities a line names: ids (``TASK-…``, ``FEAT-…``), else its links."""
    ids = _ANY_ID.findall(raw)
    if ids:
        return [NameRef.of(i) for i in dict.fromkeys(ids)]
    return [ref for _, _, _, ref in src.links(line, text) if ref is not None]


def _tasks(src: Source, facts: Facts, feature_id: str | None) -> list[NameRef]:
    """Every task (sections headed by an id, rows of a table of ids), its facts added."""
    seen: dict[str, int] = {}
    tasks: list[NameRef] = []

    def start(task_id: str, line: int, name: str) -> NameRef | None:
        if task_id in seen:
            facts.warn(f"task {task_id} is written twice (lines {seen[task_id]} and {line});"
                       " the first is kept", line)
            return None
        seen[task_id] = line
        ref = NameRef.of(task_id)
        tasks.append(ref)
        metadata(facts, "task", "feature-spec", line, subject=ref)
        facts.add("task_id", task_id, line, subject=ref)
        if name:
            facts.add("name", name, line, subject=ref)
            facts.add("title", name, line, subject=ref)
        facts.add("part_of", SELF, line, subject=ref)
        if feature_id:
            facts.add("feature", feature_id, line, subject=ref)
        return ref

    for section in src.sections:
        m = _HEADING_ID.match(section.title.strip("*_ "))
        if section.level < 2 or m is None:
            continue
        ref = start(m.group("id"), section.line, _plain(m.group("rest")))
        if ref is None:
            continue
        for line, text in src.prose(section.start, section.end):
            if src.level(line):
                break
            raw = src.raw(line)
            for piece in re.findall(r"\[([\w ]+::[^\]]*)\]", raw) or [raw]:
                f = _FIELD.match(piece)
                if f is None:
                    continue
                predicate = _KEYS.get(" ".join(f.group("key").lower().replace("_", " ").split()))
                if predicate is None:
                    predicate = _KEYS.get(f.group("key").lower())
                if predicate in (None, "id", "name", "feature", "feature_id"):
                    continue
                _task_field(src, facts, ref, predicate, f.group("value"), line, text)
    _task_table(src, facts, start)
    return tasks


def _task_field(src: Source, facts: Facts, ref: NameRef, predicate: str, value: str,
                line: int, text: str) -> None:
    plain = _plain(value)
    if predicate == "owner":
        people: list[EntityRef] = [r for _, _, _, r in src.links(line, text) if r is not None]
        for person in people or [NameRef.of(p) for p in split_list(plain)]:
            facts.add("owner", person, line, subject=ref)
    elif predicate == "depends_on":
        refs = _refs(src, line, text, value)
        if not refs and plain.lower() not in _NONE:
            refs = [NameRef.of(p) for p in split_list(plain)]
        for dep in refs:
            facts.add("depends_on", dep, line, subject=ref)
    elif predicate == "wave":
        m = re.search(r"\d+", plain)
        if m:
            facts.add("wave", m.group(), line, subject=ref)
        else:
            facts.warn(f"wave {plain!r} of {ref.text} is no number", line)
    elif plain and plain.lower() not in _NONE:
        facts.add(predicate, plain.lower() if predicate in ("status", "priority") else plain,
                  line, subject=ref)


def _task_table(src: Source, facts: Facts,
                begin: Callable[[str, int, str], NameRef | None]) -> None:
    """A table whose rows open with task ids: its header row names the columns."""
    header: list[str] | None = None
    for line, text in src.prose():
        raw = src.raw(line).strip()
        if not raw.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in raw.strip("|").split("|")]
        if header is None:
            header = [" ".join(_plain(c).lower().replace("_", " ").split()) for c in cells]
            continue
        if all(set(c) <= set("-: ") for c in cells):
            continue
        m = _TASK_ID.fullmatch(_plain(cells[0])) if cells else None
        if m is None:
            continue
        cols = dict(zip(header, cells, strict=False))
        name = next((_plain(cols[k]) for k in ("name", "title", "task", "description")
                     if k in cols), "")
        ref = begin(m.group(), line, name)
        if ref is None:
            continue
        for col, value in cols.items():
            predicate = _KEYS.get(col)
            if predicate in (None, "id", "name", "feature", "feature_id"):
                continue
            _task_field(src, facts, ref, predicate, value, line, text)
