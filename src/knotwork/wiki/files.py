"""The wiki's files: atomic page writes, the append-only ``log.md``, the ``index.md``.

Both ``index.md`` and ``log.md`` are written by knotwork only. Several processes may
write one wiki (an MCP server, a CLI, a REST server): every change holds an exclusive
lock (``fcntl.flock`` on ``.knotwork/wiki.lock`` in the vault) while it rewrites the
index, and a log line is one ``write`` to a file opened ``O_APPEND`` under a lock on the
log itself, so two writers interleave whole lines and lose none.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

try:  # POSIX; elsewhere O_APPEND alone keeps each line whole
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

from .records import Keyed

__all__ = ["IndexEntry", "LogEntry", "append_log", "index_entries", "locked", "read_log",
           "render_index", "write_atomic"]

LOG_HEADER = ("# Wiki log\n\nWritten by knotwork: one line per change to a wiki page"
              " (time · actor · action · page · title), oldest first.\n\n")
INDEX_HEADER = ("# Wiki index\n\nWritten by knotwork: one line per page, by category."
                " Edit the pages, not this file.\n")
_SEP = " · "
_LOG_LINE = re.compile(r"^- (?P<at>\S+) · (?P<actor>.*?) · (?P<action>[a-z-]+) · "
                       r"`(?P<path>[^`]+)`(?: · (?P<title>.*))?$")
_INDEX_LINE = re.compile(r"^- \[\[(?P<link>[^\]|]+)\|(?P<title>[^\]]*)\]\](?: — (?P<summary>.*))?$")


@contextmanager
def locked(lock_file: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_file`` (created if missing) for the block."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def write_atomic(path: Path, text: str) -> os.stat_result:
    """Write ``text`` to ``path`` through a temp file in the same folder and a rename, so
    a reader (Obsidian, a watcher) sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".kw-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path.stat()


@dataclass(frozen=True, slots=True)
class LogEntry(Keyed):
    """One line of ``log.md``."""

    at: str
    actor: str
    action: str  # create | update | fix-index
    path: str
    title: str
    line: int

    def as_dict(self) -> dict[str, object]:
        return {"at": self.at, "actor": self.actor, "action": self.action,
                "path": self.path, "title": self.title, "line": self.line}


def _clean(text: str) -> str:
    """One line of text that cannot break the log's or the index's line format."""
    return " ".join(text.replace(_SEP.strip(), "-").replace("`", "'").split())


def append_log(log: Path, *, at: str, actor: str, action: str, path: str, title: str) -> None:
    """Append one line to ``log`` (creating it with its header): one ``O_APPEND`` write
    under an exclusive lock on the log, so concurrent writers lose no line."""
    line = f"- {at}{_SEP}{_clean(actor)}{_SEP}{action}{_SEP}`{_clean(path)}`{_SEP}{_clean(title)}\n"
    log.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        data = line.encode("utf-8")
        if os.fstat(fd).st_size == 0:
            data = LOG_HEADER.encode("utf-8") + data
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def read_log(log: Path, last_n: int | None = None) -> list[LogEntry]:
    """The log's entries, oldest first (the last ``last_n`` of them)."""
    try:
        lines = log.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    out = []
    for n, text in enumerate(lines, 1):
        m = _LOG_LINE.match(text)
        if m:
            out.append(LogEntry(m["at"], m["actor"], m["action"], m["path"],
                                m["title"] or "", n))
    return out if last_n is None else out[-last_n:] if last_n > 0 else []


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One line of ``index.md``: a page's link, title and summary, and its line."""

    category: str
    link: str  # the page's vault path without ``.md``
    title: str
    summary: str
    line: int = 0


def index_entries(text: str) -> list[IndexEntry]:
    """The page lines of an ``index.md``, under the category headings they sit in."""
    out, category = [], ""
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("## "):
            category = line[3:].strip().casefold()
            continue
        m = _INDEX_LINE.match(line)
        if m:
            out.append(IndexEntry(category, m["link"], m["title"], m["summary"] or "", n))
    return out


def render_index(entries: Mapping[str, Sequence[IndexEntry]], categories: Sequence[str]
                 ) -> str:
    """``index.md`` for ``entries`` by category: configured categories first, in order,
    pages by title within each."""
    parts = [INDEX_HEADER]
    order = [*categories, *sorted(set(entries) - set(categories))]
    for cat in order:
        pages = sorted(entries.get(cat, ()), key=lambda e: (e.title.casefold(), e.link))
        if not pages:
            continue
        parts.append(f"\n## {cat.capitalize()}\n\n")
        for e in pages:
            title = _clean(e.title).replace("|", "/").replace("[", "(").replace("]", ")")
            summary = _clean(e.summary)
            parts.append(f"- [[{e.link}|{title}]]" + (f" — {summary}" if summary else "")
                         + "\n")
    return "".join(parts)
