"""Passage search: BM25, vector or both fused, headings-only chunks after the rest.

``search`` takes the reader and the vector search as arguments: the facade decides
whether vectors exist and which fusion the settings name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..errors import InvalidQuery
from ..store import StoreReader
from ..types import SearchHit
from . import fulltext
from .adaptive import adaptive_sum
from .dated import by_date
from .pipeline import says_something
from .rank import HYBRID_WEIGHTS, bm25_moments, zscore_sum
from .rank import fusion as fusion_by_name
from .records import by_record

__all__ = ["MODES", "VectorSearch", "search"]

MODES = ("bm25", "vector", "hybrid")
#: (query, k) → (chunk id, similarity) best first, and the similarities' moments.
VectorSearch = Callable[[str, int], tuple[list[tuple[int, float]], tuple[float, float] | None]]


def search(reader: StoreReader, query: str, *, k: int, mode: str, fusion: str,
           scopes: Sequence[str] | None = None, vectors: VectorSearch | None = None,
           per_note: int | None = None, partial: bool = False) -> list[SearchHit]:
    """Chunks matching ``query`` with citations: ``bm25``, ``vector`` or ``hybrid``.

    Hybrid fuses the two rankings (top ``max(k, 100)`` of each) with the fusion function
    named ``fusion`` (see ``rank.FUSIONS``). ``vectors`` is None when no chunk has a
    vector: ``vector`` is refused, ``hybrid`` falls back to BM25 (as ``context`` does). A
    chunk of headings alone comes after those with text (``pipeline.says_something``).
    ``per_note``: at most that many hits of one note (20 chunks of one KEP hid the main
    one), the rest of the ``k`` going to the next notes. ``partial``: some chunks have no
    vector yet; adaptive fusion then ranks those of BM25's list on its evidence alone
    (``adaptive_sum``'s ``unembedded``).
    """
    if mode not in MODES:
        raise InvalidQuery(f"mode must be bm25, vector or hybrid, got {mode!r}")
    depth = max(k, 100)
    runs: list[list[tuple[int, float]]] = []
    stats: list[tuple[float, float] | None] = []
    if mode in ("bm25", "hybrid"):
        hits = fulltext.search_chunks(reader, query, limit=depth, scopes=scopes)
        runs.append([(h.id, h.score) for h in hits])
        stats.append(bm25_moments([h.score for h in hits], reader.live_chunk_count(scopes)))
    if mode == "hybrid" and vectors is None:
        mode = "bm25"  # (the runs above hold its hits already)
    if mode in ("vector", "hybrid"):
        if vectors is None:
            raise InvalidQuery("no chunk has a vector yet: run `knotwork ingest` with an"
                               " embedder, or use mode bm25")
        hits_v, vstats = vectors(query, depth)
        runs.append(hits_v)
        stats.append(vstats)
    if len(runs) == 1:
        ranked = runs[0]
    else:
        fuse = fusion_by_name(fusion)
        if fuse is adaptive_sum:
            lacking = reader.unembedded([i for i, _ in runs[0]]) if partial else set()
            scores = by_record(reader, query, fuse(runs, stats=stats,
                                                   n=reader.live_chunk_count(scopes),
                                                   unembedded=lacking),
                               [cid for cid, _ in runs[0]])
        elif fuse is zscore_sum:
            scores = fuse(runs, weights=HYBRID_WEIGHTS, stats=stats)
        else:
            scores = fuse(runs)
        ranked = sorted(by_date(reader, query, scores).items(), key=lambda kv: (-kv[1], kv[0]))
    return _texts_first(reader, ranked, k=k, scopes=scopes, per_note=per_note)


def _texts_first(reader: StoreReader, ranked: list[tuple[int, float]], *, k: int,
                 scopes: Sequence[str] | None, per_note: int | None = None
                 ) -> list[SearchHit]:
    """The first ``k`` hits, a chunk of headings alone after those with text.

    Why, among the first 3k: BM25 favours short rows ("## Drawbacks" left empty), and a
    search for a section's name listed every empty one first. (A word or two of text
    stays where it ranks: "Zebra crossings." is all a search for it wants.)
    """
    window = ranked[:3 * k] if per_note is None else ranked
    rows = reader.chunks([cid for cid, _ in window])
    found = [(cid, score) for cid, score in window
             if cid in rows and (not scopes or rows[cid].scope in scopes)]
    if per_note is not None:  # the best ``per_note`` of each note, in rank order
        seen: dict[str, int] = {}
        kept = []
        for cid, score in found:
            path = rows[cid].path
            if seen.get(path, 0) < per_note:
                seen[path] = seen.get(path, 0) + 1
                kept.append((cid, score))
        found = kept[:3 * k]
    full = [says_something(rows[cid].text, 1) for cid, _ in found]
    top = ([h for h, f in zip(found, full, strict=True) if f]
           + [h for h, f in zip(found, full, strict=True) if not f])[:k]
    return [SearchHit(cid, rows[cid].path, rows[cid].title, rows[cid].heading_path,
                      rows[cid].line_start, rows[cid].line_end, rows[cid].text, score)
            for cid, score in top]
