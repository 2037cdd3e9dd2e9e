"""The storage boundary: narrow Protocols over plain records, and ``open_store(url)``.

No cursor, session or driver object crosses this boundary; all SQL lives in
``store/<backend>/``. A backend is a module whose store satisfies ``Store`` and passes the
contract suite in ``tests/store/test_contract.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from ..errors import BackendUnavailable
from ..types import (
    Applied,
    ChunkRow,
    Deleted,
    EntityRow,
    FactDraft,
    FactRow,
    Hit,
    ParsedDocument,
    Unchanged,
)


class StoreWriter(Protocol):
    """Mutations inside one transaction (see ``Store.write``)."""

    def savepoint(self) -> AbstractContextManager[None]: ...

    def apply(self, scope: str, doc: ParsedDocument, *, force: bool = False,
              rename_from: str | None = None) -> Applied | Unchanged: ...

    def delete(self, scope: str, path: str, *, reason: str = ...) -> Deleted | None: ...

    def assert_fact(self, scope: str, draft: FactDraft, *, reason: str | None = None) -> int: ...

    def retract_fact(self, fact_id: int, *, reason: str) -> bool: ...

    def set_review(self, fact_id: int, status: str, *, reason: str | None) -> bool: ...

    def put_vectors(self, items: Sequence[tuple[str, bytes]]) -> int: ...

    def clear_vectors(self) -> None: ...

    def set_meta(self, key: str, value: str) -> None: ...


class StoreReader(Protocol):
    """Indexed read queries returning plain records."""

    def members(self, entity_ids: Iterable[int]) -> dict[int, int]: ...
    def entities(self, ids: Iterable[int]) -> dict[int, EntityRow]: ...
    def canonical(self, entity_id: int) -> int: ...
    def lookup_names(self, keys: Sequence[str]) -> dict[str, int]: ...
    def find_entity(self, text: str, key: str) -> int | None: ...
    def names_of(self, entity_id: int) -> list[tuple[str, str]]: ...
    def types(self, entity_ids: Iterable[int]) -> dict[int, list[str]]: ...
    def degrees(self, entity_ids: Iterable[int]) -> dict[int, int]: ...

    def facts(self, entity_ids: Iterable[int], *, direction: str = "out",
              as_of: str | None = None, history: bool = False, limit: int | None = None,
              scopes: Sequence[str] | None = None, min_confidence: float = 0.0,
              trusts: Sequence[str] | None = None, valid_at: str | None = None
              ) -> list[FactRow]: ...

    def facts_grouped(self, entity_ids: Sequence[int], *, direction: str = "out",
                      per_entity: int = 20, as_of: str | None = None,
                      scopes: Sequence[str] | None = None, min_confidence: float = 0.0,
                      trusts: Sequence[str] | None = None, valid_at: str | None = None
                      ) -> dict[int, list[FactRow]]: ...

    def facts_by_id(self, fact_ids: Sequence[int]) -> list[FactRow]: ...
    def live_facts(self, *, scopes: Sequence[str] | None = None) -> list[FactRow]: ...

    def edges(self, entity_ids: Iterable[int], *, as_of: str | None = None,
              min_confidence: float = 0.0, trusts: Sequence[str] | None = None,
              scopes: Sequence[str] | None = None, valid_at: str | None = None,
              limit: int = 2000) -> list[tuple[int, int, str, float, int]]: ...

    def search_entities(self, match: str, *, limit: int,
                        scopes: Sequence[str] | None = None) -> list[Hit]: ...

    def search_chunks(self, match: str, *, limit: int,
                      scopes: Sequence[str] | None = None) -> list[Hit]: ...

    def chunks(self, ids: Sequence[int]) -> dict[int, ChunkRow]: ...
    def chunk_entities(self, chunk_ids: Sequence[int]) -> dict[int, list[int]]: ...
    def document_index(self, scope: str, *, paths: Sequence[str] | None = None
                       ) -> dict[str, tuple[str, int, int]]: ...
    def document(self, scope: str, path: str) -> dict[str, object] | None: ...

    def events(self, *, document_id: int | None = None, fact_ids: Sequence[int] = (),
               limit: int = 100) -> list[dict[str, object]]: ...

    def pending_chunks(self, limit: int) -> list[tuple[str, str]]: ...
    def vector_counts(self) -> tuple[int, int]: ...

    def vector_changes(self, since: int, *, limit: int = 200_000
                       ) -> tuple[int, list[tuple[int, int]]]: ...

    def vectors(self, chunk_ids: Sequence[int]) -> list[tuple[int, bytes]]: ...
    def meta(self, key: str) -> str | None: ...
    def stats(self) -> dict[str, int]: ...
    def ambiguous_names(self, limit: int = 50) -> list[tuple[str, list[str]]]: ...


class Store(Protocol):
    backend: str
    path: str

    @property
    def reader(self) -> StoreReader: ...

    def write(self, *, actor: str) -> AbstractContextManager[StoreWriter]: ...

    def data_version(self) -> int: ...

    def close(self) -> None: ...


def open_store(url: str, *, synchronous: str = "FULL") -> Store:
    """Open a store by URL: a file path or ``sqlite:///path`` (PostgreSQL comes later)."""
    if url.startswith(("postgres://", "postgresql://")):
        raise BackendUnavailable("postgresql", hint="the PostgreSQL backend is not built yet")
    path = url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else url
    from .sqlite import SQLiteStore

    if path != ":memory:":
        path = str(Path(path).expanduser())
    return SQLiteStore(path, synchronous=synchronous)
