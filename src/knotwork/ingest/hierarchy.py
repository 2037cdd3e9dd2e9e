"""The structure a note's place states: its folder, or its name in its vault's dialect.

Dendron's ``dendron.topic.schema`` is part of ``dendron.topic``, Logseq's page ``a/b``
part of ``a``: the note gets a ``part_of`` fact to its parent's name (resolved when read,
as every link is: a Dendron stub, a parent with no file, stays a name), so link expansion
reaches the parent and, through it, the siblings; the parent lists its children among
the facts that point at it. A Logseq page named by its file (``a___b.md``) is also named
``a/b``, the name its links use.

In every other vault the folders are the hierarchy. A note in ``docs/services/`` is
``part_of`` the folder's *name* (``domain.names.folder_key``: ``docs/services/``), and
the folder's page declares that name, whichever convention it follows:
``docs/services/index.md`` (or Hugo's ``_index.md``), ``docs/services.md`` beside the
folder, the folder note ``docs/services/services.md`` (Obsidian's folder-notes plugin) or
``docs/services/README.md``, winning in that order (``domain.names.NAME_RANK``). A folder
page is not part of its own folder but of the folder above (a KEP's
``keps/sig-apps/2232-suspend-jobs/README.md`` is part of ``keps/sig-apps``' page, if
there is one). Why a name and not a path: the name is resolved when read, so writing or
deleting a folder's page re-points its notes at once and none of them is read again.
The vault's root is no folder with a page: its README is about the whole repository, and
every top-level note would hang off it.

Why not in Dendron and Logseq vaults: there a folder is the tool's storage (a Dendron
vault, Logseq's ``pages/``), and a Logseq page named ``pages`` would be its every page's
parent; their hierarchy is in the names.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import replace

from ..domain.names import folder_key
from ..types import (
    SELF,
    FactDraft,
    LiteralValue,
    NameDecl,
    NameKind,
    NameRef,
    ParsedDocument,
    Span,
    name_key,
)
from .dialects import hierarchy_parent, page_name
from .frontmatter import Entry
from .lexicon import normalize_key
from .links import name_ref

__all__ = ["folder_names", "folder_parent", "hierarchy_facts", "hierarchy_names",
           "with_folders", "with_tag_notes"]

_EXTRACTOR = "hierarchy"
_FRONT_LINES = 60  # the lines of a frontmatter looked through for its title
# the dialects whose hierarchy is in their notes' names, not in the folders
_NAMED = frozenset({"dendron", "logseq"})
# the file stems that make a note its folder's page, and how strongly they claim it
_PAGE_STEMS: dict[str, NameKind] = {"index": "folder_index", "_index": "folder_index",
                                    "readme": "folder_readme"}


def _bare(path: str) -> str:
    return path[:-3] if path.lower().endswith(".md") else path


def _folder_ref(folder: str) -> NameRef:
    return NameRef(folder_key(name_key(folder)), folder + "/")


def _page_kind(bare: str) -> NameKind | None:
    """How the note at ``bare`` (its path without ``.md``) claims its own folder, if it
    is that folder's page; None for the vault's root or any other note."""
    folder, stem = posixpath.split(bare)
    if not folder:
        return None
    kind = _PAGE_STEMS.get(stem.casefold())
    if kind is None and stem.casefold() == posixpath.basename(folder).casefold():
        kind = "folder_note"
    return kind


def folder_parent(path: str) -> NameRef | None:
    """The folder name the note at ``path`` is part of: its own folder's, or for the
    folder's page the folder above's; None at the vault's root.

    >>> folder_parent("docs/services/api.md"), folder_parent("docs/services/index.md")
    (NameRef(key='docs/services/', text='docs/services/'), NameRef(key='docs/', text='docs/'))
    >>> folder_parent("docs/index.md") is None, folder_parent("top.md") is None
    (True, True)
    """
    bare = _bare(path)
    folder = posixpath.dirname(bare)
    if _page_kind(bare) is not None:
        folder = posixpath.dirname(folder)
    return _folder_ref(folder) if folder else None


def folder_names(path: str) -> tuple[NameDecl, ...]:
    """The folder names the note at ``path`` declares as a page: the folder beside it of
    its own name (``a/x.md`` for ``a/x/``, whether or not that folder exists: nothing
    refers to the name of a folder with no notes), and its own folder if its stem makes
    it that folder's page."""
    bare = _bare(path)
    beside = _folder_ref(bare)
    out = [NameDecl(beside.key, beside.text, "folder_file")]
    kind = _page_kind(bare)
    if kind is not None:
        own = _folder_ref(posixpath.dirname(bare))
        out.append(NameDecl(own.key, own.text, kind))
    return tuple(out)


def hierarchy_facts(path: str, dialect: str, entries: Sequence[Entry],
                    first_line: str) -> tuple[FactDraft, ...]:
    """The ``part_of`` fact of the note at ``path`` in ``dialect``'s hierarchy, if any.

    It cites the note's ``title`` key when the frontmatter has one (Dendron writes it),
    else the note's first line: a name is stated by the file, not by a line of it.
    """
    parent = hierarchy_parent(path, dialect)
    if parent is None:
        return ()
    span, text = _citation(entries, first_line)
    return (FactDraft(SELF, "part_of", name_ref(parent), span, text[:300], _EXTRACTOR),)


def hierarchy_names(path: str, dialect: str) -> tuple[NameDecl, ...]:
    """The names a note has in ``dialect`` beyond its path, stem and title."""
    page = page_name(path, dialect)
    return (NameDecl(name_key(page), page, "alias"),) if page else ()


def _citation(entries: Sequence[Entry], first_line: str) -> tuple[Span, str]:
    for entry in entries:
        if normalize_key(entry.key) == "title":
            return entry.span, entry.line_text
    return Span(1, 1), first_line.strip()


def _title_line(text: str) -> tuple[Span, str]:
    """The frontmatter's ``title`` line if it has one, else the first line: found by the
    keys' spelling alone (the parser read the YAML already; a key's value is not needed)."""
    lines = text.split("\n", _FRONT_LINES)[:_FRONT_LINES]
    if lines and lines[0].strip() == "---":
        for n, line in enumerate(lines[1:], 2):
            if line.strip() in ("---", "..."):
                break
            key, colon, _ = line.partition(":")
            if colon and not line[:1].isspace() and normalize_key(key.strip()) == "title":
                return Span(n, n), line.strip()
    return Span(1, 1), lines[0].strip() if lines else ""


def with_folders(doc: ParsedDocument, dialect: str) -> ParsedDocument:
    """``doc`` with the structure its folder states, in a vault whose hierarchy is its
    folders (not Dendron's or Logseq's): the ``part_of`` fact to its folder's name
    (``folder_parent``) and the folder names it declares as a page (``folder_names``).

    The fact cites the note's ``title`` key if its frontmatter has one, else its first
    line: a place is stated by the file, not by a line of it.
    """
    if dialect in _NAMED:
        return doc
    facts, names = doc.facts, doc.names
    parent = folder_parent(doc.path)
    if parent is not None:
        span, text = _title_line(doc.text)
        fact = FactDraft(SELF, "part_of", parent, span, text[:300], _EXTRACTOR)
        if fact not in facts:
            facts = (*facts, fact)
    known = {n.key for n in names}
    names = (*names, *(n for n in folder_names(doc.path) if n.key not in known))
    return replace(doc, facts=facts, names=names)


def with_tag_notes(doc: ParsedDocument, dialect: str) -> ParsedDocument:
    """``doc`` with, in a Dendron vault, a ``tagged`` fact beside each of its tags.

    Dendron opens the note ``tags.stage.seed`` for the tag ``stage.seed`` (frontmatter
    ``tags:`` or ``#stage.seed`` in the text): a tag there is a link to its tag note, so
    link expansion reaches the note and, through it, everything else tagged so. The
    ``tag`` literal stays, as in every vault; the relation cites the same line.
    """
    if dialect != "dendron":
        return doc
    tagged = [replace(f, predicate="tagged", object=name_ref(f"tags.{f.object.value}"))
              for f in doc.facts if f.predicate == "tag" and isinstance(f.object, LiteralValue)
              and f.object.value.strip(".")]
    if not tagged:
        return doc
    known = set(doc.facts)
    return replace(doc, facts=(*doc.facts, *(f for f in dict.fromkeys(tagged)
                                             if f not in known)))
