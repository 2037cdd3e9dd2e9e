"""Open a SQLite store file: pragmas, migrations, transactions and error mapping.

Several processes may open one store (a watcher, an MCP server, the CLI): WAL lets
readers run beside the one writer, ``busy_timeout`` makes a second writer wait instead
of failing, and every write runs in ``BEGIN IMMEDIATE`` so it takes the write lock
before it reads the state it is about to change.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from ...domain.ids import entity_key, name_iri
from ...domain.words import label_initials
from ...errors import SchemaVersionError, StoreError
from .. import record_time
from .schema import AFTER_MIGRATION, MIGRATIONS, SCHEMA_VERSION

_clock_lock = threading.Lock()
_last_ts = 0.0


def now_iso() -> str:
    """Return a UTC timestamp with microseconds, strictly increasing within a process.

    Why: ``as_of`` queries compare recorded/retracted times; two writes in the same
    microsecond must still be ordered.
    """
    global _last_ts
    with _clock_lock:
        t = time.time()
        if t <= _last_ts:
            t = _last_ts + 1e-6
        _last_ts = t
    return record_time(datetime.fromtimestamp(t, UTC))


@contextmanager
def map_driver_errors(what: str) -> Iterator[None]:
    """Translate sqlite3 errors into ``StoreError`` at this one boundary."""
    try:
        yield
    except sqlite3.Error as exc:
        raise StoreError(f"{what}: {exc}") from exc


# Why map the file: reads then copy no page into SQLite's cache and make no read() call,
# which took 6-11% off each context answer on a 290 MB store (paired, 200 queries). The
# mapping is the OS page cache itself: it is shared, not this process's own memory.
MMAP_BYTES = 1 << 30


def connect(path: str, *, synchronous: str = "FULL", busy_timeout_ms: int = 30_000
            ) -> sqlite3.Connection:
    """Open (creating if needed) and migrate the store at ``path``."""
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    with map_driver_errors(f"cannot open store {path}"):
        con = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                              timeout=busy_timeout_ms / 1000)
        con.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        _wal(con, busy_timeout_ms / 1000)
        con.execute(f"PRAGMA synchronous = {synchronous}")
        con.execute("PRAGMA foreign_keys = OFF")
        con.execute("PRAGMA temp_store = MEMORY")
        con.execute("PRAGMA cache_size = -65536")
        con.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        # the Python code's own spellings of name keys and IRIs, for migrations 8 and 9
        con.create_function("kw_entity_key", 2,
                            lambda scope, key: entity_key(scope, f"name:{key}"),
                            deterministic=True)
        con.create_function("kw_name_iri", 2, name_iri, deterministic=True)
        con.create_function("kw_nfc", 1, _nfc, deterministic=True)
        con.create_function("kw_initials", 2, _initials, deterministic=True)
        _migrate(con)
    return con


def _wal(con: sqlite3.Connection, timeout_s: float) -> None:
    """Put the store in WAL mode, waiting up to ``timeout_s`` for another process that
    holds it meanwhile.

    Why not the busy timeout alone: SQLite answers a change of journal mode that meets
    another connection's write lock on a store still in rollback mode (another process
    creating the same new store) with "database is locked" at once, without calling its
    busy handler. Two ingests started together on a new store failed so in 4 of 25 tries.
    So the change is tried again, after short sleeps, until the timeout."""
    deadline = time.monotonic() + timeout_s
    pause = 0.002
    while True:
        try:
            con.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _initials(label: str | None, i: int) -> str | None:
    """The ``i``-th of what ``label`` spells by its initials, or NULL (migration 15)."""
    found = label_initials(label) if label else ()
    return found[i] if i < len(found) else None


def _nfc(text: str | None) -> str | None:
    return None if text is None else unicodedata.normalize("NFC", text)


_ADD_COLUMN = re.compile(r"\s*ALTER TABLE (\w+) ADD COLUMN (\w+)", re.IGNORECASE)


def _has_column_already(con: sqlite3.Connection, sql: str) -> bool:
    """Whether ``sql`` adds a column its table already has: SQLite has no ``ADD COLUMN IF
    NOT EXISTS``, and a store whose recorded version is behind its tables (restored from
    parts, or set back by hand) must still open."""
    m = _ADD_COLUMN.match(sql)
    return m is not None and any(
        r[1] == m.group(2) for r in con.execute(f"PRAGMA table_info({m.group(1)})"))


def _migrate(con: sqlite3.Connection) -> None:
    con.execute("BEGIN IMMEDIATE")
    try:
        has_meta = con.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
        current = 0
        if has_meta:
            row = con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            current = int(row[0]) if row else 0
        if current > SCHEMA_VERSION:
            raise SchemaVersionError(current, SCHEMA_VERSION)
        for number, statements in enumerate(MIGRATIONS[current:], current + 1):
            for sql in statements:
                if not _has_column_already(con, sql):
                    con.execute(sql)
            if number in AFTER_MIGRATION:
                AFTER_MIGRATION[number](con)
        if current < SCHEMA_VERSION:
            con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('schema_version', ?)",
                        (str(SCHEMA_VERSION),))
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


class Transaction:
    """One write transaction holding the store's write lock; savepoints per document."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con
        self._next_ids: dict[str, int] = {}
        self._sp = 0

    def next_id(self, table: str) -> int:
        """Hand out explicit row ids so a batch can use executemany.

        Why: inside ``BEGIN IMMEDIATE`` no other writer can insert, so max(id)+1 is ours.
        """
        return self.take_ids(table, 1)

    def take_ids(self, table: str, n: int) -> int:
        """Hand out ``n`` consecutive row ids at once; return the first."""
        nxt = self._next_ids.get(table)
        if nxt is None:
            nxt = self.con.execute(f"SELECT COALESCE(MAX(id), 0) + 1 FROM {table}").fetchone()[0]
        self._next_ids[table] = nxt + n
        return int(nxt)

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """Run a block atomically inside the transaction; a failure undoes only it."""
        self._sp += 1
        name = f"sp{self._sp}"
        saved_ids = dict(self._next_ids)
        self.con.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            self.con.execute(f"ROLLBACK TO {name}")
            self.con.execute(f"RELEASE {name}")
            self._next_ids = saved_ids
            raise
        self.con.execute(f"RELEASE {name}")
