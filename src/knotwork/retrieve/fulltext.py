"""Full-text candidates that stay fast on common words.

BM25 in FTS5 scores every row that matches any query term, so one common word makes a
query cost O(rows). Two steps keep it near O(selective rows): terms far more frequent than
the query's rarest term are dropped (their IDF is near zero beside it), and with several
terms left, rows holding all of them are tried first — when that already fills the list,
those are the top rows by BM25 in all but contrived cases, and the OR query never runs.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..store import StoreReader
from ..types import Hit
from .query import fts_match, query_terms, selective_terms


def search_chunks(reader: StoreReader, text: str, *, limit: int,
                  scopes: Sequence[str] | None = None,
                  freqs: list[tuple[str, int]] | None = None) -> list[Hit]:
    """Find the chunks that best match ``text``.

    ``freqs``: ``reader.term_frequencies(query_terms(text))`` when the caller already has
    it (the context pipeline also weighs the query's terms with it).
    """
    return _search(reader, text, limit=limit, scopes=scopes, table="chunk", freqs=freqs)


def search_entities(reader: StoreReader, text: str, *, limit: int,
                    scopes: Sequence[str] | None = None) -> list[Hit]:
    return _search(reader, text, limit=limit, scopes=scopes, table="entity")


def _search(reader: StoreReader, text: str, *, limit: int, scopes: Sequence[str] | None,
            table: str, freqs: list[tuple[str, int]] | None = None) -> list[Hit]:
    terms = query_terms(text)
    if not terms:
        return []
    kept = selective_terms(freqs if freqs is not None
                           else reader.term_frequencies(terms, table=table))
    if not kept:
        return []
    run = reader.search_chunks if table == "chunk" else reader.search_entities
    if len(kept) > 1:
        hits = run(fts_match(kept, "AND"), limit=limit, scopes=scopes)
        if len(hits) >= limit:
            return hits
    return run(fts_match(kept, "OR"), limit=limit, scopes=scopes)
