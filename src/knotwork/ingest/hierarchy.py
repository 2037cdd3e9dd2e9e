"""The structure a note's name states in its vault's dialect (``dialects``).

Dendron's ``dendron.topic.schema`` is part of ``dendron.topic``, Logseq's page ``a/b``
part of ``a``: the note gets a ``part_of`` fact to its parent's name (resolved when read,
as every link is: a Dendron stub, a parent with no file, stays a name), so link expansion
reaches the parent and, through it, the siblings; the parent lists its children among
the facts that point at it. A Logseq page named by its file (``a___b.md``) is also named
``a/b``, the name its links use.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..types import SELF, FactDraft, NameDecl, Span, name_key
from .dialects import hierarchy_parent, page_name
from .frontmatter import Entry
from .lexicon import normalize_key
from .links import name_ref

__all__ = ["hierarchy_facts", "hierarchy_names"]

_EXTRACTOR = "hierarchy"


def hierarchy_facts(path: str, dialect: str, entries: Sequence[Entry],
                    first_line: str) -> tuple[FactDraft, ...]:
    """The ``part_of`` fact of the note at ``path`` in ``dialect``'s hierarchy, if any.

    It cites the note's ``title`` key when the frontmatter has one (Dendron writes it),
    else the note's first line: a name is stated by the file, not by a line of it.
    """
    parent = hierarchy_parent(path, dialect)
    if parent is None:
        return ()
    span, text = Span(1, 1), first_line.strip()
    for entry in entries:
        if normalize_key(entry.key) == "title":
            span, text = entry.span, entry.line_text
            break
    return (FactDraft(SELF, "part_of", name_ref(parent), span, text[:300], _EXTRACTOR),)


def hierarchy_names(path: str, dialect: str) -> tuple[NameDecl, ...]:
    """The names a note has in ``dialect`` beyond its path, stem and title."""
    page = page_name(path, dialect)
    return (NameDecl(name_key(page), page, "alias"),) if page else ()
