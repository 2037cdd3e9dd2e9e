"""The queries the wiki's lint and search ask, on PostgreSQL: each one set-based statement
on the indexes (as the SQLite backend's ``wiki.py``), every join on scope.

``exclude_paths`` travel as one array (``<> ALL(?)``: an empty one excludes nothing).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...types import Hit
from ..records import Claim, LinkRow, NoteLinks, TextQuery
from . import text
from .connection import Con

__all__ = ["WikiQueries"]


class WikiQueries:
    """Lint and wiki-search reads (a mixin of ``Reader``)."""

    con: Con

    def unresolved_links(self, scope: str, *, exclude_paths: Sequence[str] = ()
                         ) -> list[LinkRow]:
        """Live links of the scope's vault notes whose name reaches no note (nor a record
        a note states facts of), by path and line; driven from the unresolved names."""
        rows = self.con.execute(
            "SELECT f.id, d.path, f.line_start, o.label, o.name_key, f.predicate, f.extractor"
            " FROM entities o JOIN facts f ON f.object_id = o.id AND f.scope = o.scope"
            " AND f.retracted_at IS NULL"
            " JOIN documents d ON d.id = f.document_id AND d.scope = f.scope"
            " WHERE o.kind = 'name' AND o.resolved_id IS NULL AND o.scope = ?"
            " AND o.name_key NOT LIKE '%/'"  # a folder with no page of its own is no link
            " AND d.deleted_at IS NULL AND d.source_kind = 'file' AND f.predicate <> 'mentions'"
            " AND NOT EXISTS (SELECT 1 FROM facts r"
            " JOIN documents rd ON rd.id = r.document_id AND rd.scope = r.scope"
            " WHERE r.subject_id = o.id AND r.scope = o.scope AND r.retracted_at IS NULL"
            " AND rd.source_kind = 'file' AND rd.deleted_at IS NULL)"
            " AND d.path <> ALL(?::text[])"
            " ORDER BY d.path, f.line_start NULLS FIRST, f.id", (scope, list(exclude_paths)))
        return [LinkRow(int(r[0]), str(r[1]), r[2], str(r[3]), str(r[4] or ""), str(r[5]),
                        str(r[6] or ""))
                for r in rows]

    def unlinked_notes(self, scope: str, *, exclude_paths: Sequence[str] = ()
                       ) -> list[NoteLinks]:
        """The scope's vault notes no other note links to (mentions aside), each with
        whether it links out. Links from ``exclude_paths`` count for nothing, and those
        notes are not reported."""
        ex = list(exclude_paths)
        link_in = (
            "EXISTS (SELECT 1 FROM facts f"
            " JOIN documents fd ON fd.id = f.document_id AND fd.scope = f.scope"
            " WHERE f.object_id = e.id AND f.scope = e.scope AND f.retracted_at IS NULL"
            " AND f.document_id <> d.id AND f.predicate <> 'mentions'"
            " AND fd.path <> ALL(?::text[]))"
            " OR EXISTS (SELECT 1 FROM entities n"
            " JOIN facts f ON f.object_id = n.id AND f.scope = n.scope AND f.retracted_at IS NULL"
            " JOIN documents fd ON fd.id = f.document_id AND fd.scope = f.scope"
            " WHERE n.resolved_id = e.id AND n.scope = e.scope AND n.kind = 'name'"
            " AND f.document_id <> d.id AND f.predicate <> 'mentions'"
            " AND fd.path <> ALL(?::text[]))")
        link_out = (
            "EXISTS (SELECT 1 FROM facts f"
            " JOIN entities o ON o.id = f.object_id AND o.scope = f.scope"
            " WHERE f.document_id = d.id AND f.scope = d.scope AND f.retracted_at IS NULL"
            " AND f.predicate <> 'mentions' AND COALESCE(o.resolved_id, o.id) <> e.id)")
        rows = self.con.execute(
            f"SELECT path, title, has_out FROM (SELECT d.path AS path, e.label AS title,"
            f" ({link_in}) AS has_in, ({link_out}) AS has_out"
            " FROM entities e JOIN documents d ON d.id = e.document_id AND d.scope = e.scope"
            " WHERE e.kind = 'note' AND d.scope = ? AND d.deleted_at IS NULL"
            " AND d.source_kind = 'file' AND d.path <> ALL(?::text[])) x WHERE NOT has_in"
            " ORDER BY path", (ex, ex, scope, ex))
        return [NoteLinks(str(r[0]), str(r[1]), bool(r[2])) for r in rows]

    def conflicting_values(self, scope: str, predicates: Sequence[str]) -> list[int]:
        """Live facts of ``predicates`` whose subject holds two or more values of one of
        them (literals compared case-folded, entities by the note they reach), stated by
        two or more sources (a document, or an actor for asserted facts) or with two or
        more valid-time windows."""
        if not predicates:
            return []
        rows = self.con.execute(
            "WITH cand AS (SELECT f.id AS id, f.scope AS scope, COALESCE(s.resolved_id, s.id)"
            " AS subj,"
            " f.predicate AS pred, CASE WHEN f.object_id IS NULL"
            " THEN 'v:' || lower(trim(f.value)) ELSE 'e:' || COALESCE(o.resolved_id, o.id)"
            " END AS val, COALESCE('d' || f.document_id, 'a:' || COALESCE(f.actor, ''))"
            " AS src, (f.valid_from IS NOT NULL OR f.valid_to IS NOT NULL) AS timed"
            " FROM facts f JOIN entities s ON s.id = f.subject_id AND s.scope = f.scope"
            " LEFT JOIN entities o ON o.id = f.object_id AND o.scope = f.scope"
            " WHERE f.retracted_at IS NULL AND f.scope = ? AND f.predicate = ANY(?))"
            " SELECT c.id FROM cand c JOIN (SELECT scope, subj, pred FROM cand"
            " GROUP BY scope, subj, pred"
            " HAVING COUNT(DISTINCT val) > 1 AND (COUNT(DISTINCT src) > 1"
            " OR COUNT(*) FILTER (WHERE timed) > 1)) g ON g.scope = c.scope AND g.subj = c.subj"
            " AND g.pred = c.pred"
            " ORDER BY c.id", (scope, list(predicates)))
        return [int(r[0]) for r in rows]

    def rival_claims(self, scope: str, predicates: Sequence[str],
                     inverse: Sequence[str] = ()) -> list[Claim]:
        """Claims to supersede a target that two or more entities make: ``predicates``
        read subject-supersedes-object, ``inverse`` object-supersedes-subject."""
        parts, args = [], list[object]()
        for preds, by, target in ((predicates, "s", "o"), (inverse, "o", "s")):
            if preds:
                parts.append(
                    f"SELECT f.id AS id, f.scope AS scope,"
                    f" COALESCE({by}.resolved_id, {by}.id) AS by_,"
                    f" COALESCE({target}.resolved_id, {target}.id) AS target FROM facts f"
                    " JOIN entities s ON s.id = f.subject_id AND s.scope = f.scope"
                    " JOIN entities o ON o.id = f.object_id AND o.scope = f.scope"
                    " WHERE f.retracted_at IS NULL AND f.scope = ? AND f.predicate = ANY(?)")
                args.extend([scope, list(preds)])
        if not parts:
            return []
        rows = self.con.execute(
            f"WITH claims AS ({' UNION ALL '.join(parts)})"
            " SELECT c.id, c.by_, c.target FROM claims c JOIN (SELECT scope, target FROM claims"
            " GROUP BY scope, target HAVING COUNT(DISTINCT by_) > 1) g ON g.scope = c.scope"
            " AND g.target = c.target"
            " ORDER BY c.target, c.id", args)
        return [Claim(int(r[0]), int(r[1]), int(r[2])) for r in rows]

    def search_chunks_under(self, query: TextQuery, prefix: str, *, limit: int,
                            scopes: Sequence[str] | None = None,
                            exclude_paths: Sequence[str] = ()) -> list[Hit]:
        """Full-text search over the live chunks of documents whose path starts with
        ``prefix`` (a wiki folder), best first."""
        where = (" AND EXISTS (SELECT 1 FROM chunks c"
                 " JOIN documents d ON d.id = c.document_id AND d.scope = c.scope"
                 " WHERE c.id = {cid} AND c.scope = t.scope AND d.deleted_at IS NULL"
                 " AND left(d.path, ?) = ? AND d.path <> ALL(?::text[]))")
        args: list[object] = [len(prefix), prefix, list(exclude_paths)]
        return [Hit(cid, score) for cid, score in text.bm25(
            self.con, "chunk", query, limit=limit, select="t.id", where=where, args=args,
            scopes=scopes or None)]
