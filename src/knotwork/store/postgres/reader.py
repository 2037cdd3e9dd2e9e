"""Read queries over the PostgreSQL store: the SQLite reader's, spelled for PostgreSQL.

Every join also joins on ``scope`` (see ``schema.py``); lists travel as arrays
(``= ANY(?)``), so one statement serves any number of ids.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Sequence
from functools import partial
from typing import cast

import numpy as np

from ...domain.ids import note_iri
from ...types import ChunkRow, EntityRow, FactRow, FileState, Hit, mentionable
from .. import dates
from ..records import (
    DocumentRecord,
    Edge,
    EntityName,
    EventRecord,
    MentionInputs,
    MentionWork,
    NameChange,
    PendingChunk,
    TextQuery,
    WarningRecord,
    Warnings,
    or_else,
)
from ..sqlite.reader import TRUST_LABELS, _as_of, _fact_row, _file_state
from ..sqlite.schema import NO_PAGELESS_FOLDER, PAGE_OF_NOTES
from . import text
from .connection import Con, snapshot_meta
from .connection import kept as kept_of
from .find import FindQueries
from .schema import AT, NAMES_AT, STOOD, winner_at
from .trust import FIND, TrustReads
from .wiki import WikiQueries

# Each fact's ends are read by per-row probes (a LATERAL subquery a side, kept apart by
# its OFFSET 0) rather than as one six-way join: the planner then has two tables to
# order, not six (planning took longer than running the read), and a read of a few facts
# is never planned as hash joins over the whole entities table.
_FACT_SELECT = """
SELECT f.id, s.cid, s.iri, s.label, f.predicate, f.value, f.datatype, o.cid, o.iri, o.label,
       f.confidence, f.trust, f.review, f.scope, f.recorded_at, f.retracted_at,
       f.valid_from, f.valid_to, f.extractor, f.actor, f.qualifiers,
       (SELECT v.path FROM versions v WHERE v.id = f.version_id AND v.scope = f.scope),
       f.line_start, f.line_end, f.chunk_id, f.supporting_text, f.document_id,
       f.version_id, f.retract_reason
FROM facts f
CROSS JOIN LATERAL (SELECT COALESCE(s.resolved_id, s.id) AS cid, COALESCE(sc.iri, s.iri) AS iri,
       COALESCE(sc.label, s.label) AS label FROM entities s
       LEFT JOIN entities sc ON sc.id = s.resolved_id AND sc.scope = s.scope
       WHERE s.id = f.subject_id AND s.scope = f.scope OFFSET 0) s
LEFT JOIN LATERAL (SELECT COALESCE(o.resolved_id, o.id) AS cid, COALESCE(oc.iri, o.iri) AS iri,
       COALESCE(oc.label, o.label) AS label FROM entities o
       LEFT JOIN entities oc ON oc.id = o.resolved_id AND oc.scope = o.scope
       WHERE o.id = f.object_id AND o.scope = f.scope OFFSET 0) o ON TRUE
"""

# The stored entities that read as the asked ids (what ``members`` gives), as a CTE ``m``
# of (id, the asked id it reads as): each asked id, and each entity resolved to one of
# them (that row wins, as in ``members``). Its two arguments: the ids, twice. Why: a read
# that needs the members takes them in its own statement, not one round trip more.
MEMBERS = ("m(id, canon) AS MATERIALIZED (SELECT DISTINCT ON (x.id) x.id, x.canon FROM"
           " (SELECT j, j, 0 FROM unnest(?::bigint[]) AS j UNION ALL"
           " SELECT id, resolved_id, 1 FROM entities WHERE resolved_id = ANY(?::bigint[]))"
           " AS x(id, canon, pri) ORDER BY x.id, x.pri DESC)")
IN_MEMBERS = "= ANY(ARRAY(SELECT id FROM m))"


# What a search of a snapshot reads of each hit ``x`` with it (``text.bm25``'s ``more``),
# kept for the reads that follow (``Con.kept``): an entity hit's row (as ``entities``
# reads it) and types (as ``types``); a chunk hit's row (as ``chunks``) and its owners
# (as ``chunk_entities``: the notes of its document, then the subjects of the live facts
# it cites). Why: the context pipeline reads exactly these next, each a round trip of
# its own.
# An entity's types as ``types`` reads them, for the entity ``{e}`` (an id column).
_TYPES_OF = ("ARRAY(SELECT f.value FROM facts f WHERE f.subject_id IN (SELECT {e}"
             " UNION ALL SELECT m.id FROM entities m WHERE m.resolved_id = {e})"
             " AND f.retracted_at IS NULL AND f.review <> 'rejected' AND f.predicate = 'type'"
             " ORDER BY f.id)")
_ENTITY_ROW = ("LEFT JOIN LATERAL (SELECT iri, label, kind, scope, document_id, created_at,"
               f" {_TYPES_OF.format(e='x.id')} FROM entities WHERE id = x.id) r ON TRUE")
_CHUNK_ROW = (
    "LEFT JOIN LATERAL (SELECT c.document_id, v.path, d.title, c.heading, c.line_start,"
    " c.line_end, c.text, d.scope, v.recorded_at,"
    " ARRAY(SELECT e.id FROM entities e WHERE e.document_id = c.document_id"
    "  AND e.scope = c.scope AND e.kind = 'note' ORDER BY e.id) AS notes,"
    " ARRAY(SELECT DISTINCT COALESCE(s.resolved_id, s.id) FROM facts f"
    "  JOIN entities s ON s.id = f.subject_id AND s.scope = f.scope"
    "  WHERE f.chunk_id = c.id AND f.retracted_at IS NULL ORDER BY 1) AS subjects"
    " FROM chunks c JOIN versions v ON v.id = c.version_id AND v.scope = c.scope"
    " JOIN documents d ON d.id = c.document_id AND d.scope = c.scope WHERE c.id = x.id) r"
    " ON TRUE")


# A document's note's ``updated`` values (``Reader.updated_dates``); its parameters: the
# document's id, scope and note IRI.
_NOTE = FIND.format(text="u.iri", key="''", scopes="ARRAY[u.scope]")
_UPDATED = (
    "SELECT g.value FROM (SELECT ?::bigint AS doc, ?::text AS scope, ?::text AS iri) u"
    f" CROSS JOIN LATERAL (SELECT {_NOTE} AS id) nt"
    " CROSS JOIN LATERAL (SELECT f.id, f.value FROM facts f"
    " WHERE f.subject_id IN (SELECT nt.id UNION ALL SELECT e.id FROM entities e"
    "  WHERE e.resolved_id = nt.id) AND f.scope = u.scope"
    "  AND f.document_id = u.doc AND f.predicate = 'updated'"
    "  AND f.retracted_at IS NULL AND f.review <> 'rejected'"
    "  AND NOT EXISTS (SELECT 1 FROM entities o WHERE o.id = f.object_id"
    "   AND o.scope = f.scope)"
    "  AND ((SELECT v.path FROM versions v WHERE v.id = f.version_id"
    "   AND v.scope = f.scope) IS NOT NULL OR f.supporting_text IS NOT NULL)) g"
    " ORDER BY g.id")


def _tagged(tag: int) -> str:
    """``_FACT_SELECT`` with a first column ``tag`` (which branch of a UNION a row is of)."""
    return _FACT_SELECT.replace("SELECT", f"SELECT {tag},", 1)


def _fact_select(as_of: str | None) -> str:
    """``_FACT_SELECT``, its names resolved as they were at ``as_of`` when one is given
    (then the statement opens with ``AT`` and its first parameter is the time)."""
    if as_of is None:
        return _FACT_SELECT
    return AT + (_FACT_SELECT.replace("s.resolved_id", winner_at("s"))
                 .replace("o.resolved_id", winner_at("o")))


def _first(as_of: str | None) -> list[object]:
    return [] if as_of is None else [as_of]


class Reader(WikiQueries, TrustReads, FindQueries):
    """Read operations; each statement on the thread's pinned connection or a pooled one."""

    def __init__(self, con: Con) -> None:
        self.con = con

    # ------------------------------------------------------------ entities

    def members(self, entity_ids: Iterable[int], *, as_of: str | None = None
                ) -> dict[int, int]:
        ids = list(entity_ids)
        out = {i: i for i in ids}
        if ids and as_of is not None:
            wanted = set(ids)
            for eid, rid in self.con.execute(
                    f"{AT}SELECT e.id, {winner_at('e')} FROM entities e WHERE e.kind = 'name'"
                    f" AND e.name_key IN (SELECT key FROM {NAMES_AT} n"
                    " WHERE n.entity_id = ANY(?))", (as_of, ids)):
                if rid in wanted:
                    out[eid] = rid
        elif ids:
            for eid, rid in self.con.execute(
                    "SELECT id, resolved_id FROM entities WHERE resolved_id = ANY(?)", (ids,)):
                out[eid] = rid
        return out

    def entities(self, ids: Iterable[int]) -> dict[int, EntityRow]:
        ids = list(ids)
        if not ids:
            return {}
        kept, out = kept_of(self.con), dict[int, EntityRow]()
        if kept is not None:  # (the rows an entity search of this snapshot read)
            out = {i: kept["entity", i] for i in ids if ("entity", i) in kept}
            ids = [i for i in ids if i not in out]
            if not ids:
                return out
        if kept is None:
            return {r[0]: EntityRow(*r) for r in self.con.execute(
                "SELECT id, iri, label, kind, scope, document_id, created_at FROM entities"
                " WHERE id = ANY(?)", (ids,))}
        # (and their types, kept for ``types``: the entities a context reads rows of are
        # the ones it then loads)
        for r in self.con.execute(
                "SELECT id, iri, label, kind, scope, document_id, created_at,"
                f" {_TYPES_OF.format(e='e.id')} FROM entities e WHERE id = ANY(?)", (ids,)):
            out[r[0]] = kept["entity", r[0]] = EntityRow(*r[:7])
            kept["types", r[0]] = list(dict.fromkeys(r[7]))
        return out

    def canonical(self, entity_id: int) -> int:
        row = self.con.execute("SELECT COALESCE(resolved_id, id) FROM entities WHERE id=?",
                               (entity_id,)).fetchone()
        return int(row[0]) if row else entity_id

    def lookup_names(self, keys: Sequence[str], *, referred: bool = False,
                     as_of: str | None = None, scopes: Sequence[str] | None = None
                     ) -> dict[str, int]:
        """Each key's entity: the name a note declares first (lowest rank, then the
        shortest path), else the newest entity of that name key; one statement (as of
        ``as_of``: by the declarations of then; with ``scopes``: among those scopes'
        names alone)."""
        if not keys:
            return {}
        if as_of is not None:
            return self._lookup_names_at(keys, referred, as_of, scopes)
        within = " AND {t}.scope = ANY(?::text[])" if scopes else ""
        rows = self.con.execute(
            "SELECT k, COALESCE((SELECT n.entity_id FROM names n WHERE n.key = k"
            f"{within.format(t='n')} ORDER BY n.rank, length(n.path), n.path LIMIT 1),"
            " (SELECT COALESCE(e.resolved_id, e.id) FROM entities e WHERE e.name_key = k"
            + (" AND NOT e.orphan" if referred else "") + within.format(t="e")
            + " ORDER BY e.id DESC LIMIT 1)) FROM unnest(?::text[]) AS k",
            (*([list(scopes)] * 2 if scopes else []), list(dict.fromkeys(keys)))).rows
        return {k: int(eid) for k, eid in rows if eid is not None}

    def _lookup_names_at(self, keys: Sequence[str], referred: bool, as_of: str,
                         scopes: Sequence[str] | None) -> dict[str, int]:
        out: dict[str, int] = {}
        within = " AND {t}.scope = ANY(?::text[])" if scopes else ""
        where = [list(scopes)] if scopes else []
        for key, eid in self.con.execute(
                f"{AT}SELECT key, entity_id FROM {NAMES_AT} n WHERE key = ANY(?)"
                f"{within.format(t='n')} ORDER BY rank DESC, length(path) DESC, path DESC",
                (as_of, list(keys), *where)):
            out[key] = eid
        rest = [k for k in keys if k not in out]
        if rest:
            stood = (" AND EXISTS (SELECT 1 FROM facts f WHERE (f.object_id = e.id"
                     f" OR f.subject_id = e.id) AND f.scope = e.scope AND {STOOD})"
                     if referred else "")
            for key, eid in self.con.execute(
                    f"{AT}SELECT e.name_key, COALESCE({winner_at('e')}, e.id) FROM entities e"
                    f" WHERE e.name_key = ANY(?) AND e.created_at <= (SELECT t FROM at_t){stood}"
                    f"{within.format(t='e')} ORDER BY e.id", (as_of, rest, *where)):
                out[key] = eid
        return out

    def find_entity(self, text: str, key: str, *, scopes: Sequence[str] | None = None
                    ) -> int | None:
        """By iri, then name, then label; canonical id or None. With ``scopes``, only an
        entity of one of them (``TrustReads.find_in_scopes``)."""
        if scopes:
            return self.find_in_scopes(text, key, scopes)
        row = self.con.execute(
            "SELECT COALESCE(e.resolved_id, e.id) FROM entities e"
            " LEFT JOIN documents d ON d.id = e.document_id AND d.scope = e.scope WHERE e.iri=?"
            " ORDER BY (d.deleted_at IS NULL AND d.id IS NOT NULL) DESC, e.kind='note' DESC,"
            " e.id DESC LIMIT 1", (text,)).fetchone()
        if row:
            return int(row[0])
        found = self.lookup_names([key])
        if key in found:
            return found[key]
        row = self.con.execute("SELECT COALESCE(resolved_id, id) FROM entities"
                               " WHERE lower(label) = lower(?) ORDER BY id LIMIT 1",
                               (text,)).fetchone()
        return int(row[0]) if row else None

    def names_of(self, entity_id: int) -> list[EntityName]:
        return [EntityName(r[0], r[1]) for r in self.con.execute(
            f"SELECT kind, text FROM names n WHERE entity_id=? AND {PAGE_OF_NOTES}"
            " ORDER BY rank, text", (entity_id,))]

    def types(self, entity_ids: Iterable[int]) -> dict[int, list[str]]:
        ids = list(entity_ids)
        out: dict[int, list[str]] = {}
        if not ids:
            return out
        kept = kept_of(self.con)
        if kept is not None:  # (the types read with the entities' rows in this snapshot)
            for i in ids:
                if kept.get(("types", i)):
                    out[i] = list(kept["types", i])
            ids = [i for i in ids if ("types", i) not in kept]
            if not ids:
                return out
        for canon, value in self.con.execute(
                f"WITH {MEMBERS} SELECT m.canon, f.value FROM facts f JOIN m ON m.id ="
                " f.subject_id WHERE f.retracted_at IS NULL AND f.review <> 'rejected' AND"
                f" f.predicate = 'type' AND f.subject_id {IN_MEMBERS} ORDER BY f.id",
                (ids, ids)):
            vals = out.setdefault(canon, [])
            if value not in vals:
                vals.append(value)
        return out

    def degrees(self, entity_ids: Iterable[int], *, cap: int = 1000) -> dict[int, int]:
        ids = list(entity_ids)
        if not ids:
            return {}
        out: dict[int, int] = {}
        for canon, n in self.con.execute(
                f"WITH {MEMBERS} SELECT m.canon,"
                " (SELECT COUNT(*) FROM (SELECT 1 FROM facts WHERE object_id = m.id"
                "  AND retracted_at IS NULL LIMIT ?) a)"
                " + (SELECT COUNT(*) FROM (SELECT 1 FROM facts WHERE subject_id = m.id"
                "  AND retracted_at IS NULL LIMIT ?) b) FROM m", (ids, ids, cap, cap)):
            out[canon] = min(out.get(canon, 0) + int(n), cap)
        return out

    # ------------------------------------------------------------ facts

    def facts(self, entity_ids: Iterable[int], *, direction: str = "out",
              as_of: str | None = None, history: bool = False, limit: int | None = None,
              scopes: Sequence[str] | None = None, min_confidence: float = 0.0,
              trusts: Sequence[str] | None = None, valid_at: str | None = None
              ) -> list[FactRow]:
        col = "f.subject_id" if direction == "out" else "f.object_id"
        if as_of is not None:  # members and names as they stood then
            members = list(self.members(entity_ids, as_of=as_of))
            if not members:
                return []
            where, args = [f"{col} = ANY(?)"], list[object]([*_first(as_of), members])
            head = _fact_select(as_of)
        else:
            ids = list(entity_ids)
            if not ids:
                return []
            where, args = [f"{col} {IN_MEMBERS}"], list[object]([ids, ids])
            head = f"WITH {MEMBERS} {_FACT_SELECT}"
        self._time_filter(where, args, as_of=as_of, history=history)
        self._filters(where, args, scopes=scopes, min_confidence=min_confidence, trusts=trusts,
                      valid_at=valid_at, rejected=history)
        sql = f"{head} WHERE {' AND '.join(where)} ORDER BY f.id"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return [_as_of(_fact_row(r), as_of) for r in self.con.execute(sql, args)]

    def entity_facts(self, entity_id: int, *, out_limit: int, in_limit: int,
                     as_of: str | None = None, scopes: Sequence[str] | None = None,
                     min_confidence: float = 0.0, trusts: Sequence[str] | None = None,
                     valid_at: str | None = None, own_document: int | None = None
                     ) -> tuple[list[FactRow], list[FactRow]]:
        """Both directions in one statement (a UNION whose first column says which); as
        of ``as_of``, a statement each, by the members and names of then."""
        if as_of is not None:
            return self._entity_facts_at(
                entity_id, out_limit=out_limit, in_limit=in_limit, as_of=as_of, scopes=scopes,
                min_confidence=min_confidence, trusts=trusts, valid_at=valid_at,
                own_document=own_document)
        parts, args = list[str](), list[object]([[entity_id], [entity_id]])
        for tag, col, limit in ((0, "f.subject_id", out_limit), (1, "f.object_id", in_limit)):
            if limit <= 0:
                continue
            where = [f"{col} {IN_MEMBERS}"]
            self._time_filter(where, args, as_of=as_of, history=False)
            self._filters(where, args, scopes=scopes, min_confidence=min_confidence,
                          trusts=trusts, valid_at=valid_at)
            if tag == 0:
                parts.append(f"({_tagged(0)} WHERE f.id IN (SELECT f.id FROM facts f"
                             f" WHERE {' AND '.join(where)}"
                             " ORDER BY f.document_id IS DISTINCT FROM ?::bigint, f.id LIMIT ?))")
                args += [own_document, limit]
            else:
                parts.append(f"({_tagged(1)} WHERE {' AND '.join(where)} LIMIT ?)")
                args.append(limit)
        out: tuple[list[FactRow], list[FactRow]] = ([], [])
        if not parts:
            return out
        sql = f"WITH {MEMBERS} {' UNION ALL '.join(parts)}"
        note = self._own_note(entity_id, own_document) if out_limit > 0 else None
        if note is None:
            rows = self.con.execute(sql, args).rows
        else:
            # (the note's ``updated`` date, read as ``updated_dates`` reads it, in the same
            # round trip: the competing facts ``current`` weighs are mostly its own)
            res, dated = self.con.pipeline([(sql, args), (_UPDATED, note)])
            rows = res.rows
            kept = kept_of(self.con)
            if kept is not None:
                kept["updated", *note] = [str(v).strip() for (v,) in dated]
        for r in rows:
            out[r[0]].append(_as_of(_fact_row(r[1:]), as_of))
        return sorted(out[0], key=lambda f: f.id), sorted(out[1], key=lambda f: f.id)

    def _own_note(self, entity_id: int, own_document: int | None
                  ) -> tuple[int, str, str] | None:
        """(document, scope, note IRI) of a note entity whose row this snapshot read
        (``entities``, a search), when it is ``own_document``'s note and its ``updated``
        date is not known yet; else None."""
        kept = kept_of(self.con)
        row = kept.get(("entity", entity_id)) if kept is not None else None
        if (kept is None or row is None or row.kind != "note" or own_document is None
                or row.document_id != own_document):
            return None
        note = (own_document, row.scope, row.iri)
        return None if ("updated", *note) in kept else note

    def facts_by_id(self, fact_ids: Sequence[int]) -> list[FactRow]:
        if not fact_ids:
            return []
        return [_fact_row(r) for r in self.con.execute(
            f"{_FACT_SELECT} WHERE f.id = ANY(?) ORDER BY f.id", (list(fact_ids),))]

    def live_facts(self, *, scopes: Sequence[str] | None = None) -> list[FactRow]:
        where, args = ["f.retracted_at IS NULL"], list[object]()
        if scopes:
            where.append("f.scope = ANY(?)")
            args.append(list(scopes))
        return [_fact_row(r) for r in self.con.execute(
            f"{_FACT_SELECT} WHERE {' AND '.join(where)} ORDER BY f.id", args)]

    @staticmethod
    def _filters(where: list[str], args: list[object], *, scopes: Sequence[str] | None,
                 min_confidence: float, trusts: Sequence[str] | None, valid_at: str | None,
                 rejected: bool = False) -> None:
        """The filters every fact read takes. A rejected fact is left out unless
        ``rejected`` (history) or ``trusts`` names "rejected"."""
        if scopes:
            where.append("f.scope = ANY(?)")
            args.append(list(scopes))
        if min_confidence > 0:
            where.append("f.confidence >= ?")
            args.append(min_confidence)
        if trusts:
            # trust labels and review statuses both name a fact's trust state: "stated,
            # approved" is what the author wrote or a reviewer approved
            kinds = [t for t in trusts if t in TRUST_LABELS]
            reviews = [t for t in trusts if t not in TRUST_LABELS]
            where.append("(f.trust = ANY(?::text[]) OR f.review = ANY(?::text[]))")
            args.extend([kinds, reviews])
        if not rejected and not (trusts and "rejected" in trusts):
            where.append("f.review <> 'rejected'")
        if valid_at:
            where.append("(f.valid_from IS NULL OR f.valid_from <= ?)"
                         " AND (f.valid_to IS NULL OR f.valid_to > ?)")
            args.extend([valid_at, valid_at])

    @staticmethod
    def _time_filter(where: list[str], args: list[object], *, as_of: str | None,
                     history: bool) -> None:
        if as_of:
            where.append("f.recorded_at <= ? AND (f.retracted_at IS NULL OR f.retracted_at > ?)")
            args.extend([as_of, as_of])
        elif not history:
            where.append("f.retracted_at IS NULL")

    def updated_dates(self, documents: Sequence[tuple[int, str, str]], *,
                      as_of: str | None = None) -> dict[int, str]:
        """A statement a document (not two): its note found as ``find_in_scopes`` finds
        it (by the note's IRI, in the document's scope), then the live literal ``updated``
        facts the document states about it (or an entity resolved to it), as ``facts``
        reads them, the last by id winning (``dates.updated_dates``, which reads as of
        ``as_of``). Scalar parameters, not arrays of the documents: so the server plans
        it once for the connection (a generic plan), where arrays of unknown length had
        it planned at every call, which cost ten times the read."""
        if as_of is not None:
            return dates.updated_dates(self, documents, as_of=as_of)
        out: dict[int, str] = {}
        kept = kept_of(self.con)
        for doc, scope, path in documents:
            key = (doc, scope, note_iri(scope, path))
            values = kept.get(("updated", *key)) if kept is not None else None
            if values is None:  # (not read with the note's facts: ``entity_facts``)
                values = [str(v).strip() for (v,) in self.con.execute(_UPDATED, key)]
            if values:
                out[doc] = values[-1]
        return out

    def edges(self, entity_ids: Iterable[int], *, as_of: str | None = None,
              min_confidence: float = 0.0, trusts: Sequence[str] | None = None,
              scopes: Sequence[str] | None = None, valid_at: str | None = None,
              limit: int = 2000) -> list[Edge]:
        """Live entity-to-entity facts touching the entities: one statement, a branch a
        direction, each on its covering index."""
        if as_of is not None:
            return self._edges_at(entity_ids, as_of=as_of, min_confidence=min_confidence,
                                  trusts=trusts, scopes=scopes, valid_at=valid_at, limit=limit)
        ids = list(entity_ids)
        if not ids:
            return []
        parts, args = list[str](), list[object]([ids, ids])
        for tag, col, far in ((0, "subject_id", "object_id"), (1, "object_id", "subject_id")):
            where = [f"f.{col} {IN_MEMBERS}", "f.object_id IS NOT NULL"]
            self._time_filter(where, args, as_of=as_of, history=False)
            self._filters(where, args, scopes=scopes, min_confidence=min_confidence,
                          trusts=trusts, valid_at=valid_at)
            parts.append(
                f"(SELECT {tag}, m.canon, COALESCE(e.resolved_id, e.id), f.predicate,"
                f" f.confidence FROM facts f JOIN m ON m.id = f.{col}"
                f" JOIN entities e ON e.scope = f.scope AND e.id = f.{far}"
                f" WHERE {' AND '.join(where)} AND {NO_PAGELESS_FOLDER}"
                f" LIMIT {int(limit)})")
        return [Edge(near, other, p, c) if tag == 0 else Edge(other, near, p, c)
                for tag, near, other, p, c in self.con.execute(
                    f"WITH {MEMBERS} {' UNION ALL '.join(parts)}", args)]

    # ------------------------------------------------------------ full text

    def term_frequencies(self, words: Sequence[str], *, table: str = "chunk",
                         cap: int | None = None, as_of: str | None = None,
                         scopes: Sequence[str] | None = None) -> list[tuple[str, int]]:
        """How many live rows of ``table`` (chunk | entity) of ``scopes`` (all when None)
        hold each word, after stemming (a word of several tokens: the rows holding them
        all as a phrase). With ``as_of``: the rows standing then (``text.rows_at``). A
        word of one lexeme is read from the counts kept per scope (``stats.py``)."""
        text.TABLES[table]  # noqa: B018  (an unknown table is a KeyError, as SQLite's)
        counted = text.counts(self.con, words, scopes or None) if as_of is None else {}
        lexes = text.lexemes(self.con, words)  # (known once counted)
        held = [w for w in words if lexes[w]]
        if as_of is not None:
            limit = "" if cap is None else f" LIMIT {int(cap)}"
            where = [list(scopes)] if scopes else []
            past = {w: int(self.con.execute(
                f"{AT}SELECT COUNT(*) FROM (SELECT 1 FROM ({text.rows_at(table, bool(where))})"
                f" x{limit}) y", (as_of, *([text.tsquery_text(lexes[w], "<->"), *where] * 2))
            ).fetchone()[0]) for w in held}
            return [(w, past.get(w, 0)) for w in words]
        if all(len(lexes[w]) == 1 for w in held):
            side = 0 if table == "chunk" else 1
            counts = [n if cap is None else min(n, cap)
                      for n in (cast(tuple[int, int], counted[w])[side] for w in held)]
        else:
            counts = text.frequencies(self.con, table,
                                      [text.tsquery_text(lexes[w], "<->") for w in held], cap,
                                      scopes or None)
        found = dict(zip(held, counts, strict=True))
        return [(w, found.get(w, 0)) for w in words]

    def live_chunk_count(self, scopes: Sequence[str] | None = None) -> int:
        """Live chunks (of ``scopes``: the N of their BM25 statistics, summed)."""
        if scopes:
            return sum(n for n, _ in text.scope_stats(self.con, "chunk", scopes).values())
        known, value = snapshot_meta(self.con, "live_chunks")
        if value is not None:
            return int(value)
        row = None if known else self.con.execute(
            "SELECT value FROM meta WHERE key = 'live_chunks'").fetchone()
        if row is not None:
            return int(row[0])
        row = self.con.execute("SELECT COUNT(*) FROM chunks WHERE live").fetchone()
        return int(row[0]) if row else 0

    def chunk_terms(self, chunk_ids: Sequence[int], words: Sequence[str]
                    ) -> dict[int, set[str]]:
        """Which of ``words`` each chunk holds, matched as the full-text index matches."""
        out: dict[int, set[str]] = {cid: set() for cid in chunk_ids}
        if not chunk_ids or not words:
            return out
        by_lex: dict[str, list[str]] = {}
        for w, lx in text.lexemes(self.con, words).items():
            if lx:
                by_lex.setdefault(lx[0], []).append(w)
        if not by_lex:
            return out
        for cid, lex in self.con.execute(
                "SELECT c.id, u.lexeme FROM chunks c CROSS JOIN LATERAL unnest(c.tsv) u"
                " WHERE c.id = ANY(?) AND u.lexeme = ANY(?)",
                (list(chunk_ids), list(by_lex))):
            out[cid].update(by_lex[lex])
        return out

    def search_entities(self, query: TextQuery, *, limit: int,
                        scopes: Sequence[str] | None = None, as_of: str | None = None
                        ) -> list[Hit]:
        if query.match == "all_else_any" and (
                as_of is not None or not text.postings_answer(self.con, query)):
            return or_else(partial(self.search_entities, limit=limit, scopes=scopes,
                                   as_of=as_of), query, limit)
        if as_of is not None:
            return [Hit(e, sc) for e, sc in text.search_at(
                self.con, "entity", query, as_of, limit=limit, scopes=scopes,
                select=f"COALESCE({winner_at('e')}, e.id)")]
        kept = kept_of(self.con)
        rows = text.bm25(self.con, "entity", query, limit=limit,
                         select="COALESCE(e.resolved_id, e.id)",
                         join="JOIN entities e ON e.id = t.entity_id AND e.scope = t.scope",
                         scopes=scopes or None, more="" if kept is None else _ENTITY_ROW)
        best: dict[int, float] = {}
        for eid, r, *row in rows:
            best[eid] = max(best.get(eid, 0.0), r)
            if row and row[0] is not None and kept is not None:
                kept["entity", eid] = EntityRow(eid, *row[:6])
                kept["types", eid] = list(dict.fromkeys(row[6]))
        return [Hit(e, s) for e, s in best.items()]

    def spelled_by(self, initials: Sequence[str], *, limit: int = 20,
                   scopes: Sequence[str] | None = None) -> list[tuple[int, str]]:
        if not initials:
            return []
        where, args = ["i.initials = ANY(?)"], list[object]([list(initials)])
        if scopes:
            where.append("e.scope = ANY(?)")
            args.append(list(scopes))
        rows = self.con.execute(
            "SELECT DISTINCT e.id, i.initials FROM entity_initials i"
            f" JOIN entities e ON e.id = i.entity_id AND e.scope = i.scope"
            f" WHERE {' AND '.join(where)} ORDER BY 1, 2 LIMIT ?", [*args, limit]).fetchall()
        return [(int(r[0]), str(r[1])) for r in rows]

    def search_chunks(self, query: TextQuery, *, limit: int,
                      scopes: Sequence[str] | None = None, as_of: str | None = None
                      ) -> list[Hit]:
        if query.match == "all_else_any":
            return or_else(partial(self.search_chunks, limit=limit, scopes=scopes,
                                   as_of=as_of), query, limit)
        if as_of is not None:
            return [Hit(c, sc) for c, sc in text.search_at(
                self.con, "chunk", query, as_of, limit=limit, scopes=scopes, select="t.id")]
        kept = kept_of(self.con)
        hits = []
        for cid, score, *row in text.bm25(self.con, "chunk", query, limit=limit, select="t.id",
                                          scopes=scopes or None,
                                          more="" if kept is None else _CHUNK_ROW):
            hits.append(Hit(cid, score))
            if row and row[0] is not None and kept is not None:
                kept["chunk", cid] = ChunkRow(cid, *row[:9])
                notes, subjects = row[9], row[10]
                kept["owners", cid] = [*notes, *(e for e in subjects if e not in notes)]
        return hits

    def nearest(self, vector: bytes, *, limit: int = 10) -> list[tuple[int, float]]:
        """The live chunks whose vectors are nearest ``vector`` (float32), by cosine
        distance, on the HNSW index of its dimension: (chunk id, cosine similarity)."""
        dim = len(vector) // 4
        rows = self.con.execute(
            "SELECT c.id, 1 - n.distance FROM (SELECT text_hash, (vector::vector("
            f"{dim})) <=> ?::vector({dim}) AS distance FROM embeddings WHERE dim = {dim}"
            f" ORDER BY vector::vector({dim}) <=> ?::vector({dim}) LIMIT ?) n"
            " JOIN chunks c ON c.text_hash = n.text_hash AND c.live"
            " ORDER BY n.distance, c.id LIMIT ?",
            (np.frombuffer(vector, dtype="<f4"), np.frombuffer(vector, dtype="<f4"), limit,
             limit)).rows
        return [(int(r[0]), float(r[1])) for r in rows]

    def chunks(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        if not ids:
            return {}
        kept, out, ask = kept_of(self.con), dict[int, ChunkRow](), list(ids)
        if kept is not None:  # (the rows a chunk search of this snapshot read)
            out = {i: kept["chunk", i] for i in ask if ("chunk", i) in kept}
            ask = [i for i in ask if i not in out]
            if not ask:
                return out
        for r in self.con.execute(
                "SELECT c.id, c.document_id, v.path, d.title, c.heading, c.line_start,"
                " c.line_end, c.text, d.scope, v.recorded_at FROM chunks c"
                " JOIN versions v ON v.id = c.version_id AND v.scope = c.scope"
                " JOIN documents d ON d.id = c.document_id AND d.scope = c.scope"
                " WHERE c.id = ANY(?)", (ask,)):
            out[r[0]] = ChunkRow(*r)
            if kept is not None:
                kept["chunk", r[0]] = out[r[0]]
        return out

    def chunk_entities(self, chunk_ids: Sequence[int], *, as_of: str | None = None
                       ) -> dict[int, list[int]]:
        """Each chunk's note entities, then the subjects of its live facts: one statement
        (a UNION whose first column says which); as of ``as_of``, by the facts and names
        of then."""
        out: dict[int, list[int]] = {c: [] for c in chunk_ids}
        if not chunk_ids:
            return out
        ids = list(chunk_ids)
        if as_of is not None:
            return self._chunk_entities_at(ids, out, as_of)
        kept = kept_of(self.con)
        if kept is not None:  # (the owners a chunk search of this snapshot read)
            for cid in ids:
                if ("owners", cid) in kept:
                    out[cid] = list(kept["owners", cid])
            ids = [c for c in ids if ("owners", c) not in kept]
            if not ids:
                return out
        for _, cid, eid in self.con.execute(
                "(SELECT 0, c.id, e.id FROM chunks c JOIN entities e ON e.document_id ="
                " c.document_id AND e.scope = c.scope WHERE c.id = ANY(?) AND e.kind = 'note')"
                " UNION ALL (SELECT DISTINCT 1, f.chunk_id, COALESCE(s.resolved_id, s.id)"
                " FROM facts f JOIN entities s ON s.id = f.subject_id AND s.scope = f.scope"
                " WHERE f.chunk_id = ANY(?) AND f.retracted_at IS NULL) ORDER BY 1, 2, 3",
                (ids, ids)):
            if eid not in out[cid]:
                out[cid].append(eid)
        return out

    def _entity_facts_at(self, entity_id: int, *, out_limit: int, in_limit: int,
                         as_of: str, scopes: Sequence[str] | None = None,
                         min_confidence: float = 0.0, trusts: Sequence[str] | None = None,
                         valid_at: str | None = None, own_document: int | None = None
                         ) -> tuple[list[FactRow], list[FactRow]]:
        """``entity_facts`` as of ``as_of``: a statement a direction, by the members and
        names of then."""
        members = list(self.members([entity_id], as_of=as_of))
        out: list[list[FactRow]] = []
        for col, limit in (("f.subject_id", out_limit), ("f.object_id", in_limit)):
            if limit <= 0:
                out.append([])
                continue
            where, args = [f"{col} = ANY(?)"], [*_first(as_of), members]
            self._time_filter(where, args, as_of=as_of, history=False)
            self._filters(where, args, scopes=scopes, min_confidence=min_confidence,
                          trusts=trusts, valid_at=valid_at)
            if col == "f.subject_id":
                sql = (f"{_fact_select(as_of)} WHERE f.id IN (SELECT f.id FROM facts f"
                       f" WHERE {' AND '.join(where)}"
                       " ORDER BY f.document_id IS DISTINCT FROM ?::bigint, f.id LIMIT ?)")
                args += [own_document, limit]
            else:
                sql = f"{_fact_select(as_of)} WHERE {' AND '.join(where)} LIMIT ?"
                args.append(limit)
            rows = self.con.execute(sql, args).fetchall()
            out.append(sorted((_as_of(_fact_row(r), as_of) for r in rows),
                              key=lambda f: f.id))
        return out[0], out[1]

    def _edges_at(self, entity_ids: Iterable[int], *, as_of: str,
                  min_confidence: float = 0.0, trusts: Sequence[str] | None = None,
                  scopes: Sequence[str] | None = None, valid_at: str | None = None,
                  limit: int = 2000) -> list[Edge]:
        """``edges`` as of ``as_of``: a statement a direction, names resolved as then."""
        members = self.members(entity_ids, as_of=as_of)
        if not members:
            return []
        ids = list(members)
        far_id = "e.resolved_id" if as_of is None else winner_at("e")
        out: list[Edge] = []
        for col, far in (("subject_id", "object_id"), ("object_id", "subject_id")):
            where = [f"f.{col} = ANY(?)", "f.object_id IS NOT NULL"]
            args = [*_first(as_of), ids]
            self._time_filter(where, args, as_of=as_of, history=False)
            self._filters(where, args, scopes=scopes, min_confidence=min_confidence,
                          trusts=trusts, valid_at=valid_at)
            rows = self.con.execute(
                ("" if as_of is None else AT) +
                f"SELECT f.{col}, COALESCE({far_id}, e.id), f.predicate, f.confidence"
                f" FROM facts f JOIN entities e ON e.id = f.{far} AND e.scope = f.scope"
                f" WHERE {' AND '.join(where)} AND {NO_PAGELESS_FOLDER}"
                f" LIMIT {int(limit)}", args).fetchall()
            if col == "subject_id":
                out.extend(Edge(members[near], other, p, c) for near, other, p, c in rows)
            else:
                out.extend(Edge(other, members[near], p, c) for near, other, p, c in rows)
        return out

    def _chunk_entities_at(self, ids: list[int], out: dict[int, list[int]], as_of: str
                           ) -> dict[int, list[int]]:
        """``chunk_entities`` as of ``as_of``: the facts that stood then, names as then."""
        for cid, eid in self.con.execute(
                "SELECT c.id, e.id FROM chunks c JOIN entities e ON e.document_id = c.document_id"
                " AND e.scope = c.scope WHERE c.id = ANY(?) AND e.kind = 'note' ORDER BY e.id",
                (ids,)):
            out[cid].append(eid)
        cited = (f"{AT}SELECT DISTINCT f.chunk_id, COALESCE({winner_at('s')}, s.id)"
                 " FROM facts f JOIN entities s ON s.id = f.subject_id AND s.scope = f.scope"
                 f" WHERE f.chunk_id = ANY(?) AND {STOOD} ORDER BY 1, 2")
        for cid, eid in self.con.execute(cited, [as_of, ids]):
            if eid not in out[cid]:
                out[cid].append(eid)
        return out

    # ------------------------------------------------------------ documents and audit
    def document_index(self, scope: str, *, paths: Sequence[str] | None = None
                       ) -> dict[str, FileState]:
        sql = ("SELECT path, content_hash, size, mtime_ns, updated_at, checked_ns, extraction"
               " FROM documents WHERE scope=? AND deleted_at IS NULL AND source_kind='file'")
        if paths is None:
            return {r[0]: _file_state(r) for r in self.con.execute(sql, (scope,))}
        return {r[0]: _file_state(r) for r in self.con.execute(
            f"{sql} AND path = ANY(?)", (scope, list(paths)))}

    def document(self, scope: str, path: str) -> DocumentRecord | None:
        row = self.con.execute(
            "SELECT id, scope, path, title, doc_type, version_id, content_hash, created_at,"
            " updated_at, deleted_at, source_kind FROM documents WHERE scope=? AND path=?"
            " ORDER BY deleted_at IS NULL DESC, id DESC LIMIT 1", (scope, path)).fetchone()
        return None if row is None else DocumentRecord(*row)

    def document_texts(self, scope: str, paths: Sequence[str]) -> dict[str, str]:
        if not paths:
            return {}
        return dict(self.con.execute(
            "SELECT d.path, v.text FROM documents d"
            " JOIN versions v ON v.id = d.version_id AND v.scope = d.scope"
            " WHERE d.scope=? AND d.deleted_at IS NULL AND d.source_kind='file'"
            " AND d.path = ANY(?)", (scope, list(paths))).rows)

    def version_text(self, version_id: int) -> str | None:
        row = self.con.execute("SELECT text, text_z FROM versions WHERE id=?",
                               (version_id,)).fetchone()
        if row is None:
            return None
        return zlib.decompress(row[1]).decode() if row[1] is not None else str(row[0])

    def events(self, *, document_id: int | None = None, fact_ids: Sequence[int] = (),
               limit: int | None = 100, since: str | None = None) -> list[EventRecord]:
        where, args = list[str](), list[object]()
        if document_id is not None:
            where.append("document_id = ?")
            args.append(document_id)
        if fact_ids:
            where.append("fact_id = ANY(?)")
            args.append(list(fact_ids))
        sql = ("SELECT id, at, actor, action, scope, document_id, fact_id, reason, detail"
               " FROM events")
        if where:
            sql += " WHERE (" + " OR ".join(where) + ")"
        if since is not None:
            sql += (" AND " if where else " WHERE ") + "at >= ?"
            args.append(since)
        sql += " ORDER BY id DESC" + ("" if limit is None else f" LIMIT {int(limit)}")
        return [EventRecord(id=i, at=at, actor=actor, action=action, scope=scope,
                            document_id=doc, fact_id=fact, reason=reason,
                            detail=json.loads(detail) if detail else None)
                for i, at, actor, action, scope, doc, fact, reason, detail
                in self.con.execute(sql, args)]

    # ------------------------------------------------------------ mentions

    def labels(self) -> list[tuple[str, str, str]]:
        rows = self.con.execute("SELECT document_id, key, kind, text, scope FROM names"
                                " ORDER BY document_id, key, kind").fetchall()
        titled = {doc for doc, _, kind, _, _ in rows if kind == "title"}
        return [(t, key, scope) for doc, key, kind, t, scope in rows
                if mentionable(kind, t, doc in titled)]

    def documents_mentioning(self, phrases: Sequence[str], *, limit: int = 100_000
                             ) -> set[int]:
        """Live documents whose chunk text holds any phrase (phrase queries)."""
        out: set[int] = set()
        words = [" ".join(w for w in p.replace('"', " ").split() if w) for p in phrases]
        lexes = text.lexemes(self.con, [w for w in words if w])
        for w in words:
            if not w or not lexes[w]:
                continue
            out.update(r[0] for r in self.con.execute(
                "SELECT DISTINCT document_id FROM chunks WHERE live AND tsv @@ ?::tsquery"
                " LIMIT ?", (text.tsquery_text(lexes[w], "<->"), limit)))
        return out

    def mention_work(self) -> MentionWork:
        docs = [r[0] for r in self.con.execute(
            "SELECT document_id FROM mention_queue ORDER BY document_id")]
        rows = self.con.execute("SELECT id, document_id, text, key, added, label, scope"
                                " FROM name_changes ORDER BY id").fetchall()
        changes = [NameChange(r[1], r[2], r[3], bool(r[4]), bool(r[5]), r[6] or "")
                   for r in rows]
        return MentionWork(docs, changes, rows[-1][0] if rows else None)

    def keys_reaching(self, doc_ids: Sequence[int]) -> set[str]:
        if not doc_ids:
            return set()
        return {r[0] for r in self.con.execute(
            "SELECT DISTINCT e.name_key FROM names n JOIN entities e ON e.resolved_id ="
            " n.entity_id AND e.scope = n.scope WHERE n.document_id = ANY(?)"
            " AND e.kind = 'name'", (sorted(set(doc_ids)),))}

    def documents_linking(self, keys: Sequence[str]) -> set[int]:
        if not keys:
            return set()
        return {r[0] for r in self.con.execute(
            "SELECT DISTINCT f.document_id FROM entities e JOIN facts f ON f.object_id = e.id"
            " AND f.scope = e.scope AND f.retracted_at IS NULL WHERE e.name_key = ANY(?)"
            " AND e.kind = 'name' AND f.extractor NOT IN ('mention', 'llm')"
            " AND f.document_id IS NOT NULL",
            (sorted(set(keys)),))}

    def documents_mentioning_keys(self, keys: Sequence[str]) -> set[int]:
        if not keys:
            return set()
        return {r[0] for r in self.con.execute(
            "SELECT DISTINCT f.document_id FROM entities e JOIN facts f"
            " ON f.object_id = e.id AND f.scope = e.scope AND f.retracted_at IS NULL"
            " WHERE e.name_key = ANY(?) AND f.extractor = 'mention'", (list(keys),))}

    def mention_inputs_of(self, doc_ids: Sequence[int]) -> dict[int, MentionInputs]:
        if not doc_ids:
            return {}
        ids = sorted(set(doc_ids))
        out: dict[int, tuple[list[tuple[int, str]], set[str], set[str]]] = {
            d: ([], set(), set()) for d in doc_ids}
        scopes: dict[int, str] = dict(self.con.execute(
            "SELECT id, scope FROM documents WHERE id = ANY(?)", (ids,)).fetchall())
        for doc, line, body in self.con.execute(
                "SELECT document_id, line_start, text FROM chunks WHERE document_id = ANY(?)"
                " AND live ORDER BY document_id, ord", (ids,)):
            out[doc][0].append((line, body))
        for doc, key in self.con.execute(
                "SELECT document_id, key FROM names WHERE document_id = ANY(?)", (ids,)):
            out[doc][1].add(key)
        targets: dict[int, list[int]] = {}
        for doc, key, target in self.con.execute(
                "SELECT f.document_id, o.name_key, o.resolved_id FROM facts f"
                " JOIN entities o ON o.id = f.object_id AND o.scope = f.scope"
                " WHERE f.document_id = ANY(?) AND f.retracted_at IS NULL"
                " AND f.extractor NOT IN ('mention', 'llm') AND o.name_key IS NOT NULL",
                (ids,)):
            out[doc][2].add(key)
            if target is not None:
                targets.setdefault(target, []).append(doc)
        if targets:
            for target, key in self.con.execute(
                    "SELECT entity_id, key FROM names WHERE entity_id = ANY(?)",
                    (sorted(targets),)):
                for doc in targets[target]:
                    out[doc][2].add(key)
        return {d: MentionInputs(tuple(chunks), frozenset(declared), frozenset(linked),
                                 scopes.get(d, ""))
                for d, (chunks, declared, linked) in out.items()}

    def document_versions(self, ids: Sequence[int]) -> dict[int, tuple[int, str]]:
        if not ids:
            return {}
        return {r[0]: (r[1], r[2]) for r in self.con.execute(
            "SELECT id, version_id, updated_at FROM documents WHERE id = ANY(?)"
            " AND deleted_at IS NULL", (list(ids),))}

    def all_document_ids(self) -> set[int]:
        return {r[0] for r in self.con.execute(
            "SELECT id FROM documents WHERE deleted_at IS NULL")}

    def live_document_ids(self, scope: str, paths: Sequence[str]) -> dict[str, int]:
        if not paths:
            return {}
        return {r[0]: r[1] for r in self.con.execute(
            "SELECT path, id FROM documents WHERE scope = ? AND path = ANY(?)"
            " AND deleted_at IS NULL", (scope, list(paths)))}

    # ------------------------------------------------------------ vectors

    def pending_chunks(self, limit: int) -> list[PendingChunk]:
        return [PendingChunk(r[0], f"{r[1]}\n{r[2]}") for r in self.con.execute(
            "SELECT DISTINCT ON (text_hash) text_hash, context, text FROM chunks"
            " WHERE live AND NOT embedded ORDER BY text_hash, id LIMIT ?", (limit,))]

    def vector_counts(self) -> tuple[int, int]:
        row = self.con.execute("SELECT COUNT(*) FILTER (WHERE embedded), COUNT(*) FROM chunks"
                               " WHERE live").fetchone()
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def has_vectors(self) -> bool:
        row = self.con.execute("SELECT EXISTS(SELECT 1 FROM embeddings)").fetchone()
        return bool(row and row[0])

    def vector_status(self) -> tuple[bool, int]:
        row = self.con.execute("SELECT COUNT(*) FROM chunks WHERE live AND NOT embedded"
                               ).fetchone()
        return self.has_vectors(), int(row[0]) if row else 0

    def vector_changes(self, since: int, *, limit: int = 200_000
                       ) -> tuple[int, list[tuple[int, int]]]:
        rows = self.con.execute("SELECT seq, chunk_id, added FROM vector_log WHERE seq > ?"
                                " ORDER BY seq LIMIT ?", (since, limit)).fetchall()
        return (rows[-1][0] if rows else since), [(r[1], r[2]) for r in rows]

    def vectors(self, chunk_ids: Sequence[int]) -> list[tuple[int, bytes]]:
        if not chunk_ids:
            return []
        rows = self.con.execute(
            "SELECT c.id, e.vector FROM chunks c JOIN embeddings e ON e.text_hash = c.text_hash"
            " WHERE c.id = ANY(?) AND c.live ORDER BY c.id", (list(chunk_ids),)).rows
        return [(int(r[0]), np.asarray(r[1].to_numpy(), dtype="<f4").tobytes()) for r in rows]

    def unembedded(self, chunk_ids: Sequence[int]) -> set[int]:
        if not chunk_ids:
            return set()
        rows = self.con.execute("SELECT id FROM chunks WHERE id = ANY(?) AND live"
                                " AND NOT embedded", (list(chunk_ids),)).rows
        return {int(r[0]) for r in rows}

    def live_chunk_ids(self, scopes: Sequence[str]) -> list[int]:
        if not scopes:
            return []
        rows = self.con.execute(
            "SELECT c.id FROM documents d JOIN chunks c ON c.scope = d.scope"
            " AND c.document_id = d.id AND c.live WHERE d.scope = ANY(?)", (list(scopes),)).rows
        return [int(r[0]) for r in rows]

    def meta(self, key: str) -> str | None:
        known, value = snapshot_meta(self.con, key)
        if known:
            return value
        row = self.con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def stats(self) -> dict[str, int]:
        row = self.con.execute(
            "SELECT (SELECT COUNT(*) FROM documents WHERE deleted_at IS NULL),"
            " (SELECT COUNT(*) FROM documents WHERE deleted_at IS NOT NULL AND NOT EXISTS"
            "  (SELECT 1 FROM documents l WHERE l.deleted_at IS NULL"
            "   AND l.scope = documents.scope AND l.path = documents.path)),"
            " (SELECT COUNT(*) FROM versions), (SELECT COUNT(*) FROM chunks WHERE live),"
            " (SELECT COUNT(*) FROM entities e WHERE resolved_id IS NULL"
            f" AND {NO_PAGELESS_FOLDER}),"
            " (SELECT COUNT(*) FROM facts WHERE retracted_at IS NULL),"
            " (SELECT COUNT(*) FROM facts WHERE retracted_at IS NOT NULL),"
            " (SELECT COUNT(*) FROM events),"
            " (SELECT COUNT(*) FROM chunks WHERE live AND embedded)").fetchone()
        assert row is not None
        keys = ("documents", "tombstones", "versions", "chunks", "entities", "facts",
                "retracted_facts", "events", "embedded_chunks")
        return {k: int(v) for k, v in zip(keys, row, strict=True)}

    def documents_to_reread(self, extraction: str) -> int:
        """The live files not read under ``extraction``; a key no text column can hold
        (a NUL in it: what a caller asks to count them all) matches none."""
        sql = ("SELECT COUNT(*) FROM documents WHERE deleted_at IS NULL"
               " AND source_kind = 'file'")
        if "\x00" in extraction:
            row = self.con.execute(sql).fetchone()
        else:
            row = self.con.execute(f"{sql} AND extraction IS DISTINCT FROM ?",
                                   (extraction,)).fetchone()
        return int(row[0]) if row else 0

    def warnings(self, limit: int = 100) -> Warnings:
        where = "FROM documents WHERE deleted_at IS NULL AND warnings IS NOT NULL"
        row = self.con.execute(f"SELECT COUNT(*) {where}").fetchone()
        total = int(row[0]) if row else 0
        out: list[WarningRecord] = []
        for path, body in self.con.execute(f"SELECT path, warnings {where} ORDER BY path"):
            out.extend(WarningRecord(path, line, reason) for line, reason in json.loads(body))
            if len(out) >= limit:
                break
        return Warnings(total, tuple(out[:limit]))

    def ambiguous_names(self, limit: int = 50) -> list[tuple[str, list[str]]]:
        out = []
        for key, paths in self.con.execute(
                "SELECT key, array_agg(path ORDER BY rank, length(path), path) FROM names"
                " WHERE key NOT LIKE '%/'"  # (a folder's pages compete by their kinds' rank)
                " GROUP BY key HAVING COUNT(DISTINCT path) > 1 ORDER BY key"
                f" LIMIT {int(limit)}"):
            out.append((key, list(dict.fromkeys(paths))))
        return out
