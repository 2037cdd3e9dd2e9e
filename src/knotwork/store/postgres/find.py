"""Structured reads on PostgreSQL, as the SQLite backend's ``find.py`` asks them: every
join on scope, lists as arrays. A literal is compared as ``lower(value)``: under the
bytewise collation every text column has, ``lower`` folds ASCII letters only, as SQLite's
``NOCASE`` does, so both backends match the same values (``facts_predicate_live``)."""

from __future__ import annotations

from collections.abc import Sequence

from ..records import DocumentChange, FactMatch, SubjectMatch
from ..sqlite.find import CHANGE_ACTIONS, _subjects, change_record
from .connection import Con

__all__ = ["FindQueries"]

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


class FindQueries:
    """``find_subjects`` and ``document_changes`` (a ``Reader`` mixin)."""

    con: Con

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
        both = " INTERSECT ".join(f"SELECT subj, sc FROM m WHERE i = {i}"
                                  for i in range(len(matches)))
        page = "(e.label, e.id) > (?, ?)" if after else "TRUE"
        args += [*(after or ()), int(limit)]
        rows = self.con.execute(
            # a name resolves to a note of its own scope: the fact's scope is the subject's
            f"WITH m(i, subj, fid, sc) AS MATERIALIZED ({' UNION ALL '.join(parts)}),"
            f" hit(subj, sc) AS ({both}),"
            " page(id) AS (SELECT e.id FROM hit JOIN entities e ON e.id = hit.subj"
            f"  AND e.scope = hit.sc WHERE {page} ORDER BY e.label, e.id LIMIT ?)"
            " SELECT m.subj, e.label, m.i, m.fid FROM m JOIN entities e ON e.id = m.subj"
            " AND e.scope = m.sc WHERE m.subj IN (SELECT id FROM page)"
            " ORDER BY e.label, m.subj, m.i, m.fid",
            args).fetchall()
        return _subjects(rows, len(matches))

    def document_changes(self, *, since: str, limit: int = 100,
                         scopes: Sequence[str] | None = None) -> list[DocumentChange]:
        where, args = [f"e.action IN {CHANGE_ACTIONS}", "e.at >= ?",
                       "(e.detail::jsonb -> 'reread') IS NULL"], list[object]([since])
        if scopes:
            where.append("e.scope = ANY(?)")
            args.append(list(scopes))
        rows = self.con.execute(
            "SELECT e.id, e.at, e.actor, e.action, e.scope, e.document_id, e.detail, d.title"
            " FROM events e LEFT JOIN documents d ON d.id = e.document_id AND d.scope = e.scope"
            f" WHERE {' AND '.join(where)} ORDER BY e.at DESC, e.id DESC LIMIT ?",
            [*args, int(limit)]).fetchall()
        return [change_record(r) for r in rows]


def _condition(i: int, m: FactMatch, scopes: Sequence[str] | None
               ) -> tuple[str, list[object]]:
    head = (f"SELECT {i}, COALESCE(s.resolved_id, s.id), f.id, f.scope FROM facts f"
            " JOIN entities s ON s.id = f.subject_id AND s.scope = f.scope"
            " WHERE f.predicate = ? AND f.retracted_at IS NULL AND f.review <> 'rejected'")
    tail, targs = "", list[object]()
    if scopes:
        tail, targs = " AND f.scope = ANY(?)", [list(scopes)]
    if not m.values and not m.names:
        return head + tail, [m.predicate, *targs]
    parts, args = [], list[object]()
    if m.values:
        parts.append(f"{head} AND f.object_id IS NULL AND lower(f.value) = ANY(?){tail}")
        args += [m.predicate, sorted({v.translate(_ASCII_LOWER) for v in m.values}), *targs]
    if m.names:
        parts.append(
            f"{head} AND f.object_id IN (SELECT id FROM entities WHERE name_key = ANY(?)"
            " UNION SELECT entity_id FROM names WHERE key = ANY(?)"
            " UNION SELECT e.id FROM entities e WHERE e.resolved_id IN"
            f" (SELECT entity_id FROM names WHERE key = ANY(?))){tail}")
        keys = list(m.names)
        args += [m.predicate, keys, keys, keys, *targs]
    return " UNION ALL ".join(parts), args
