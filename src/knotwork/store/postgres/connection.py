"""Connections to a PostgreSQL store: the pool, migrations, transactions and error mapping.

Reads outside a transaction borrow a pooled connection for one statement (autocommit);
``snapshot`` and ``write`` pin one connection to the thread for their block, so the
statements inside see one state (a ``REPEATABLE READ`` snapshot) or make one transaction.
The backend's SQL is written with ``?`` placeholders, as the SQLite backend's is; ``Con``
spells them as psycopg's ``%s`` (once per statement text).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg import pq
from psycopg_pool import ConnectionPool

from ...errors import SchemaVersionError, StoreError
from .. import record_time
from .schema import MIGRATIONS, SCHEMA_VERSION

_clock_lock = threading.Lock()
_last_ts = 0.0
# one advisory lock key for migrations (any fixed 64-bit number; "knotwork" in ASCII)
MIGRATE_LOCK = 0x6B6E6F74776F726B


def now_iso() -> str:
    """A UTC record time, strictly increasing within a process (as the SQLite store's)."""
    global _last_ts
    with _clock_lock:
        t = time.time()
        if t <= _last_ts:
            t = _last_ts + 1e-6
        _last_ts = t
    return record_time(datetime.fromtimestamp(t, UTC))


@contextmanager
def map_driver_errors(what: str) -> Iterator[None]:
    """Translate psycopg errors into ``StoreError`` at this one boundary."""
    try:
        yield
    except psycopg.Error as exc:
        raise StoreError(f"{what}: {exc}") from exc


_SQL: dict[str, str] = {}


def spell(sql: str) -> str:
    """``?`` placeholders as psycopg's ``%s`` (a literal ``%`` doubled)."""
    out = _SQL.get(sql)
    if out is None:
        out = _SQL[sql] = sql.replace("%", "%%").replace("?", "%s")
    return out


class Result:
    """What one statement gave back, fetched: rows and the number of rows it changed."""

    __slots__ = ("rows", "rowcount")

    def __init__(self, rows: list[tuple[Any, ...]], rowcount: int) -> None:
        self.rows = rows
        self.rowcount = rowcount

    def fetchone(self) -> Any:  # (a row, or None: as sqlite3's, the caller knows which)
        return self.rows[0] if self.rows else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.rows)


_TUPLES = pq.ExecStatus.TUPLES_OK


def _run(con: psycopg.Connection[Any], sql: str, args: Sequence[object] | None) -> Result:
    # (no arguments: the text goes as it is, a ``%`` unread)
    cur = con.execute(spell(sql), args) if args is not None else con.execute(sql.encode())
    # (the result's status, not ``cur.description``: that builds a column object for
    # every column of every statement, a tenth of a read's client time)
    res = cur.pgresult
    rows = cur.fetchall() if res is not None and res.status == _TUPLES else []
    return Result(rows, cur.rowcount)


# What a snapshot reads as it opens, in the same round trip as its BEGIN (``Con.begin``):
# the meta values nearly every answer asks for (the commit count of ``data_version``,
# the live chunk count), each fixed for the snapshot's life.
SNAPSHOT_META = ("commits", "live_chunks")
_BEGIN = ("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT key, value FROM meta"
          " WHERE key IN (" + ", ".join(f"'{k}'" for k in SNAPSHOT_META) + ")").encode()


class Con:
    """Statements on the thread's pinned connection, or on one borrowed for each."""

    def __init__(self, pool: ConnectionPool[psycopg.Connection[Any]],
                 local: threading.local) -> None:
        self.pool = pool
        self.local = local

    @property
    def pinned(self) -> psycopg.Connection[Any] | None:
        return getattr(self.local, "con", None)

    def begin(self, con: psycopg.Connection[Any]) -> None:
        """Open a read-only ``REPEATABLE READ`` snapshot on ``con`` (pinned to this
        thread) and read ``SNAPSHOT_META`` in it, one round trip for both (two statements
        in one simple query: the snapshot is taken at the ``SELECT``, as at a first read)."""
        cur = con.execute(_BEGIN)
        cur.nextset()
        self.local.meta = {str(k): str(v) for k, v in cur.fetchall()}
        self.local.kept = {}

    def end(self) -> None:
        self.local.meta = self.local.kept = None

    def kept(self) -> dict[Any, Any] | None:
        """What reads of the open snapshot keep for its life (reads of one state give
        one answer), or None outside one."""
        kept: dict[Any, Any] | None = getattr(self.local, "kept", None)
        return kept

    def meta(self, key: str) -> tuple[bool, str | None]:
        """(True, value) when the open snapshot read ``key`` as it opened (value None: no
        such row); (False, None) outside one, or for another key."""
        known: dict[str, str] | None = getattr(self.local, "meta", None)
        if known is None or key not in SNAPSHOT_META:
            return False, None
        return True, known.get(key)

    def execute(self, sql: str, args: Sequence[object] | None = ()) -> Result:
        con = self.pinned
        with map_driver_errors("query failed"):
            if con is not None:
                return _run(con, sql, args)
            with self.pool.connection() as c:
                return _run(c, sql, args)

    def pipeline(self, statements: Sequence[tuple[str, Sequence[object] | None]]
                 ) -> list[Result]:
        """Run ``statements`` in order in one round trip (psycopg's pipeline mode) on the
        pinned connection; each one's result. For statements none of which needs another's
        result to be written: a write sends them together rather than waiting on each.
        An error stops the rest (the transaction is then failed, as after any error)."""
        con = self.pinned
        if con is None or len(statements) < 2:
            return [self.execute(sql, args) for sql, args in statements]
        with map_driver_errors("query failed"):
            with con.pipeline():
                curs = [con.execute(spell(sql), args) if args is not None
                        else con.execute(sql.encode()) for sql, args in statements]
            out = []
            for cur in curs:
                res = cur.pgresult
                rows = cur.fetchall() if res is not None and res.status == _TUPLES else []
                out.append(Result(rows, cur.rowcount))
            return out

    def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> Result:
        if not rows:
            return Result([], 0)
        con = self.pinned
        with map_driver_errors("query failed"):
            if con is None:
                with self.pool.connection() as c, c.cursor() as cur:
                    cur.executemany(spell(sql), rows)
                    return Result([], cur.rowcount)
            with con.cursor() as cur:
                cur.executemany(spell(sql), rows)
                return Result([], cur.rowcount)


def kept(con: Con) -> dict[Any, Any] | None:
    """``con.kept()``, or None for a stand-in that only executes (a test's spy)."""
    read = getattr(con, "kept", None)
    return read() if read is not None else None


def snapshot_meta(con: Con, key: str) -> tuple[bool, str | None]:
    """``con.meta(key)``, or (False, None) for a stand-in that only executes."""
    read = getattr(con, "meta", None)
    return read(key) if read is not None else (False, None)


def migrate(con: psycopg.Connection[Any]) -> None:
    """Bring the schema up to date, one migrating process at a time."""
    with con.transaction():
        con.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_LOCK,))
        # (in the schema the store's tables are made in: another schema on the search
        # path may hold a store of its own)
        has_meta = con.execute("SELECT EXISTS(SELECT 1 FROM pg_tables WHERE tablename = 'meta'"
                               " AND schemaname = current_schema())").fetchone()
        current = 0
        if has_meta and has_meta[0]:
            row = con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            current = int(row[0]) if row else 0
        if current > SCHEMA_VERSION:
            raise SchemaVersionError(current, SCHEMA_VERSION)
        for statements in MIGRATIONS[current:]:
            for sql in statements:
                con.execute(sql.encode())  # (our own DDL, not user text)
        if current < SCHEMA_VERSION:
            con.execute("INSERT INTO meta(key, value) VALUES('schema_version', %s)"
                        " ON CONFLICT(key) DO UPDATE SET value = EXCLUDED.value",
                        (str(SCHEMA_VERSION),))


class Transaction:
    """One write transaction on a pinned connection; savepoints per document."""

    def __init__(self, con: Con) -> None:
        self.con = con
        self._sp = 0

    def ids(self, table: str, n: int) -> list[int]:
        """``n`` new row ids of ``table`` from its identity sequence (any writer's ids
        differ; a rolled-back transaction's are not handed out again)."""
        if n <= 0:
            return []
        seq = "vector_log_seq_seq" if table == "vector_log" else f"{table}_id_seq"
        return [int(r[0]) for r in self.con.execute(
            "SELECT nextval(?) FROM generate_series(1, ?)", (seq, n))]

    def next_id(self, table: str) -> int:
        return self.ids(table, 1)[0]

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """Run a block atomically inside the transaction; a failure undoes only it."""
        self._sp += 1
        name = f"sp{self._sp}"
        self.con.execute(f"SAVEPOINT {name}", None)
        try:
            yield
        except BaseException:
            self.con.execute(f"ROLLBACK TO SAVEPOINT {name}", None)
            self.con.execute(f"RELEASE SAVEPOINT {name}", None)
            raise
        self.con.execute(f"RELEASE SAVEPOINT {name}", None)
