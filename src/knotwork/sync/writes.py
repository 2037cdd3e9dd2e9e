"""What an agent or a person writes through the facade: a document, one fact, a retraction.

The facade checks the arguments (``knotwork.checks``); this module turns them into store
writes and reads back what was written. A document goes through the same ownership rule
and mention pass as a note from the vault, so an agent's re-sent ``doc_id`` retracts what
it no longer states and names other notes gained reach it at once.
"""

from __future__ import annotations

from ..domain.words import name_key
from ..errors import Conflict, InvalidQuery, NotFound
from ..ingest.lexicon import normalize_relation
from ..ingest.mentions import ScopedFinder
from ..store import Store
from ..types import Applied, FactDraft, FactRow, LiteralValue, NameRef, ParsedDocument, Span
from . import files


def write_document(store: Store, mentions: ScopedFinder, doc: ParsedDocument, *,
                   scope: str, actor: str) -> Applied | None:
    """Apply an agent's document; None when the store already held it as it is."""
    prepared = store.prepare(doc)
    with store.write(actor=actor) as w:
        out = w.apply(scope, prepared)
    if not isinstance(out, Applied):
        return None
    files.refresh_mentions(store, mentions, actor=actor, documents=[out.document_id],
                           added=[(t, k, scope) for t, k in out.names_added],
                           removed=[(t, k, scope) for t, k in out.names_removed],
                           generations=bool(out.names_added or out.names_removed))
    return out


def predicate(text: str) -> str:
    """The relation name an asserted fact is stored under (``Depends On`` → ``depends_on``)."""
    pred = normalize_relation(text)
    if not pred:
        raise InvalidQuery(f"predicate {text!r} holds no letter or digit")
    return pred


def assert_fact(store: Store, subject: str, predicate: str, obj: NameRef | LiteralValue, *,
                scope: str, actor: str, confidence: float, supporting_text: str,
                valid_from: str | None, valid_to: str | None, reason: str | None) -> FactRow:
    """Record one asserted fact (trust ``asserted``; ``predicate`` as ``predicate`` made
    it) and return it as stored."""
    draft = FactDraft(subject=NameRef.of(_subject_name(store, subject)),
                      predicate=predicate, object=obj, span=Span(0, 0),
                      supporting_text=supporting_text, extractor="api", trust="asserted",
                      confidence=confidence, valid_from=valid_from, valid_to=valid_to)
    with store.write(actor=actor) as w:
        fid = w.assert_fact(scope, draft, reason=reason)
    return store.reader.facts_by_id([fid])[0]


def _subject_name(store: Store, ref: str) -> str:
    """Assert on an existing entity by its label, so ``Traefik`` means the note."""
    eid = store.reader.find_entity(ref.strip(), name_key(ref))
    if eid is None:
        return ref
    return store.reader.entities([eid])[eid].label


def retract_fact(store: Store, fact_id: int, *, reason: str, actor: str) -> FactRow:
    """Retract one fact (never deleted: ``as_of`` still sees it) and return it."""
    if not reason or not reason.strip():
        raise InvalidQuery("a retraction needs a reason")
    if not 1 <= fact_id < 2**63:  # no store holds such an id (SQLite's are 64-bit)
        raise NotFound("fact", str(fact_id))
    with store.write(actor=actor) as w:
        ok = w.retract_fact(fact_id, reason=reason)
    rows = store.reader.facts_by_id([fact_id])
    if not rows:
        raise NotFound("fact", str(fact_id))
    if not ok:
        raise Conflict(f"fact {fact_id} is already retracted", key=str(fact_id))
    return rows[0]
