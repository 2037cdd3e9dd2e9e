"""Whether the store has caught up with its vault: ``index_fresh`` and ``pending_changes``.

A server answers from the store while its first catch-up with the vault runs beside it.
An empty answer then meant "not indexed yet" as much as "not in the notes", and an agent
could not tell which. A ``Freshness`` is told how the catch-up goes (``progress``,
``finished``); a tool call waits for the first catch-up, bounded (``wait``), and every
answer carries the state (``__call__``: fresh, and how many changed files are not
applied yet).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..types import SyncReport

__all__ = ["FIRST_CATCH_UP_WAIT", "EmbedLoop", "Freshness", "run_catch_up"]

# how long a tool call waits for the first catch-up before it answers from the store as
# it stands (saying what is pending)
FIRST_CATCH_UP_WAIT = 30.0


class Freshness:
    """The state of one process's catch-up with its vault (thread-safe)."""

    def __init__(self, *, catching_up: bool = True) -> None:
        self._lock = threading.Lock()
        self._caught_up = threading.Event()
        self._pending = 0
        if not catching_up:
            self._caught_up.set()

    def progress(self, done: int, total: int) -> None:
        """The catch-up applied ``done`` of the ``total`` changed files."""
        with self._lock:
            self._pending = max(0, total - done)

    def finished(self) -> None:
        """The catch-up is over (done, or failed: the watcher still applies edits)."""
        with self._lock:
            self._pending = 0
        self._caught_up.set()

    def wait(self, timeout: float = FIRST_CATCH_UP_WAIT) -> bool:
        """Wait up to ``timeout`` seconds for the first catch-up; whether it is over."""
        return self._caught_up.wait(timeout)

    def __call__(self) -> tuple[bool, int]:
        """``(index_fresh, pending_changes)``: pending is the changed files the catch-up
        has not applied yet (0 once it is over, or before it counted them)."""
        with self._lock:
            return self._caught_up.is_set(), self._pending


def run_catch_up(sync: Callable[[Callable[[int, int], None]], SyncReport],
                 embed: Callable[[], object], fresh: Freshness, *,
                 on_report: Callable[[SyncReport], None],
                 on_error: Callable[[BaseException], None]) -> None:
    """The first catch-up: ``sync`` (told ``fresh.progress``), then ``fresh.finished``,
    then ``embed``: the index is fresh when the notes' text, facts and links are in,
    however long their embedding takes after. A failure is reported, never raised (the
    server goes on; its watcher still applies edits)."""
    try:
        on_report(sync(fresh.progress))
    except Exception as exc:  # noqa: BLE001 - a background thread: report, go on
        on_error(exc)
    finally:
        fresh.finished()
    try:
        embed()
    except Exception as exc:  # noqa: BLE001 - as above
        on_error(exc)


class EmbedLoop:
    """Embeds on a thread of its own whenever told new chunks wait (``kick``), so a
    sync never waits for embedding: a watcher applied an edit at once but the next note,
    added 2 s later, only after 713 chunks of backlog were embedded. Chunks added while
    it embeds are embedded by the next round. One loop per store: its rounds never
    overlap."""

    def __init__(self, embed: Callable[[Callable[[int, int], None]], object],
                 on_error: Callable[[BaseException], None] | None = None) -> None:
        """``embed(progress)`` embeds what waits, calling ``progress`` between batches."""
        self._embed, self._on_error = embed, on_error
        self._stopping = False
        self._wanted = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def kick(self) -> None:
        """Embed what waits, soon (starts the thread on first use)."""
        with self._lock:
            self._idle.clear()
            self._wanted.set()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="knotwork-embed",
                                                daemon=True)
                self._thread.start()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until every kick so far has been embedded; whether it was."""
        return self._idle.wait(timeout)

    def stop(self, timeout: float = 60.0) -> None:
        """Stop after the batch being embedded (its vectors are kept; the rest wait for
        the next sync or process) and wait for the thread, so a process that ends on
        SIGTERM or Ctrl-C never ends inside the model (which aborted it)."""
        with self._lock:
            self._stopping = True
            thread = self._thread
        self._wanted.set()
        if thread is not None:
            thread.join(timeout)

    def _check(self, done: int, total: int) -> None:
        if self._stopping:
            raise _Stopped

    def _run(self) -> None:
        while True:
            self._wanted.wait()
            self._wanted.clear()
            if self._stopping:
                break
            try:
                self._embed(self._check)
            except _Stopped:
                break
            except Exception as exc:  # noqa: BLE001 - a background thread: report, go on
                if self._on_error is not None:
                    self._on_error(exc)
            with self._lock:
                if not self._wanted.is_set():
                    self._idle.set()
        self._idle.set()


class _Stopped(Exception):
    """Raised between two batches to end an embedding round (``EmbedLoop.stop``)."""
