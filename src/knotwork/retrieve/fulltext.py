"""Full-text candidates that stay fast on common words.

BM25 in FTS5 scores every row that matches any query term, so one common word makes a
query cost O(rows). Two steps keep it near O(selective rows): terms far more frequent than
the query's rarest term are dropped (their IDF is near zero beside it), and with several
terms left, rows holding all of them are tried first — when that already fills the list,
those are the top rows by BM25 in all but contrived cases, and the OR query never runs.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..store import StoreReader, TextQuery
from ..types import Hit
from .query import PRUNE_MIN_DF, PRUNE_RATIO, query_terms, selective_terms


def search_chunks(reader: StoreReader, text: str, *, limit: int,
                  scopes: Sequence[str] | None = None,
                  freqs: list[tuple[str, int]] | None = None) -> list[Hit]:
    """Find the chunks that best match ``text``.

    ``freqs``: ``frequencies(reader, query_terms(text), table="chunk", scopes=scopes)``
    when the caller already has it (the context pipeline also weighs the query's terms
    with it).
    """
    return _search(reader, text, limit=limit, scopes=scopes, table="chunk", freqs=freqs)[0]


def search_chunks_holding(reader: StoreReader, text: str, *, limit: int,
                          scopes: Sequence[str] | None = None,
                          freqs: list[tuple[str, int]] | None = None
                          ) -> tuple[list[Hit], tuple[str, ...]]:
    """``search_chunks``, and the query terms every hit is known to hold: all the terms
    searched for when the rows holding all of them filled the list, else none.

    Why: the context pipeline asks which question terms each chunk it keeps holds
    (``StoreReader.chunk_terms``, which tokenises the chunks again); for the hits of an
    AND query the index has answered that already.
    """
    return _search(reader, text, limit=limit, scopes=scopes, table="chunk", freqs=freqs)


def search_entities(reader: StoreReader, text: str, *, limit: int,
                    scopes: Sequence[str] | None = None) -> list[Hit]:
    return _search(reader, text, limit=limit, scopes=scopes, table="entity")[0]


def _search(reader: StoreReader, text: str, *, limit: int, scopes: Sequence[str] | None,
            table: str, freqs: list[tuple[str, int]] | None = None
            ) -> tuple[list[Hit], tuple[str, ...]]:
    """The hits, and the terms each of them holds (those of an AND query that filled the
    list; none when the OR query ran)."""
    terms = query_terms(text)
    if not terms:
        return [], ()
    kept = selective_terms(freqs if freqs is not None
                           else frequencies(reader, terms, table=table, scopes=scopes))
    if not kept:
        return [], ()
    if table == "entity":  # (the hits alone: the rule is the store's, in one search)
        query = TextQuery(tuple(kept), "all_else_any" if len(kept) > 1 else "any")
        return reader.search_entities(query, limit=limit, scopes=scopes), ()
    run = reader.search_chunks
    if len(kept) > 1:
        hits = run(TextQuery(tuple(kept), "all"), limit=limit, scopes=scopes)
        if len(hits) >= limit:
            return hits, tuple(kept)
    hits = run(TextQuery(tuple(kept)), limit=limit, scopes=scopes)
    # one term: its OR query is its AND query
    return hits, (tuple(kept) if len(kept) == 1 else ())


def frequencies(reader: StoreReader, terms: Sequence[str], *, table: str,
                scopes: Sequence[str] | None = None) -> list[tuple[str, int]]:
    """Document frequencies exactly as far as ``selective_terms`` needs them, no further:
    those of ``scopes`` alone (all when None), so what a reader of some scopes is answered
    never depends on what another scope holds.

    A term is dropped when its count passes both ``PRUNE_MIN_DF`` and ``PRUNE_RATIO`` times
    the rarest term's, so counting beyond those bounds buys nothing: counts stop at
    ``PRUNE_MIN_DF + 1`` first, and only when the rarest term is common enough to raise
    the bar are the capped terms counted again up to it.
    """
    cap = PRUNE_MIN_DF + 1
    freqs = reader.term_frequencies(terms, table=table, cap=cap, scopes=scopes)
    present = [df for _, df in freqs if df > 0]
    if not present:
        return freqs
    floor = min(present)
    if floor >= cap:  # every term is common: the bar depends on exact counts
        return reader.term_frequencies(terms, table=table, scopes=scopes)
    bar = PRUNE_RATIO * floor + 1
    capped = [w for w, df in freqs if df >= cap]
    if bar <= cap or not capped:
        return freqs
    again = dict(reader.term_frequencies(capped, table=table, cap=bar, scopes=scopes))
    return [(w, again.get(w, df)) for w, df in freqs]
