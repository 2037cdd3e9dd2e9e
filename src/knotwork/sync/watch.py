"""Watch a vault folder and hand each settled batch of changed paths to a callback.

Used by ``knotwork watch`` and inside the MCP and REST servers, so an agent never reads
a vault frozen at its first question. Events are debounced (an editor's atomic save is a
delete plus a create of one path: it arrives as one batch and is applied as an edit).
A batch that names a folder (a folder moved or deleted) asks for a full sync instead.

A note may be a symlink to another file of the vault (``sources._admit`` reads no link
that leaves it). An edit to that file is reported under the file's own path only, so the
watcher keeps the vault's links by the file each ends at and re-syncs them with it.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import watchfiles

log = logging.getLogger("knotwork.watch")

Apply = Callable[[list[str] | None], object]  # vault-relative paths, or None = full sync


def _relevant_under(root: Path, ignored: frozenset[str]
                    ) -> Callable[[watchfiles.Change, str], bool]:
    """The event filter for a vault at ``root``: an event inside a folder named in
    ``ignored`` is dropped. Only the path below ``root`` is judged: a vault kept under a
    folder of such a name (``~/node_modules/notes``) is still watched."""
    skip = len(root.parts)

    def relevant(_change: watchfiles.Change, path: str) -> bool:
        return ignored.isdisjoint(Path(path).parts[skip:])

    return relevant


def _symlinks(root: Path, ignored: frozenset[str]) -> Iterator[Path]:
    """Every symlink under ``root`` outside the ``ignored`` folders; folder links are
    listed, not followed (the syncs do not follow them either)."""
    folders = [str(root)]
    while folders:
        try:
            with os.scandir(folders.pop()) as it:
                entries = list(it)
        except OSError:
            continue  # an unreadable folder, as the syncs skip it
        for entry in entries:
            try:
                link, folder = entry.is_symlink(), entry.is_dir(follow_symlinks=False)
            except OSError:
                continue  # gone since the listing: the watcher thread must not die of it
            if link:
                yield Path(entry.path)
            elif folder and entry.name not in ignored:
                folders.append(entry.path)


def _end(link: Path) -> Path | None:
    """The path ``link`` ends at, through any links on the way (None: a link loop)."""
    try:
        return link.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a loop, on Python 3.11
        return None


class _Links:
    """The vault's symlinked notes by the file each ends at.

    Built by one walk when the watch starts (and again after a batch that asks for a full
    sync: a folder moved in may hold links no event named). Afterwards a batch costs its
    own paths, unless it names a link (made, retargeted or removed): then every known
    link's end is read again, since a link to that link now ends elsewhere too.
    """

    def __init__(self, root: Path, wanted: Callable[[str], bool], ignored: frozenset[str]
                 ) -> None:
        self.root, self.wanted, self.ignored = root, wanted, ignored
        self.ends: dict[str, Path] = {}  # link (vault-relative) -> the file it ends at
        self.by_end: dict[Path, set[str]] = {}

    def scan(self) -> None:
        self.ends, self.by_end = {}, {}
        for link in _symlinks(self.root, self.ignored):
            rel = link.relative_to(self.root).as_posix()
            if self.wanted(rel):
                self._set(rel, _end(link))

    def _set(self, rel: str, end: Path | None) -> None:
        old = self.ends.pop(rel, None)
        if old is not None:
            self.by_end[old].discard(rel)
            if not self.by_end[old]:
                del self.by_end[old]
        if end is not None:
            self.ends[rel] = end
            self.by_end.setdefault(end, set()).add(rel)

    def affected(self, changed: Sequence[tuple[Path, str]]) -> set[str]:
        """The links to sync with a batch of changed ``(path, vault-relative path)``: those
        ending at a changed file, and those whose end moved with a changed link."""
        named = [rel for p, rel in changed
                 if rel in self.ends or (p.is_symlink() and self.wanted(rel))]
        out = self._reread({*self.ends, *named}) if named else set()
        for p, _rel in changed:
            out |= self.by_end.get(p, set())
        return out

    def _reread(self, links: Iterable[str]) -> set[str]:
        """Read the end of each of ``links`` again; return those whose end moved (or that
        are links no more)."""
        moved: set[str] = set()
        for rel in links:
            link = self.root / rel
            end = _end(link) if link.is_symlink() else None
            if end != self.ends.get(rel):
                self._set(rel, end)
                moved.add(rel)
        return moved


class VaultWatcher:
    """Run ``apply`` for every debounced batch of changes under ``root``."""

    def __init__(self, root: str | os.PathLike[str], apply: Apply, *,
                 wanted: Callable[[str], bool], debounce_ms: int = 500,
                 on_error: Callable[[BaseException], None] | None = None,
                 rule_files: frozenset[str] = frozenset(),
                 ignored_dirs: frozenset[str] = frozenset()) -> None:
        self.root = Path(root).expanduser().resolve()
        self.apply = apply
        self.wanted = wanted  # is this vault-relative path one the syncs read as a note?
        self.rule_files = rule_files  # files whose change changes which files are notes
        self.ignored_dirs = ignored_dirs  # folders the syncs never read: their events are noise
        self.debounce_ms = debounce_ms
        self.on_error = on_error or (lambda exc: log.warning("watch: %s", exc))
        self.stop_event = threading.Event()
        self.ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._links = _Links(self.root, wanted, ignored_dirs)

    def _paths(self, changes: set[tuple[watchfiles.Change, str]]) -> list[str] | None:
        rels: list[str] = []
        changed: list[tuple[Path, str]] = []  # any file: it may be what a note links to
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
            changed.append((p, rel))
            if self.wanted(rel):
                rels.append(rel)
        rels.extend(self._links.affected(changed))
        return sorted(set(rels))

    def run(self) -> None:
        """Block, applying batches until ``stop()``."""
        self._links.scan()
        self.ready.set()
        relevant = _relevant_under(self.root, self.ignored_dirs)
        for changes in watchfiles.watch(self.root, watch_filter=relevant,
                                        debounce=self.debounce_ms, step=50,
                                        stop_event=self.stop_event, raise_interrupt=False,
                                        yield_on_timeout=False):
            paths = self._paths(changes)
            if paths == []:
                continue
            if paths is None:
                self._links.scan()
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
