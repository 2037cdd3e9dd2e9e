"""Order an entity's facts by how well each answers the question.

An answer lists at most ``max_facts`` facts of an entity and, under a token budget,
drops them from the end; so the order decides what the agent sees. A typed record's
bookkeeping (``entity_type``, ``source_file``, ``parser_*``: its citation and types say it
already) comes after every other fact, whatever the question; the others are ranked:

1. by the question's words each holds — in its predicate or value (``port = 443`` for
   "traefik port"), a little in its supporting text — the words naming the entity itself
   aside ("traefik" names Traefik, it says nothing about which of its facts);
2. the note's own statements before what other documents say about it;
3. by kind: stated values and relations, then plain ``links_to``, then mentions;
4. newest first (a just-edited fact is never the one the cap cuts), then in the note's
   order (its ids).

Pure: no store, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..domain.records import RECORD_METADATA
from ..domain.words import name_words
from ..types import FactRow
from .query import fold

__all__ = ["POOL", "fact_terms", "rank_facts"]

# how many of an entity's own facts are read to choose the best ``max_facts`` of them
POOL = 400

_TEXT_WEIGHT = 0.25  # a question's word in the supporting text only


def fact_terms(query_terms: Iterable[str], label: str) -> frozenset[str]:
    """The question's words that can tell one fact of the entity ``label`` from another:
    folded, those of its label left out."""
    own = {fold(w) for w in name_words(label)}
    return frozenset(t for t in (fold(w) for w in query_terms) if t not in own)


# the standard metadata of a typed record: true, and least worth an agent's tokens
_BOOKKEEPING = RECORD_METADATA | {"created_at", "updated_at"}


def _kind(f: FactRow) -> int:
    if f.extractor == "mention":
        return 2
    return 1 if f.predicate == "links_to" else 0


def _relevance(f: FactRow, terms: frozenset[str]) -> float:
    if not terms:
        return 0.0
    said = {fold(w) for w in name_words(f.predicate)}
    said.update(fold(w) for w in name_words(f.value_label or f.value))
    hits = float(len(terms & said))
    if f.source is not None and f.source.supporting_text:
        text = {fold(w) for w in name_words(f.source.supporting_text)}
        hits += _TEXT_WEIGHT * len((terms - said) & text)
    return hits


def rank_facts(facts: Sequence[FactRow], terms: frozenset[str], *,
               own_document: int | None) -> tuple[FactRow, ...]:
    """``facts`` best first, as the module docstring orders them."""
    out = sorted(facts, key=lambda f: f.id)
    out.sort(key=lambda f: f.recorded_at, reverse=True)  # stable: ids order equal times
    out.sort(key=lambda f: (
        f.predicate in _BOOKKEEPING,
        -_relevance(f, terms),
        f.source is None or f.source.document_id != own_document,
        _kind(f)))
    return tuple(out)
