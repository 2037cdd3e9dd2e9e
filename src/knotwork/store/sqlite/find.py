"""Structured reads: entities by their live facts (``find``) and recent document changes.

Each is one statement on an index. A condition on a literal reads ``facts_predicate_live``
(live facts by predicate, then value without ASCII case); one on an entity reads the
object index from the entities its names reach; ``INTERSECT`` keeps the subjects that
every condition holds for. Recent changes read ``events_document_change`` (the document
events by time) backwards from now.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Literal, cast

from ..records import DocumentChange, FactMatch, SubjectMatch

__all__ = ["CHANGE_ACTIONS", "FindQueries", "change_record"]

# the events of a document's content; the list is spelled as the partial index spells it
CHANGE_ACTIONS = "('create', 'update', 'rename', 'delete')"
_CHANGE = {"create": "created", "update": "edited", "rename": "renamed", "delete": "deleted"}
_Change = Literal["created", "edited", "renamed", "deleted"]


def _marks(items: Sequence[object]) -> str:
    return ",".join("?" * len(items))


def change_record(row: Sequence[object]) -> DocumentChange:
    """A ``DocumentChange`` from (id, at, actor, action, scope, document_id, detail, title),
    the event's detail as stored (JSON text)."""
    eid, at, actor, action, scope, doc_id, detail, title = row
    d = json.loads(str(detail)) if detail else {}
    version = d.get("version_id")
    return DocumentChange(
        event_id=int(cast(int, eid)), at=str(at), actor=str(actor),
        change=cast(_Change, _CHANGE[str(action)]), scope=str(scope or ""),
        path=str(d.get("path") or ""), previous_path=d.get("from"),
        document_id=int(cast(int, doc_id)),
        version_id=int(version) if version is not None else None,
        title=None if title is None else str(title), facts_added=int(d.get("added") or 0),
        facts_retracted=int(d.get("retracted") or 0))


class FindQueries:
    """``find_subjects`` and ``document_changes`` over one connection (a ``Reader`` mixin)."""

    con: sqlite3.Connection

    def find_subjects(self, matches: Sequence[FactMatch], *,
                      scopes: Sequence[str] | None = None, limit: int = 50,
                      after: tuple[str, int] | None = None) -> list[SubjectMatch]:
        if not matches:
            return []
        parts, args = [], list[object]()
        for i, m in enumerate(matches):
            sql, more = _condition(i, m, scopes)
            parts.append(sql)
            args += more
        both = " INTERSECT ".join(f"SELECT subj FROM m WHERE i = {i}"
                                  for i in range(len(matches)))
        page = "(e.label, e.id) > (?, ?)" if after else "1"
        args += [*(after or ()), int(limit)]
        rows = self.con.execute(
            f"WITH m(i, subj, fid) AS ({' UNION ALL '.join(parts)}),"
            f" hit(subj) AS ({both}),"
            " page(id) AS (SELECT e.id FROM hit JOIN entities e"
            f"  ON e.id = hit.subj WHERE {page} ORDER BY e.label, e.id LIMIT ?)"
            # one pass over m, each row looked up in the page (not the page's rows each
            # scanning m)
            " SELECT m.subj, e.label, m.i, m.fid FROM m CROSS JOIN entities e"
            " ON e.id = m.subj WHERE m.subj IN (SELECT id FROM page)"
            " ORDER BY e.label, m.subj, m.i, m.fid", args).fetchall()
        return _subjects(rows, len(matches))

    def document_changes(self, *, since: str, limit: int = 100,
                         scopes: Sequence[str] | None = None) -> list[DocumentChange]:
        where, args = [f"e.action IN {CHANGE_ACTIONS}", "e.at >= ?",
                       "json_extract(e.detail, '$.reread') IS NULL"], list[object]([since])
        if scopes:
            where.append(f"e.scope IN ({_marks(scopes)})")
            args += scopes
        rows = self.con.execute(
            "SELECT e.id, e.at, e.actor, e.action, e.scope, e.document_id, e.detail, d.title"
            " FROM events e INDEXED BY events_document_change"
            " LEFT JOIN documents d ON d.id = e.document_id"
            f" WHERE {' AND '.join(where)} ORDER BY e.at DESC, e.id DESC LIMIT ?",
            [*args, int(limit)]).fetchall()
        return [change_record(r) for r in rows]


def _condition(i: int, m: FactMatch, scopes: Sequence[str] | None
               ) -> tuple[str, list[object]]:
    """The (condition, canonical subject, fact id) rows of one condition: by predicate and
    value on ``facts_predicate_live``, and by object on ``facts_object``."""
    base = ("SELECT {i}, COALESCE(s.resolved_id, s.id), f.id FROM facts f{index}"
            " JOIN entities s ON s.id = f.subject_id"
            " WHERE f.predicate = ? AND f.retracted_at IS NULL AND f.review != 'rejected'")
    tail, targs = "", list[object]()
    if scopes:
        tail, targs = f" AND f.scope IN ({_marks(scopes)})", list(scopes)
    head = base.format(i=i, index=" INDEXED BY facts_predicate_live")
    if not m.values and not m.names:
        return head + tail, [m.predicate, *targs]
    parts, args = [], list[object]()
    if m.values:
        parts.append(f"{head} AND f.object_id IS NULL"
                     f" AND f.value COLLATE NOCASE IN ({_marks(m.values)}){tail}")
        args += [m.predicate, *m.values, *targs]
    if m.names:
        # by object: a predicate as common as links_to would read all of its facts
        keys, by_object = _marks(m.names), base.format(i=i, index=" INDEXED BY facts_object")
        parts.append(
            f"{by_object} AND f.object_id IN (SELECT id FROM entities WHERE name_key IN ({keys})"
            f" UNION SELECT entity_id FROM names WHERE key IN ({keys})"
            " UNION SELECT e.id FROM entities e WHERE e.resolved_id IN"
            f" (SELECT entity_id FROM names WHERE key IN ({keys}))){tail}")
        args += [m.predicate, *m.names, *m.names, *m.names, *targs]
    return " UNION ALL ".join(parts), args


def _subjects(rows: Sequence[Sequence[object]], n: int) -> list[SubjectMatch]:
    """Rows of (subject, label, condition, fact id), in order, as ``SubjectMatch`` es."""
    out: list[SubjectMatch] = []
    cur: tuple[int, str, list[list[int]]] | None = None
    for sid, label, i, fid in rows:
        if cur is None or cur[0] != sid:
            if cur is not None:
                out.append(SubjectMatch(cur[0], cur[1], tuple(tuple(f) for f in cur[2])))
            cur = (int(cast(int, sid)), str(label), [[] for _ in range(n)])
        ids = cur[2][int(cast(int, i))]
        if not ids or ids[-1] != fid:
            ids.append(int(cast(int, fid)))
    if cur is not None:
        out.append(SubjectMatch(cur[0], cur[1], tuple(tuple(f) for f in cur[2])))
    return out
