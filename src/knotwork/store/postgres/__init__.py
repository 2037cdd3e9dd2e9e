"""The PostgreSQL backend: one database for many processes on many hosts.

psycopg 3 with a connection pool; full text in ``tsvector`` columns ranked by BM25 from
stored statistics (``text.py``); vectors in ``pgvector`` with HNSW (cosine). Writers run at
once: each document is applied under an advisory lock keyed by its scope and path, so two
watchers of one vault never apply one edit twice nor lose one, and the derived state every
writer shares (name resolution, the entity index, the counts) is brought up to date under
one more lock, just before commit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool

from ...errors import StoreError
from ...types import ParsedDocument
from ..records import Problem, VectorSample
from ..sqlite.prepare import PreparedDocument, prepare
from . import integrity
from .connection import Con, Transaction, map_driver_errors, migrate
from .reader import Reader
from .schema import REFERENCE_TABLES, SCOPED_TABLES
from .writer import COMMITS, WRITE_PREPARE_THRESHOLD, Writer

__all__ = ["PostgresStore"]

# the work queues a sync fills and empties (mentions to find, names that changed)
QUEUES = ("mention_queue", "name_changes")


def _configure(con: psycopg.Connection[Any]) -> None:
    register_vector(con)
    # Session settings for short statements over a cached working set, each only ever
    # lowering what the server says. No JIT: a BM25 over a large postings table can be
    # costed past ``jit_above_cost``, and compiling it takes longer than running it.
    # Random reads costed near sequential ones (1.1, the usual value for SSDs and a
    # cached store, against the default 4, made for spinning disks): else a read of a
    # few facts by an id list of unknown length is planned as hash joins over whole
    # tables (entities, versions) instead of a few index probes; on 2,000 notes that
    # took a third of the server's time per ``context``.
    con.execute("SELECT set_config('jit', 'off', false), set_config('random_page_cost',"
                " LEAST(current_setting('random_page_cost')::float8, 1.1)::text, false)")


class PostgresStore:
    """A store in one PostgreSQL database, at ``url`` (``postgresql://user:pw@host/db``)."""

    backend = "postgresql"

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 16) -> None:
        self.path = url  # (the contract: ``open_store(store.path)`` opens it again)
        self._url = url
        with map_driver_errors(f"cannot open store {_safe(url)}"):
            with psycopg.connect(url, autocommit=True) as first:
                migrate(first)
            self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
                url, min_size=min_size, max_size=max_size, open=True, configure=_configure,
                kwargs={"autocommit": True}, name="knotwork")
        self._local = threading.local()
        self._con = Con(self._pool, self._local)
        self._commits = 0
        self._lock = threading.Lock()

    @property
    def reader(self) -> Reader:
        return Reader(self._con)

    def prepare(self, doc: ParsedDocument) -> PreparedDocument:
        return prepare(doc)

    @contextmanager
    def _pinned(self) -> Iterator[psycopg.Connection[Any]]:
        with map_driver_errors("cannot reach the store"):
            con = self._pool.getconn()
        self._local.con = con
        try:
            yield con
        finally:
            self._local.con = None
            self._pool.putconn(con)

    @contextmanager
    def write(self, *, actor: str) -> Iterator[Writer]:
        """One write transaction (READ COMMITTED): commit on success, roll back on error."""
        if self._con.pinned is not None:
            raise StoreError("a write inside a snapshot or another write")
        with self._pinned() as con:
            # a write sends the same few statements every time: each is prepared on the
            # server from its second run on the connection (psycopg's default: the sixth),
            # not parsed and planned again (a tenth of an edit's server CPU); reads keep
            # the default
            threshold, con.prepare_threshold = con.prepare_threshold, WRITE_PREPARE_THRESHOLD
            try:
                with map_driver_errors("write failed"):
                    con.execute("BEGIN")
                try:
                    writer = Writer(Transaction(self._con), actor=actor)
                    yield writer
                    writer.finish()
                except BaseException:
                    if not con.closed:
                        con.execute("ROLLBACK")
                    raise
                with map_driver_errors("commit failed"):
                    con.execute("COMMIT")
            finally:
                con.prepare_threshold = threshold
        with self._lock:
            self._commits += 1

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads on this thread inside the block see one committed state."""
        if self._con.pinned is not None:
            yield
            return
        with self._pinned() as con:
            with map_driver_errors("read failed"):
                self._con.begin(con)
            try:
                yield
            finally:
                self._con.end()
                if not con.closed:
                    con.execute("COMMIT")

    def data_version(self) -> int:
        """Moves whenever a write of this store commits, this process's or another's
        (cache invalidation). A count the writers keep in ``meta``, not the server's
        transaction horizon: that moved with every transaction of every database and
        schema on the server, emptying the read memo for other stores' writes."""
        known, value = self._con.meta(COMMITS)
        if known:
            return int(value) if value is not None else 0
        row = self._con.execute("SELECT value FROM meta WHERE key = ?", (COMMITS,)).fetchone()
        return int(row[0]) if row else 0

    def change_token(self) -> tuple[int, int]:
        return self.data_version(), self._commits

    def opener(self, *, bulk: bool = False) -> Callable[[], PostgresStore] | None:
        """Open the same database in another process (a parallel writer)."""
        return partial(PostgresStore, self._url, max_size=4)

    def make_durable(self) -> None:
        """Every commit is durable when it returns (``synchronous_commit`` on)."""

    def refresh_statistics(self) -> list[str]:
        """``VACUUM`` and ``ANALYZE`` the store's tables that autovacuum would visit next,
        now rather than within its nap time: work the server does anyway, brought
        forward. By autovacuum's own rules, on the counts the server has gathered so far:
        analyze a table holding rows but never analyzed, or changed past
        ``autovacuum_analyze_threshold`` plus ``autovacuum_analyze_scale_factor`` of it;
        vacuum one holding rows but never vacuumed, or grown or left with dead rows past
        the insert and vacuum thresholds. The two work queues (``QUEUES``) are vacuumed
        whenever they hold pages: the sync that filled them has just emptied them, and the
        server may not have counted those deletes yet (a process reports its counts at
        most once a second), while every edit after would read their dead rows (1–2 ms
        an edit at 10,000 notes, until autovacuum came a minute later).

        Why: until then the planner takes the tables a cold ingest just filled for nearly
        empty, and no page is marked all-visible, so every index-only read of the postings
        visits the table too; a ``context`` read right after a cold ingest of 2,000 notes
        cost 18 ms of server CPU instead of 8 (an entity's types alone 5 ms instead of
        0.2). At that size the work took ~0.3 s of vacuum and ~1.5 s of analysis."""
        def past(kind: str, count: str) -> str:
            return (f"{count} > current_setting('autovacuum_{kind}_threshold')::float8"
                    f" + current_setting('autovacuum_{kind}_scale_factor')::float8"
                    " * t.reltuples")

        filled = "pg_relation_size(t.oid) > 0"
        done: list[str] = []
        with self._pool.connection() as c, map_driver_errors("cannot analyze the store"):
            due = [(str(r[0]), bool(r[1]), bool(r[2])) for r in c.execute(
                "SELECT s.relname,"
                f" (t.reltuples < 0 AND {filled}) OR {past('analyze', 's.n_mod_since_analyze')},"
                " (s.last_vacuum IS NULL AND s.last_autovacuum IS NULL AND"
                f" {filled}) OR {past('vacuum_insert', 's.n_ins_since_vacuum')}"
                f" OR {past('vacuum', 's.n_dead_tup')}"
                f" OR (s.relname = ANY(%s) AND {filled})"
                " FROM pg_stat_user_tables s JOIN pg_class t ON t.oid = s.relid"
                " WHERE s.schemaname = current_schema() AND s.relname = ANY(%s)"
                " ORDER BY s.relname", (list(QUEUES), [*SCOPED_TABLES, *REFERENCE_TABLES]))]
            for table, analyze, vacuum in due:  # (names of our own tables: the list above)
                if not (vacuum or analyze):
                    continue
                what = ("VACUUM (ANALYZE)" if vacuum and analyze
                        else "VACUUM" if vacuum else "ANALYZE")
                try:
                    c.execute(f"{what} {table}".encode())
                except psycopg.Error:
                    # (autovacuum's work, brought forward: one the server refuses now, a
                    # lock or a timeout, it does later; the sync that asked stays done)
                    continue
                done.append(table)
        return done

    def compact(self, *, actor: str, vacuum: bool = False) -> dict[str, int]:
        before = self._bytes()
        with self.write(actor=actor) as w:
            removed = w.drop_uncited_chunks()
        packed = 0
        after: int | None = 0
        while after is not None:
            with self.write(actor=actor) as w:
                done, after = w.pack_versions(after=after)
            packed += done
        if vacuum:
            with self._pool.connection() as c, map_driver_errors("cannot vacuum the store"):
                for table in ("versions", "chunks", "facts", "entity_fts", "entities"):
                    c.execute(f"VACUUM FULL {table}".encode())
        return {"chunks_removed": removed, "versions_packed": packed,
                "bytes_freed": max(0, before - self._bytes()), "store_bytes": self._bytes()}

    def _bytes(self) -> int:
        """The store's tables with their indexes and TOAST (not the whole database: it
        may hold other stores, each in a schema of its own)."""
        row = self._con.execute(
            "SELECT COALESCE(SUM(pg_total_relation_size(to_regclass(t))), 0)"
            " FROM unnest(?::text[]) AS t", ([*SCOPED_TABLES, *REFERENCE_TABLES],)).fetchone()
        return int(row[0]) if row else 0

    def check_integrity(self, *, sample: int = 200) -> list[Problem]:
        """Every invariant, read in one snapshot (one committed state of the store)."""
        with self.snapshot(), map_driver_errors("cannot check the store"):
            return integrity.check(self._con, sample=sample)

    def vector_sample(self, n: int) -> list[VectorSample]:
        return integrity.vector_sample(self._con, n)

    def rebuild_indexes(self, *, actor: str) -> dict[str, int]:
        with self.write(actor=actor) as w, map_driver_errors("cannot rebuild the indexes"):
            return integrity.rebuild(w)

    def close(self) -> None:
        self._pool.close()


def _safe(url: str) -> str:
    """``url`` without its password, for messages."""
    head, at, tail = url.rpartition("@")
    if not at:
        return url
    scheme, _, cred = head.partition("://")
    return f"{scheme}://{cred.split(':', 1)[0]}@{tail}"
