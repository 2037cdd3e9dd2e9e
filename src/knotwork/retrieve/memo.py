"""Reads that repeat across queries, remembered until the store changes.

Two reads of every ``context`` query depend on the whole store rather than on the query:
how many chunks hold a word (for pruning and term weights) and how many live facts touch
an entity (hub damping). Hubs and common words come back in query after query, and the
hubs are the expensive ones (their counts read up to the cap). The memo keeps those
answers for one store state: any commit, by this process or another, changes the store's
change token and drops them, so a remembered count is never stale.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

from ..store import StoreReader

_ENTRIES = 200_000
# a term count's key: table, scopes read (None: all), word, cap
_TermKey = tuple[str, "tuple[str, ...] | None", str, "int | None"]


class ReadMemo:
    """Remembered term counts and entity degrees for one store state (thread-safe)."""

    def __init__(self, *, entries: int = _ENTRIES) -> None:
        self._entries = entries
        self._lock = threading.Lock()
        self._token: object = None
        self._terms: dict[_TermKey, int] = {}
        self._degrees: dict[tuple[int, int], int] = {}

    def reader(self, reader: StoreReader, token: object) -> StoreReader:
        """``reader``, answering term counts and degrees from the memo of state ``token``."""
        with self._lock:
            if (token != self._token or len(self._terms) > self._entries
                    or len(self._degrees) > self._entries):
                self._token, self._terms, self._degrees = token, {}, {}
            return _MemoReader(reader, self._terms, self._degrees)


class _MemoReader:
    """A reader whose ``term_frequencies`` and ``degrees`` go through a memo first.

    It holds the dictionaries of the state it was made for: if the store changes during
    the query, what it learns lands in dictionaries the next query no longer uses.
    """

    def __init__(self, reader: StoreReader, terms: dict[_TermKey, int],
                 degrees: dict[tuple[int, int], int]) -> None:
        self._reader = reader
        self._terms = terms
        self._degrees = degrees

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reader, name)

    def term_frequencies(self, words: Sequence[str], *, table: str = "chunk",
                         cap: int | None = None, as_of: str | None = None,
                         scopes: Sequence[str] | None = None) -> list[tuple[str, int]]:
        if as_of is not None:  # the memo is of the store as it stands now
            return self._reader.term_frequencies(words, table=table, cap=cap, as_of=as_of,
                                                 scopes=scopes)
        memo, where = self._terms, None if scopes is None else tuple(sorted(set(scopes)))
        missing = list(dict.fromkeys(w for w in words if (table, where, w, cap) not in memo))
        if missing:
            for w, n in self._reader.term_frequencies(missing, table=table, cap=cap,
                                                      scopes=scopes):
                memo[(table, where, w, cap)] = n
        return [(w, memo[(table, where, w, cap)]) for w in words]

    def degrees(self, entity_ids: Iterable[int], *, cap: int = 1000) -> dict[int, int]:
        memo = self._degrees
        ids = list(entity_ids)
        missing = [e for e in dict.fromkeys(ids) if (e, cap) not in memo]
        if missing:
            found = self._reader.degrees(missing, cap=cap)
            for e in missing:
                memo[(e, cap)] = found.get(e, 0)
        return {e: memo[(e, cap)] for e in ids}
