"""Find the source files of a vault: recursive, glob patterns, ignore rules, no escapes.

A file is named by its vault-relative POSIX path. Symlinks are followed only when they
stay inside the vault; one that points outside is reported, never read.
"""

from __future__ import annotations

import os
import re
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
    """List the vault's source files (sorted by path) and the ones refused, with reasons."""
    base = Path(root).resolve()
    extra = read_ignore_file(base)
    files: list[SourceFile] = []
    issues: list[Issue] = []
    for dirpath, dirnames, filenames in os.walk(base):
        rel_dir = os.path.relpath(dirpath, base).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        dirnames[:] = sorted(d for d in dirnames if d not in ignore
                             and not matches(rel_dir + d, extra))
        for name in filenames:
            rel = rel_dir + name
            if not matches(rel, patterns) or (extra and matches(rel, extra)):
                continue
            full = Path(dirpath) / name
            try:
                if full.is_symlink() and not full.resolve().is_relative_to(base):
                    issues.append(Issue(rel, "path escapes the vault (symlink to "
                                             f"{os.readlink(full)})"))
                    continue
                st = full.stat()
            except OSError as exc:
                issues.append(Issue(rel, f"cannot read: {exc.strerror or exc}"))
                continue
            files.append(SourceFile(rel, str(full), st.st_size, st.st_mtime_ns))
    files.sort(key=lambda f: f.path)
    return files, issues


def is_ignored(path: str, ignore: tuple[str, ...] = DEFAULT_IGNORES) -> bool:
    """True when any folder on ``path`` is one the scan skips (``.git/``, ``.obsidian/``…)."""
    return any(part in ignore for part in path.split("/")[:-1])


def vault_path(root: str | os.PathLike[str], path: str) -> Path:
    """Resolve a vault-relative path, refusing one that escapes the vault."""
    base = Path(root).resolve()
    full = (base / path).resolve()
    if not full.is_relative_to(base):
        raise ValueError(f"path escapes the vault: {path}")
    return full
