"""Worker processes that live no longer than the sync that started them.

Why: when ``knotwork ingest`` died by SIGKILL or SIGTERM while its pool ran, the forked
workers went on committing their batches after the user had stopped it (documents went
500 → 1,500 in the 5 s after the kill), then idled forever holding the store's files
open. Now

- each worker asks the kernel to kill it when its parent dies (``PR_SET_PDEATHSIG`` on
  Linux) and, everywhere, watches ``getppid()`` from a thread, and looks once more before
  each commit: a worker never commits for a parent that is gone;
- a worker ignores Ctrl-C and takes SIGTERM's default (the parent's handler, inherited by
  the fork, would turn it into an exception the pool's loop catches and survives);
- ``running`` stops the pool at once when the sync is interrupted (Ctrl-C, or SIGTERM
  mapped to it): pending batches are cancelled and the workers terminated, so a batch in
  flight is rolled back, never half written, and the next sync writes it again.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

_PR_SET_PDEATHSIG = 1
_WATCH_S = 0.1  # how often a worker looks at its parent

_parent: dict[str, int] = {}


def can_fork() -> bool:
    """Whether this process may fork workers: a platform that forks, and no other thread
    that could hold a lock the copy would inherit (a server, a progress bar's refresh)."""
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def cores() -> int:
    """The CPUs this process may run on (the container's share, not the host's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux: no affinity API
        return max(1, os.cpu_count() or 1)


def guard_worker(parent: int) -> None:
    """In a new worker: die with ``parent``, leave Ctrl-C to it, and stop on SIGTERM."""
    _parent["pid"] = parent
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    orphaned()  # the parent may have died before the kernel was asked
    threading.Thread(target=_watch, name="knotwork-parent-watch", daemon=True).start()


def orphaned() -> None:
    """End this worker at once if the process that started it is gone."""
    parent = _parent.get("pid")
    if parent is not None and os.getppid() != parent:
        os._exit(1)  # no cleanup: an open transaction is rolled back by SQLite


def _watch() -> None:
    while True:
        orphaned()
        time.sleep(_WATCH_S)


@contextlib.contextmanager
def running(make: Callable[[], ProcessPoolExecutor]) -> Iterator[ProcessPoolExecutor]:
    """``make()``'s pool, shut down in order on success and at once on any interruption."""
    pool = make()
    try:
        yield pool
    except BaseException:
        stop(pool)
        raise
    pool.shutdown(wait=True)


def stop(pool: ProcessPoolExecutor, *, grace_s: float = 2.0) -> None:
    """Cancel what has not started and end the workers: terminate, then kill."""
    processes: dict[Any, Any] = dict(getattr(pool, "_processes", None) or {})
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes.values():
        with contextlib.suppress(Exception):
            proc.terminate()
    deadline = time.monotonic() + grace_s
    for proc in processes.values():
        with contextlib.suppress(Exception):
            proc.join(max(0.0, deadline - time.monotonic()))
            if proc.is_alive():
                proc.kill()
                proc.join(1.0)
