"""Find the source files of a vault: recursive, glob patterns, ignore rules, no escapes.

A file is named by its vault-relative POSIX path. Symlinks are followed only when they
stay inside the vault; one that points outside is reported, never read, and one that
points to a file the vault already lists as a note is that note (left out, not read twice).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..types import Issue

DEFAULT_PATTERNS = ("**/*.md",)
DEFAULT_IGNORES = (".git", ".obsidian", ".knotwork", ".trash", "node_modules", ".venv",
                   "__pycache__")
IGNORE_FILE = ".knotworkignore"


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str  # vault-relative POSIX path
    abspath: str
    size: int
    mtime_ns: int


def unreadable(path: str, exc: OSError) -> Issue:
    """The issue of a file the system would not let us read (the one wording for it)."""
    return Issue(path, f"cannot read: {exc.strerror or exc}")


def content_hash(data: bytes) -> str:
    """A source file's identity: what a document's ``content_hash`` is, and what a sync
    compares to tell a changed file (or a renamed one) from an unchanged one."""
    return hashlib.sha256(data).hexdigest()


@lru_cache(maxsize=128)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob where ``**/`` spans folders, ``*`` and ``?`` stay within one."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z", re.IGNORECASE)


def matches(path: str, patterns: tuple[str, ...]) -> bool:
    return any(glob_regex(p).match(path) for p in patterns)


def read_ignore_file(root: Path) -> tuple[str, ...]:
    """Patterns from ``.knotworkignore``: one glob per line, ``#`` comments."""
    f = root / IGNORE_FILE
    if not f.is_file():
        return ()
    lines = f.read_text(encoding="utf-8", errors="replace").splitlines()
    pats = []
    for line in lines:
        line = line.strip()
        if line and not line.startswith("#"):
            pats.append(line.rstrip("/") + ("/**" if line.endswith("/") else ""))
    return tuple(pats)


def scan(root: str | os.PathLike[str], *, patterns: tuple[str, ...] = DEFAULT_PATTERNS,
         ignore: tuple[str, ...] = DEFAULT_IGNORES) -> tuple[list[SourceFile], list[Issue]]:
    """List the vault's source files (sorted by path) and the ones refused, with reasons.

    One ``stat`` a plain file, from ``os.scandir``'s entries (their type comes with the
    listing); links take the careful path of ``_admit``. Folder links are not followed,
    and unreadable folders are skipped, as ``os.walk`` does.
    """
    base = Path(root).resolve()
    extra = read_ignore_file(base)
    files: list[SourceFile] = []
    issues: list[Issue] = []
    folders = [(str(base), "")]
    while folders:
        folder, rel_dir = folders.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        below = []
        names = {e.name for e in entries}

        def here(note: str, names: set[str] = names) -> bool:
            return note.rpartition("/")[2] in names

        for entry in entries:
            rel = rel_dir + entry.name
            if entry.is_symlink():
                try:
                    if entry.is_dir():
                        continue  # a folder link: never followed
                except OSError:
                    pass  # a link loop: ``_admit`` reports it
                got = _admit(base, rel, Path(entry.path), patterns, extra, ignore)
            elif entry.is_dir(follow_symlinks=False):
                if entry.name not in ignore and not matches(rel, extra):
                    below.append((entry.path, rel + "/"))
                continue
            elif not (matches(rel, patterns) or _sidecar(rel, patterns, here)) or (
                    extra and matches(rel, extra)):
                continue
            else:
                got = _regular(rel, entry)
            if isinstance(got, Issue):
                issues.append(got)
            elif got is not None:
                files.append(got)
        folders.extend(reversed(below))  # depth first, in name order
    files.sort(key=lambda f: f.path)
    return files, issues


SIDECAR_SUFFIXES = (".yaml", ".yml")


def sidecar_note(rel: str) -> str | None:
    """The note a YAML sidecar at ``rel`` describes: ``a/kep.yaml`` → ``a/README.md``,
    ``a/x.yaml`` → ``a/x.md``; None for any other path."""
    folder, _, name = rel.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    if not dot or f".{ext.lower()}" not in SIDECAR_SUFFIXES or not stem:
        return None
    note = "README.md" if stem.lower() == "kep" else f"{stem}.md"
    return f"{folder}/{note}" if folder else note


def _sidecar(rel: str, patterns: tuple[str, ...], exists: Callable[[str], bool]) -> bool:
    """Whether ``rel`` is a sidecar of a note the globs take that ``exists``: read with
    it, as its metadata (``ingest.parsers.sidecar``), though no glob names it."""
    note = sidecar_note(rel)
    return note is not None and matches(note, patterns) and exists(note)


def wanted(root: Path, rel: str, patterns: tuple[str, ...]) -> bool:
    """Whether a file at ``rel`` is one a sync reads: the globs take it, or it is the
    sidecar of a note they take (what a watcher's events are filtered by)."""
    return matches(rel, patterns) or _sidecar(
        rel, patterns, lambda note: root.joinpath(*note.split("/")).is_file())


def _regular(rel: str, entry: os.DirEntry[str]) -> SourceFile | Issue | None:
    """A listed entry that is no link and no folder: a file, or why it is refused."""
    try:
        st = entry.stat(follow_symlinks=False)
    except FileNotFoundError:
        return None  # gone since the listing
    except OSError as exc:
        return unreadable(rel, exc)
    if not stat.S_ISREG(st.st_mode):
        return Issue(rel, "not a regular file")  # a FIFO or device would block the read
    return SourceFile(rel, entry.path, st.st_size, st.st_mtime_ns)


class VaultRules:
    """What ``scan`` admits, for one path at a time: the vault's root resolved and its
    ``.knotworkignore`` read once, then each path costs its own few ``stat`` calls.

    For the work whose cost must be the paths named, not the vault: a watcher's batch, and
    a sync's look, under the write lock, at the files it planned to delete.
    """

    def __init__(self, root: str | os.PathLike[str], *,
                 patterns: tuple[str, ...] = DEFAULT_PATTERNS,
                 ignore: tuple[str, ...] = DEFAULT_IGNORES) -> None:
        self.base = Path(root).resolve()
        self.patterns = patterns
        self.ignore = ignore
        self.extra = read_ignore_file(self.base)
        self._real: dict[Path, bool] = {}  # folder -> holds no folder link (one batch's view)

    def file(self, path: str) -> SourceFile | Issue | None:
        """One vault-relative ``path`` as ``scan`` would list it now: the file, the reason
        it is refused, or None when ``scan`` would not list it (absent, a folder, inside a
        folder link, or left out by the patterns or the ignore rules)."""
        parts = path.split("/")
        if path.startswith("/") or ".." in parts:
            return Issue(path, f"path escapes the vault: {path}")
        extra = self.extra
        if _under_ignored(parts, self.ignore, extra):
            return None
        full = self.base.joinpath(*parts)
        real = self._real.get(full.parent)
        if real is None:
            real = self._real[full.parent] = full.parent.resolve() == full.parent
        if not real:
            return None  # below a folder link, which the walk does not follow
        return _admit(self.base, path, full, self.patterns, extra, self.ignore)


def source_file(root: str | os.PathLike[str], path: str, *,
                patterns: tuple[str, ...] = DEFAULT_PATTERNS,
                ignore: tuple[str, ...] = DEFAULT_IGNORES) -> SourceFile | Issue | None:
    """``VaultRules(root, …).file(path)``: one path, the rules read for it alone."""
    return VaultRules(root, patterns=patterns, ignore=ignore).file(path)


def _under_ignored(parts: list[str], ignore: tuple[str, ...], extra: tuple[str, ...]
                   ) -> bool:
    """Whether a folder on the way to the path ``parts`` is one the walk never enters:
    named in ``ignore``, or matched by a ``.knotworkignore`` glob (``extra``)."""
    return any(p in ignore for p in parts[:-1]) or bool(extra) and any(
        matches("/".join(parts[:i]), extra) for i in range(1, len(parts)))


def _admit(base: Path, rel: str, full: Path, patterns: tuple[str, ...],
           extra: tuple[str, ...], ignore: tuple[str, ...] = DEFAULT_IGNORES
           ) -> SourceFile | Issue | None:
    """The file at ``full`` (``rel`` in the vault, its folders already admitted).

    A link is admitted only to a file the walk itself would list: inside the vault and
    not in an ignored folder (``.git``, a ``.knotworkignore`` entry), so a link cannot
    bring in what the ignore rules keep out. A link loop is an issue, not a crash.
    """
    if not (matches(rel, patterns) or _sidecar(
            rel, patterns, lambda note: base.joinpath(*note.split("/")).is_file())) or (
            extra and matches(rel, extra)):
        return None
    to_note = False
    try:
        if full.is_symlink():
            target = full.resolve()
            if not target.is_relative_to(base):
                return Issue(rel, f"path escapes the vault (symlink to {os.readlink(full)})")
            inside = target.relative_to(base).as_posix()
            if _under_ignored(inside.split("/"), ignore, extra) or (
                    extra and matches(inside, extra)):
                return Issue(rel, f"symlink to an ignored path: {inside}")
            # a link to a note of the vault is that note, not a second one with its
            # title (which won links by title, being the shorter path)
            to_note = matches(inside, patterns)
        st = full.stat()
    except RuntimeError:  # Path.resolve on a loop (Python 3.11)
        return Issue(rel, "cannot read: symlink loop")
    except FileNotFoundError:
        return Issue(rel, "cannot read: broken symlink") if full.is_symlink() else None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return Issue(rel, "cannot read: symlink loop")
        return unreadable(rel, exc)
    if stat.S_ISDIR(st.st_mode):
        return None
    if not stat.S_ISREG(st.st_mode):
        return Issue(rel, "not a regular file")  # a FIFO or device would block the read
    if to_note:
        return None
    return SourceFile(rel, str(full), st.st_size, st.st_mtime_ns)
