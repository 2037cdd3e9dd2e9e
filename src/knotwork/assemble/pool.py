"""Run calls in daemon threads that a caller waits for only until a deadline.

Why not ``concurrent.futures.ThreadPoolExecutor``: its workers are joined when the
interpreter exits, so a source that hangs would hold up the process (a CLI call) long
after its timeout had been reported. Here each call gets a daemon thread of its own that
ends with the call: a hung call is left behind, its result ignored, and no idle thread
outlives the assembly (a process with other threads, say, ingests without worker
processes, which it could not fork safely). A thread costs ~0.1 ms, and the store opens
a connection for it (~0.3 ms): small beside a source's fetch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Task(Generic[T]):
    """A submitted call: ``wait(timeout)`` its outcome, a value or the exception it raised."""

    def __init__(self, fn: Callable[[], T]) -> None:
        self.fn = fn
        self._done = threading.Event()
        self.value: T | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.value = self.fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiter, never lost
            self.error = exc
        finally:
            self._done.set()

    def wait(self, timeout: float) -> bool:
        """True once the call ended (value or error), False if ``timeout`` passed first."""
        return self._done.wait(max(0.0, timeout))


class DaemonPool:
    """Start each submitted call in a daemon thread named after the pool."""

    def __init__(self, name: str = "knotwork-source") -> None:
        self.name = name
        self._lock = threading.Lock()
        self._started = 0

    def submit(self, fn: Callable[[], T]) -> Task[T]:
        task: Task[T] = Task(fn)
        with self._lock:
            self._started += 1
            n = self._started
        threading.Thread(target=task.run, name=f"{self.name}-{n}", daemon=True).start()
        return task


POOL = DaemonPool()
