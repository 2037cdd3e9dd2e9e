"""Watch a vault folder and hand each settled batch of changed paths to a callback.

Used by ``knotwork watch`` and inside the MCP and REST servers, so an agent never reads
a vault frozen at its first question. Events are debounced (an editor's atomic save is a
delete plus a create of one path: it arrives as one batch and is applied as an edit).
A batch that names a folder (a folder moved or deleted) asks for a full sync instead.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

import watchfiles

log = logging.getLogger("knotwork.watch")
IGNORED_DIRS = (".git", ".obsidian", ".knotwork", ".trash", "node_modules")

Apply = Callable[[list[str] | None], object]  # vault-relative paths, or None = full sync


def _relevant(change: watchfiles.Change, path: str) -> bool:
    parts = Path(path).parts
    return not any(p in IGNORED_DIRS for p in parts)


class VaultWatcher:
    """Run ``apply`` for every debounced batch of changes under ``root``."""

    def __init__(self, root: str | os.PathLike[str], apply: Apply, *,
                 wanted: Callable[[str], bool], debounce_ms: int = 500,
                 on_error: Callable[[BaseException], None] | None = None,
                 rule_files: frozenset[str] = frozenset()) -> None:
        self.root = Path(root).expanduser().resolve()
        self.apply = apply
        self.wanted = wanted  # is this vault-relative path one the syncs read as a note?
        self.rule_files = rule_files  # files whose change changes which files are notes
        self.debounce_ms = debounce_ms
        self.on_error = on_error or (lambda exc: log.warning("watch: %s", exc))
        self.stop_event = threading.Event()
        self.ready = threading.Event()
        self._thread: threading.Thread | None = None

    def _paths(self, changes: set[tuple[watchfiles.Change, str]]) -> list[str] | None:
        rels: list[str] = []
        for _change, path in changes:
            p = Path(path)
            try:
                rel = p.relative_to(self.root).as_posix()
            except ValueError:
                continue
            if p.is_dir() or (not p.exists() and not self.wanted(rel)) \
                    or rel in self.rule_files:
                # a folder came or went, or the ignore rules changed: only a full sync
                # sees which notes that adds or leaves out
                return None
            if self.wanted(rel):
                rels.append(rel)
        return sorted(set(rels))

    def run(self) -> None:
        """Block, applying batches until ``stop()``."""
        self.ready.set()
        for changes in watchfiles.watch(self.root, watch_filter=_relevant,
                                        debounce=self.debounce_ms, step=50,
                                        stop_event=self.stop_event, raise_interrupt=False,
                                        yield_on_timeout=False):
            paths = self._paths(changes)
            if paths == []:
                continue
            try:
                self.apply(paths)
            except Exception as exc:  # noqa: BLE001 - one bad batch must not stop the watcher
                self.on_error(exc)

    def start(self) -> VaultWatcher:
        self._thread = threading.Thread(target=self.run, name="knotwork-watch", daemon=True)
        self._thread.start()
        self.ready.wait(5)
        return self

    def stop(self) -> None:
        self.stop_event.set()
        if self._thread:
            self._thread.join(timeout=5)
