"""Valid time from what a note says: when its statements held in the world.

A fact's valid time (``valid_from``/``valid_to``) is read, in this order, from:

1. the line that states it: a Dataview field ``[since:: 2025-06-01]`` or
   ``[until:: 2025-09-01]`` on the same line gives every other fact of that line its
   start or end (``- [owner:: [[Dana]]] [since:: 2025-06-01]``);
2. the note: frontmatter (or field lines, or a line of its own) ``valid_from`` /
   ``valid_to``, and ``since::`` / ``until::`` on a line with nothing else, give every
   fact of the note its start or end;
3. a decision record's date: a note typed ``adr`` or ``decision``, one kept in a folder
   of them (``adr/``, ``adrs/``, ``decisions/``, ``decision-records/``) or named
   ``ADR-…``, or one that ``supersedes`` / ``replaces`` / is ``superseded_by`` another,
   holds from its ``date``.

What names or files a note (title, aliases, type, tags) and the dates themselves are no
statement about the world and get none. A fact with no valid time holds at every date:
``--valid-at`` leaves out only the facts whose valid time excludes that date. A value that
is not an ISO date is reported with its line, and ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import date, datetime

from ..domain.records import RECORD_METADATA
from ..types import FactDraft, Issue, LiteralValue, NameRef, SelfRef

START = ("valid_from", "since")
END = ("valid_to", "until")
# predicates about the note itself, not the world: they hold whenever the note exists
TIMELESS = frozenset({"title", "alias", "aliases", "type", "tag", "tags", "date", "created",
                      "updated", "valid_from", "valid_to", "since", "until", "mentions",
                      "number"}) | RECORD_METADATA  # (what a typed parser records of itself)
DECISION_TYPES = frozenset({"adr", "decision", "decision-record", "decision_record"})
SUPERSESSION = frozenset({"supersedes", "replaces", "superseded_by"})
DECISION_FOLDERS = frozenset({"adr", "adrs", "decisions", "decision-records",
                              "architecture-decisions"})


def is_decision_path(path: str) -> bool:
    """A note kept where decision records are: ``docs/adr/0001-….md``, ``ADR-007.md``."""
    *folders, name = path.lower().split("/")
    return any(f in DECISION_FOLDERS for f in folders) or name.startswith(("adr-", "adr_"))


def _date(f: FactDraft, path: str, issues: list[Issue]) -> str | None:
    value = f.object.value if isinstance(f.object, LiteralValue) else None
    if value is not None:
        text = value.strip()
        try:
            (date if len(text) == 10 else datetime).fromisoformat(text)
            return text
        except ValueError:
            pass
    issues.append(Issue(path, f"{f.predicate} {value!r} is not an ISO date (2025-06-01):"
                        " no valid time taken from it", line=f.span.line_start, fatal=False))
    return None


def apply_validity(path: str, facts: Sequence[FactDraft]
                   ) -> tuple[tuple[FactDraft, ...], tuple[Issue, ...]]:
    """``facts`` with the valid time the note gives them, and the dates it could not read."""
    issues: list[Issue] = []
    by_line: dict[int, list[FactDraft]] = {}
    for f in facts:
        by_line.setdefault(f.span.line_start, []).append(f)
    note: dict[str, str] = {}
    line_time: dict[int, dict[str, str]] = {}
    decision = is_decision_path(path)
    note_date: str | None = None
    for f in facts:
        own = isinstance(f.subject, SelfRef)
        if own and f.predicate == "type" and isinstance(f.object, LiteralValue) and \
                f.object.value.strip().lower() in DECISION_TYPES:
            decision = True
        if own and f.predicate in SUPERSESSION and isinstance(f.object, NameRef):
            decision = True
        if own and f.predicate == "date" and note_date is None:
            note_date = _date(f, path, [])  # a date that is not one is no error here
        if f.predicate not in START + END:
            continue
        when = _date(f, path, issues)
        if when is None:
            continue
        side = "from" if f.predicate in START else "to"
        others = [g for g in by_line[f.span.line_start] if g.predicate not in TIMELESS]
        if f.predicate in ("since", "until") and others:
            line_time.setdefault(f.span.line_start, {})[side] = when
        elif own:
            note.setdefault(side, when)
    if decision and note_date and "from" not in note:
        note["from"] = note_date
    if not note and not line_time:
        return tuple(facts), tuple(issues)
    out = []
    for f in facts:
        if f.predicate in TIMELESS or f.valid_from or f.valid_to:
            out.append(f)
            continue
        here = line_time.get(f.span.line_start, {})
        vf, vt = here.get("from", note.get("from")), here.get("to", note.get("to"))
        if vf and vt and vt < vf:
            issues.append(Issue(path, f"valid time ends ({vt}) before it starts ({vf}):"
                                " the end is ignored", line=f.span.line_start, fatal=False))
            vt = None
        out.append(replace(f, valid_from=vf, valid_to=vt) if vf or vt else f)
    return tuple(out), tuple(dict.fromkeys(issues))
