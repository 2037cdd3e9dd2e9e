"""Which facts an edit retracts, adds and keeps: the ownership diff.

A document owns the facts its text gives. Read again, its new facts are compared with
the live ones it owned by *what they say* (``ids.fact_key``: subject, predicate, object,
valid time and qualifiers), never by position: a statement moved to another line is kept
(its citation moves on), one the text no longer gives is retracted (never deleted), and
one it gives for the first time is added. The same statement given twice counts once, at
its first place.

>>> diff_facts(["a", "b", "c"], ["c", "d", "c", "a"])
FactDiff(retract=('b',), add=('d',), keep=('c', 'a'))
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

__all__ = ["FactDiff", "diff_facts"]


@dataclass(frozen=True, slots=True)
class FactDiff:
    """The fact keys to retract (in ``old``'s order), to add and to keep (in ``new``'s
    order, each once)."""

    retract: tuple[str, ...]
    add: tuple[str, ...]
    keep: tuple[str, ...]


def diff_facts(old: Collection[str], new: Iterable[str]) -> FactDiff:
    """Diff the keys of the live facts a document owns (``old``, distinct) against the
    keys its text gives now (``new``, in order, maybe repeated)."""
    given = dict.fromkeys(new)  # first place of each, in order
    return FactDiff(retract=tuple(k for k in old if k not in given),
                    add=tuple(k for k in given if k not in old),
                    keep=tuple(k for k in given if k in old))
