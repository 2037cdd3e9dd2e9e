"""The queries the wiki's lint asks: each is one set-based statement on the indexes.

Why here and not in Python over ``live_facts``: on a 10,000-note store that is 300,000
fact rows built into records to find a few dozen problems; each query below reads only
the rows its problem can be in (name entities that reach no note, the edge indexes of
each note, the facts of a few predicates).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ...types import Hit
from ..records import Claim, LinkRow, NoteLinks, TextQuery
from . import scoped
from .fts import match_string

__all__ = ["WikiQueries"]


def _marks(items: Sequence[object]) -> str:
    return ",".join("?" * len(items))


def _not_in(column: str, paths: Sequence[str]) -> str:
    return f" AND {column} NOT IN ({_marks(paths)})" if paths else ""


class WikiQueries:
    """Lint and wiki-search reads over one connection (a mixin of ``Reader``)."""

    con: sqlite3.Connection

    def unresolved_links(self, scope: str, *, exclude_paths: Sequence[str] = ()
                         ) -> list[LinkRow]:
        """Live links of the scope's vault notes whose name reaches no note (nor a record
        a note states facts of).

        Driven from the name entities no note declares (``resolved_id IS NULL``), then
        the object index of facts: the cost is the unresolved names, not the store.
        """
        rows = self.con.execute(
            "SELECT f.id, d.path, f.line_start, o.label, o.name_key, f.predicate, f.extractor"
            " FROM entities o JOIN facts f ON f.object_id = o.id AND f.retracted_at IS NULL"
            " JOIN documents d ON d.id = f.document_id"
            " WHERE o.kind = 'name' AND o.resolved_id IS NULL AND o.scope = ?"
            # a folder with no page of its own (``domain.names.folder_key``) is no link
            " AND o.name_key NOT LIKE '%/'"
            " AND d.deleted_at IS NULL AND d.source_kind = 'file' AND f.predicate != 'mentions'"
            # a record of a note (``### TASK-1: …`` with fields) is an entity a vault
            # states, though no note declares its name
            " AND NOT EXISTS (SELECT 1 FROM facts r JOIN documents rd ON rd.id = r.document_id"
            " WHERE r.subject_id = o.id AND r.retracted_at IS NULL"
            " AND rd.source_kind = 'file' AND rd.deleted_at IS NULL)"
            f"{_not_in('d.path', exclude_paths)} ORDER BY d.path, f.line_start, f.id",
            [scope, *exclude_paths])
        return [LinkRow(int(r[0]), str(r[1]), r[2], str(r[3]), str(r[4] or ""), str(r[5]),
                        str(r[6] or ""))
                for r in rows]

    def unlinked_notes(self, scope: str, *, exclude_paths: Sequence[str] = ()
                       ) -> list[NoteLinks]:
        """The scope's vault notes no other note links to (mentions aside), each with
        whether it links out. Links from ``exclude_paths`` (a generated index) count for
        nothing, and those notes are not reported."""
        ex = list(exclude_paths)
        src = _not_in("fd.path", ex)
        link_in = (
            "EXISTS (SELECT 1 FROM facts f JOIN documents fd ON fd.id = f.document_id"
            " WHERE f.object_id = e.id AND f.retracted_at IS NULL AND f.document_id != d.id"
            f" AND f.predicate != 'mentions'{src})"
            " OR EXISTS (SELECT 1 FROM entities n JOIN facts f ON f.object_id = n.id"
            " AND f.retracted_at IS NULL JOIN documents fd ON fd.id = f.document_id"
            " WHERE n.resolved_id = e.id AND n.kind = 'name' AND f.document_id != d.id"
            f" AND f.predicate != 'mentions'{src})")
        link_out = (
            "EXISTS (SELECT 1 FROM facts f JOIN entities o ON o.id = f.object_id"
            " WHERE f.document_id = d.id AND f.retracted_at IS NULL"
            " AND f.predicate != 'mentions' AND COALESCE(o.resolved_id, o.id) != e.id)")
        rows = self.con.execute(
            f"SELECT path, title, has_out FROM (SELECT d.path AS path, e.label AS title,"
            f" ({link_in}) AS has_in, ({link_out}) AS has_out"
            " FROM entities e JOIN documents d ON d.id = e.document_id"
            " WHERE e.kind = 'note' AND d.scope = ? AND d.deleted_at IS NULL"
            f" AND d.source_kind = 'file'{_not_in('d.path', ex)}) WHERE NOT has_in"
            " ORDER BY path", [*ex, *ex, scope, *ex])
        return [NoteLinks(str(r[0]), str(r[1]), bool(r[2])) for r in rows]

    def conflicting_values(self, scope: str, predicates: Sequence[str]) -> list[int]:
        """Live facts of ``predicates`` whose subject holds two or more values of one of
        them (literals compared case-folded, entities by the note they reach), stated by
        two or more sources (a document, or an actor for asserted facts) or with two or
        more valid-time windows: one note listing several owners is no contradiction."""
        if not predicates:
            return []
        rows = self.con.execute(
            "WITH cand AS (SELECT f.id AS id, COALESCE(s.resolved_id, s.id) AS subj,"
            " f.predicate AS pred, CASE WHEN f.object_id IS NULL"
            " THEN 'v:' || lower(trim(f.value)) ELSE 'e:' || COALESCE(o.resolved_id, o.id)"
            " END AS val, COALESCE('d' || f.document_id, 'a:' || COALESCE(f.actor, ''))"
            " AS src, (f.valid_from IS NOT NULL OR f.valid_to IS NOT NULL) AS timed"
            " FROM facts f JOIN entities s ON s.id = f.subject_id"
            " LEFT JOIN entities o ON o.id = f.object_id"
            f" WHERE f.retracted_at IS NULL AND f.scope = ? AND f.predicate IN"
            f" ({_marks(predicates)}))"
            " SELECT c.id FROM cand c JOIN (SELECT subj, pred FROM cand GROUP BY subj, pred"
            " HAVING COUNT(DISTINCT val) > 1 AND (COUNT(DISTINCT src) > 1 OR SUM(timed) > 1))"
            " g ON g.subj = c.subj AND g.pred = c.pred ORDER BY c.id", [scope, *predicates])
        return [int(r[0]) for r in rows]

    def rival_claims(self, scope: str, predicates: Sequence[str],
                     inverse: Sequence[str] = ()) -> list[Claim]:
        """Claims to supersede a target that two or more entities make: ``predicates``
        read subject-supersedes-object, ``inverse`` object-supersedes-subject."""
        parts, args = [], list[object]()
        for preds, by, target in ((predicates, "s", "o"), (inverse, "o", "s")):
            if preds:
                parts.append(
                    f"SELECT f.id AS id, COALESCE({by}.resolved_id, {by}.id) AS by_,"
                    f" COALESCE({target}.resolved_id, {target}.id) AS target FROM facts f"
                    " JOIN entities s ON s.id = f.subject_id"
                    " JOIN entities o ON o.id = f.object_id"
                    f" WHERE f.retracted_at IS NULL AND f.scope = ?"
                    f" AND f.predicate IN ({_marks(preds)})")
                args.extend([scope, *preds])
        if not parts:
            return []
        rows = self.con.execute(
            f"WITH claims AS ({' UNION ALL '.join(parts)})"
            " SELECT c.id, c.by_, c.target FROM claims c JOIN (SELECT target FROM claims"
            " GROUP BY target HAVING COUNT(DISTINCT by_) > 1) g ON g.target = c.target"
            " ORDER BY c.target, c.id", args)
        return [Claim(int(r[0]), int(r[1]), int(r[2])) for r in rows]

    def search_chunks_under(self, query: TextQuery, prefix: str, *, limit: int,
                            scopes: Sequence[str] | None = None,
                            exclude_paths: Sequence[str] = ()) -> list[Hit]:
        """Full-text search over the live chunks of documents whose path starts with
        ``prefix`` (a wiki folder), best first."""
        hits: list[tuple[int, float]] = []
        for fts in scoped.tables(self.con, "chunk_fts", scopes):  # each scope ranks its own
            hits.extend((int(r[0]), -float(r[1])) for r in self.con.execute(
                f"SELECT c.id, bm25({fts}, 2.0, 1.0) AS r FROM {fts}"
                f" JOIN chunks c ON c.id = {fts}.rowid JOIN documents d ON d.id = c.document_id"
                f" WHERE {fts} MATCH ? AND d.deleted_at IS NULL AND substr(d.path, 1, ?) = ?"
                f"{_not_in('d.path', exclude_paths)} ORDER BY r LIMIT ?",
                [match_string(query), len(prefix), prefix, *exclude_paths, limit]))
        hits.sort(key=lambda h: -h[1])
        return [Hit(cid, score) for cid, score in hits[:limit]]
