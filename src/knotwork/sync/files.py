"""Bring the store in step with a folder: add, edit, rename and delete, per document.

Shape of the work: hash every file in this process (cheap), then parse, prepare (the
store's work that needs no database) and write only what changed, in transactions of many
documents, so a crash leaves every document at its previous version or its new one, never
between. One bad file never undoes another: a batch in which the store refuses a document
is written again with a savepoint per document (savepoints cost every document a tenth of
its write, so only a batch that needs them pays for them). A large sync
(``_PARALLEL_MIN`` files or more) does this in worker processes, each parsing and
preparing its batch while another writes, and writing under a lock they share; the
mention pass that follows is spread over them the same way.
Several processes may sync one store: under the write lock a sync writes a file only if
it still holds the bytes read, and deletes a path only if the folder still lacks it, so an
older look at the folder never undoes what another process applied since.
Renames are a vanished path and a new path with the same content hash: the document keeps
its id, versions and facts. An editor's atomic save (delete + create) is just an edit,
because only the folder's state at sync time is compared.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from .. import ingest
from ..domain.ids import root_key
from ..errors import Conflict, KnotworkError
from ..ingest.dialects import AUTO, reading
from ..ingest.dialects import resolve as resolve_dialect
from ..ingest.mentions import ChunkText, ScopedFinder
from ..ingest.sources import (
    DEFAULT_PATTERNS,
    SourceFile,
    VaultRules,
    content_hash,
    scan,
    unreadable,
)
from ..store import FileCheck, NameChange, Prepared, Store, StoreReader, StoreWriter
from ..types import Applied, FactDraft, FileState, Issue, ParsedDocument, SyncReport, Unchanged
from . import pool as _pools

Progress = Callable[[int, int], None]
_PARALLEL_MIN = 200  # below this, starting worker processes costs more than it saves
# Documents per worker transaction. Why 250, not 100: each commit rewrites the index and
# full-text pages it touched, so fewer, larger commits write less (10k-note cold ingest,
# 3 alternating runs: 4-7% less time); the pipeline still starts after one batch's parse.
_WORKER_BATCH = 250
# The reason of a file gone between the scan and its read: no error, a delete (the write
# lock looks at the folder again before deleting, as for every delete).
_VANISHED = "vanished while being read"


@dataclass(slots=True)
class _Plan:
    # a file's bytes as read and hashed here; None: read by the job that parses it
    changed: list[tuple[SourceFile, bytes | None]] = field(default_factory=list)
    renames: dict[str, str] = field(default_factory=dict)  # new path -> old path
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    new: set[str] = field(default_factory=set)
    issues: list[Issue] = field(default_factory=list)
    # unchanged files read because their time moved: (path, hash, size, mtime_ns, checked)
    refresh: list[FileCheck] = field(default_factory=list)
    # files whose text the store holds, to be read again: extracted under other rules
    reread: set[str] = field(default_factory=set)
    vanished: set[str] = field(default_factory=set)  # listed by the scan, gone at the read


# path, absolute path, content (None: read it here), mtime_ns, max_bytes, chunk_tokens,
# the vault's dialect (``knotwork.ingest.dialects``)
_Job = tuple[str, str, bytes | None, int, int, int, str]


def _parse_job(job: _Job) -> ParsedDocument | Issue:
    from ..ingest.parsers import parse

    path, abspath, data, mtime_ns, max_bytes, chunk_tokens, dialect = job
    try:
        if data is None:
            with open(abspath, "rb") as f:
                data = f.read()
        # the registry picks the parser by the file's name and first bytes; a worker
        # process reads in the dialect the job names, not its own default
        with reading(dialect):
            out = parse(path, data, max_bytes=max_bytes, chunk_tokens=chunk_tokens)
    except FileNotFoundError:
        return Issue(path, _VANISHED)
    except OSError as exc:
        return unreadable(path, exc)
    except KnotworkError as exc:
        return Issue(path, str(exc))
    except Exception as exc:  # noqa: BLE001 - the input boundary: one file's parser failure
        # must cost that file only, never the run (and never a worker process's pool)
        return Issue(path, f"parser failed: {type(exc).__name__}: {exc}")
    return replace(out, mtime_ns=mtime_ns) if isinstance(out, ParsedDocument) else out


def _prepared(store: Store, job: _Job) -> Prepared | Issue:
    """Parse a job and prepare its rows, all before the write transaction."""
    out = _parse_job(job)
    return out if isinstance(out, Issue) else store.prepare(out)


def plan(store: Store, root: Path, *, scope: str, patterns: tuple[str, ...],
         force: bool, max_bytes: int, only: Iterable[str] | None = None,
         extraction: str | None = None) -> _Plan:
    """Compare the folder (or just the paths in ``only``) with the store.

    ``only`` is the watcher's path: the cost is the number of paths named, not the size of
    the vault. ``extraction``: the rules the files are read under now
    (``knotwork.ingest.extraction_key``); a file whose document was extracted under others
    is read again though unchanged. None: the rules are not compared.
    """
    # The store is read before the folder: a path another process synced after our scan
    # would otherwise look deleted. Read first, such a path is at worst "new" here, and
    # applying it again is a no-op, because ``apply`` compares hashes under the lock.
    if only is None:
        index = store.reader.document_index(scope)
        files, issues = scan(root, patterns=patterns)
    else:
        paths = sorted(set(only))
        index = store.reader.document_index(scope, paths=paths)
        files, issues = _stat_paths(root, paths, patterns)
    p = _Plan(issues=list(issues))

    @cache
    def others() -> frozenset[str]:
        # the keys of the other parsers' documents: asked only when a key differs (never,
        # in a vault of notes), so a plan of unchanged notes loads no parser
        from ..ingest.parsers import default_registry

        return default_registry().keys(extraction) if extraction is not None else frozenset()

    on_disk: set[str] = set()
    new: list[SourceFile] = []
    for f in files:
        on_disk.add(f.path)
        known = index.get(f.path)
        stale = (known is not None and extraction is not None
                 and known.extraction != extraction and known.extraction not in others())
        if known and not force and _untouched(f, known):
            if not stale:
                p.unchanged += 1
                continue
            if f.size <= max_bytes:  # (else refused below, as it would be if it changed)
                p.reread.add(f.path)  # the job that parses it reads it
                p.changed.append((f, None))
                continue
        if f.size > max_bytes:
            p.issues.append(Issue(f.path, f"file too large: {f.size} bytes > limit {max_bytes}"))
            continue
        if known is None:
            new.append(f)
            continue
        checked = time.time_ns()
        data = _read(f, p)
        if data is None:
            if f.path in p.vanished:
                on_disk.discard(f.path)  # deleted since the scan: deleted by this sync
            continue
        if known.content_hash == content_hash(data):
            if not (force or stale):
                p.unchanged += 1
                if _settled(f.mtime_ns, checked):  # next time, its time will do
                    p.refresh.append(FileCheck(f.path, known.content_hash, f.size, f.mtime_ns,
                                               checked))
                continue
            p.reread.add(f.path)
        p.changed.append((f, data))
    gone = [path for path in index if path not in on_disk]
    # A new file is read here only when it may be a vanished one renamed (its hash tells);
    # else the job that parses it reads it (in a worker, beside the others).
    new_by_hash: dict[str, list[SourceFile]] = {}
    for f in new:
        data = _read(f, p) if gone else None
        if gone and data is None:
            continue
        p.new.add(f.path)
        p.changed.append((f, data))
        if data is not None:
            new_by_hash.setdefault(content_hash(data), []).append(f)
    left: list[str] = []
    for old in gone:
        candidates = new_by_hash.get(index[old].content_hash)
        if candidates:
            p.renames[candidates.pop(0).path] = old
        else:
            left.append(old)
    if left and new_by_hash:
        fresh = [(f, data) for f, data in p.changed if f.path in p.new]
        p.renames.update(_moved(store, scope, left, fresh, set(p.renames)))
    moved = set(p.renames.values())
    p.deleted = [old for old in left if old not in moved]
    return p


# How much of a note may change while it moves and still be the same note: at least half
# its lines kept (as git counts a rename with an edit, at its default 50%).
MOVE_SIMILARITY = 0.5


def _moved(store: Store, scope: str, gone: list[str],
           new: list[tuple[SourceFile, bytes | None]], taken: set[str]) -> dict[str, str]:
    """New path -> vanished path, for notes moved to another folder and edited on the way.

    Why: an exact hash pairs a move alone; a move and an edit between two syncs (no watcher
    running, or a tool that does both) was a delete and an add, so the note's facts were
    retracted and recorded again and its history ended. A pair must share its file name
    (case-insensitively), be the only vanished and the only new file of that name, and
    keep ``MOVE_SIMILARITY`` of its lines; the store holds the old text. Not by lines
    alone: notes made from one template (a deleted daily note, a new one) share most of
    their lines, and the new note would inherit the old one's facts and their times.
    """
    def by_name(paths: Iterable[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for path in paths:
            out.setdefault(path.rpartition("/")[2].casefold(), []).append(path)
        return out

    data = {f.path: d for f, d in new if d is not None and f.path not in taken}
    olds, news = by_name(gone), by_name(data)
    pairs = {olds[n][0]: news[n][0] for n in olds.keys() & news.keys()
             if len(olds[n]) == 1 and len(news[n]) == 1}
    if not pairs:
        return {}
    texts = store.reader.document_texts(scope, sorted(pairs))
    out: dict[str, str] = {}
    for old, new_path in pairs.items():
        before = texts.get(old)
        try:
            after = data[new_path].decode("utf-8")
        except UnicodeDecodeError:
            continue  # refused by the parser anyway: no note to carry the history to
        if before is not None and _line_similarity(before, after) >= MOVE_SIMILARITY:
            out[new_path] = old
    return out


def _line_similarity(a: str, b: str) -> float:
    """Lines the two texts share (blank lines aside, counted with repeats) over the
    larger text's lines."""
    la, lb = Counter(_lines(a)), Counter(_lines(b))
    size = max(sum(la.values()), sum(lb.values()))
    return sum((la & lb).values()) / size if size else 1.0


def _lines(text: str) -> Iterator[str]:
    return (s for line in text.splitlines() if (s := line.strip()))


def _refused(p: _Plan, max_bytes: int) -> set[str]:
    """The changed files a real run would keep out whole; their issues join ``p.issues``.

    Oversized files never reach ``p.changed`` (the plan refuses them by size).
    """
    from ..ingest.markdown import decode

    out: set[str] = set()
    for f, data in p.changed:
        if data is None:
            data = _read(f, p)  # an unreadable file's issue joins ``p.issues`` here
            if data is None:
                out.add(f.path)
                continue
        got = decode(f.path, data, max_bytes)
        if isinstance(got, Issue):
            p.issues.append(got)
            out.add(f.path)
    return out


def _read(f: SourceFile, p: _Plan) -> bytes | None:
    try:
        return Path(f.abspath).read_bytes()
    except FileNotFoundError:
        p.vanished.add(f.path)
        return None
    except OSError as exc:
        p.issues.append(unreadable(f.path, exc))
        return None


_COARSEST_MTIME_NS = 3_000_000_000  # past FAT's 2 s step, the coarsest in common use


def _settled(mtime_ns: int, checked_ns: int) -> bool:
    """A file time far enough before a check that a write after the check shows."""
    return mtime_ns < checked_ns - _COARSEST_MTIME_NS


def _unwritten_since(size: int, mtime_ns: int, then_size: int, then_mtime_ns: int,
                     checked_ns: int) -> bool:
    """A file that had ``then_size`` and ``then_mtime_ns`` when checked at ``checked_ns``
    and has them still was not written since, by its size and time alone.

    Why: a write after the check would have given it a time after then, less the file
    system's time step (2 s on FAT); so when its time is ``_COARSEST_MTIME_NS`` older
    than the check, an unchanged size and time mean unchanged bytes (the rule git and
    rsync follow). A file checked within seconds of its last save must be read.
    """
    return (size == then_size and mtime_ns == then_mtime_ns
            and _settled(mtime_ns, checked_ns))


def _untouched(f: SourceFile, known: FileState) -> bool:
    """The file still holds the version the store has, by its size and time alone: at
    ``known.checked_ns`` it was found to hold it (when the version was written, or when
    a sync read the file again). ``force`` reads everything."""
    return _unwritten_since(f.size, f.mtime_ns, known.size, known.mtime_ns, known.checked_ns)


def _stat_paths(root: Path, paths: list[str], patterns: tuple[str, ...]
                ) -> tuple[list[SourceFile], list[Issue]]:
    files, issues = [], []
    rules = VaultRules(root, patterns=patterns)
    for rel in paths:
        got = rules.file(rel)
        if isinstance(got, Issue):
            issues.append(got)
        elif got is not None:
            files.append(got)  # a path that is gone is not listed: the plan deletes it
    return files, issues


def sync(store: Store, root: str | os.PathLike[str], *, scope: str, actor: str,
         finder: ScopedFinder | None = None,
         patterns: tuple[str, ...] = DEFAULT_PATTERNS, force: bool = False,
         dry_run: bool = False, max_bytes: int = 5_000_000, chunk_tokens: int = 220,
         workers: int = 0, batch_size: int = 500, progress: Progress | None = None,
         only: Iterable[str] | None = None, replace: bool = False,
         mention_progress: Progress | None = None, dialect: str = AUTO) -> SyncReport:
    """Apply every change in ``root`` (or in the paths ``only``) since the last sync.

    ``dialect``: how the vault's notes spell links and names (``knotwork.ingest.dialects``;
    "auto" finds it by the files at the vault's root). A vault read before in another
    dialect is read again, as after an upgrade.

    A scope holds one vault: a full sync of another folder that would delete notes while
    the scope's vault still exists raises ``Conflict`` before writing, unless ``replace``.
    ``progress`` is told (done, total) as files are applied, ``mention_progress`` as the
    documents whose mentions may have changed are scanned (``refresh_mentions``).
    """
    base = Path(root).expanduser().resolve()
    if not base.is_dir():
        raise KnotworkError(f"not a folder: {root}")
    chosen = resolve_dialect(dialect, base)
    with reading(chosen):
        return _sync(store, base, scope=scope, actor=actor, finder=finder,
                     patterns=patterns, force=force, dry_run=dry_run, max_bytes=max_bytes,
                     chunk_tokens=chunk_tokens, workers=workers, batch_size=batch_size,
                     progress=progress, only=only, replace=replace,
                     mention_progress=mention_progress, dialect=chosen)


def _sync(store: Store, base: Path, *, scope: str, actor: str, finder: ScopedFinder | None,
          patterns: tuple[str, ...], force: bool, dry_run: bool, max_bytes: int,
          chunk_tokens: int, workers: int, batch_size: int, progress: Progress | None,
          only: Iterable[str] | None, replace: bool, mention_progress: Progress | None,
          dialect: str) -> SyncReport:
    """``sync`` of the folder ``base`` in its ``dialect``, which is in force here."""
    folder = _Folder(base, time.time_ns())
    p = plan(store, base, scope=scope, patterns=patterns, force=force, max_bytes=max_bytes,
             only=only, extraction=ingest.extraction_key(chunk_tokens))
    if only is None and p.deleted and not (replace or dry_run):
        _keep_vault(store, scope, base, len(p.deleted))
    finder = finder if finder is not None else ScopedFinder()
    total = len(p.changed) + len(p.deleted)
    if dry_run:
        # the files the real run would refuse whole (binary, invalid UTF-8, too large) are
        # errors here too, not additions
        refused = _refused(p, max_bytes)
        gone_new = len(refused & p.new)
        reread = len(p.reread - refused)
        return SyncReport(added=len(p.new) - len(p.renames) - gone_new,
                          updated=len(p.changed) - len(p.new) - (len(refused) - gone_new)
                          - reread,
                          deleted=len(p.deleted), unchanged=p.unchanged, renamed=len(p.renames),
                          reread=reread, errors=tuple(p.issues))
    if store.reader.meta("mention_rules") != str(ingest.MENTION_RULES):
        # mentions found by other rules than this code's: all are found again below
        with store.write(actor=actor) as w:
            w.requeue_mentions(str(ingest.MENTION_RULES))
    jobs = [(f.path, f.abspath, data, f.mtime_ns, max_bytes, chunk_tokens, dialect)
            for f, data in p.changed]
    acc = _Tally(unchanged=p.unchanged, errors=list(p.issues))
    if jobs:
        # Imported here, before workers fork, the parser loads once for all of them and
        # stays loaded in this process: else a watcher's first edit after a parallel
        # ingest pays its import (~35 ms, past the edit's own cost).
        from ..ingest import parse_markdown  # noqa: F401
        from ..ingest.parsers import default_registry

        default_registry()  # and the installed parsers with it
    opener = _worker_opener(store, len(jobs), workers)
    if opener is not None:
        try:
            _write_in_workers(opener, jobs, acc, folder=folder, scope=scope, actor=actor,
                              force=force, renames=p.renames, workers=workers,
                              batch_size=min(batch_size, _WORKER_BATCH), progress=progress,
                              total=total)
        finally:
            store.make_durable()
    else:
        for batch in _batches((_prepared(store, j) for j in jobs), batch_size):
            acc.merge(_write_batch(store, batch, folder=folder, scope=scope, actor=actor,
                                   force=force, renames=p.renames))
            if progress:
                progress(acc.done, total)
    counts = acc.counts
    # a file gone between the scan and its read (or its write) is deleted now, as a
    # file gone before the scan is, not left live until the next sync
    p.deleted.extend(sorted(set(acc.vanished) - set(p.deleted)))
    total += len(acc.vanished)
    if p.deleted:
        with store.write(actor=actor) as w:
            rules = VaultRules(base, patterns=patterns)
            for path in p.deleted:
                acc.done += 1
                # looked at again under the write lock: a file created again since the scan
                # is not deleted (its creation is the next sync's, or another process's)
                if isinstance(rules.file(path), SourceFile):
                    continue
                gone = w.delete(scope, path)
                if gone:
                    counts["deleted"] += 1
                    counts["fr"] += gone.retracted
                    acc.removed.extend(gone.names_removed)
                    acc.changes += bool(gone.names_removed)
        if progress:
            progress(acc.done, total)
    added, retracted = refresh_mentions(store, finder, actor=actor, documents=acc.touched,
                                        added=[(t, k, scope) for t, k in acc.added],
                                        removed=[(t, k, scope) for t, k in acc.removed],
                                        generations=acc.changes, workers=workers,
                                        progress=mention_progress)
    counts["fa"] += added
    counts["fr"] += retracted
    # the folder's bookkeeping, one commit or none: files found unchanged though their
    # time moved, and the folder a full sync read (so one file of it can be synced alone)
    new_root = only is None and store.reader.meta(root_key(scope)) != str(base)
    if p.refresh or new_root:
        with store.write(actor=actor) as w:
            if p.refresh:
                w.refresh_files(scope, p.refresh)
            if new_root:
                w.set_meta(root_key(scope), str(base))
    if len(p.changed) + len(p.deleted) >= _PARALLEL_MIN:
        # a large write (a cold ingest): the reads that follow plan by fresh statistics
        store.refresh_statistics()
    return SyncReport(added=counts["added"], updated=counts["updated"], deleted=counts["deleted"],
                      unchanged=counts["unchanged"], renamed=counts["renamed"],
                      reread=counts["reread"], errors=tuple(acc.errors),
                      facts_added=counts["fa"], facts_retracted=counts["fr"])


def _keep_vault(store: Store, scope: str, base: Path, deletes: int) -> None:
    """Refuse a full sync of another folder that would delete notes of a scope's vault.

    Why: notes are named by their path in the vault, so syncing a different folder (a
    mistyped path, a second vault into the same store) deletes every note of the first
    it lacks; history keeps them, but the live graph loses them, so never silently. A
    vault that moved (its old folder gone) is followed; so is a copy (it deletes nothing).
    """
    known = store.reader.meta(root_key(scope))
    if known and Path(known) != base and Path(known).is_dir():
        raise Conflict(f"scope {scope!r} holds the vault {known}; syncing {base} would delete"
                       f" {deletes} of its notes: use another --scope (or --db) for this"
                       " folder, or --replace to make it the scope's vault", key=scope)


_ALL_DOCS_THRESHOLD = 200  # past this many changed names, rescanning everything is cheaper


def refresh_mentions(store: Store, finder: ScopedFinder, *, actor: str,
                     documents: Iterable[int], added: Sequence[tuple[str, str, str]] = (),
                     removed: Sequence[tuple[str, str, str]] = (), generations: int = 0,
                     batch_size: int = 500, workers: int = 0,
                     progress: Progress | None = None) -> tuple[int, int]:
    """Recompute ``mentions`` facts where they may have changed: (added, retracted).

    That is the documents that changed, plus every document whose text contains a name
    that appeared or went away (FTS phrase queries, never a scan), so a new note's title
    turns earlier plain-text mentions of it into facts, and a deleted note's mentions are
    retracted. ``finder`` is the caller's label table, brought up to date here: by this
    sync's own name changes, (text, key, scope), when no other process changed names
    meanwhile (O(changes)), else reloaded from the store. Each scope's documents are read
    against that scope's labels alone, and a name that went from a scope is looked for in
    that scope's table: another scope's note of the same name keeps no mention of it.
    """
    reader = store.reader
    gen = int(reader.meta("names_gen") or 0)
    if finder.generation is not None and finder.generation + generations == gen:
        for text, key, scope in removed:
            finder.remove(text, key, scope)
        for text, key, scope in added:
            finder.add(text, key, scope)
    elif finder.generation != gen:
        finder.reload(reader.labels())
    finder.generation = gen
    # The work itself comes from the store's queue, written with each change: it holds this
    # sync's changes and any a crash left behind after their structural commit.
    queued, changes, last_change = reader.mention_work()
    q_added = [t for _, t, _, added, label, _ in changes if label and added]
    q_removed = [(t, k, finder.table(s)) for _, t, k, added, label, s in changes
                 if label and not added]
    affected = set(documents) | set(queued)
    # A name that went away matters only where it was mentioned (an indexed lookup), or,
    # when a shorter label lies inside it, wherever its text occurs. A name still declared
    # by another note changes nothing; the same words still declared under another key
    # ("daily-notes" beside a vanished "Daily Notes") mean that key where it was mentioned.
    # (Each in the scope of the note that had it: "Pager" gone from alpha is gone there
    # though beta's note "Pager" stays.)
    gone = [(t, k, table) for t, k, table in q_removed if not table.declares(t, k)]
    phrases = set(q_added) | {t for t, _, table in gone
                              if t not in table and table.shadows(t)}
    if len(phrases) > _ALL_DOCS_THRESHOLD:
        # every live document: the lookups below could only find some of them again (a
        # first ingest's ten thousand new names spent 0.1 s on them)
        affected |= reader.all_document_ids()
    else:
        affected |= reader.documents_mentioning_keys([k for _, k, _ in gone])
        if phrases:
            affected |= reader.documents_mentioning(sorted(phrases))
        affected |= _linkers_to_redo(reader, finder, changes)
    n_added = n_retracted = 0
    ids = sorted(affected)
    opener = _worker_opener(store, len(ids), workers)
    if opener is not None:
        try:
            n_added, n_retracted = _mentions_in_workers(opener, ids, actor=actor,
                                                        workers=workers, progress=progress)
            with store.write(actor=actor) as w:
                w.mentions_done([], through_change=last_change)
        finally:
            store.make_durable()
        return n_added, n_retracted
    for i in range(0, max(len(ids), 1), batch_size):
        part = ids[i:i + batch_size]
        with store.write(actor=actor) as w:
            # a document another writer holds is theirs to do (it stays queued), unless
            # names changed: those this pass read must reach every document it found
            mine = w.claim_mentions(part, wait=bool(changes))
            for doc_id, drafts in _mention_drafts(reader, finder, mine).items():
                a, r = w.apply_mentions(doc_id, drafts)
                n_added, n_retracted = n_added + a, n_retracted + r
            last = i + batch_size >= len(ids)
            w.mentions_done(mine, through_change=last_change if last else None)
        if progress and ids:
            progress(i + len(part), len(ids))
    return n_added, n_retracted


def _linkers_to_redo(reader: StoreReader, finder: ScopedFinder,
                     changes: Sequence[NameChange]) -> set[int]:
    """The documents linking a note whose names changed, where what they mention may
    change with them (``finder`` already holds the new names).

    A document mentions no note it links to by any of the note's names ("[[daily-notes]]:
    set up daily notes"), so it may mention otherwise when
    - a name it links by comes to reach another note, or none while the note it reached
      goes on: a note renamed (the link no longer reaches it, whose other names prose may
      now mention), a note that takes the name (an exact path wins), an alias added or
      dropped. The writer records every name that moved (``Writer._resolve``); a name
      other notes declare too that still reaches the same note changes nothing ("README"
      in a folder of READMEs: deleting one that does not win the name redid every
      document linking [[README]]), nor does one whose note was deleted and that now
      reaches none (the note's names left the label table with it);
    - the note it links loses a name whose words another note still has: those words
      were the linked note's, now they are a mention of the other.
    """
    losing = {doc for doc, text, _, was_added, label, scope in changes
              if label and not was_added and doc is not None and text in finder.table(scope)}
    moved = [(doc, key, reaches) for doc, _, key, reaches, label, _ in changes if not label]
    before = sorted({doc for doc, _, _ in moved if doc is not None})
    live = reader.document_versions(before).keys() if before else set()
    # a name that reached a note now deleted, and reaches none: its words went with the
    # note (unless another note still has them: ``losing``), so linking it changes nothing
    redo = {key for doc, key, reaches in moved
            if reaches or doc is None or doc in live or doc in losing}
    redo |= reader.keys_reaching(sorted(losing))
    return reader.documents_linking(sorted(redo))


@dataclass(slots=True)
class _Tally:
    """What applying documents did, summed over batches and worker processes."""

    unchanged: int = 0
    errors: list[Issue] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    touched: set[int] = field(default_factory=set)
    added: list[tuple[str, str]] = field(default_factory=list)
    removed: list[tuple[str, str]] = field(default_factory=list)
    changes: int = 0  # documents whose names changed: each bumped the names generation once
    done: int = 0
    vanished: list[str] = field(default_factory=list)  # gone between the scan and the write

    def __post_init__(self) -> None:
        self.counts = {"added": 0, "updated": 0, "deleted": 0, "renamed": 0, "reread": 0,
                       "unchanged": self.unchanged, "fa": 0, "fr": 0}

    def merge(self, other: _Tally) -> None:
        for k, v in other.counts.items():
            self.counts[k] += v
        self.errors.extend(other.errors)
        self.touched |= other.touched
        self.added.extend(other.added)
        self.removed.extend(other.removed)
        self.changes += other.changes
        self.done += other.done
        self.vanished.extend(other.vanished)


class _Refused(Exception):
    """The store refused a document of a batch written without savepoints."""


def _write_batch(store: Store, batch: Sequence[Prepared | Issue], *, folder: _Folder,
                 scope: str, actor: str, force: bool, renames: dict[str, str]) -> _Tally:
    """Write a batch in one transaction; what it did.

    First without a savepoint per document; if the store refuses one, that transaction is
    rolled back and the batch written again, each document in its own savepoint.
    """
    try:
        acc = _Tally()
        with store.write(actor=actor) as w:
            _apply_batch(w, batch, acc, folder=folder, scope=scope, force=force,
                         renames=renames, isolate=False)
    except _Refused:
        acc = _Tally()
        with store.write(actor=actor) as w:
            _apply_batch(w, batch, acc, folder=folder, scope=scope, force=force,
                         renames=renames, isolate=True)
    return acc


@dataclass(frozen=True, slots=True)
class _Folder:
    """The folder a sync reads, and when it began reading (to tell old files from new)."""

    root: Path
    since_ns: int  # wall clock before the first file was read

    def holds(self, doc: ParsedDocument) -> bool:
        """The file still holds the bytes ``doc`` was parsed from (asked under the lock).

        Why: another process may have read a newer version of the file and applied it
        since this one read it; writing the older version over it would leave the store
        behind the folder with nothing left to correct it. A file last written seconds
        before this sync began, with the size and time it had then, has not been written
        since (a write now would carry a time after the sync began, less the file
        system's time step: 2 s on FAT); any other file is read again and hashed (~45 µs
        a note).
        """
        full = os.path.join(self.root, doc.path)
        try:
            st = os.stat(full)
            if _unwritten_since(st.st_size, st.st_mtime_ns, doc.size, doc.mtime_ns,
                                self.since_ns):
                return True
            with open(full, "rb") as f:
                data = f.read()
        except OSError:
            return False  # gone or unreadable since: a delete, or the next sync's to report
        return content_hash(data) == doc.content_hash


def _apply_batch(w: StoreWriter, batch: Sequence[Prepared | Issue], acc: _Tally, *,
                 folder: _Folder, scope: str, force: bool, renames: dict[str, str],
                 isolate: bool = True) -> None:
    """Apply prepared documents in one transaction; with ``isolate``, each in its own
    savepoint, so a refused document costs only itself; without, a refusal raises
    ``_Refused`` (see ``_write_batch``)."""
    for item in batch:
        acc.done += 1
        if isinstance(item, Issue):
            if item.reason == _VANISHED:
                acc.vanished.append(item.path)
            else:
                acc.errors.append(item)
            continue
        path = item.doc.path
        if not folder.holds(item.doc):
            if not os.path.lexists(os.path.join(folder.root, path)):
                acc.vanished.append(path)  # deleted since it was read: deleted below
            # else written again since it was read: the sync that sees that applies it
            continue
        acc.errors.extend(item.doc.issues)
        try:
            with w.savepoint() if isolate else nullcontext():
                out = w.apply(scope, item, force=force, rename_from=renames.get(path))
        except KnotworkError as exc:
            if not isolate:
                raise _Refused from exc
            acc.errors.append(Issue(path, f"store refused: {exc}"))
            continue
        _count(out, acc.counts)
        if isinstance(out, Applied):
            acc.touched.add(out.document_id)
            acc.added.extend(out.names_added)
            acc.removed.extend(out.names_removed)
            acc.changes += bool(out.names_added or out.names_removed)


def _worker_opener(store: Store, items: int, workers: int) -> Callable[[], Store] | None:
    """How worker processes open ``store``, when ``items`` pieces of work merit them.

    Not for fewer than ``_PARALLEL_MIN``, nor with ``workers=1``, nor for a store another
    process cannot open. Forked, not spawned: no import of the caller's script, so no
    ``__main__`` guard is needed. But a copy of a process with other threads may inherit a
    lock one of them held, so a threaded caller (a server) does its work itself.
    """
    if items < _PARALLEL_MIN or (workers or _pools.cores()) == 1:
        return None
    if not _pools.can_fork():
        return None
    # bulk: a worker's commits are not synced one by one; whoever starts workers calls
    # ``make_durable`` once they are done (a crash loses at most whole batches, which the
    # next sync writes again: their files are still unchanged in the store's eyes)
    return store.opener(bulk=True)


# Per worker process: its own handle on the store, and the lock the writers share.
_worker: dict[str, Any] = {}


def _worker_init(opener: Callable[[], Store], lock: Any, parent: int) -> None:
    _pools.guard_worker(parent)  # dies with the sync that started it (``sync.pool``)
    _worker["store"], _worker["lock"] = opener(), lock


def _worker_batch(jobs: list[_Job], folder: _Folder, scope: str, actor: str, force: bool,
                  renames: dict[str, str]) -> _Tally:
    """Parse and prepare a batch (in parallel with the other workers), then write it under
    the lock."""
    parsed = [_prepared(_worker["store"], j) for j in jobs]
    # Why our own lock before SQLite's: a writer waiting on SQLite's busy handler sleeps in
    # steps of up to 100 ms; one waiting on this lock wakes the moment it is free.
    with _worker["lock"]:
        _pools.orphaned()  # never commit for a sync that is gone
        return _write_batch(_worker["store"], parsed, folder=folder, scope=scope, actor=actor,
                            force=force, renames=renames)


def _worker_finder(reader: StoreReader) -> ScopedFinder:
    """This worker's label tables, reloaded when any process changed names since."""
    gen = int(reader.meta("names_gen") or 0)
    finder: ScopedFinder | None = _worker.get("finder")
    if finder is None or finder.generation != gen:
        finder = _worker["finder"] = ScopedFinder(reader.labels())
        finder.generation = gen
    return finder


def _mention_drafts(reader: StoreReader, finder: ScopedFinder, doc_ids: Sequence[int]
                    ) -> dict[int, list[FactDraft]]:
    """The mentions ``finder`` finds in each document (by its scope's labels), its inputs
    read for all at once."""
    return {d: finder.find([ChunkText(line, text) for line, text in m.chunks],
                           skip_keys=m.declared | m.linked, scope=m.scope)
            for d, m in reader.mention_inputs_of(doc_ids).items()}


def _worker_mentions(doc_ids: list[int], actor: str) -> tuple[int, int]:
    """Find mentions in a batch of documents, then write them under the lock.

    The finding runs before the lock, in parallel with the other workers; inside it, any
    document whose version changed meanwhile, or every one if names changed, is redone,
    so a concurrent writer's newer text or names are never overwritten with older ones.
    """
    store: Store = _worker["store"]
    reader = store.reader
    finder = _worker_finder(reader)
    versions = reader.document_versions(doc_ids)
    drafts = _mention_drafts(reader, finder, doc_ids)
    added = retracted = 0
    with _worker["lock"], store.write(actor=actor) as w:
        _pools.orphaned()
        w.claim_mentions(doc_ids, wait=True)  # (before what is read under the lock)
        current = _worker_finder(reader)  # a new table when names changed meanwhile
        stale_names, finder = current is not finder, current
        now = reader.document_versions(doc_ids)
        drafts.update(_mention_drafts(reader, finder, [
            d for d in doc_ids if stale_names or now.get(d) != versions.get(d)]))
        for d in doc_ids:
            a, r = w.apply_mentions(d, drafts[d])
            added, retracted = added + a, retracted + r
        w.mentions_done(doc_ids, through_change=None)
    return added, retracted


def _mentions_in_workers(opener: Callable[[], Store], ids: list[int], *, actor: str,
                         workers: int, batch_size: int = 100,
                         progress: Progress | None = None) -> tuple[int, int]:
    added = retracted = done = 0
    with _pools.running(lambda: _pool(opener, workers)) as pool:
        parts = [ids[i:i + batch_size] for i in range(0, len(ids), batch_size)]
        futures = {pool.submit(_worker_mentions, part, actor): len(part) for part in parts}
        for fut in as_completed(futures):
            a, r = fut.result()
            added, retracted, done = added + a, retracted + r, done + futures[fut]
            if progress:
                progress(done, len(ids))
    return added, retracted


def _pool(opener: Callable[[], Store], workers: int = 0) -> ProcessPoolExecutor:
    ctx = multiprocessing.get_context("fork")
    # the CPUs this process may use (a container's cpuset), not the host's
    return ProcessPoolExecutor(max_workers=workers or _pools.cores(), mp_context=ctx,
                               initializer=_worker_init,
                               initargs=(opener, ctx.Lock(), os.getpid()))


def _write_in_workers(opener: Callable[[], Store], jobs: list[_Job], acc: _Tally, *,
                      folder: _Folder, scope: str, actor: str, force: bool,
                      renames: dict[str, str], workers: int, batch_size: int,
                      progress: Progress | None, total: int) -> None:
    """Parse and write in worker processes, each batch its own transaction.

    The main process only hands out batches: parsing runs on every core, and writing a
    batch (its diffs and its SQL, one transaction) takes turns under the lock.
    """
    with _pools.running(lambda: _pool(opener, workers)) as pool:
        futures = []
        for i in range(0, len(jobs), batch_size):
            part = jobs[i:i + batch_size]
            moves = {j[0]: renames[j[0]] for j in part if j[0] in renames}
            futures.append(pool.submit(_worker_batch, part, folder, scope, actor, force, moves))
        for fut in as_completed(futures):
            acc.merge(fut.result())
            if progress:
                progress(acc.done, total)


def _count(out: Applied | Unchanged, counts: dict[str, int]) -> None:
    if isinstance(out, Applied):
        key = ("renamed" if out.renamed_from else "added" if out.created
               else "reread" if out.reread else "updated")
        counts[key] += 1
        counts["fa"] += out.added
        counts["fr"] += out.retracted
    else:
        counts["unchanged"] += 1


def _batches(items: Iterable[Prepared | Issue], size: int
             ) -> Iterator[list[Prepared | Issue]]:
    batch: list[Prepared | Issue] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
