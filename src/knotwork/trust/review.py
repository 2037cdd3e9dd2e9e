"""The review queue: facts an agent asserted (or a model extracted) wait for a person.

A fact lands ``unreviewed`` unless its author's own structure states it (``stated`` facts
are ``approved`` from the start). ``decide`` approves or rejects facts one, many or by
filter, in one write whose actor is the reviewer; every decision is an event with its
reason. A rejected fact leaves every answer (context, entity, facts, search by its
literal) unless a read asks for it (``trusts`` naming ``rejected``); history keeps it.
A decision belongs to the fact row: a re-ingest that keeps the statement (an unchanged
document, or an edit elsewhere in it) keeps the decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..errors import Conflict, InvalidQuery, NotFound
from ..results import Reviewed, ReviewPage
from ..store import ReviewFilter, Store, StoreReader

STATUSES = ("unreviewed", "approved", "rejected")
DECISIONS = {"approve": "approved", "reject": "rejected", "reopen": "unreviewed"}


def queue(reader: StoreReader, which: ReviewFilter, *, limit: int = 50, offset: int = 0
          ) -> ReviewPage:
    """One page of the live facts ``which`` selects."""
    bad = [s for s in which.statuses if s not in STATUSES]
    if bad:
        raise InvalidQuery(f"unknown review status {bad[0]!r}: use {', '.join(STATUSES)}")
    if limit < 1 or offset < 0:
        raise InvalidQuery(f"limit must be 1 or more and offset 0 or more, got {limit},"
                           f" {offset}")
    total, facts = reader.review_queue(which, limit=limit, offset=offset)
    end = offset + len(facts)
    return ReviewPage(total=total, offset=offset, next_offset=end if end < total else None,
                      facts=tuple(facts))


def decide(store: Store, decision: str, *, fact_ids: Sequence[int] = (),
           which: ReviewFilter | None = None, reviewer: str, reason: str | None,
           scopes: Sequence[str] | None = None) -> Reviewed:
    """Approve, reject or reopen the facts ``fact_ids`` names, or all ``which`` selects.

    A fact of another scope than ``scopes`` is as unknown as one that does not exist (a
    token must not learn that it does); a retracted fact cannot be reviewed (Conflict).
    """
    status = DECISIONS.get(decision)
    if status is None:
        raise InvalidQuery(f"unknown decision {decision!r}: use {', '.join(DECISIONS)}")
    if not fact_ids and which is None:
        raise InvalidQuery("name the facts to review: ids, or a filter")
    with store.write(actor=reviewer) as w:
        reader = store.reader
        if which is not None:
            scoped = replace(which, scopes=tuple(scopes or which.scopes))
            _, rows = reader.review_queue(scoped, limit=1_000_000)
            ids = [f.id for f in rows]
        else:
            # no store holds an id past 64 bits (SQLite could not even be asked: a 500)
            rows = reader.facts_by_id([i for i in dict.fromkeys(fact_ids) if 1 <= i < 2**63])
            found = {f.id: f for f in rows if not scopes or f.scope in scopes}
            missing = [i for i in fact_ids if i not in found]
            if missing:
                raise NotFound("fact", str(missing[0]))
            gone = [f.id for f in found.values() if f.retracted_at is not None]
            if gone:
                raise Conflict(f"fact {gone[0]} is retracted: only live facts are reviewed")
            ids = list(found)
        for fid in ids:
            w.set_review(fid, status, reason=reason)
    return Reviewed(status=status, reviewer=reviewer, reason=reason,  # type: ignore[arg-type]
                    fact_ids=tuple(ids))
