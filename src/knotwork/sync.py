"""Bring the store in step with a folder: add, edit, rename and delete, per document.

Shape of the work: hash every file in this process (cheap), parse only what changed in
worker processes (the costly part, both cores), and write in one writer with large
transactions and a savepoint per document, so one bad file never undoes another and a
crash leaves every document at its previous version or its new one, never between.
Renames are a vanished path and a new path with the same content hash: the document keeps
its id, versions and facts. An editor's atomic save (delete + create) is just an edit,
because only the folder's state at sync time is compared.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from .errors import KnotworkError
from .ingest.mentions import ChunkText, MentionFinder
from .ingest.sources import DEFAULT_PATTERNS, SourceFile, is_ignored, matches, scan, vault_path
from .store import Store
from .types import Applied, Issue, ParsedDocument, SyncReport, Unchanged

Progress = Callable[[int, int], None]
_PARALLEL_MIN = 200  # below this, starting worker processes costs more than it saves


@dataclass(slots=True)
class _Plan:
    changed: list[tuple[SourceFile, bytes]] = field(default_factory=list)
    renames: dict[str, str] = field(default_factory=dict)  # new path -> old path
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    new: set[str] = field(default_factory=set)
    issues: list[Issue] = field(default_factory=list)


def _parse_job(job: tuple[str, bytes, int, int, int]) -> ParsedDocument | Issue:
    from .ingest import parse_markdown

    path, data, mtime_ns, max_bytes, chunk_tokens = job
    try:
        out = parse_markdown(path, data, max_bytes=max_bytes, chunk_tokens=chunk_tokens)
    except KnotworkError as exc:
        return Issue(path, str(exc))
    except Exception as exc:  # noqa: BLE001 - the input boundary: one file's parser failure
        # must cost that file only, never the run (and never a worker process's pool)
        return Issue(path, f"parser failed: {type(exc).__name__}: {exc}")
    return replace(out, mtime_ns=mtime_ns) if isinstance(out, ParsedDocument) else out


def plan(store: Store, root: Path, *, scope: str, patterns: tuple[str, ...],
         force: bool, max_bytes: int, only: Iterable[str] | None = None) -> _Plan:
    """Compare the folder (or just the paths in ``only``) with the store.

    ``only`` is the watcher's path: the cost is the number of paths named, not the size of
    the vault.
    """
    if only is None:
        files, issues = scan(root, patterns=patterns)
        index = store.reader.document_index(scope)
    else:
        paths = sorted(set(only))
        files, issues = _stat_paths(root, paths, patterns)
        index = store.reader.document_index(scope, paths=paths)
    p = _Plan(issues=list(issues))
    on_disk: set[str] = set()
    new_by_hash: dict[str, list[tuple[SourceFile, bytes]]] = {}
    for f in files:
        on_disk.add(f.path)
        if f.size > max_bytes:
            p.issues.append(Issue(f.path, f"file too large: {f.size} bytes > limit {max_bytes}"))
            continue
        try:
            data = Path(f.abspath).read_bytes()
        except OSError as exc:
            p.issues.append(Issue(f.path, f"cannot read: {exc.strerror or exc}"))
            continue
        digest = hashlib.sha256(data).hexdigest()
        known = index.get(f.path)
        if known and known[0] == digest and not force:
            p.unchanged += 1
            continue
        p.changed.append((f, data))
        if known is None:
            p.new.add(f.path)
            new_by_hash.setdefault(digest, []).append((f, data))
    gone = [path for path in index if path not in on_disk]
    for old in gone:
        candidates = new_by_hash.get(index[old][0])
        if candidates:
            f, _ = candidates.pop(0)
            p.renames[f.path] = old
        else:
            p.deleted.append(old)
    return p


def _stat_paths(root: Path, paths: list[str], patterns: tuple[str, ...]
                ) -> tuple[list[SourceFile], list[Issue]]:
    files, issues = [], []
    for rel in paths:
        if not matches(rel, patterns) or is_ignored(rel):
            continue
        try:
            full = vault_path(root, rel)
        except ValueError as exc:
            issues.append(Issue(rel, str(exc)))
            continue
        try:
            st = full.stat()
        except FileNotFoundError:
            continue  # gone: the plan treats it as deleted
        except OSError as exc:
            issues.append(Issue(rel, f"cannot read: {exc.strerror or exc}"))
            continue
        if full.is_file():
            files.append(SourceFile(rel, str(full), st.st_size, st.st_mtime_ns))
    return files, issues


def sync(store: Store, root: str | os.PathLike[str], *, scope: str, actor: str,
         finder: MentionFinder | None = None,
         patterns: tuple[str, ...] = DEFAULT_PATTERNS, force: bool = False,
         dry_run: bool = False, max_bytes: int = 5_000_000, chunk_tokens: int = 220,
         workers: int = 0, batch_size: int = 500, progress: Progress | None = None,
         only: Iterable[str] | None = None) -> SyncReport:
    """Apply every change in ``root`` (or in the paths ``only``) since the last sync."""
    base = Path(root).expanduser().resolve()
    if not base.is_dir():
        raise KnotworkError(f"not a folder: {root}")
    p = plan(store, base, scope=scope, patterns=patterns, force=force, max_bytes=max_bytes,
             only=only)
    finder = finder if finder is not None else MentionFinder()
    total = len(p.changed) + len(p.deleted)
    if dry_run:
        added = len(p.new) - len(p.renames)
        return SyncReport(added=added, updated=len(p.changed) - len(p.new),
                          deleted=len(p.deleted), unchanged=p.unchanged, renamed=len(p.renames),
                          errors=tuple(p.issues))
    jobs = [(f.path, data, f.mtime_ns, max_bytes, chunk_tokens) for f, data in p.changed]
    counts = {"added": 0, "updated": 0, "deleted": 0, "renamed": 0, "unchanged": p.unchanged,
              "fa": 0, "fr": 0}
    touched: set[int] = set()
    added_names: list[tuple[str, str]] = []
    removed_names: list[tuple[str, str]] = []
    changes = 0  # documents whose names changed: each bumped the names generation once
    errors = list(p.issues)
    done = 0
    for batch in _batches(_parsed(jobs, workers), batch_size):
        with store.write(actor=actor) as w:
            for item in batch:
                done += 1
                if isinstance(item, Issue):
                    errors.append(item)
                    continue
                errors.extend(item.issues)
                try:
                    with w.savepoint():
                        out = w.apply(scope, item, force=force,
                                      rename_from=p.renames.get(item.path))
                except KnotworkError as exc:
                    errors.append(Issue(item.path, f"store refused: {exc}"))
                    continue
                _count(out, counts)
                if isinstance(out, Applied):
                    touched.add(out.document_id)
                    added_names.extend(out.names_added)
                    removed_names.extend(out.names_removed)
                    changes += bool(out.names_added or out.names_removed)
        if progress:
            progress(done, total)
    if p.deleted:
        with store.write(actor=actor) as w:
            for path in p.deleted:
                gone = w.delete(scope, path)
                if gone:
                    counts["deleted"] += 1
                    counts["fr"] += gone.retracted
                    removed_names.extend(gone.names_removed)
                    changes += bool(gone.names_removed)
                done += 1
        if progress:
            progress(done, total)
    added, retracted = refresh_mentions(store, finder, actor=actor, documents=touched,
                                        added=added_names, removed=removed_names,
                                        generations=changes)
    counts["fa"] += added
    counts["fr"] += retracted
    return SyncReport(added=counts["added"], updated=counts["updated"], deleted=counts["deleted"],
                      unchanged=counts["unchanged"],
                      renamed=counts["renamed"], errors=tuple(errors),
                      facts_added=counts["fa"], facts_retracted=counts["fr"])


_ALL_DOCS_THRESHOLD = 200  # past this many changed names, rescanning everything is cheaper


def refresh_mentions(store: Store, finder: MentionFinder, *, actor: str,
                     documents: Iterable[int], added: Sequence[tuple[str, str]] = (),
                     removed: Sequence[tuple[str, str]] = (), generations: int = 0,
                     batch_size: int = 500) -> tuple[int, int]:
    """Recompute ``mentions`` facts where they may have changed: (added, retracted).

    That is the documents that changed, plus every document whose text contains a name
    that appeared or went away (FTS phrase queries, never a scan), so a new note's title
    turns earlier plain-text mentions of it into facts, and a deleted note's mentions are
    retracted. ``finder`` is the caller's label table, brought up to date here: by this
    sync's own name changes when no other process changed names meanwhile (O(changes)),
    else reloaded from the store.
    """
    reader = store.reader
    gen = int(reader.meta("names_gen") or 0)
    if finder.generation is not None and finder.generation + generations == gen:
        for text, key in removed:
            finder.remove(text, key)
        for text, key in added:
            finder.add(text, key)
    elif finder.generation != gen:
        finder.reload(reader.labels())
    finder.generation = gen
    # The work itself comes from the store's queue, written with each change: it holds this
    # sync's changes and any a crash left behind after their structural commit.
    queued, q_added, q_removed, last_change = reader.mention_work()
    affected = set(documents) | set(queued)
    # A name that went away matters only where it was mentioned (an indexed lookup), or,
    # when a shorter label lies inside it, wherever its text occurs. A name still declared
    # by another note changes nothing.
    gone = [(t, k) for t, k in q_removed if t not in finder]
    phrases = {t for t, _ in q_added} | {t for t, _ in gone if finder.shadows(t)}
    affected |= reader.documents_mentioning_keys([k for _, k in gone])
    if len(phrases) > _ALL_DOCS_THRESHOLD:
        affected |= reader.all_document_ids()
    elif phrases:
        affected |= reader.documents_mentioning(sorted(phrases))
    n_added = n_retracted = 0
    ids = sorted(affected)
    for i in range(0, max(len(ids), 1), batch_size):
        part = ids[i:i + batch_size]
        with store.write(actor=actor) as w:
            for doc_id in part:
                chunks, own, linked = reader.mention_inputs(doc_id)
                drafts = finder.find([ChunkText(line, text) for line, text in chunks],
                                     skip_keys=frozenset(own | linked))
                a, r = w.apply_mentions(doc_id, drafts)
                n_added, n_retracted = n_added + a, n_retracted + r
            last = i + batch_size >= len(ids)
            w.mentions_done(part, through_change=last_change if last else None)
    return n_added, n_retracted


def _count(out: Applied | Unchanged, counts: dict[str, int]) -> None:
    if isinstance(out, Applied):
        key = "renamed" if out.renamed_from else ("added" if out.created else "updated")
        counts[key] += 1
        counts["fa"] += out.added
        counts["fr"] += out.retracted
    else:
        counts["unchanged"] += 1


def _parsed(jobs: list[tuple[str, bytes, int, int, int]], workers: int
            ) -> Iterator[ParsedDocument | Issue]:
    if len(jobs) < _PARALLEL_MIN or workers == 1:
        yield from map(_parse_job, jobs)
        return
    n = workers or os.cpu_count() or 1
    with ProcessPoolExecutor(max_workers=n) as pool:
        yield from pool.map(_parse_job, jobs, chunksize=32)


def _batches(items: Iterable[ParsedDocument | Issue], size: int
             ) -> Iterator[list[ParsedDocument | Issue]]:
    batch: list[ParsedDocument | Issue] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
