"""Structured queries over facts: the entities whose live facts say ``status=accepted``.

``find`` asks the store for the entities every condition holds for (one indexed read,
``FactReader.find_subjects``), then reads the facts that made each one hold, as ``facts``
shows them: a record that another document says is superseded has ``superseded`` as its
live status, whatever its own file says (``domain.supersession``), so an ADR superseded
elsewhere is not found as ``accepted``. The store pages by (label, id), so a page that
loses a record that way is filled from the next one.

A value matches a literal case-insensitively, and an entity value by any of its names:
``owner=alice`` finds ``owner: [[Alice Smith]]`` when that note has the alias ``Alice``;
``owner=[[Alice]]`` asks for the entity only. A bare ``KEY`` asks for any value.

    >>> parse_where("Status = Accepted")
    ('Status', 'Accepted')
    >>> parse_where("owner")
    ('owner', None)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..domain.supersession import SUPERSEDED, live_status
from ..errors import InvalidQuery
from ..store import FactMatch, StoreReader, SubjectMatch
from ..types import FactRow, name_key

__all__ = ["Found", "FoundEntity", "Where", "conditions", "find", "match_of", "parse_where"]

# ``[[Target]]`` or ``[[Target|shown]]``: the value names an entity, not a literal
_LINK = re.compile(r"^\[\[([^\]|#^]+)(?:[#^][^\]|]*)?(?:\|[^\]]*)?\]\]$")


@dataclass(frozen=True, slots=True)
class Where:
    """One condition as asked (``predicate`` normalised as ingest stores keys)."""

    predicate: str
    value: str | None  # None: any value

    def as_dict(self) -> dict[str, object]:
        return {"predicate": self.predicate, "value": self.value}


@dataclass(frozen=True, slots=True)
class FoundEntity:
    """An entity every condition holds for, with the live facts that make them hold."""

    iri: str
    label: str
    kind: str
    scope: str
    types: tuple[str, ...]
    facts: tuple[FactRow, ...]

    def as_dict(self) -> dict[str, object]:
        return {"iri": self.iri, "label": self.label, "kind": self.kind, "scope": self.scope,
                "types": list(self.types), "facts": [f.as_dict() for f in self.facts]}


@dataclass(frozen=True, slots=True)
class Found:
    """What ``find`` answers: the entities by label, and whether ``limit`` cut them."""

    where: tuple[Where, ...]
    entities: tuple[FoundEntity, ...]
    limit: int
    truncated: bool

    def as_dict(self) -> dict[str, object]:
        return {"where": [w.as_dict() for w in self.where],
                "entities": [e.as_dict() for e in self.entities],
                "limit": self.limit, "truncated": self.truncated}


def parse_where(text: str) -> tuple[str, str | None]:
    """``KEY=VALUE`` as (key, value), a bare ``KEY`` as (key, None); both stripped."""
    key, sep, value = text.partition("=")
    key, value = key.strip(), value.strip()
    if not key or (sep and not value):
        raise InvalidQuery(f"--where takes KEY=VALUE or KEY, got {text!r}")
    return key, value if sep else None


def conditions(texts: Sequence[str], normalize: Callable[[str], str]) -> tuple[Where, ...]:
    """Each ``KEY=VALUE`` text as a ``Where``, its key as ``normalize`` (ingest's key
    normalisation) stores it: ``Status=Accepted`` asks for ``status``."""
    out = []
    for text in texts:
        key, value = parse_where(text)
        predicate = normalize(key)
        if not predicate:
            raise InvalidQuery(f"the key {key!r} holds no letter or digit")
        out.append(Where(predicate, value))
    if not out:
        raise InvalidQuery("find needs a condition: a KEY=VALUE (--where) or a type (--type)")
    return tuple(out)


def match_of(where: Where) -> FactMatch:
    """The store's condition for ``where``: a literal in the spellings a case-insensitive
    match needs beyond ASCII (the store folds ASCII letters only), and the name key."""
    if where.value is None:
        return FactMatch(where.predicate)
    link = _LINK.match(where.value)
    if link:
        return FactMatch(where.predicate, names=(name_key(link.group(1)),))
    v = where.value
    spellings = tuple(sorted({v, v.lower(), v.upper(), v.capitalize(), v.title(),
                              v.casefold()}))
    return FactMatch(where.predicate, values=spellings, names=(name_key(v),))


def find(reader: StoreReader, where: Sequence[Where], *, scopes: Sequence[str] | None,
         limit: int) -> Found:
    """The first ``limit`` entities (by label) that every condition of ``where`` holds
    for, each with the facts that make it hold."""
    matches = [match_of(w) for w in where]
    kept: list[tuple[SubjectMatch, list[FactRow]]] = []
    after: tuple[str, int] | None = None
    while len(kept) <= limit:
        want = limit + 1 - len(kept)
        page = reader.find_subjects(matches, scopes=scopes, limit=want, after=after)
        for m in page:
            facts = _holding(reader, m, scopes)
            if facts is not None:
                kept.append((m, facts))
        if len(page) < want:
            break
        after = (page[-1].label, page[-1].subject_id)
    shown = kept[:limit]
    rows = reader.entities(m.subject_id for m, _ in shown)
    types = reader.types(m.subject_id for m, _ in shown)
    return Found(tuple(where), tuple(
        FoundEntity(rows[m.subject_id].iri, rows[m.subject_id].label, rows[m.subject_id].kind,
                    rows[m.subject_id].scope, tuple(types.get(m.subject_id, ())),
                    tuple(facts)) for m, facts in shown),
        limit, len(kept) > limit)


def _holding(reader: StoreReader, m: SubjectMatch, scopes: Sequence[str] | None
             ) -> list[FactRow] | None:
    """The facts of ``m`` as ``facts`` shows them (a live ``superseded`` status outranks
    the record's own), in the conditions' order; None when a condition no longer holds."""
    rows = {f.id: f for f in reader.facts_by_id(sorted({i for ids in m.fact_ids for i in ids}))}
    hidden: set[int] = set()
    if any(f.predicate == "status" and f.value.casefold() != SUPERSEDED for f in rows.values()):
        statuses = [f for f in reader.facts([m.subject_id], scopes=scopes)
                    if f.predicate == "status"]
        live = {f.id for f in live_status(statuses)}
        hidden = {f.id for f in statuses if f.id not in live}
    out: list[FactRow] = []
    for ids in m.fact_ids:
        held = [i for i in ids if i in rows and i not in hidden]
        if not held:
            return None
        out += [rows[i] for i in held if rows[i] not in out]
    return out
