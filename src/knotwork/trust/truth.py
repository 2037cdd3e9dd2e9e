"""Current truth without a model: a newer statement closes the older one's valid time.

For a single-valued predicate (``SINGLE_VALUED``: a status, an owner, a version …), two
live facts about one subject with different values are not two current values when the
notes say which came later. A fact that starts later (its ``valid_from``, from a
``since::``, a ``valid_from`` or a decision record's date; else the ``updated`` date of
the note stating it) closes the one before it: the older fact's ``valid_to`` becomes the
newer one's start, and
``valid_to_reason`` says which fact closed it and why. A record that is superseded (a
live ``superseded_by``, or another's ``supersedes`` / ``replaces`` pointing at it) is
closed at its successor's start (the successor's ``date``, else its earliest start), when
that is known: what it decided (its status, options, consequences, links) stops holding
then. What describes the record itself (``RECORD``: its number, title, date, deciders,
the supersession facts) stays true of it, and so does a fact that begins at or after the
successor's start, or says the record is superseded: closing those would leave a
superseded record with no status at all, or an interval that ends where it begins.

Facts without a start decide nothing: two of them with different values stay two live
values, for lint to report. The rule runs where facts are read, the same in every
interface (``Knotwork.facts``, ``entity``, ``history`` and ``context``); nothing stored
changes. With ``valid_at``, a fact closed at or before that date is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from ..domain.records import RECORD_METADATA
from ..store import StoreReader
from ..types import FactRow

# every trust state, rejected ones too, as the store's own degree count has them
_EVERY = ("stated", "asserted", "extracted", "rejected")
SINGLE_VALUED = frozenset({"status", "state", "stage", "phase", "version", "owner", "lead",
                           "role", "team", "runs_on", "located_at", "priority", "decision"})
SUCCESSOR = frozenset({"superseded_by"})  # subject —superseded_by→ successor
PREDECESSOR = frozenset({"supersedes", "replaces"})  # successor —supersedes→ subject
# what describes a record rather than what it decided: a supersession does not close it
RECORD = SUCCESSOR | PREDECESSOR | RECORD_METADATA | frozenset({
    "type", "number", "title", "alias", "tag", "date", "created_at", "updated_at",
    "deciders", "consulted", "informed", "amends", "amended_by"})


def close(facts: Sequence[FactRow], *, successors: dict[int, tuple[int, str]] | None = None,
          updated: dict[int, str] | None = None) -> list[FactRow]:
    """``facts`` with the valid time the rule closes, in their order.

    ``successors``: subject id -> (the fact that supersedes it, its successor's start);
    ``updated``: document id -> the ``updated`` date its note states, which orders the
    facts that have no start of their own.
    """
    out = {f.id: f for f in facts}
    updated = updated or {}

    def begins(f: FactRow) -> str | None:
        if f.valid_from:
            return f.valid_from
        doc = f.source.document_id if f.source else None
        return updated.get(doc) if doc is not None else None

    groups: dict[tuple[int, str], list[FactRow]] = {}
    for f in facts:
        if f.predicate in SINGLE_VALUED and f.retracted_at is None and begins(f):
            groups.setdefault((f.subject_id, f.predicate), []).append(f)
    for group in groups.values():
        if len({g.value for g in group}) < 2:
            continue
        group.sort(key=lambda g: (begins(g) or "", g.id))
        for older in group:
            # the first later start with another value (a repeat of the value goes on)
            newer = next((g for g in group if (begins(g) or "") > (begins(older) or "")
                          and g.value != older.value), None)
            if newer is None:
                continue
            at = begins(newer) or ""
            how = "from" if newer.valid_from else "in a note updated"
            if older.valid_to is None or older.valid_to > at:
                out[older.id] = replace(
                    older, valid_to=at,
                    valid_to_reason=f"closed by fact #{newer.id}: {newer.predicate} ="
                                    f" {newer.value_label or newer.value} {how} {at}")
    for fid, f in list(out.items()):
        succ = (successors or {}).get(f.subject_id)
        if succ is None or f.retracted_at is not None or f.predicate in RECORD:
            continue
        by, start = succ
        if (f.valid_from or "") >= start or "supersed" in f.value.lower():
            continue  # it begins with the supersession, or states it
        if f.valid_to is None or f.valid_to > start:
            out[fid] = replace(f, valid_to=start,
                               valid_to_reason=f"superseded from {start} (fact #{by})")
    return [out[f.id] for f in facts]


def holds_at(f: FactRow, valid_at: str | None) -> bool:
    if valid_at is None:
        return True
    return (f.valid_from is None or f.valid_from <= valid_at) and (
        f.valid_to is None or f.valid_to > valid_at)


def successors(reader: StoreReader, facts: Iterable[FactRow], *,
               scopes: Sequence[str] | None = None, as_of: str | None = None
               ) -> dict[int, tuple[int, str]]:
    """Subject id -> (the superseding fact, the successor's start), for the records among
    ``facts`` that a live fact supersedes and whose successor's start is known (the
    successor's facts as of ``as_of`` when one is given)."""
    pairs: dict[int, tuple[int, int]] = {}  # superseded -> (fact, successor)
    for f in facts:
        if f.retracted_at is not None or f.object_id is None:
            continue
        if f.predicate in SUCCESSOR:
            pairs.setdefault(f.subject_id, (f.id, f.object_id))
        elif f.predicate in PREDECESSOR:
            pairs.setdefault(f.object_id, (f.id, f.subject_id))
    if not pairs:
        return {}
    starts: dict[int, str] = {}
    dated: dict[int, str] = {}  # the successor's own date: when it was decided
    for f in reader.facts({succ for _, succ in pairs.values()}, scopes=scopes, as_of=as_of):
        if f.retracted_at is not None:
            continue
        if f.predicate == "date" and f.value_type == "Literal" and _iso(f.value):
            dated[f.subject_id] = min(f.value, dated.get(f.subject_id, f.value))
        # a supersession fact about the successor carries the *predecessor's* date when
        # the predecessor's file states it ("Superseded by …"): no start of the successor
        elif f.valid_from and f.predicate not in SUCCESSOR | PREDECESSOR and (
                f.subject_id not in starts or f.valid_from < starts[f.subject_id]):
            starts[f.subject_id] = f.valid_from
    starts.update(dated)
    return {old: (fid, starts[succ]) for old, (fid, succ) in pairs.items() if succ in starts}


def _iso(value: str) -> bool:
    return len(value) >= 10 and value[4] == "-" and value[7] == "-" and value[:4].isdigit()


def updated_dates(reader: StoreReader, facts: Sequence[FactRow], *,
                  as_of: str | None = None) -> dict[int, str]:
    """Document id -> its note's ``updated`` date (as of ``as_of`` when one is given), for
    the documents of single-valued facts that compete without a start of their own (read
    only for those)."""
    seen: dict[tuple[int, str], set[str]] = {}
    for f in facts:
        if f.predicate in SINGLE_VALUED and f.retracted_at is None and not f.valid_from:
            seen.setdefault((f.subject_id, f.predicate), set()).add(f.value)
    docs = {(f.source.document_id, f.scope, f.source.path) for f in facts
            if f.source and f.source.document_id is not None and f.source.path
            and len(seen.get((f.subject_id, f.predicate), ())) > 1}
    return reader.updated_dates(sorted((d, sc, p) for d, sc, p in docs if d is not None),
                                as_of=as_of) if docs else {}


def current(reader: StoreReader, facts: Sequence[FactRow], *, valid_at: str | None = None,
            scopes: Sequence[str] | None = None, related: Iterable[FactRow] | None = None,
            as_of: str | None = None) -> list[FactRow]:
    """``close`` the facts (their supersessions read from them and ``related``, by
    default the facts pointing at their subjects), then keep those that hold at
    ``valid_at``. With ``as_of`` (``facts`` and ``related`` read as of then), every
    statement the rule weighs is read as of then too: a successor recorded later closes
    nothing in a past answer."""
    if related is None:
        # the facts that point at these subjects: a "supersedes" arrives from the successor
        related = reader.facts({f.subject_id for f in facts}, direction="in", scopes=scopes,
                               limit=2000, as_of=as_of)
    closed = close(facts, successors=successors(reader, [*facts, *related], scopes=scopes,
                                                as_of=as_of),
                   updated=updated_dates(reader, facts, as_of=as_of))
    if valid_at is None and closed == list(facts):
        return closed
    return [f for f in closed if holds_at(f, valid_at)]


class TruthReader:
    """A reader whose fact reads come closed by the rule (what ``context`` reads through).

    ``valid_at`` is applied after the rule: a fact is read regardless of its valid time,
    closed against the others, and only then kept or left out.
    """

    def __init__(self, reader: StoreReader, valid_at: str | None, *,
                 as_of: str | None = None) -> None:
        self._reader = reader
        self._valid_at = valid_at
        self._as_of = as_of

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reader, name)

    def degrees(self, entity_ids: Iterable[int], *, cap: int = 1000) -> dict[int, int]:
        """The facts touching each entity, as of ``as_of`` when one is given (the hub
        penalty of a past answer counts the facts of then, not of now)."""
        if self._as_of is None:
            return self._reader.degrees(entity_ids, cap=cap)
        ids = list(dict.fromkeys(entity_ids))
        out = dict.fromkeys(ids, 0)
        for direction in ("out", "in"):
            for f in self._reader.facts(ids, direction=direction, as_of=self._as_of,
                                        trusts=_EVERY):
                end = f.subject_id if direction == "out" else f.object_id
                if end in out:
                    out[end] += 1
        return {e: min(n, cap) for e, n in out.items()}

    def types(self, entity_ids: Iterable[int]) -> dict[int, list[str]]:
        """Each entity's types, as of ``as_of`` when one is given."""
        if self._as_of is None:
            return self._reader.types(entity_ids)
        out: dict[int, list[str]] = {}
        for f in self._reader.facts(entity_ids, as_of=self._as_of):
            if f.predicate == "type" and f.value not in out.setdefault(f.subject_id, []):
                out[f.subject_id].append(f.value)
        return {e: v for e, v in out.items() if v}

    def entity_facts(self, entity_id: int, *, out_limit: int, in_limit: int,
                     **kw: Any) -> tuple[list[FactRow], list[FactRow]]:
        kw.pop("valid_at", None)
        out, inc = self._reader.entity_facts(entity_id, out_limit=out_limit,
                                             in_limit=in_limit, **kw)
        scopes = kw.get("scopes")
        return (current(self._reader, out, valid_at=self._valid_at, scopes=scopes,
                        related=inc, as_of=kw.get("as_of")) if out else out,
                [f for f in inc if holds_at(f, self._valid_at)])
