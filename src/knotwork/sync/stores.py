"""Where a vault's store is: one rule for the CLI, MCP, REST and ``Knotwork.open``.

A store is a ``.knotwork/store.db`` in a folder, and it is found as git finds ``.git``:

- from a folder (the CLI's current one), the nearest ``.knotwork/store.db`` in it or
  above it (``found_from``);
- for a vault, the nearest one at or above the vault that holds that vault — its scope's
  last full sync read that folder, or none yet (``vault_store``). So a store the quick
  start made beside a vault it ingested from a parent folder is the store ``knotwork mcp
  --vault`` uses too, not a second one that embeds the vault again; and a store of
  another vault above this one is passed over.

Nothing here creates a store: the first successful sync or write does.
"""

from __future__ import annotations

from pathlib import Path

from ..domain.ids import root_key
from ..errors import KnotworkError
from ..store import open_store

__all__ = ["STORE", "found_from", "holds_vault", "vault_store"]

STORE = Path(".knotwork") / "store.db"


def _upward(start: Path) -> list[Path]:
    """The store files at ``start`` and above it that exist, nearest first."""
    here = start.expanduser().resolve()
    return [d / STORE for d in (here, *here.parents) if (d / STORE).is_file()]


def found_from(start: Path) -> Path | None:
    """The nearest ``.knotwork/store.db`` in ``start`` or a folder above it, else None."""
    found = _upward(start)
    return found[0] if found else None


def holds_vault(store: Path, vault: Path, *, scope: str) -> bool:
    """Whether ``store`` is ``vault``'s: its scope's last full sync read ``vault``, or it
    records no folder yet (a store no sync has filled). An unreadable file is no one's."""
    try:
        s = open_store(str(store))
    except KnotworkError:
        return False
    try:
        known = s.reader.meta(root_key(scope))
    except KnotworkError:
        return False
    finally:
        s.close()
    return known is None or Path(known) == vault.expanduser().resolve()


def vault_store(vault: Path, *, scope: str) -> Path | None:
    """The existing store of ``vault`` (see the module docstring), or None."""
    for store in _upward(vault):
        if holds_vault(store, vault, scope=scope):
            return store
    return None


def store_for_vault(vault: Path, *, scope: str) -> Path:
    """``vault``'s store: the existing one (``vault_store``), else the one its first sync
    makes, ``<vault>/.knotwork/store.db``."""
    return vault_store(vault, scope=scope) or vault.expanduser().resolve() / STORE
