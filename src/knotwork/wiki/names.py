"""Safe file names for wiki pages, and the check that keeps every write in the wiki folder.

A title becomes a slug (``System Crash Analysis`` → ``system-crash-analysis``): lower case,
letters and digits of any script kept (NFC), every other run of characters one hyphen,
cut to ``MAX_SLUG`` bytes of UTF-8 at a character boundary. What can never be a page —
an empty title, a NUL, a title that is only punctuation — is refused, not guessed at.
Windows' reserved device names (``CON``, ``nul``, ``com1``…) get a trailing ``-page``, so
a vault stays usable on every system Obsidian runs on. A title that reads as a path out
of the folder (``../x``, ``/etc/passwd``, ``C:\\x``) is refused rather than made safe: an
agent that sends one is mistaken or hostile, and should hear so. So is a title over
``MAX_TITLE`` characters; a shorter long one is cut to ``MAX_SLUG`` bytes of file name.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path, PurePosixPath

from ..errors import UnsafePath

__all__ = ["MAX_SLUG", "MAX_TITLE", "check_category", "check_title", "inside", "slug"]

MAX_SLUG = 120  # bytes: far under every file system's 255, with room for "-99.md"
MAX_TITLE = 500  # characters
# ".." as a path segment, a root or home, a drive: "Q: why" stays a title
_ESCAPE = re.compile(r"(^|[/\\])\.\.([/\\]|$)|^[/\\]|^~[/\\]|^[A-Za-z]:[/\\]")
_RUN = re.compile(r"[\W_]+", re.UNICODE)
_RESERVED = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)),
                       *(f"lpt{i}" for i in range(10))})
_CATEGORY = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")


def slug(title: str) -> str:
    """The file stem a page titled ``title`` is written under.

    >>> slug("System Crash Analysis: Summary")
    'system-crash-analysis-summary'
    >>> slug("Café / Ünïcode")
    'café-ünïcode'
    """
    check_title(title)
    text = unicodedata.normalize("NFC", title).casefold()
    out = _RUN.sub("-", text).strip("-")
    if not out:
        raise UnsafePath(f"title {title!r} holds no letter or digit to name a file by",
                         path=title)
    raw = out.encode("utf-8")
    if len(raw) > MAX_SLUG:
        out = raw[:MAX_SLUG].decode("utf-8", "ignore").rstrip("-")
    if out in _RESERVED or out.split(".")[0] in _RESERVED:
        out += "-page"
    return out


def check_title(title: str) -> str:
    """``title`` if it can name a page: no NUL, no path out of the folder, not too long."""
    if "\x00" in title:
        raise UnsafePath("a page title may not hold a NUL character", path=repr(title))
    if _ESCAPE.search(title.strip()):
        raise UnsafePath(f"title {title!r} reads as a path out of the wiki folder: give a"
                         " title, not a path", path=title)
    if len(title) > MAX_TITLE:
        raise UnsafePath(f"title is {len(title)} characters long, over the {MAX_TITLE}"
                         " limit", path=title[:80] + "…")
    return title


def check_category(category: str, allowed: tuple[str, ...]) -> str:
    """``category`` if it is one of ``allowed`` (the ``wiki_categories`` setting)."""
    if "\x00" in category or not _CATEGORY.match(category) or category not in allowed:
        raise UnsafePath(f"unknown wiki category {category!r}: use one of"
                         f" {', '.join(allowed)}", path=category)
    return category


def inside(root: Path, rel: str) -> Path:
    """The absolute path of ``rel`` under ``root``, refusing any way out of it.

    Refused: NUL, an absolute path (``/etc/x``, ``C:\\x``), ``..`` anywhere, a backslash,
    and a path that resolves outside ``root`` through a symlink.
    """
    if "\x00" in rel:
        raise UnsafePath("a wiki path may not hold a NUL character", path=repr(rel))
    if "\\" in rel or re.match(r"^[A-Za-z]:", rel):
        raise UnsafePath(f"{rel!r} is not a path inside the wiki (use / and no drive)",
                         path=rel)
    pure = PurePosixPath(rel)
    if pure.is_absolute() or ".." in pure.parts or not pure.parts:
        raise UnsafePath(f"{rel!r} leaves the wiki folder", path=rel)
    full = (root / pure).resolve()
    base = root.resolve()
    if not full.is_relative_to(base):
        raise UnsafePath(f"{rel!r} resolves outside the wiki folder ({full})", path=rel)
    return full
