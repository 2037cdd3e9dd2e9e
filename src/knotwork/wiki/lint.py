"""Lint the vault and its wiki without a model: every finding with file, line, facts, fix.

Each rule is a small function over set-based store queries (``store.WikiReader``) or the
wiki's own pages; none walks the store row by row. The kinds:

- ``broken_link``: a link whose name reaches no note (and a line of ``index.md`` whose
  page is gone — ``--fix`` drops it);
- ``missing_page``: a name ``MISSING_MIN`` or more notes link to with no note of its own
  (reported instead of each of those links as broken: the fix is one page, not N edits);
- ``orphan_page``: a note no other note links to; ``isolated_page``: one that also links
  to nothing (links from the generated ``index.md`` and ``log.md`` count for nothing);
- ``duplicate_entity``: a name (title, file name, alias) that two notes declare;
- ``contradiction``: two live values of a single-valued predicate for one subject from
  different sources whose valid times overlap (unknown valid time: always), and a target
  that two entities both claim to supersede;
- ``stale_claim``: a wiki page citing (``kw:fact/<id>`` in its text, or the ids of a
  frontmatter ``cites:`` list) a fact since retracted with no
  live fact saying the same, or written before a newer statement of the same subject
  and predicate;
- ``low_confidence``: a cited fact under the confidence floor.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..domain.words import name_key
from ..store import StoreReader
from ..types import FactRow
from .pages import Wiki
from .records import Keyed

__all__ = ["CITATION", "KINDS", "MISSING_MIN", "SEVERITIES", "Finding", "LintOptions",
           "citations", "exit_code", "lint"]

KINDS = ("broken_link", "missing_page", "orphan_page", "isolated_page", "duplicate_entity",
         "contradiction", "stale_claim", "low_confidence")
SEVERITIES = ("error", "warning", "info")
MISSING_MIN = 3  # notes linking a name before its page counts as missing
CITATION = re.compile(r"kw:fact/(\d{1,18})\b")
# Not "replaces": the lexicon reads it from prose, where the note is taken for the
# subject ("Traefik replaces [[Old Nginx Proxy]]" written in ADR-001 is ADR-001's), and
# on the example vault that alone made a false contradiction. Typed ADR parsers and
# frontmatter (``supersedes: "[[ADR-0002]]"``) state ``supersedes`` itself.
SUPERSEDES = ("supersedes",)
SUPERSEDED_BY = ("superseded_by",)


@dataclass(frozen=True, slots=True)
class Finding(Keyed):
    """One problem: what, how bad, where (file and line), about what, which facts, and
    the fix to make. ``fixable``: ``lint --fix`` applies the fix itself."""

    kind: str
    severity: str
    path: str
    line: int | None
    message: str
    subject: str
    facts: tuple[int, ...] = ()
    fix: str = ""
    fixable: bool = False

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "severity": self.severity, "path": self.path,
                "line": self.line, "message": self.message, "subject": self.subject,
                "facts": list(self.facts), "fix": self.fix, "fixable": self.fixable}


@dataclass(frozen=True, slots=True)
class LintOptions:
    scope: str
    single_valued: tuple[str, ...]
    min_confidence: float = 0.6
    kinds: tuple[str, ...] = KINDS
    supersedes: tuple[str, ...] = SUPERSEDES
    superseded_by: tuple[str, ...] = SUPERSEDED_BY
    # vault paths knotwork writes (the wiki's index.md and log.md): their links count
    # for nothing, and they are never reported
    generated: tuple[str, ...] = ()


@dataclass(slots=True)
class _Ctx:
    reader: StoreReader
    wiki: Wiki | None
    opts: LintOptions
    generated: tuple[str, ...] = field(default_factory=tuple)


def lint(reader: StoreReader, wiki: Wiki | None, opts: LintOptions) -> list[Finding]:
    """Every finding of the kinds ``opts.kinds``, by path, line and kind."""
    ctx = _Ctx(reader, wiki, opts, wiki.generated if wiki is not None else opts.generated)
    found: list[Finding] = []
    for kinds, rule in _RULES:
        if set(kinds) & set(opts.kinds):
            found.extend(f for f in rule(ctx) if f.kind in opts.kinds)
    return sorted(found, key=lambda f: (f.path, f.line or 0, KINDS.index(f.kind), f.subject))


# ---------------------------------------------------------------- links


def _links(ctx: _Ctx) -> list[Finding]:
    by_name: dict[str, list[tuple[int, str, int | None, str]]] = defaultdict(list)
    rows = ctx.reader.unresolved_links(ctx.opts.scope, exclude_paths=ctx.generated)
    files = _attachments(ctx, [r.name for r in rows])
    for r in rows:
        if r.name.casefold() in files or r.name.casefold().rsplit("/", 1)[-1] in files:
            continue  # ![[diagram.png]]: a file of the vault that is no note
        if r.predicate == "tagged" or r.extractor == "hierarchy":
            # a Dendron tag whose tags.* note, or a dot name whose parent, is not written:
            # Dendron's own stubs (a Logseq namespace's parent page too), no broken link
            continue
        by_name[r.key].append((r.fact_id, r.path, r.line, r.name))
    out = []
    for links in by_name.values():
        name = links[0][3]
        notes = sorted({p for _, p, _, _ in links})
        if len(notes) >= MISSING_MIN:
            fid, path, line, _ = links[0]
            out.append(Finding(
                "missing_page", "warning", path, line,
                f"{name!r} is linked from {len(notes)} notes ({', '.join(notes[:5])}"
                f"{', …' if len(notes) > 5 else ''}) but has no page of its own",
                name, tuple(f for f, _, _, _ in links),
                f'write its page: knotwork wiki write entity "{name}" (or add a note titled'
                f' {name!r})'))
            continue
        for fid, path, line, _ in links:
            out.append(Finding(
                "broken_link", "error", path, line,
                f"the link to {name!r} reaches no note", name, (fid,),
                f"create a note named {name!r}, or correct the link to an existing note"))
    return out + _index_lines(ctx)


def _attachments(ctx: _Ctx, names: Sequence[str]) -> set[str]:
    """The vault's files that are no notes (images, PDFs, canvases), by path and by name,
    case-folded: a link or embed naming one is not broken. Looked for only when a link
    that reaches no note has a file suffix, and only with the vault at hand."""
    if ctx.wiki is None or not any(Path(n).suffix not in ("", ".md") for n in names):
        return set()
    import os

    from ..ingest.sources import DEFAULT_IGNORES

    root, out = ctx.wiki.vault, set()
    for folder, dirs, found in os.walk(root):
        dirs[:] = [d for d in dirs if d not in DEFAULT_IGNORES]
        rel = Path(folder).relative_to(root).as_posix()
        for name in found:
            if not name.endswith(".md"):
                out.add(name.casefold())
                out.add(name.casefold() if rel == "." else f"{rel}/{name}".casefold())
    return out


def _index_lines(ctx: _Ctx) -> list[Finding]:
    """Lines of the generated index whose page file is gone."""
    if ctx.wiki is None:
        return []
    wiki, out = ctx.wiki, []
    for e in wiki.index_entries():
        if not (wiki.vault / f"{e.link}.md").is_file():
            out.append(Finding(
                "broken_link", "error", wiki.index_path, e.line,
                f"the index lists {e.link}.md, which no longer exists", e.title, (),
                "knotwork lint --fix drops the line (regenerates the index)", fixable=True))
    return out


def _unlinked(ctx: _Ctx) -> list[Finding]:
    out = []
    for n in ctx.reader.unlinked_notes(ctx.opts.scope, exclude_paths=ctx.generated):
        if n.outgoing:
            out.append(Finding("orphan_page", "info", n.path, 1,
                               f"no other note links to {n.title!r}", n.title, (),
                               f"link to it from a related note ([[{n.title}]])"))
        else:
            out.append(Finding("isolated_page", "warning", n.path, 1,
                               f"{n.title!r} has no links in or out", n.title, (),
                               "link it to the notes it is about, and from one of them"))
    return out


def _duplicates(ctx: _Ctx) -> list[Finding]:
    reader, gen, out = ctx.reader, set(ctx.generated), []
    for key, paths in reader.ambiguous_names(limit=100_000):
        paths = [p for p in paths if p not in gen]
        if len(paths) < 2:
            continue
        winner, loser = paths[0], paths[1]
        line, facts = _declared_at(reader, ctx.opts.scope, loser, key)
        out.append(Finding(
            "duplicate_entity", "warning", loser, line,
            f"the name {key!r} is declared by {len(paths)} notes ({', '.join(paths[:5])}"
            f"{', …' if len(paths) > 5 else ''}); [[{key}]] reaches {winner}", key, facts,
            "rename one of them, or drop the alias that repeats another note's name"))
    return out


def _declared_at(reader: StoreReader, scope: str, path: str, key: str
                 ) -> tuple[int, tuple[int, ...]]:
    """The line (and the facts) where the note at ``path`` declares the name ``key``: its
    alias or title fact, else the line whose text is the name (a ``# Title``), else 1."""
    eid = reader.find_entity(path, name_key(path))
    hits = [] if eid is None else [
        f for f in reader.facts([eid]) if f.predicate in ("alias", "title")
        and name_key(f.value) == key and f.source is not None]
    if hits and hits[0].source is not None:
        return hits[0].source.line_start, tuple(f.id for f in hits)
    text = reader.document_texts(scope, [path]).get(path, "")
    for n, line in enumerate(text.splitlines(), 1):
        if name_key(line.lstrip("#").strip().strip("\"'")) == key:
            return n, ()
    return 1, ()


# ---------------------------------------------------------------- contradictions


def _where(f: FactRow) -> str:
    if f.source is not None and f.source.path:
        return f"{f.source.path}:{f.source.line_start}"
    return f"asserted by {f.actor or 'unknown'}"


def _origin(f: FactRow) -> object:
    return f.source.document_id if f.source and f.source.document_id else ("actor", f.actor)


def _value(f: FactRow) -> str:
    return f"e:{f.object_id}" if f.value_type == "Entity" else "v:" + f.value.strip().casefold()


def _overlap(a: FactRow, b: FactRow) -> bool:
    """Whether two valid-time windows share an instant (an open end is unbounded)."""
    lo = max(a.valid_from or "", b.valid_from or "")
    a_to, b_to = a.valid_to or "\uffff", b.valid_to or "\uffff"
    return lo < min(a_to, b_to)


def _clash(a: FactRow, b: FactRow) -> bool:
    if _value(a) == _value(b) or not _overlap(a, b):
        return False
    # one source stating two values with no valid time is the note's own list; with
    # valid times given, overlapping windows contradict wherever they come from
    both_timed = bool((a.valid_from or a.valid_to) and (b.valid_from or b.valid_to))
    return _origin(a) != _origin(b) or both_timed


def _label(f: FactRow) -> str:
    return f.value_label or f.value if f.value_type == "Entity" else f.value


def _contradictions(ctx: _Ctx) -> list[Finding]:
    reader, out = ctx.reader, []
    groups: dict[tuple[int, str], list[FactRow]] = defaultdict(list)
    ids = reader.conflicting_values(ctx.opts.scope, ctx.opts.single_valued)
    for f in reader.facts_by_id(ids):
        groups[(f.subject_id, f.predicate)].append(f)
    for (_, pred), facts in groups.items():
        involved = sorted({x.id for a in facts for b in facts if a.id < b.id and _clash(a, b)
                           for x in (a, b)})
        if not involved:
            continue
        rows = [f for f in facts if f.id in involved]
        # cite a file's line when one of the values has one: that is where to look
        newest = max(rows, key=lambda f: (bool(_path(f)), f.recorded_at, f.id))
        values = "; ".join(f"{_label(f)} ({_where(f)})" for f in rows)
        out.append(Finding(
            "contradiction", "error", _path(newest), _line(newest),
            f"{rows[0].subject_label} has {len(rows)} live values of {pred!r}, a"
            f" single-valued predicate: {values}", rows[0].subject_label, tuple(involved),
            "keep one: edit the note that is wrong, retract an asserted fact"
            " (knotwork retract), or give each value its valid time"))
    out.extend(_rival_supersedes(ctx))
    return out


def _rival_supersedes(ctx: _Ctx) -> list[Finding]:
    reader = ctx.reader
    claims = reader.rival_claims(ctx.opts.scope, ctx.opts.supersedes, ctx.opts.superseded_by)
    if not claims:
        return []
    facts = {f.id: f for f in reader.facts_by_id([c.fact_id for c in claims])}
    targets: dict[int, list[int]] = defaultdict(list)
    for c in claims:
        targets[c.target].append(c.fact_id)
    names = reader.entities({c.target for c in claims} | {c.claimant for c in claims})
    claimant = {c.fact_id: c.claimant for c in claims}
    out = []
    for target, fids in targets.items():
        rows = [facts[i] for i in fids if i in facts]
        by = sorted({names[claimant[i]].label for i in fids if claimant[i] in names})
        label = names[target].label if target in names else str(target)
        first = min(rows, key=lambda f: (f.recorded_at, f.id))
        out.append(Finding(
            "contradiction", "error", _path(first), _line(first),
            f"{label} is claimed to be superseded by {len(by)} records: {', '.join(by)}"
            f" ({'; '.join(_where(f) for f in rows)})", label, tuple(sorted(fids)),
            "one record supersedes it: make the other supersede that one instead"))
    return out


def _path(f: FactRow) -> str:
    return f.source.path if f.source and f.source.path else ""


def _line(f: FactRow) -> int | None:
    return f.source.line_start if f.source and f.source.path else None


# ---------------------------------------------------------------- what pages cite


_CITES_KEY = re.compile(r"^(?:cites|facts):\s*(?:\[(?P<flow>[^\]]*)\])?\s*$")
_CITES_ITEM = re.compile(r"^\s*-\s*(?:kw:fact/)?(\d{1,18})\s*$")
_CITES_ID = re.compile(r"(?:kw:fact/)?(\d{1,18})")


def citations(text: str) -> list[tuple[int, int]]:
    """(line, fact id) of every fact ``text`` cites, in order: ``kw:fact/<id>`` anywhere,
    and the ids of a frontmatter ``cites:`` (or ``facts:``) list, flow or block style."""
    out: list[tuple[int, int]] = []
    lines = text.splitlines()
    front = lines[0].rstrip() == "---" if lines else False
    in_list = False
    for n, line in enumerate(lines, 1):
        if front and n > 1 and line.rstrip() in ("---", "..."):
            front = in_list = False
        elif front and n > 1:
            m = _CITES_KEY.match(line)
            if m:
                in_list = m["flow"] is None
                out.extend((n, int(i)) for i in _CITES_ID.findall(m["flow"] or ""))
                continue
            item = _CITES_ITEM.match(line) if in_list else None
            if item:
                out.append((n, int(item[1])))
                continue
            in_list = False
        out.extend((n, int(m[1])) for m in CITATION.finditer(line))
    return out


def _cited(ctx: _Ctx) -> list[Finding]:
    wiki = ctx.wiki
    if wiki is None:
        return []
    pages: list[tuple[str, list[tuple[int, int]]]] = []
    for p in wiki.list_pages():
        try:
            text = (wiki.vault / p.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        cites = citations(text)
        if cites:
            pages.append((p.path, cites))
    if not pages:
        return []
    reader = ctx.reader
    facts = {f.id: f for f in reader.facts_by_id(sorted({i for _, c in pages for _, i in c}))}
    subjects = {f.subject_id for f in facts.values()}
    live_of: dict[tuple[int, str], list[FactRow]] = defaultdict(list)
    for f in reader.facts(subjects, limit=None):
        live_of[(f.subject_id, f.predicate)].append(f)
    out: list[Finding] = []
    for path, cites in pages:
        doc = reader.document(ctx.opts.scope, path)
        written = doc.updated_at if doc is not None else ""
        for line, fid in cites:
            out.extend(_judge(path, line, fid, facts.get(fid), live_of, written, ctx.opts))
    return out


def _judge(path: str, line: int, fid: int, f: FactRow | None,
           live_of: dict[tuple[int, str], list[FactRow]], written: str,
           opts: LintOptions) -> Iterable[Finding]:
    """The findings one citation of a page gives."""
    if f is None:
        yield Finding("stale_claim", "error", path, line,
                      f"the page cites fact #{fid}, which the store does not hold",
                      f"#{fid}", (fid,), "cite a fact that exists (see knotwork facts)")
        return
    claim = f"{f.subject_label} {f.predicate} = {_label(f)}"
    now = [g for g in live_of.get((f.subject_id, f.predicate), []) if g.id != f.id]
    if f.retracted_at is not None:
        if any(_value(g) == _value(f) for g in now):
            return  # the source says it again (a fact with a new id): the claim holds
        instead = "; ".join(f"{_label(g)} (kw:fact/{g.id})" for g in now[:3])
        yield Finding(
            "stale_claim", "error", path, line,
            f"the page cites fact #{fid} ({claim}), retracted {f.retracted_at}"
            f" ({f.retract_reason or 'no reason given'})", f.subject_label,
            (fid, *(g.id for g in now[:3])),
            f"update the page: the store now says {instead}" if instead
            else "update the page: no source states this any more")
        return
    newer = [g for g in now if _value(g) != _value(f) and written and g.recorded_at > written]
    if newer:
        yield Finding(
            "stale_claim", "warning", path, line,
            f"the page cites {claim} (#{fid}) but was written before a newer statement: "
            + "; ".join(f"{_label(g)} ({_where(g)}, {g.recorded_at})" for g in newer[:3]),
            f.subject_label, (fid, *(g.id for g in newer[:3])),
            "check the page against the newer statement and write it again")
    if f.confidence < opts.min_confidence:
        yield Finding(
            "low_confidence", "warning", path, line,
            f"the page relies on {claim} (#{fid}) at confidence {f.confidence:.2f}, under"
            f" the floor {opts.min_confidence:.2f}", f.subject_label, (fid,),
            "find a better source for it, or say on the page that it is uncertain")


_Rule = Callable[[_Ctx], list[Finding]]
_RULES: Sequence[tuple[tuple[str, ...], _Rule]] = (
    (("broken_link", "missing_page"), _links),
    (("orphan_page", "isolated_page"), _unlinked),
    (("duplicate_entity",), _duplicates),
    (("contradiction",), _contradictions),
    (("stale_claim", "low_confidence"), _cited),
)


def exit_code(findings: Sequence[Finding]) -> int:
    """1 when any finding is an error, else 0 (what ``knotwork lint`` exits with)."""
    return 1 if any(f.severity == "error" for f in findings) else 0
