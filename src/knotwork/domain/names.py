"""Which note wins a name: an exact path first, then the shortest path; aliases last.

A link ``[[x]]`` names whatever note declares the name ``x`` (``words.name_key``): by its
path (``deep/x``), its file stem (``x``), its title, or an alias. Several notes may
declare one name (a README per folder); the link then resolves to one of them, by
Obsidian's rule:

1. how the name is declared (``NAME_RANK``): its path before its stem or title (equal),
   and those before an alias;
2. then the shortest path (``x.md`` before ``deep/nested/x.md``);
3. then the path in code-point order, so that the answer never depends on write order.

The notes of other scopes never compete (the caller passes one scope's claims). A name
with claims from more than one path is *ambiguous*: it still resolves, and ``stats``
reports it with its paths, the winner first.

>>> claims = [NameClaim(1, "stem", "deep/nested/x.md"), NameClaim(2, "stem", "x.md")]
>>> name_winner(claims), ranked_paths(claims)
(2, ('x.md', 'deep/nested/x.md'))

The SQLite store writes the same rule as SQL (``store/sqlite/schema.NAME_WINNER``), tested
equal to this one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["NAME_RANK", "NameClaim", "name_winner", "ranked_paths"]

# how strongly a way of declaring a name claims it (lower wins)
NAME_RANK: Mapping[str, int] = {"path": 0, "stem": 1, "title": 1, "alias": 2}


@dataclass(frozen=True, slots=True)
class NameClaim:
    """A note's claim to one name: the note's entity id, how it declares the name
    (``path``, ``stem``, ``title`` or ``alias``) and the note's path."""

    entity_id: int
    kind: Literal["path", "stem", "title", "alias"]
    path: str

    def order(self) -> tuple[int, int, str]:
        """The claim's place in the contest: rank, then path length, then path."""
        return NAME_RANK[self.kind], len(self.path), self.path


def name_winner(claims: Iterable[NameClaim]) -> int | None:
    """The entity id of the note that wins the name these claims are to; None if none."""
    best = min(claims, key=NameClaim.order, default=None)
    return None if best is None else best.entity_id


def ranked_paths(claims: Iterable[NameClaim]) -> tuple[str, ...]:
    """The distinct paths claiming the name, the winner's first; more than one is an
    ambiguous name."""
    return tuple(dict.fromkeys(c.path for c in sorted(claims, key=NameClaim.order)))
