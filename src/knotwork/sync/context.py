"""``add-context``: project documents into typed records, in scopes by category.

Every file under a folder (the ``patterns`` globs, the folder's ignore rules) is read by
the parser the registry picks (``type`` when given) and lands in scope
``{namespace}__{category}``: ``project_decisions`` (ADRs, KEPs, RFCs), ``feature_specs``,
``project_overview`` or ``project_docs`` (any other note). Each file is applied in its
own savepoint, so one that fails costs only itself, and under the ownership rule: an edit
retracts exactly what the file no longer says. A file gone from the folder, or now read
into another category, is deleted from the scope it was in. ``dry_run`` reads and
compares but opens no write transaction: the store file is left as it was.

A record is an entity a file describes: the file's own, and each record it holds (a
feature spec's tasks); the report counts records added, updated and unchanged.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..domain.ids import root_key
from ..errors import InvalidQuery, KnotworkError, NotFound
from ..ingest.mentions import ScopedFinder
from ..ingest.sources import DEFAULT_PATTERNS, scan, unreadable
from ..store import Store
from ..types import SELF, Applied, Issue, NameRef, ParsedDocument

if TYPE_CHECKING:
    from ..ingest.parsers import Parser, ParserRegistry

__all__ = ["CATEGORIES", "ContextReport", "add_context", "category_of", "default_namespace",
           "scope_of", "within"]

CATEGORIES = ("project_decisions", "feature_specs", "project_overview", "project_docs")
Progress = Callable[[int, int], None]
_NAMESPACE = re.compile(r"[^a-z0-9_]+")


@dataclass(slots=True)
class ContextReport:
    """What ``add_context`` did, or with ``dry_run`` would do."""

    files: int = 0
    records_added: int = 0
    records_updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    facts_added: int = 0
    facts_retracted: int = 0
    warnings: list[Issue] = field(default_factory=list)
    errors: list[Issue] = field(default_factory=list)
    # path -> (parser type, scope, records): what each file was read as
    parsed: dict[str, tuple[str, str, int]] = field(default_factory=dict)
    dry_run: bool = False

    def as_dict(self) -> dict[str, object]:
        return {"files": self.files, "records_added": self.records_added,
                "records_updated": self.records_updated, "unchanged": self.unchanged,
                "warnings": [w.as_dict() for w in self.warnings],
                "errors": [e.as_dict() for e in self.errors]}


def default_namespace(path: Path) -> str:
    """The project a folder belongs to: the folder holding ``.git`` (or
    ``pyproject.toml``, ``package.json``) above it, else the folder itself, by name."""
    folder = path if path.is_dir() else path.parent
    for candidate in (folder, *folder.parents):
        if any((candidate / marker).exists() for marker in
               (".git", "pyproject.toml", "package.json", "Cargo.toml", "go.mod")):
            folder = candidate
            break
    return namespace_name(folder.name or "project")


def namespace_name(text: str) -> str:
    """A namespace as scopes spell it: lower case, ``[a-z0-9_]``."""
    out = _NAMESPACE.sub("_", text.strip().lower()).strip("_")
    if not out:
        raise InvalidQuery(f"namespace {text!r} holds no letter or digit")
    return out


def category_of(parser: object) -> str:
    category = getattr(parser, "category", "project_docs")
    return category if category in CATEGORIES else "project_docs"


def scope_of(namespace: str, category: str) -> str:
    return f"{namespace}__{category}"


def _records(doc: ParsedDocument) -> int:
    """The entities ``doc`` describes: its own and each record ``part_of`` it; none for a
    sidecar, whose facts are its note's (an edit to it counts as that record updated)."""
    if doc.doc_type == "sidecar":
        return 0
    held = {f.subject.key for f in doc.facts
            if f.predicate == "part_of" and f.object == SELF and isinstance(f.subject, NameRef)}
    return 1 + len(held)


@dataclass(slots=True)
class _File:
    path: str  # in the root
    abspath: str
    size: int
    mtime_ns: int


def _root(store: Store, target: Path, namespace: str) -> Path:
    """The folder the documents are named in: one a scope of ``namespace`` was filled from
    that holds ``target``, else ``target`` (a file's own folder)."""
    for category in CATEGORIES:
        known = store.reader.meta(root_key(scope_of(namespace, category)))
        if known and (target == Path(known) or target.is_relative_to(known)):
            return Path(known)
    return target if target.is_dir() else target.parent


def add_context(store: Store, path: str | os.PathLike[str], *, namespace: str | None,
                actor: str, type: str | None = None, force: bool = False,
                dry_run: bool = False, patterns: Sequence[str] = DEFAULT_PATTERNS,
                max_bytes: int = 5_000_000, chunk_tokens: int = 220,
                finder: ScopedFinder | None = None, progress: Progress | None = None
                ) -> ContextReport:
    """Read ``path`` (a folder, or one file) into typed records; see the module."""
    from ..ingest.parsers import default_registry
    from ..ingest.parsers.sidecar import note_of
    from .files import refresh_mentions

    try:  # a name past the file system's limit raised OSError here (a 500 at the server)
        target = Path(path).expanduser().resolve()
        found = target.exists()
    except (OSError, ValueError) as exc:
        raise NotFound("path", str(path)[:200],
                       message=f"path cannot exist: {str(path)[:200]!r}: {exc}") from None
    if not found:
        raise NotFound("path", str(path), message=f"path does not exist: {path}")
    registry = default_registry()
    if type is not None:
        registry.get(type)  # an unknown type fails before anything is read
    ns = namespace_name(namespace) if namespace else default_namespace(target)
    root = _root(store, target, ns)
    files, issues = _files(root, target, tuple(patterns))
    report = ContextReport(errors=list(issues), dry_run=dry_run)
    docs: list[tuple[str, ParsedDocument]] = []
    note_scopes: dict[str, str] = {}  # note path without ".md" -> its scope
    for n, f in enumerate(files):
        out = _parse(registry, f, type, max_bytes, chunk_tokens, root.name)
        if progress:
            progress(n + 1, len(files))
        if isinstance(out, Issue):
            report.errors.append(out)
            continue
        doc, parser = out
        scope = scope_of(ns, category_of(parser))
        if parser.type == "sidecar":  # in its note's scope: what it says is about the note
            scope = note_scopes.get(note_of(doc.path), scope)
        elif doc.path.lower().endswith(".md"):
            note_scopes[doc.path[:-3]] = scope
        report.parsed[doc.path] = (parser.type, scope, _records(doc))
        report.warnings.extend(doc.issues)
        docs.append((scope, doc))
    report.files = len(files)
    # documents of the namespace under the folder that this run does not place there
    placed = {(scope, doc.path) for scope, doc in docs}
    prefix = "" if target == root else target.relative_to(root).as_posix()
    stale = [(scope, p) for category in CATEGORIES
             for scope in [scope_of(ns, category)]
             for p in store.reader.document_index(scope)
             if (scope, p) not in placed and _under(p, prefix, target.is_dir())
             and (p not in report.parsed or report.parsed[p][1] != scope)
             and not any(e.path == p for e in report.errors)]
    if dry_run:
        for scope, doc in docs:
            known = store.reader.document_index(scope, paths=[doc.path]).get(doc.path)
            records = report.parsed[doc.path][2]
            if known is None:
                report.records_added += records
            elif (known.content_hash == doc.content_hash and known.extraction == doc.extraction
                  and not force):
                report.unchanged += records
            else:
                report.records_updated += records or 1
        report.deleted = len(stale)
        return report
    touched: set[int] = set()
    added: list[tuple[str, str, str]] = []  # (text, key, scope)
    removed: list[tuple[str, str, str]] = []
    changes = 0
    with store.write(actor=actor) as w:
        for scope, doc in docs:
            records = report.parsed[doc.path][2]
            try:
                with w.savepoint():
                    done = w.apply(scope, store.prepare(doc), force=force)
            except KnotworkError as exc:
                report.errors.append(Issue(doc.path, f"store refused: {exc}"))
                continue
            if not isinstance(done, Applied):
                report.unchanged += records
                continue
            if done.created:
                report.records_added += records
            else:
                report.records_updated += records or 1
            report.facts_added += done.added
            report.facts_retracted += done.retracted
            touched.add(done.document_id)
            added.extend((t, k, scope) for t, k in done.names_added)
            removed.extend((t, k, scope) for t, k in done.names_removed)
            changes += bool(done.names_added or done.names_removed)
        for scope, p in stale:
            gone = w.delete(scope, p, reason="source deleted")
            if gone:
                report.deleted += 1
                report.facts_retracted += gone.retracted
                removed.extend((t, k, scope) for t, k in gone.names_removed)
                changes += bool(gone.names_removed)
        if target.is_dir():
            for scope in {scope for scope, _ in docs}:
                if store.reader.meta(root_key(scope)) != str(root):
                    w.set_meta(root_key(scope), str(root))
    if touched or removed:
        a, r = refresh_mentions(store, finder if finder is not None else ScopedFinder(),
                                actor=actor, documents=touched, added=added, removed=removed,
                                generations=changes)
        report.facts_added += a
        report.facts_retracted += r
    return report


def within(vault: Path | None, path: str | os.PathLike[str]) -> Path:
    """``path`` taken in ``vault`` (relative to it, or absolute), refused unless it stays
    inside it: what a server lets a client read."""
    if vault is None:
        raise InvalidQuery("this server serves no vault: add-context reads only inside one")
    root = vault.resolve()
    try:  # a NUL or a name past the file system's limit: no such path (was a ValueError)
        full = (root / path).resolve()
    except (OSError, ValueError) as exc:
        raise NotFound("path", str(path)[:200],
                       message=f"path cannot exist: {str(path)[:200]!r}: {exc}") from None
    if not full.is_relative_to(root):
        # the served vault has no such path (as a missing one): 404, not a bad request
        raise NotFound("path", str(path), message=f"{path} is outside the served vault")
    return full


def _under(path: str, prefix: str, folder: bool) -> bool:
    """Whether the document at ``path`` is one this run speaks for: under the folder, or
    the one file (read into another category now, it leaves the scope it was in)."""
    if not folder:
        return path == prefix
    return not prefix or path == prefix or path.startswith(prefix + "/")


def _files(root: Path, target: Path, patterns: tuple[str, ...]
           ) -> tuple[list[_File], list[Issue]]:
    """The files to read: ``target`` alone, or those under it the globs cover."""
    if target.is_file():
        st = target.stat()
        one = [_File(target.relative_to(root).as_posix(), str(target), st.st_size,
                     st.st_mtime_ns)]
        return one + _sidecars(root, one), []
    found, issues = scan(root, patterns=patterns)
    prefix = "" if target == root else target.relative_to(root).as_posix() + "/"
    files = [_File(f.path, f.abspath, f.size, f.mtime_ns) for f in found
             if f.path.startswith(prefix)]
    return files + _sidecars(root, files), [i for i in issues if i.path.startswith(prefix)]


def _sidecars(root: Path, files: list[_File]) -> list[_File]:
    """The YAML sidecar of each note (``kep.yaml`` beside ``README.md``, ``note.yaml``
    beside ``note.md``) that the globs did not take already."""
    from ..ingest.parsers.sidecar import sidecars_of

    have = {f.path for f in files}
    out = []
    for f in files:
        if not f.path.lower().endswith(".md"):
            continue
        for rel in sidecars_of(f.path):
            full = root / rel
            if rel in have or not full.is_file():
                continue
            st = full.stat()
            out.append(_File(rel, str(full), st.st_size, st.st_mtime_ns))
            have.add(rel)
            break
    return out


def _parse(registry: ParserRegistry, f: _File, type: str | None, max_bytes: int,
           chunk_tokens: int, folder: str) -> tuple[ParsedDocument, Parser] | Issue:
    """Parse one file; the parser is chosen by its path below the root's own folder
    (``decisions/0001-a.md`` when the root is ``decisions``: the folder says what it holds).
    """
    from ..ingest.parsers import HEAD_BYTES

    try:
        with open(f.abspath, "rb") as fh:
            data = fh.read()
        parser = registry.choose(f"{folder}/{f.path}" if folder else f.path,
                                 data[:HEAD_BYTES], type=type)
        out = registry.parse(f.path, data, max_bytes=max_bytes, chunk_tokens=chunk_tokens,
                             type=parser.type)
    except OSError as exc:
        return unreadable(f.path, exc)
    except KnotworkError as exc:
        return Issue(f.path, str(exc))
    except Exception as exc:  # noqa: BLE001 - one file's parser failure costs that file only
        return Issue(f.path, f"parser failed: {type_name(exc)}: {exc}")
    if isinstance(out, Issue):
        return out
    return replace(out, mtime_ns=f.mtime_ns), parser


def type_name(exc: BaseException) -> str:
    return exc.__class__.__name__
