"""The facade's room for trust (``knotwork.trust``): review, tokens, audit, export."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from .base import Base

if TYPE_CHECKING:
    from ..results import Principal, Reviewed, ReviewPage, TokenInfo
    from ..store import ReviewFilter


class TrustRoom(Base):
    """Review decisions, API tokens, the audit log, and the store as JSON lines."""

    def review_queue(self, *, status: Sequence[str] = ("unreviewed",),
                     trusts: Sequence[str] = (), predicate: str | None = None,
                     entity: str | None = None, scopes: Sequence[str] | None = None,
                     limit: int = 50, offset: int = 0) -> ReviewPage:
        """Live facts awaiting review (or of another ``status``), oldest first, paged."""
        from ..trust import review

        return review.queue(self.store.reader, self._review_filter(
            status, trusts, predicate, entity, scopes), limit=limit, offset=offset)

    def review(self, decision: str, fact_ids: Sequence[int] = (), *,
               status: Sequence[str] | None = None, trusts: Sequence[str] = (),
               predicate: str | None = None, entity: str | None = None,
               scopes: Sequence[str] | None = None, reason: str | None = None,
               reviewer: str | None = None) -> Reviewed:
        """``approve`` | ``reject`` | ``reopen`` the facts named, or (no ids) every fact
        the filter selects; the reviewer (default the actor) and reason are recorded."""
        from ..trust import review

        which = None if fact_ids else self._review_filter(
            status or ("unreviewed",), trusts, predicate, entity, scopes)
        return review.decide(self.store, decision, fact_ids=fact_ids, which=which,
                             reviewer=reviewer or self.actor, reason=reason, scopes=scopes)

    def _review_filter(self, status: Sequence[str], trusts: Sequence[str],
                       predicate: str | None, entity: str | None,
                       scopes: Sequence[str] | None) -> ReviewFilter:
        from ..store import ReviewFilter

        subjects: tuple[int, ...] = ()
        if entity:
            eid = self._resolve_in(entity, scopes)
            subjects = tuple(self.store.reader.members([eid]))
        return ReviewFilter(statuses=tuple(status), trusts=tuple(trusts), predicate=predicate,
                            subject_ids=subjects, scopes=tuple(scopes or ()))

    def create_token(self, name: str, *, scopes: Sequence[str], read_only: bool = False
                     ) -> TokenInfo:
        """A new API token for ``scopes``; its secret is in the answer, and only there."""
        from ..trust import tokens

        return tokens.create(self.store, name=name, scopes=scopes, read_only=read_only,
                             actor=self.actor)

    def tokens(self) -> list[TokenInfo]:
        from ..trust import tokens

        return tokens.listed(self.store.reader)

    def revoke_token(self, token_id: int) -> TokenInfo:
        from ..trust import tokens

        return tokens.revoke(self.store, token_id, actor=self.actor)

    def authenticate(self, secret: str) -> Principal | None:
        """The principal a store token's secret names (None: no live token has it)."""
        from ..trust import tokens

        return tokens.authenticate(self.store.reader, secret)

    def log_event(self, action: str, *, scope: str | None = None, reason: str | None = None,
                  detail: Mapping[str, object] | None = None, actor: str | None = None) -> None:
        """Append an event of a front end's own (a request refused) to the audit log."""
        with self.store.write(actor=actor or self.actor) as w:
            w.log_event(action, scope=scope, reason=reason, detail=detail)

    def audit(self, *, since: str | None = None, limit: int | None = 1000,
              scopes: Sequence[str] | None = None) -> list[dict[str, object]]:
        """The audit log, oldest first: events at or after ``since`` (``7d``, an ISO time);
        with ``scopes``, only the events of those scopes."""
        from ..trust import audit

        return audit.events(self.store.reader, since=since, limit=limit,
                            scopes=tuple(scopes or ()))

    def export_jsonl(self) -> Iterator[str]:
        """The store as JSON lines (``knotwork.trust.portable``), one snapshot."""
        from ..trust import portable

        return portable.export_lines(self.store)

    def import_jsonl(self, lines: Iterable[str]) -> dict[str, object]:
        """Load an export into this store, which must be empty; checksums are checked."""
        from ..trust import portable

        return portable.import_lines(self.store, lines, actor=self.actor)
