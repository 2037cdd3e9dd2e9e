"""The vault a Knotwork reads: what one ingested path means, and the vault's watcher.

The parser and the sync machinery load when first used, here as in the facade: a
process that only queries imports neither.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InvalidQuery
from ..store import StoreReader

if TYPE_CHECKING:
    from .watch import VaultWatcher

__all__ = ["sync_target", "watcher"]


def sync_target(reader: StoreReader, root: Path, only: Sequence[str] | None, *, scope: str,
                patterns: tuple[str, ...], vault: Path | None
                ) -> tuple[Path, Sequence[str] | None]:
    """The folder a sync of ``root`` reads and the paths it is limited to (``only``).

    A folder is synced as given; one note file (or one that no longer exists, which the
    store still holds) is synced alone, named by its path in its vault (``note_root``).
    """
    # a file path that no longer exists (a folder path has no suffix: "not a folder")
    gone = not root.exists() and bool(root.suffix) and root.parent.is_dir()
    if not (root.is_file() or gone):
        return root, only
    if only is not None:
        raise InvalidQuery("give a folder with `only`, not a file")
    folder, rel = note_root(reader, root, scope=scope, patterns=patterns, vault=vault,
                            gone=gone)
    return folder, [rel]


def note_root(reader: StoreReader, file: Path, *, scope: str, patterns: tuple[str, ...],
              vault: Path | None, gone: bool = False) -> tuple[Path, str]:
    """The vault holding ``file`` and the file's path in it.

    The vault is ``vault``, else the folder the scope's last full sync read: a note is
    named by its path in its vault, so one file synced alone is the same document as when
    its folder is synced. A ``gone`` file is one the store still holds: syncing it alone
    deletes it, as a sync of its folder would.
    """
    from ..domain.ids import root_key
    from ..ingest.sources import VaultRules

    full = file.parent.resolve() / file.name  # a symlinked note keeps its own name
    known = reader.meta(root_key(scope))
    roots = [r for r in (vault, Path(known) if known else None) if r is not None]
    for root in roots:
        if full.is_relative_to(root):
            rel = full.relative_to(root).as_posix()
            if gone:
                held = reader.document(scope, rel)
                if held is None or held.deleted_at is not None:
                    raise InvalidQuery(f"{file} does not exist, and the store holds no"
                                       " note at that path")
                return root, rel
            if VaultRules(root, patterns=patterns).file(rel) is None:
                raise InvalidQuery(f"{file} is not a note: the patterns"
                                   f" ({', '.join(patterns)}) or the vault's ignore rules"
                                   " leave it out")
            return root, rel
    where = " or ".join(str(r) for r in roots) or "no folder synced yet"
    raise InvalidQuery(f"{file} is not inside the vault of scope {scope!r} ({where}):"
                       " ingest the folder that holds it first")


def watcher(vault: Path, apply: Callable[[list[str] | None], None], *,
            patterns: tuple[str, ...], debounce_ms: int,
            on_error: Callable[[BaseException], None] | None = None) -> VaultWatcher:
    """A watcher of the files ``patterns`` cover in ``vault`` (the vault's ignore rules
    apply), handing ``apply`` the changed vault-relative paths."""
    from ..ingest.sources import DEFAULT_IGNORES, IGNORE_FILE, wanted
    from .watch import VaultWatcher

    return VaultWatcher(vault, apply, debounce_ms=debounce_ms, on_error=on_error,
                        wanted=lambda rel: wanted(vault, rel, patterns),
                        rule_files=frozenset({IGNORE_FILE}),
                        ignored_dirs=frozenset(DEFAULT_IGNORES))
