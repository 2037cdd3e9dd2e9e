"""A pool of daemon threads whose tasks a caller waits for only until a deadline.

Why not ``concurrent.futures.ThreadPoolExecutor``: its workers are joined when the
interpreter exits, so a source that hangs would hold up the process (a CLI call) long
after its timeout had been reported. These workers are daemons: a hung task is left
behind, its result ignored, and the pool starts another worker for the next task.
Idle workers are kept for reuse (each keeps its store connection) and leave after a
minute without work.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
_IDLE_SECONDS = 60.0


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
    def __init__(self, name: str = "knotwork-source") -> None:
        self.name = name
        self._queue: queue.SimpleQueue[Task[object]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._started = 0

    def submit(self, fn: Callable[[], T]) -> Task[T]:
        task: Task[T] = Task(fn)
        with self._lock:
            if self._idle:
                self._idle -= 1  # that worker takes this task
            else:
                self._started += 1
                threading.Thread(target=self._work, name=f"{self.name}-{self._started}",
                                 daemon=True).start()
        self._queue.put(task)  # type: ignore[arg-type]  # Task is invariant in T
        return task

    def _work(self) -> None:
        while True:
            try:
                task = self._queue.get(timeout=_IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if self._idle and self._queue.empty():
                        self._idle -= 1
                        return
                continue
            task.run()
            with self._lock:
                self._idle += 1


POOL = DaemonPool()
