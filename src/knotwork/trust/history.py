"""The store as it stood at a record time: what ``context(as_of=t)`` reads through.

``context`` finds its candidates in the full-text indexes and the name table, then reads
facts between them. Live, those hold only what stands now; a past question must be asked
of what stood at ``t``. Every row a question reads has a record-time interval, kept when
the row is replaced (``store/sqlite/schema.py`` 17, ``store/postgres/schema.py`` 3):

- a chunk: from its version's ``recorded_at`` until its ``retired_at`` (a later version or
  a delete); retired chunks are searched in a history index of their own;
- a name declaration: from its ``recorded_at`` until it moves to ``names_past``;
- an entity's search text (label, names, literal values): from when it was indexed until
  it was replaced, the replaced text kept in a history index (``entity_past``);
- a fact: ``recorded_at`` / ``retracted_at`` (as ever).

This reader hands every read that a live store answers from today's rows to the store's
as-of form: text search over the rows standing at ``t`` (the live index's rows written by
then and the history index's rows standing then), names resolved by the declarations of
then (a name another note took later reads as it did), facts and edges as of then. The
live path is untouched: a query without ``as_of`` never comes here, and the live indexes
hold only live rows, as before.

Approximations, stated: BM25 scores use each index's own statistics of today (live and
history rows ranked apart, then merged by score), so scores and their order may differ
from the store of then, while the set of rows that match does not; a note's label is its
current one (a past title is found by search, but shown as today's); an acronym match
(``spelled_by``) reads today's labels, of entities that existed then; a compacted store
(``compact`` drops past chunks no fact cites) no longer finds their prose.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..store import StoreReader, TextQuery
from ..types import Hit


class AsOfReader:
    """``reader`` as it stood at ``as_of`` for every read the context pipeline makes."""

    def __init__(self, reader: StoreReader, as_of: str) -> None:
        self._reader = reader
        self._as_of = as_of

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reader, name)

    def search_chunks(self, query: TextQuery, *, limit: int,
                      scopes: Sequence[str] | None = None) -> list[Hit]:
        return self._reader.search_chunks(query, limit=limit, scopes=scopes, as_of=self._as_of)

    def search_entities(self, query: TextQuery, *, limit: int,
                        scopes: Sequence[str] | None = None) -> list[Hit]:
        return self._reader.search_entities(query, limit=limit, scopes=scopes,
                                            as_of=self._as_of)

    def term_frequencies(self, words: Sequence[str], *, table: str = "chunk",
                         cap: int | None = None, scopes: Sequence[str] | None = None
                         ) -> list[tuple[str, int]]:
        return self._reader.term_frequencies(words, table=table, cap=cap, as_of=self._as_of,
                                             scopes=scopes)

    def lookup_names(self, keys: Sequence[str], *, referred: bool = False,
                     scopes: Sequence[str] | None = None) -> dict[str, int]:
        return self._reader.lookup_names(keys, referred=referred, as_of=self._as_of,
                                         scopes=scopes)

    def members(self, entity_ids: Iterable[int]) -> dict[int, int]:
        return self._reader.members(entity_ids, as_of=self._as_of)

    def chunk_entities(self, chunk_ids: Sequence[int]) -> dict[int, list[int]]:
        return self._reader.chunk_entities(chunk_ids, as_of=self._as_of)

    def spelled_by(self, initials: Sequence[str], *, limit: int = 20,
                   scopes: Sequence[str] | None = None) -> list[tuple[int, str]]:
        found = self._reader.spelled_by(initials, limit=limit, scopes=scopes)
        rows = self._reader.entities({e for e, _ in found})
        return [(e, s) for e, s in found if e in rows and rows[e].created_at <= self._as_of]
