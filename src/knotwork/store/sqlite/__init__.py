"""The embedded SQLite backend: one file, WAL, FTS5, safe for several processes."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial

from ...types import ParsedDocument
from ..records import Problem, VectorSample
from . import integrity
from .connection import Transaction, connect, map_driver_errors
from .prepare import PreparedDocument, prepare
from .reader import Reader
from .writer import Writer

__all__ = ["SQLiteStore"]


class SQLiteStore:
    """A store in one SQLite file; each thread gets its own connection.

    Why per-thread connections: the watcher, server threads and the CLI may all use one
    store object; SQLite serialises writers itself (``BEGIN IMMEDIATE`` + busy timeout),
    across threads and processes alike.
    """

    backend = "sqlite"

    def __init__(self, path: str, *, synchronous: str = "FULL") -> None:
        self.path = path
        self._synchronous = synchronous
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._commits = 0  # write transactions committed through this object
        self._con()  # create and migrate now, so errors surface at open

    def _con(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            con = connect(self.path, synchronous=self._synchronous)
            self._local.con = con
            with self._lock:
                self._all.append(con)
        return con

    @property
    def reader(self) -> Reader:
        return Reader(self._con())

    def prepare(self, doc: ParsedDocument) -> PreparedDocument:
        """Compute the rows of ``doc`` that need no database, before taking the write lock."""
        return prepare(doc)

    @contextmanager
    def write(self, *, actor: str) -> Iterator[Writer]:
        """Open one write transaction; commit on success, roll back on any error."""
        con = self._con()
        with map_driver_errors("write failed"):
            con.execute("BEGIN IMMEDIATE")
        try:
            writer = Writer(Transaction(con), actor=actor)
            yield writer
            writer.finish()
        except BaseException:
            con.execute("ROLLBACK")
            raise
        with map_driver_errors("commit failed"):
            con.execute("COMMIT")
        with self._lock:
            self._commits += 1

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction: every read inside sees the same WAL snapshot.

        Why: in autocommit each statement reads the latest commit, so an answer built
        from a few dozen reads could mix two states of the store (a fact read before a
        watcher's commit, its chunk after it). A deferred ``BEGIN`` takes no lock a writer
        waits for; the scratch tables reads fill live in the temp schema, which writes no
        page of the store.
        """
        con = self._con()
        if con.in_transaction:
            yield
            return
        with map_driver_errors("read failed"):
            con.execute("BEGIN")
        try:
            yield
        finally:
            if con.in_transaction:
                con.execute("COMMIT")  # keeps the temp schema's scratch tables for the next read

    def change_token(self) -> tuple[int, int]:
        """Differs after any commit, this process's or another's (cache invalidation).

        Why a commit counter and not ``total_changes``: that also counts the rows reads
        write to their scratch tables in the temp schema (query stemming), so it changed on
        every search and a cache keyed on it (the live chunk count) never hit.
        """
        return self.data_version(), self._commits

    def data_version(self) -> int:
        """Changes whenever another connection commits (cache invalidation)."""
        return int(self._con().execute("PRAGMA data_version").fetchone()[0])

    def opener(self, *, bulk: bool = False) -> Callable[[], SQLiteStore] | None:
        """Open the same file in another process (a parallel writer); not ``:memory:``."""
        if self.path == ":memory:":
            return None
        # NORMAL in WAL mode: a commit is atomic but the WAL is synced only at checkpoints
        # (which sync the database file too), so the rest waits for ``make_durable``.
        level = "NORMAL" if bulk and self._synchronous in ("FULL", "EXTRA") else self._synchronous
        return partial(SQLiteStore, self.path, synchronous=level)

    def refresh_statistics(self) -> list[str]:
        """Nothing: the store never runs ``ANALYZE``, so SQLite plans from its schema and
        indexes alone and has no statistics to go stale."""
        return []

    def make_durable(self) -> None:
        """Sync the WAL: frames not yet checkpointed (and so not yet synced) reach the disk.

        What a ``synchronous=FULL`` commit does, once for many commits made at NORMAL.
        """
        if self.path == ":memory:" or self._synchronous == "OFF":
            return
        try:
            fd = os.open(self.path + "-wal", os.O_RDONLY)
        except FileNotFoundError:
            return  # no WAL: every commit is in the database file, synced at checkpoint
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def compact(self, *, actor: str, vacuum: bool = False) -> dict[str, int]:
        """Drop the chunks nothing reads, then, with ``vacuum``, rewrite the file to its
        live pages. Without it, the freed pages are reused by later writes (the file does
        not shrink). ``VACUUM`` copies the whole store as one write transaction: readers
        go on meanwhile (WAL), a writer waits for it; the WAL is truncated after it unless
        a reader still holds an older state."""
        before = self._bytes_in_use()
        with self.write(actor=actor) as w:
            removed = w.drop_uncited_chunks()
        packed = 0
        after: int | None = 0
        while after is not None:  # in parts: each write holds the lock a watcher waits on
            with self.write(actor=actor) as w:
                done, after = w.pack_versions(after=after)
            packed += done
        if vacuum:
            con = self._con()
            with map_driver_errors("cannot vacuum the store"):
                con.execute("VACUUM")
                con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return {"chunks_removed": removed, "versions_packed": packed,
                "bytes_freed": max(0, before - self._bytes_in_use()),
                "store_bytes": self._file_bytes()}

    def _bytes_in_use(self) -> int:
        """The store's pages that hold data (free pages are reused before the file grows)."""
        con = self._con()
        pages, free, size = (int(con.execute(f"PRAGMA {p}").fetchone()[0])
                             for p in ("page_count", "freelist_count", "page_size"))
        return (pages - free) * size

    def _file_bytes(self) -> int:
        if self.path == ":memory:":
            return self._bytes_in_use()
        return sum(os.path.getsize(self.path + ext) for ext in ("", "-wal")
                   if os.path.exists(self.path + ext))

    def check_integrity(self, *, sample: int = 200) -> list[Problem]:
        return integrity.check(self._con(), sample=sample)

    def vector_sample(self, n: int) -> list[VectorSample]:
        return integrity.vector_sample(self._con(), n)

    def rebuild_indexes(self, *, actor: str) -> dict[str, int]:
        with self.write(actor=actor) as w:
            return integrity.rebuild(w)

    def close(self) -> None:
        with self._lock:
            for con in self._all:
                try:
                    con.close()
                except sqlite3.Error:
                    pass
            self._all.clear()
        self._local = threading.local()
