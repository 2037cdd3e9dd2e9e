"""What changed while an agent was away: documents created, edited, renamed or deleted
since a time, newest first, each with who changed it (``recent_changes``).

Read from the audit log's document events on their own index
(``AuditReader.document_changes``); a note read again with its text unchanged (an upgrade's
new extraction rules) is no change and is not listed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from ..store import DocumentChange, StoreReader

__all__ = ["Changes", "recent_changes"]


@dataclass(frozen=True, slots=True)
class Changes:
    """The changes at or after ``since`` (a record time), newest first; ``truncated``:
    ``limit`` cut older ones."""

    since: str
    changes: tuple[DocumentChange, ...]
    limit: int
    truncated: bool

    def as_dict(self) -> dict[str, object]:
        return {"since": self.since, "changes": [asdict(c) for c in self.changes],
                "limit": self.limit, "truncated": self.truncated}


def recent_changes(reader: StoreReader, *, since: str, limit: int,
                   scopes: Sequence[str] | None) -> Changes:
    rows = reader.document_changes(since=since, limit=limit + 1, scopes=scopes)
    return Changes(since, tuple(rows[:limit]), limit, len(rows) > limit)
