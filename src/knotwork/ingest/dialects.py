"""Note dialects: how the tool that wrote a vault spells its links and names its notes.

Obsidian, Foam, Dendron and Logseq all write ``[[wikilinks]]``, but not the same way:

- Dendron puts the label first: ``[[label|dendron.topic.lookup]]`` (Obsidian and Foam:
  ``[[target|label]]``); it names a note in another vault ``dendron://vault/note``, refers
  to ranges of a note (``![[note#start:#end]]``, ``![[note#^block,1]]``, ``![[note.*]]``)
  and makes its dot names a hierarchy (``dendron.topic.schema`` is a child of
  ``dendron.topic``).
- Logseq stores the page ``a/b`` in ``pages/a___b.md`` (older graphs: ``a%2Fb.md``) and
  makes ``a/b`` a child of ``a``.
- Obsidian, Foam and plain Markdown read the same way here (``"markdown"``).

A vault's dialect is found by the files its tool leaves at its root (``detect``), unless
the ``dialect`` setting names one. A link whose text decides (``dendron://``) is read in
its own dialect wherever it stands. Parsing runs in worker processes with no vault at
hand, so the dialect in force is a context variable set around a sync (``reading``), and
it is part of the extraction key: a vault read under another dialect is read again.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from urllib.parse import unquote

from ..errors import ConfigError

__all__ = ["AUTO", "DIALECTS", "current", "detect", "hierarchy_parent", "key_suffix",
           "page_name", "reading", "resolve", "split_wikilink"]

AUTO = "auto"
# the dialects a vault can be read in; "auto" picks one by the vault's marker files
DIALECTS = ("markdown", "obsidian", "foam", "dendron", "logseq")
# the dialects that read the same text otherwise than plain Markdown does
_DISTINCT = frozenset({"dendron", "logseq"})

_CURRENT: ContextVar[str] = ContextVar("knotwork_dialect", default="markdown")

# The files each tool leaves at a vault's root, in the order they are looked for: a
# Dendron workspace opened in Obsidian is still Dendron's (its links are Dendron's).
_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("dendron", ("dendron.yml", "dendron.code-workspace")),
    ("logseq", ("logseq/config.edn",)),
    ("foam", (".foam", ".vscode/foam.json")),
    ("obsidian", (".obsidian",)),
)

_DENDRON_URL = re.compile(r"dendron://[^/\s|#]*/", re.IGNORECASE)
# a Dendron range or position after a note's name or anchor: ",1", ":#*", ":#^end"
_RANGE = re.compile(r"(?:,\d+|:#\S*)\s*\Z")


def detect(root: Path) -> str:
    """The dialect of the vault at ``root``: the first tool whose marker files it holds,
    else ``"markdown"``."""
    for dialect, markers in _MARKERS:
        if any((root / marker).exists() for marker in markers):
            return dialect
    return "markdown"


def resolve(setting: str, root: Path | None) -> str:
    """The dialect a vault is read in: ``setting``, or for ``"auto"`` the one ``detect``
    finds at ``root`` (``"markdown"`` with no root). An unknown name raises ConfigError."""
    name = (setting or AUTO).strip().lower()
    if name == AUTO:
        return detect(root) if root is not None else "markdown"
    if name not in DIALECTS:
        valid = ", ".join((AUTO, *DIALECTS))
        raise ConfigError(f"unknown dialect {setting!r}; valid: {valid}", key="dialect",
                          hint=f"one of {valid}")
    return name


def current() -> str:
    """The dialect notes are read in now (``reading``), ``"markdown"`` by default."""
    return _CURRENT.get()


@contextmanager
def reading(dialect: str) -> Iterator[None]:
    """Read notes in ``dialect`` inside the block (in this thread or task)."""
    token = _CURRENT.set(dialect if dialect in DIALECTS else "markdown")
    try:
        yield
    finally:
        _CURRENT.reset(token)


def key_suffix(dialect: str | None = None) -> str:
    """What the dialect adds to an extraction key: nothing for those read as Markdown is,
    so a store made before dialects were told apart is not read again."""
    name = current() if dialect is None else dialect
    return f"/{name}" if name in _DISTINCT else ""


def split_wikilink(inner: str, dialect: str) -> str:
    """The note part of a wikilink's inside, read in ``dialect``: the target side of an
    alias bar, without anchor, block, range or a ``dendron://vault/`` prefix ("" for a
    same-note ``[[#Heading]]``).

    Which side of ``|`` is the target: the side holding ``dendron://`` wherever it
    stands; else the second in a Dendron vault and the first elsewhere. In a table the
    bar is escaped (``[[Target\\|alias]]``): the backslash belongs to the escape.
    """
    bar = inner.find("|")
    if bar < 0:
        target = inner
    else:
        first, second = inner[:bar].removesuffix("\\"), inner[bar + 1:]
        if "dendron://" in second.lower():
            target = second
        elif "dendron://" in first.lower():
            target = first
        else:
            target = second if dialect == "dendron" else first
    dendron = False
    if "dendron://" in target.lower():
        target, dendron = _DENDRON_URL.sub("", target.strip(), count=1), True
    for stop in ("#", "^"):
        cut = target.find(stop)
        if cut >= 0:
            target = target[:cut]
    if dendron or dialect == "dendron":
        target = _RANGE.sub("", target)
        if target.endswith(".*"):  # "![[parent.*]]": every child of parent, by its name
            target = target[:-2]
    return target.strip()


def page_name(path: str, dialect: str) -> str | None:
    """The name a Logseq page is linked by when its file name spells a namespace
    (``pages/a___b.md`` or ``pages/a%2Fb.md`` is the page ``a/b``); None otherwise."""
    if dialect != "logseq":
        return None
    stem = posixpath.basename(path[:-3] if path.lower().endswith(".md") else path)
    if "___" in stem:
        return stem.replace("___", "/")
    if "%" in stem:
        decoded = unquote(stem)
        return decoded if decoded != stem else None
    return None


def hierarchy_parent(path: str, dialect: str) -> str | None:
    """The name of the note ``path`` is a child of in its dialect's hierarchy, or None:
    Dendron's ``a.b.c`` is a child of ``a.b`` (``root`` and a top-level name have no
    parent), Logseq's page ``a/b`` of ``a``."""
    bare = path[:-3] if path.lower().endswith(".md") else path
    stem = posixpath.basename(bare)
    if dialect == "dendron":
        head, dot, _ = stem.rpartition(".")
        return head if dot and head else None
    if dialect == "logseq":
        name = page_name(path, dialect)
        if name and "/" in name:
            return name.rpartition("/")[0] or None
    return None
