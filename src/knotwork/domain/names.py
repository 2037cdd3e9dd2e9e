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

A folder's page claims the folder's name (``folder_key``: the folder's path and a slash,
a key no written link spells, since ``name_key`` strips slashes) by one of four kinds,
ranked among themselves: ``folder/index.md`` (``folder_index``, also Hugo's
``_index.md``) before ``folder.md`` beside the folder (``folder_file``) before the
folder note ``folder/folder.md`` (``folder_note``) before ``folder/README.md``
(``folder_readme``). Why this order: a docs site's ``index.md`` is the page a folder is
read through, a note named after the folder was written for it on purpose, and a
README is often the repository's page for people browsing it, kept beside the site's.

The SQLite store writes the same rule as SQL (``store/sqlite/schema.NAME_WINNER``), tested
equal to this one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["FOLDER_KINDS", "NAME_RANK", "NameClaim", "folder_key", "is_folder_key",
           "name_winner", "ranked_paths"]

# how strongly a way of declaring a name claims it (lower wins); the folder kinds only
# ever compete with each other (their keys end in a slash, no other name's does)
NAME_RANK: Mapping[str, int] = {"path": 0, "stem": 1, "title": 1, "alias": 2,
                                "folder_index": 3, "folder_file": 4, "folder_note": 5,
                                "folder_readme": 6}
# the kinds by which a note is a folder's page: not names prose or a search finds it by
FOLDER_KINDS = frozenset({"folder_index", "folder_file", "folder_note", "folder_readme"})

Kind = Literal["path", "stem", "title", "alias", "folder_index", "folder_file",
               "folder_note", "folder_readme"]


@dataclass(frozen=True, slots=True)
class NameClaim:
    """A note's claim to one name: the note's entity id, how it declares the name
    (``path``, ``stem``, ``title``, ``alias`` or a folder kind) and the note's path."""

    entity_id: int
    kind: Kind
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


def folder_key(folder_name_key: str) -> str:
    """The name key of a folder, from its path's ``name_key``: the key and a slash.

    >>> folder_key("docs/services")
    'docs/services/'
    """
    return folder_name_key + "/"


def is_folder_key(key: str | None) -> bool:
    """Whether ``key`` names a folder (``folder_key``) rather than a note."""
    return key is not None and key.endswith("/")
