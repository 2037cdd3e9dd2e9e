"""Which store a CLI command uses, by the one rule of ``knotwork.sync.stores``.

- ``--db`` (or ``KNOTWORK_DB``) when given;
- a command with ``--vault`` (``mcp``, ``serve``, ``watch``): the vault's store, as
  ``Knotwork.open`` finds it (None here);
- ``ingest PATH``: the store of the vault at PATH if it has one, else the store found
  from the current folder upward, else ``./.knotwork/store.db``, made by the sync;
- any other command: the store found from the current folder upward, or none (the
  command exits 3 and says so, creating nothing).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..sync.stores import STORE, found_from, vault_store

__all__ = ["ingest_store", "reading_store", "remove_new_store"]


def reading_store(db: str | None) -> str | None:
    """The store a command that reads uses; None when there is none to read."""
    if db is not None:
        return db
    found = found_from(Path.cwd())
    return str(found) if found is not None else None


def ingest_store(db: str | None, path: str, *, scope: str) -> str:
    """The store ``ingest PATH`` writes to (see the module docstring)."""
    if db is not None:
        return db
    target = Path(path).expanduser()
    folder = target if target.is_dir() else target.parent
    if folder.is_dir() and (own := vault_store(folder, scope=scope)) is not None:
        return str(own)
    found = found_from(Path.cwd())
    return str(found) if found is not None else str(STORE)


def remove_new_store(db: str) -> None:
    """Remove the store file a failed first sync left (and its side files, and its
    ``.knotwork`` folder when empty): nothing makes a store but a successful sync."""
    path = Path(db.removeprefix("sqlite:///")).expanduser()
    for suffix in ("", "-wal", "-shm", "-journal", ".vectors"):
        side = path.with_name(path.name + suffix)
        if side.is_file():
            side.unlink()
    try:
        path.parent.rmdir()  # only when empty
    except OSError:
        pass


def is_file_store(db: str) -> bool:
    """Whether ``db`` names a file (not ``:memory:`` or a server URL)."""
    return db != ":memory:" and "://" not in db.removeprefix("sqlite:///")


def exists(db: str) -> bool:
    return os.path.exists(os.path.expanduser(db.removeprefix("sqlite:///")))
