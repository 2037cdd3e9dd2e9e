"""Read queries over the SQLite store; every one of them runs on an index.

Name entities are read through ``COALESCE(resolved_id, id)``: a link to ``[[kota]]`` reads
as the note ``hosts/kota.md`` while that note declares the name, and as the bare name
entity ``kw:name/kota`` before it exists or after it is deleted.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import cast

from ...types import (
    ChunkRow,
    EntityRow,
    FactRow,
    FileState,
    Hit,
    Review,
    Source,
    Trust,
    mentionable,
)
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
from . import scoped
from .find import FindQueries
from .fts import match_string
from .schema import NAMES_AT, NO_PAGELESS_FOLDER, PAGE_OF_NOTES, winner_at
from .trust import TrustReads
from .wiki import WikiQueries

TRUST_LABELS = ("stated", "asserted", "extracted")  # else a review status
_STEMS: dict[str, str] = {}  # word -> index term, see Reader._stems
_STEMS_MAX = 100_000

_FACT_SELECT = """
SELECT f.id, COALESCE(s.resolved_id, s.id), COALESCE(sc.iri, s.iri), COALESCE(sc.label, s.label),
       f.predicate, f.value, f.datatype, COALESCE(o.resolved_id, o.id),
       COALESCE(oc.iri, o.iri), COALESCE(oc.label, o.label),
       f.confidence, f.trust, f.review, f.scope, f.recorded_at, f.retracted_at,
       f.valid_from, f.valid_to, f.extractor, f.actor, f.qualifiers,
       v.path, f.line_start, f.line_end, f.chunk_id, f.supporting_text, f.document_id,
       f.version_id, f.retract_reason
FROM facts f
JOIN entities s ON s.id = f.subject_id
LEFT JOIN entities sc ON sc.id = s.resolved_id
LEFT JOIN entities o ON o.id = f.object_id
LEFT JOIN entities oc ON oc.id = o.resolved_id
LEFT JOIN versions v ON v.id = f.version_id
"""


def _fact_select(as_of: str | None) -> str:
    """``_FACT_SELECT``, its names resolved as they were at ``as_of`` when one is given
    (then the statement's first parameter, ``?1``; ``winner_at``)."""
    if as_of is None:
        return _FACT_SELECT
    return (_FACT_SELECT.replace("s.resolved_id", winner_at("s"))
            .replace("o.resolved_id", winner_at("o")))


def _first(as_of: str | None) -> list[object]:
    """The leading parameter of a statement made by ``_fact_select(as_of)``."""
    return [] if as_of is None else [as_of]


# a fact that stood at ``?1`` (as-of reads)
_STOOD = "f.recorded_at <= ?1 AND (f.retracted_at IS NULL OR f.retracted_at > ?1)"


def _marks(items: Sequence[object]) -> str:
    return ",".join("?" * len(items))


# One row of ``_FACT_SELECT``, column by column (the names ``_fact_row`` unpacks it into).
_FactColumns = tuple[
    int, int, str, str, str, "str | None", "str | None", "int | None", "str | None",
    "str | None", float, str, str, str, str, "str | None", "str | None", "str | None", str,
    "str | None", "str | None", "str | None", "int | None", "int | None", "int | None",
    "str | None", "int | None", "int | None", "str | None"]


def _fact_row(r: sqlite3.Row | tuple[object, ...]) -> FactRow:
    (fact_id, subject_id, subject_iri, subject_label, predicate, value, datatype, object_id,
     object_iri, object_label, confidence, trust, review, scope, recorded_at, retracted_at,
     valid_from, valid_to, extractor, actor, qualifiers, path, line_start, line_end,
     chunk_id, supporting_text, document_id, version_id, retract_reason
     ) = cast(_FactColumns, r)
    source = None
    if path is not None or supporting_text is not None:
        source = Source(path=str(path or ""), line_start=int(line_start or 0),
                        line_end=int(line_end or 0), chunk_id=chunk_id,
                        supporting_text=str(supporting_text or ""),
                        document_id=document_id, version_id=version_id)
    is_entity = object_id is not None
    return FactRow(
        id=fact_id, subject_id=subject_id, subject_iri=subject_iri,
        subject_label=subject_label, predicate=predicate,
        value=str(object_iri) if is_entity else str(value),
        value_type="Entity" if is_entity else "Literal",
        datatype=datatype, object_id=object_id, value_label=object_label if is_entity else None,
        confidence=float(confidence), trust=cast(Trust, trust), review=cast(Review, review),
        scope=scope, recorded_at=recorded_at, retracted_at=retracted_at,
        valid_from=valid_from, valid_to=valid_to, extractor=extractor, actor=actor,
        qualifiers=tuple(sorted(json.loads(qualifiers).items())) if qualifiers else (),
        source=source, retract_reason=retract_reason)


def _as_of(f: FactRow, as_of: str | None) -> FactRow:
    """A fact as the store held it at ``as_of``: a retraction after then had not happened
    (its time and reason would tell a past reader the future)."""
    if as_of is None or f.retracted_at is None or f.retracted_at <= as_of:
        return f
    return replace(f, retracted_at=None, retract_reason=None)


def _file_state(r: tuple[str, str, int, int, str, int | None, str | None]) -> FileState:
    if r[5] is not None:
        return FileState(r[1], r[2], r[3], r[5], r[6])
    written = datetime.fromisoformat(r[4])
    return FileState(r[1], r[2], r[3], int(written.timestamp()) * 1_000_000_000
                     + written.microsecond * 1000, r[6])


class Reader(WikiQueries, TrustReads, FindQueries):
    """Read operations over one connection."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con

    # ------------------------------------------------------------ entities

    def members(self, entity_ids: Iterable[int], *, as_of: str | None = None
                ) -> dict[int, int]:
        """Map every stored entity id that reads as one of ``entity_ids`` to it (with
        ``as_of``: the name entities that reached it then)."""
        ids = list(entity_ids)
        out = {i: i for i in ids}
        if as_of is not None:
            wanted = set(ids)
            for i in range(0, len(ids), 500):
                part = ids[i:i + 500]
                for eid, rid in self.con.execute(
                        f"SELECT e.id, {winner_at('e')} FROM entities e WHERE e.kind = 'name'"
                        f" AND e.name_key IN (SELECT key FROM {NAMES_AT}"
                        f" WHERE entity_id IN ({_marks(part)}))", [as_of, *part]):
                    if rid in wanted:
                        out[eid] = rid
            return out
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            for eid, rid in self.con.execute(
                    f"SELECT id, resolved_id FROM entities WHERE resolved_id IN ({_marks(part)})",
                    part):
                out[eid] = rid
        return out

    def entities(self, ids: Iterable[int]) -> dict[int, EntityRow]:
        ids = list(ids)
        out: dict[int, EntityRow] = {}
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            for r in self.con.execute(
                    "SELECT id, iri, label, kind, scope, document_id, created_at FROM entities"
                    f" WHERE id IN ({_marks(part)})", part):
                out[r[0]] = EntityRow(*r)
        return out

    def canonical(self, entity_id: int) -> int:
        row = self.con.execute("SELECT COALESCE(resolved_id, id) FROM entities WHERE id=?",
                               (entity_id,)).fetchone()
        return int(row[0]) if row else entity_id

    def lookup_names(self, keys: Sequence[str], *, referred: bool = False,
                     as_of: str | None = None, scopes: Sequence[str] | None = None
                     ) -> dict[str, int]:
        """Resolve normalised names to canonical entity ids (notes first, then bare names;
        with ``referred``, only bare names some live fact still refers to). With
        ``as_of``: by the declarations and facts that stood then. With ``scopes``: among
        the names of those scopes alone (another scope's note of the same name is no
        answer, and must not hide this scope's)."""
        out: dict[str, int] = {}
        if not keys:
            return out
        if as_of is not None:
            return self._lookup_names_at(keys, referred, as_of, scopes)
        docs, in_docs, in_entities = _name_scopes(scopes)
        for key, eid in self.con.execute(
                f"SELECT n.key, n.entity_id FROM names n{docs}"
                f" WHERE n.key IN ({_marks(keys)}){in_docs}"
                " ORDER BY n.rank DESC, length(n.path) DESC, n.path DESC",
                [*keys, *(scopes or ())]):
            out[key] = eid  # the last row written per key is the winner
        rest = [k for k in keys if k not in out]
        if rest:
            for key, eid in self.con.execute(
                    "SELECT e.name_key, COALESCE(e.resolved_id, e.id) FROM entities e"
                    f" WHERE e.name_key IN ({_marks(rest)}){in_entities}"
                    + (" AND e.orphan = 0" if referred else ""), [*rest, *(scopes or ())]):
                out[key] = eid
        return out

    def _lookup_names_at(self, keys: Sequence[str], referred: bool, as_of: str,
                         scopes: Sequence[str] | None) -> dict[str, int]:
        out: dict[str, int] = {}
        docs, in_docs, in_entities = _name_scopes(scopes)
        for key, eid in self.con.execute(
                f"SELECT n.key, n.entity_id FROM {NAMES_AT} n{docs}"
                f" WHERE n.key IN ({_marks(keys)}){in_docs}"
                " ORDER BY n.rank DESC, length(n.path) DESC, n.path DESC",
                [as_of, *keys, *(scopes or ())]):
            out[key] = eid
        rest = [k for k in keys if k not in out]
        if rest:
            stood = (" AND EXISTS (SELECT 1 FROM facts f WHERE (f.object_id = e.id"
                     f" OR f.subject_id = e.id) AND {_STOOD})") if referred else ""
            for key, eid in self.con.execute(
                    f"SELECT e.name_key, COALESCE({winner_at('e')}, e.id) FROM entities e"
                    f" WHERE e.name_key IN ({_marks(rest)}) AND e.created_at <= ?1{stood}"
                    f"{in_entities}", [as_of, *rest, *(scopes or ())]):
                out[key] = eid
        return out

    def find_entity(self, text: str, key: str, *, scopes: Sequence[str] | None = None
                    ) -> int | None:
        """Find an entity by iri, then by name, then by label; canonical id or None.
        With ``scopes``, only an entity of one of them (``TrustReads.find_in_scopes``)."""
        if scopes:
            return self.find_in_scopes(text, key, scopes)
        # A path's note IRI outlives a deleted note; the live one (a later note at that
        # path) comes first, then a note, then a bare name.
        row = self.con.execute(
            "SELECT COALESCE(e.resolved_id, e.id) FROM entities e"
            " LEFT JOIN documents d ON d.id = e.document_id WHERE e.iri=?"
            " ORDER BY d.deleted_at IS NULL AND d.id IS NOT NULL DESC, e.kind='note' DESC,"
            " e.id DESC LIMIT 1", (text,)).fetchone()
        if row:
            return int(row[0])
        found = self.lookup_names([key])
        if key in found:
            return found[key]
        row = self.con.execute("SELECT COALESCE(resolved_id, id) FROM entities"
                               " WHERE label=? COLLATE NOCASE LIMIT 1", (text,)).fetchone()
        return int(row[0]) if row else None

    def names_of(self, entity_id: int) -> list[EntityName]:
        return [EntityName(r[0], r[1]) for r in self.con.execute(
            f"SELECT kind, text FROM names n WHERE entity_id=? AND {PAGE_OF_NOTES}"
            " ORDER BY rank, text", (entity_id,))]

    def types(self, entity_ids: Iterable[int]) -> dict[int, list[str]]:
        members = self.members(entity_ids)
        out: dict[int, list[str]] = {}
        ids = list(members)
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            for sid, value in self.con.execute(
                    "SELECT subject_id, value FROM facts WHERE retracted_at IS NULL AND"
                    " review != 'rejected' AND"
                    # ``+``: by the subjects (facts_subject), not every type fact there is
                    # (facts_predicate_live, which the planner would take otherwise)
                    f" +predicate='type' AND subject_id IN ({_marks(part)}) ORDER BY id", part):
                vals = out.setdefault(members[sid], [])
                if value not in vals:
                    vals.append(value)
        return out

    def updated_dates(self, documents: Sequence[tuple[int, str, str]], *,
                      as_of: str | None = None) -> dict[int, str]:
        return dates.updated_dates(self, documents, as_of=as_of)

    def degrees(self, entity_ids: Iterable[int], *, cap: int = 1000) -> dict[int, int]:
        """Live facts touching each entity (in and out), counted up to ``cap``.

        Why a cap: the hub penalty is logarithmic and flat out there, and counting every
        incoming fact of a note linked from thousands would make one query cost O(links).
        One statement for all the entities' members, each count stopping at ``cap``.
        """
        members = self.members(entity_ids)
        if not members:
            return {}
        out: dict[int, int] = {}
        for member, n in self.con.execute(
                "SELECT j.value,"
                " (SELECT COUNT(*) FROM (SELECT 1 FROM facts WHERE object_id = j.value"
                "  AND retracted_at IS NULL LIMIT ?1))"
                " + (SELECT COUNT(*) FROM (SELECT 1 FROM facts WHERE subject_id = j.value"
                "  AND retracted_at IS NULL LIMIT ?1))"
                " FROM json_each(?2) j", (cap, json.dumps(list(members)))):
            canon = members[member]
            out[canon] = min(out.get(canon, 0) + int(n), cap)
        return out

    # ------------------------------------------------------------ facts

    def facts(self, entity_ids: Iterable[int], *, direction: str = "out",
              as_of: str | None = None, history: bool = False, limit: int | None = None,
              scopes: Sequence[str] | None = None, min_confidence: float = 0.0,
              trusts: Sequence[str] | None = None, valid_at: str | None = None
              ) -> list[FactRow]:
        """Facts whose subject (``out``) or entity object (``in``) is one of the entities.
        With ``as_of``: those that stood then, their names resolved as they were then."""
        members = list(self.members(entity_ids, as_of=as_of))
        if not members:
            return []
        col = "f.subject_id" if direction == "out" else "f.object_id"
        where, args = [f"{col} IN ({_marks(members)})"], [*_first(as_of), *members]
        self._time_filter(where, args, as_of=as_of, history=history)
        self._filters(where, args, scopes=scopes, min_confidence=min_confidence, trusts=trusts,
                      valid_at=valid_at, rejected=history)
        sql = f"{_fact_select(as_of)} WHERE {' AND '.join(where)} ORDER BY f.id"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return [_as_of(_fact_row(r), as_of) for r in self.con.execute(sql, args)]

    def entity_facts(self, entity_id: int, *, out_limit: int, in_limit: int,
                     as_of: str | None = None, scopes: Sequence[str] | None = None,
                     min_confidence: float = 0.0, trusts: Sequence[str] | None = None,
                     valid_at: str | None = None, own_document: int | None = None
                     ) -> tuple[list[FactRow], list[FactRow]]:
        """One entity's first facts as subject and as object, each list by id.

        As subject: the facts of ``own_document`` (the note's own statements) first, then
        the oldest — chosen among all its facts, so facts asserted on one of its names
        cannot crowd out what the note says. As object: the first ``in_limit`` the index
        yields, with no ORDER BY, so a hub linked from thousands costs no more than a leaf.
        (Not one ``UNION ALL`` of both: its subqueries are materialised, which ran slower.)
        A limit of 0 reads nothing for that direction.
        """
        members = list(self.members([entity_id], as_of=as_of))
        out: list[list[FactRow]] = []
        for col, limit in (("f.subject_id", out_limit), ("f.object_id", in_limit)):
            if limit <= 0:
                out.append([])
                continue
            where, args = [f"{col} IN ({_marks(members)})"], [*_first(as_of), *members]
            self._time_filter(where, args, as_of=as_of, history=False)
            self._filters(where, args, scopes=scopes, min_confidence=min_confidence,
                          trusts=trusts, valid_at=valid_at)
            if col == "f.subject_id":
                sql = (f"{_fact_select(as_of)} WHERE f.id IN (SELECT f.id FROM facts f"
                       f" WHERE {' AND '.join(where)}"
                       " ORDER BY f.document_id IS NOT ?, f.id LIMIT ?)")
                args += [own_document, limit]
            else:
                sql = f"{_fact_select(as_of)} WHERE {' AND '.join(where)} LIMIT ?"
                args.append(limit)
            rows = self.con.execute(sql, args).fetchall()
            out.append(sorted((_as_of(_fact_row(r), as_of) for r in rows),
                              key=lambda f: f.id))
        return out[0], out[1]

    def facts_by_id(self, fact_ids: Sequence[int]) -> list[FactRow]:
        if not fact_ids:
            return []
        return [_fact_row(r) for r in self.con.execute(
            f"{_FACT_SELECT} WHERE f.id IN ({_marks(fact_ids)}) ORDER BY f.id", list(fact_ids))]

    def live_facts(self, *, scopes: Sequence[str] | None = None) -> list[FactRow]:
        """Every live fact (exports and consistency checks; not a query path)."""
        where, args = ["f.retracted_at IS NULL"], list[object]()
        if scopes:
            where.append(f"f.scope IN ({_marks(scopes)})")
            args.extend(scopes)
        return [_fact_row(r) for r in self.con.execute(
            f"{_FACT_SELECT} WHERE {' AND '.join(where)} ORDER BY f.id", args)]

    @staticmethod
    def _filters(where: list[str], args: list[object], *, scopes: Sequence[str] | None,
                 min_confidence: float, trusts: Sequence[str] | None, valid_at: str | None,
                 rejected: bool = False) -> None:
        """The filters every fact read takes. A rejected fact is left out unless
        ``rejected`` (history) or ``trusts`` names "rejected"."""
        if scopes:
            where.append(f"f.scope IN ({_marks(scopes)})")
            args.extend(scopes)
        if min_confidence > 0:
            where.append("f.confidence >= ?")
            args.append(min_confidence)
        if trusts:
            # trust labels and review statuses both name a fact's trust state: "stated,
            # approved" is what the author wrote or a reviewer approved
            kinds = [t for t in trusts if t in TRUST_LABELS]
            reviews = [t for t in trusts if t not in TRUST_LABELS]
            parts = ([f"f.trust IN ({_marks(kinds)})"] if kinds else []) + (
                [f"f.review IN ({_marks(reviews)})"] if reviews else [])
            where.append("(" + " OR ".join(parts) + ")")
            args.extend(kinds + reviews)
        if not rejected and not (trusts and "rejected" in trusts):
            where.append("f.review != 'rejected'")
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

    def edges(self, entity_ids: Iterable[int], *, as_of: str | None = None,
              min_confidence: float = 0.0, trusts: Sequence[str] | None = None,
              scopes: Sequence[str] | None = None, valid_at: str | None = None,
              limit: int = 2000) -> list[Edge]:
        """Live entity-to-entity facts touching the entities, from subject to object.

        Unfiltered, each direction reads only its covering index (``facts_subject`` /
        ``facts_object``) and the far end's entity row; the near end is canonical already.
        """
        members = self.members(entity_ids, as_of=as_of)
        if not members:
            return []
        ids = list(members)
        far_id = "e.resolved_id" if as_of is None else winner_at("e")
        out: list[Edge] = []
        for col, far in (("subject_id", "object_id"), ("object_id", "subject_id")):
            where = [f"f.{col} IN ({_marks(ids)})", "f.object_id IS NOT NULL"]
            args = [*_first(as_of), *ids]
            self._time_filter(where, args, as_of=as_of, history=False)
            self._filters(where, args, scopes=scopes, min_confidence=min_confidence,
                          trusts=trusts, valid_at=valid_at)
            rows = self.con.execute(
                f"SELECT f.{col}, COALESCE({far_id}, e.id), f.predicate, f.confidence"
                f" FROM facts f JOIN entities e ON e.id = f.{far}"
                f" WHERE {' AND '.join(where)} AND {NO_PAGELESS_FOLDER}"
                f" LIMIT {int(limit)}", args).fetchall()
            if col == "subject_id":
                out.extend(Edge(members[near], other, p, c) for near, other, p, c in rows)
            else:
                out.extend(Edge(other, members[near], p, c) for near, other, p, c in rows)
        return out

    # ------------------------------------------------------------ full text

    def term_frequencies(self, words: Sequence[str], *, table: str = "chunk",
                         cap: int | None = None, as_of: str | None = None,
                         scopes: Sequence[str] | None = None) -> list[tuple[str, int]]:
        """How many rows of ``table`` (chunk | entity) hold each word, after stemming: in
        the indexes of ``scopes`` (every scope's when None), summed.

        Each word is matched as a quoted phrase, so the index's own tokenizer stems it.
        With ``cap``, a count stops at ``cap``: a common word then costs a short read of
        its postings instead of all of them (an fts5vocab row reads them all, ~10 ms for a
        word in every chunk of 90k).
        """
        if table not in ("chunk", "entity"):
            raise KeyError(table)
        limit = -1 if cap is None else int(cap)  # LIMIT -1: no limit
        numbers = [n for _, n in scoped.numbers(self.con, scopes)]
        out = []
        for w in words:
            phrase, total = '"' + w.replace('"', '""') + '"', 0
            for n in numbers:
                left = -1 if cap is None else int(cap) - total
                if left == 0:
                    break
                fts = scoped.table(f"{table}_fts", n)
                sql = (f"SELECT COUNT(*) FROM ({self._rows_at(table, n)} LIMIT ?3)"
                       if as_of is not None else f"SELECT COUNT(*) FROM (SELECT 1 FROM {fts}"
                       f" WHERE {fts} MATCH ?2 LIMIT ?3)")
                total += int(self.con.execute(sql, (as_of or "", phrase, left)).fetchone()[0])
            out.append((w, total if limit < 0 else min(total, limit)))
        return out

    @staticmethod
    def _rows_at(table: str, n: int) -> str:
        """The search rows of ``table`` (chunk | entity) of scope number ``n`` that stood
        at ``?1`` and match ``?2``: of the live index, those written by then; of the
        history index, those that stood then (one row per stored row, for counting)."""
        live, past = (scoped.table(f"{table}{k}", n) for k in ("_fts", "_past_fts"))
        if table == "chunk":
            return (f"SELECT 1 FROM {live} JOIN chunks c ON c.id = {live}.rowid"
                    f" JOIN versions v ON v.id = c.version_id WHERE {live} MATCH ?2"
                    f" AND v.recorded_at <= ?1 UNION ALL SELECT 1 FROM {past}"
                    f" JOIN chunks c ON c.id = {past}.rowid JOIN versions v"
                    f" ON v.id = c.version_id WHERE {past} MATCH ?2"
                    " AND v.recorded_at <= ?1 AND c.retired_at > ?1")
        return (f"SELECT 1 FROM {live} JOIN entities e ON e.id = {live}.rowid"
                f" WHERE {live} MATCH ?2 AND COALESCE(e.indexed_at, e.created_at) <= ?1"
                f" UNION ALL SELECT 1 FROM {past} JOIN entity_past p"
                f" ON p.id = {past}.rowid WHERE {past} MATCH ?2"
                " AND p.recorded_at <= ?1 AND p.retired_at > ?1")

    def live_chunk_count(self, scopes: Sequence[str] | None = None) -> int:
        """Live chunks (of ``scopes``: BM25's N of their indexes, summed). Of the whole
        store in O(1): the count the writer keeps in ``meta`` (``COUNT`` without it)."""
        if scopes:
            return scoped.row_count(self.con, "chunk_fts", scopes)
        row = self.con.execute("SELECT value FROM meta WHERE key = 'live_chunks'").fetchone()
        if row is not None:
            return int(row[0])
        return int(self.con.execute("SELECT COUNT(*) FROM chunks WHERE live = 1").fetchone()[0])

    def chunk_terms(self, chunk_ids: Sequence[int], words: Sequence[str]
                    ) -> dict[int, set[str]]:
        """Which of ``words`` each chunk holds, matched as the full-text index matches them.

        Why a scratch table: FTS5 answers "which rows hold this term" from the term's whole
        posting list (a ``rowid IN`` constraint does not narrow it), so asking the index
        costs O(rows holding the term). Tokenising just these chunks into a contentless
        table in the temp schema costs O(their text) and stems exactly as the index does.
        """
        out: dict[int, set[str]] = {cid: set() for cid in chunk_ids}
        if not chunk_ids or not words:
            return out
        by_stem: dict[str, list[str]] = {}
        for i, stem in self._stems(words).items():
            by_stem.setdefault(stem, []).append(words[i])
        if not by_stem:
            return out
        self.con.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.held_terms USING fts5(context, text,"
            " content='', detail=none, columnsize=0,"
            " tokenize='porter unicode61 remove_diacritics 2')")
        self.con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.held_vocab"
                         " USING fts5vocab(temp, held_terms, 'instance')")
        self.con.execute("INSERT INTO temp.held_terms(held_terms) VALUES('delete-all')")
        self.con.execute("INSERT INTO temp.held_terms(rowid, context, text) SELECT id, context,"
                         f" text FROM chunks WHERE id IN ({_marks(chunk_ids)})", list(chunk_ids))
        stems = list(by_stem)
        for cid, stem in self.con.execute(
                f"SELECT DISTINCT doc, term FROM temp.held_vocab WHERE term IN ({_marks(stems)})",
                stems):
            out[cid].update(by_stem[stem])
        return out

    def _stems(self, words: Sequence[str]) -> dict[int, str]:
        """Each word's index term (by position), from the index's own tokenizer.

        Remembered per process: a word's stem depends only on the tokenizer, which the
        schema fixes, and the same question words are stemmed for several lookups.
        """
        missing = [w for w in dict.fromkeys(words) if w not in _STEMS]
        if missing:
            self.con.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_terms USING fts5(w,"
                " tokenize='porter unicode61 remove_diacritics 2')")
            self.con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_vocab"
                             " USING fts5vocab(temp, query_terms, 'instance')")
            self.con.execute("DELETE FROM temp.query_terms")
            self.con.executemany("INSERT INTO temp.query_terms(rowid, w) VALUES(?, ?)",
                                 list(enumerate(missing)))
            found = dict(self.con.execute("SELECT doc, term FROM temp.query_vocab"))
            if len(_STEMS) > _STEMS_MAX:
                _STEMS.clear()
            for i, word in enumerate(missing):
                _STEMS[word] = found.get(i, "")  # "" when the word holds no token
        return {i: _STEMS[w] for i, w in enumerate(words) if _STEMS.get(w)}

    def search_entities(self, query: TextQuery, *, limit: int,
                        scopes: Sequence[str] | None = None, as_of: str | None = None
                        ) -> list[Hit]:
        """Entities whose label, names or literal values match, best first: each scope's
        index ranks its own rows (``scoped.py``), the best ``limit`` of all are kept."""
        if query.match == "all_else_any":
            return or_else(partial(self.search_entities, limit=limit, scopes=scopes,
                                   as_of=as_of), query, limit)
        if as_of is not None:
            return self._search_entities_at(query, limit, scopes, as_of)
        parts = []
        for _, n in scoped.numbers(self.con, scopes):
            fts = scoped.table("entity_fts", n)
            parts.append(self.con.execute(
                f"SELECT COALESCE(e.resolved_id, e.id), bm25({fts}, 10.0, 6.0, 1.0) AS r"
                f" FROM {fts} JOIN entities e ON e.id = {fts}.rowid"
                f" WHERE {fts} MATCH ? ORDER BY r LIMIT ?", (match_string(query), limit)
            ).fetchall())
        return _merged(parts, limit)

    def _search_entities_at(self, query: TextQuery, limit: int,
                            scopes: Sequence[str] | None, as_of: str) -> list[Hit]:
        """Entity hits among the search rows that stood at ``as_of``: the live index's
        rows indexed by then and the history index's rows standing then, each ranked by
        its own index's BM25 (``_merged``); names resolved as they were then."""
        parts = []
        for _, n in scoped.numbers(self.con, scopes):
            live, past = (scoped.table(k, n) for k in ("entity_fts", "entity_past_fts"))
            for sql in (
                    f"SELECT COALESCE({winner_at('e')}, e.id), bm25({live}, 10.0, 6.0, 1.0)"
                    f" AS r FROM {live} JOIN entities e ON e.id = {live}.rowid"
                    f" WHERE {live} MATCH ?2 AND COALESCE(e.indexed_at, e.created_at) <= ?1"
                    f" ORDER BY r LIMIT {int(limit)}",
                    f"SELECT COALESCE({winner_at('e')}, e.id),"
                    f" bm25({past}, 10.0, 6.0, 1.0) AS r FROM {past}"
                    f" JOIN entity_past p ON p.id = {past}.rowid"
                    f" JOIN entities e ON e.id = p.entity_id WHERE {past} MATCH ?2"
                    " AND p.recorded_at <= ?1 AND p.retired_at > ?1"
                    f" ORDER BY r LIMIT {int(limit)}"):
                parts.append(self.con.execute(sql, [as_of, match_string(query)]).fetchall())
        return _merged(parts, limit)

    def spelled_by(self, initials: Sequence[str], *, limit: int = 20,
                   scopes: Sequence[str] | None = None) -> list[tuple[int, str]]:
        """(note, what it spells) for the notes whose label spells one of ``initials``
        (``types.label_initials``): an indexed lookup."""
        if not initials:
            return []
        where, args = [f"i.initials IN ({_marks(initials)})"], list(initials)
        if scopes:
            where.append(f"e.scope IN ({_marks(scopes)})")
            args.extend(scopes)
        rows = self.con.execute(
            "SELECT DISTINCT e.id, i.initials FROM entity_initials i"
            f" JOIN entities e ON e.id = i.entity_id WHERE {' AND '.join(where)}"
            " ORDER BY 1, 2 LIMIT ?", [*args, limit]).fetchall()
        return [(int(r[0]), str(r[1])) for r in rows]

    def search_chunks(self, query: TextQuery, *, limit: int,
                      scopes: Sequence[str] | None = None, as_of: str | None = None
                      ) -> list[Hit]:
        """Live chunks matching ``query``, best first: each scope's index ranks its own
        rows (``scoped.py``), the best ``limit`` of all are kept."""
        if query.match == "all_else_any":
            return or_else(partial(self.search_chunks, limit=limit, scopes=scopes,
                                   as_of=as_of), query, limit)
        match = match_string(query)
        if as_of is not None:
            return self._search_chunks_at(match, limit, scopes, as_of)
        # rank inside each FTS table alone: joining every match before the LIMIT costs a
        # third more on common terms
        return _merged([self.con.execute(
            f"SELECT rowid, bm25({fts}, 2.0, 1.0) AS r FROM {fts}"
            f" WHERE {fts} MATCH ? ORDER BY r LIMIT ?", (match, limit)).fetchall()
            for fts in scoped.tables(self.con, "chunk_fts", scopes)], limit)

    def _search_chunks_at(self, match: str, limit: int, scopes: Sequence[str] | None,
                          as_of: str) -> list[Hit]:
        """Chunk hits among the chunks that stood at ``as_of``: live ones written by then
        (``chunk_fts``) and retired ones standing then (``chunk_past_fts``)."""
        parts = []
        for _, n in scoped.numbers(self.con, scopes):
            for kind, stood in (("chunk_fts", ""), ("chunk_past_fts", " AND c.retired_at > ?1")):
                fts = scoped.table(kind, n)
                parts.append(self.con.execute(
                    f"SELECT c.id, bm25({fts}, 2.0, 1.0) AS r FROM {fts}"
                    f" JOIN chunks c ON c.id = {fts}.rowid JOIN versions v"
                    f" ON v.id = c.version_id WHERE {fts} MATCH ?2"
                    f" AND v.recorded_at <= ?1{stood} ORDER BY r LIMIT {int(limit)}",
                    [as_of, match]).fetchall())
        return _merged(parts, limit)

    def chunks(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        if not ids:
            return {}
        return {r[0]: ChunkRow(*r) for r in self.con.execute(
            "SELECT c.id, c.document_id, v.path, d.title, c.heading, c.line_start, c.line_end,"
            " c.text, d.scope, v.recorded_at FROM chunks c JOIN versions v ON v.id = c.version_id"
            f" JOIN documents d ON d.id = c.document_id WHERE c.id IN ({_marks(ids)})", list(ids))}

    def chunk_entities(self, chunk_ids: Sequence[int], *, as_of: str | None = None
                       ) -> dict[int, list[int]]:
        """Entities a chunk speaks for: its document's entity, then subjects it cites
        (with ``as_of``: the facts citing it that stood then, names as they were then)."""
        out: dict[int, list[int]] = {c: [] for c in chunk_ids}
        if not chunk_ids:
            return out
        m = _marks(chunk_ids)
        for cid, eid in self.con.execute(
                f"SELECT c.id, e.id FROM chunks c JOIN entities e ON e.document_id = c.document_id"
                f" WHERE c.id IN ({m}) AND e.kind = 'note'", list(chunk_ids)):
            out[cid].append(eid)
        if as_of is None:
            cited = ("SELECT DISTINCT f.chunk_id, COALESCE(s.resolved_id, s.id) FROM facts f"
                     " JOIN entities s ON s.id = f.subject_id"
                     f" WHERE f.chunk_id IN ({m}) AND f.retracted_at IS NULL")
        else:
            cited = (f"SELECT DISTINCT f.chunk_id, COALESCE({winner_at('s')}, s.id) FROM facts f"
                     f" JOIN entities s ON s.id = f.subject_id WHERE {_STOOD}"
                     f" AND f.chunk_id IN ({m})")
        for cid, eid in self.con.execute(cited, [*_first(as_of), *chunk_ids]):
            if eid not in out[cid]:
                out[cid].append(eid)
        return out

    # ------------------------------------------------------------ documents and audit

    def document_index(self, scope: str, *, paths: Sequence[str] | None = None
                       ) -> dict[str, FileState]:
        """Live file documents of a scope (or just ``paths``), each as last checked."""
        sql = ("SELECT path, content_hash, size, mtime_ns, updated_at, checked_ns, extraction"
               " FROM documents WHERE scope=? AND deleted_at IS NULL AND source_kind='file'")
        if paths is None:
            return {r[0]: _file_state(r) for r in self.con.execute(sql, (scope,))}
        out: dict[str, FileState] = {}
        for i in range(0, len(paths), 500):
            part = list(paths[i:i + 500])
            out.update({r[0]: _file_state(r) for r in self.con.execute(
                f"{sql} AND path IN ({_marks(part)})", [scope, *part])})
        return out

    def document(self, scope: str, path: str) -> DocumentRecord | None:
        row = self.con.execute(
            "SELECT id, scope, path, title, doc_type, version_id, content_hash, created_at,"
            " updated_at, deleted_at, source_kind FROM documents WHERE scope=? AND path=?"
            " ORDER BY deleted_at IS NULL DESC, id DESC LIMIT 1", (scope, path)).fetchone()
        if row is None:
            return None
        return DocumentRecord(*row)

    def document_texts(self, scope: str, paths: Sequence[str]) -> dict[str, str]:
        """The current text of each live file document at ``paths`` (path -> text)."""
        out: dict[str, str] = {}
        for i in range(0, len(paths), 500):
            part = list(paths[i:i + 500])
            out.update(self.con.execute(
                "SELECT d.path, v.text FROM documents d JOIN versions v ON v.id = d.version_id"
                f" WHERE d.scope=? AND d.deleted_at IS NULL AND d.source_kind='file'"
                f" AND d.path IN ({_marks(part)})", [scope, *part]).fetchall())
        return out

    def version_text(self, version_id: int) -> str | None:
        """What a document said at one of its versions (None: no such version)."""
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
            where.append(f"fact_id IN ({_marks(fact_ids)})")
            args.extend(fact_ids)
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
        """Every name a live note may be mentioned by (``mention_labels``), once per
        declaration: (text as written, key, the note's scope)."""
        rows = self.con.execute("SELECT n.document_id, n.key, n.kind, n.text, d.scope"
                                " FROM names n JOIN documents d ON d.id = n.document_id"
                                ).fetchall()
        titled = {doc for doc, _, kind, _, _ in rows if kind == "title"}
        return [(text, key, scope) for doc, key, kind, text, scope in rows
                if mentionable(kind, text, doc in titled)]

    def documents_mentioning(self, phrases: Sequence[str], *, limit: int = 100_000
                             ) -> set[int]:
        """Live documents whose chunk text contains any phrase (FTS phrase queries)."""
        out: set[int] = set()
        for phrase in phrases:
            words = [w for w in phrase.replace('"', " ").split() if w]
            if not words:
                continue
            match = '"' + " ".join(words) + '"'
            for fts in scoped.tables(self.con, "chunk_fts"):
                out.update(r[0] for r in self.con.execute(
                    f"SELECT DISTINCT c.document_id FROM {fts} JOIN chunks c"
                    f" ON c.id = {fts}.rowid WHERE {fts} MATCH ? LIMIT ?", (match, limit)))
        return out

    def mention_work(self) -> MentionWork:
        """Queued mention work: documents, name changes (see ``NameChange``), last change id."""
        docs = [r[0] for r in self.con.execute("SELECT document_id FROM mention_queue")]
        rows = self.con.execute(
            "SELECT c.id, c.document_id, c.text, c.key, c.added, c.label, d.scope"
            " FROM name_changes c LEFT JOIN documents d ON d.id = c.document_id"
            " ORDER BY c.id").fetchall()
        changes = [NameChange(r[1], r[2], r[3], bool(r[4]), bool(r[5]), r[6] or "")
                   for r in rows]
        return MentionWork(docs, changes, rows[-1][0] if rows else None)

    def keys_reaching(self, doc_ids: Sequence[int]) -> set[str]:
        """The name keys whose name entities resolve to a note these documents declare: the
        names other documents link them by."""
        if not doc_ids:
            return set()
        return {r[0] for r in self.con.execute(
            "SELECT DISTINCT e.name_key FROM names n JOIN entities e ON e.resolved_id ="
            " n.entity_id WHERE n.document_id IN (SELECT value FROM json_each(?))"
            " AND e.kind = 'name'", (json.dumps(sorted(set(doc_ids))),))}

    def documents_linking(self, keys: Sequence[str]) -> set[int]:
        """Live documents whose own structural facts (links, relations) point to a name of
        one of these keys, in any scope."""
        if not keys:
            return set()
        return {r[0] for r in self.con.execute(
            "SELECT DISTINCT f.document_id FROM entities e JOIN facts f ON f.object_id = e.id"
            " AND f.retracted_at IS NULL WHERE e.name_key IN (SELECT value FROM json_each(?))"
            " AND e.kind = 'name' AND f.extractor NOT IN ('mention', 'llm')"
            " AND f.document_id IS NOT NULL",
            (json.dumps(sorted(set(keys))),))}

    def documents_mentioning_keys(self, keys: Sequence[str]) -> set[int]:
        """Documents holding a live ``mentions`` fact of one of these name keys."""
        out: set[int] = set()
        for key in keys:
            out.update(r[0] for r in self.con.execute(
                "SELECT DISTINCT f.document_id FROM entities e JOIN facts f"
                " ON f.object_id = e.id AND f.retracted_at IS NULL"
                " WHERE e.name_key = ? AND f.extractor = 'mention'", (key,)))
        return out

    def mention_inputs_of(self, doc_ids: Sequence[int]) -> dict[int, MentionInputs]:
        """For each document: its live chunks (line, text), the names it declares, and the
        name keys its own structural facts already point to, with every name of the notes
        those resolve to (a written link beats a mention: "[[daily-notes]]: set up daily
        notes" mentions nothing). Four statements for all of them, not four each."""
        if not doc_ids:
            return {}
        ids = json.dumps(sorted(set(doc_ids)))
        out: dict[int, tuple[list[tuple[int, str]], set[str], set[str]]] = {
            d: ([], set(), set()) for d in doc_ids}
        scopes: dict[int, str] = dict(self.con.execute(
            "SELECT id, scope FROM documents WHERE id IN (SELECT value FROM json_each(?))",
            (ids,)).fetchall())
        for doc, line, text in self.con.execute(
                "SELECT document_id, line_start, text FROM chunks WHERE document_id IN"
                " (SELECT value FROM json_each(?)) AND live = 1 ORDER BY document_id, ord",
                (ids,)):
            out[doc][0].append((line, text))
        for doc, key in self.con.execute(
                "SELECT document_id, key FROM names WHERE document_id IN"
                " (SELECT value FROM json_each(?))", (ids,)):
            out[doc][1].add(key)
        targets: dict[int, list[int]] = {}
        for doc, key, target in self.con.execute(
                "SELECT f.document_id, o.name_key, o.resolved_id FROM facts f"
                " JOIN entities o ON o.id = f.object_id WHERE f.document_id IN"
                " (SELECT value FROM json_each(?)) AND f.retracted_at IS NULL"
                " AND f.extractor NOT IN ('mention', 'llm') AND o.name_key IS NOT NULL", (ids,)):
            out[doc][2].add(key)
            if target is not None:
                targets.setdefault(target, []).append(doc)
        if targets:
            for target, key in self.con.execute(
                    "SELECT entity_id, key FROM names WHERE entity_id IN"
                    " (SELECT value FROM json_each(?))", (json.dumps(sorted(targets)),)):
                for doc in targets[target]:
                    out[doc][2].add(key)
        return {d: MentionInputs(tuple(chunks), frozenset(declared), frozenset(linked),
                                 scopes.get(d, ""))
                for d, (chunks, declared, linked) in out.items()}

    def document_versions(self, ids: Sequence[int]) -> dict[int, tuple[int, str]]:
        """Each live document among ``ids``: its version, and when it was last applied (a
        note read again into the chunks it had keeps its version, and its links may be
        others: what a mention pass computed from it before is stale all the same)."""
        return {r[0]: (r[1], r[2]) for r in self.con.execute(
            "SELECT id, version_id, updated_at FROM documents WHERE id IN (SELECT value FROM"
            " json_each(?)) AND deleted_at IS NULL", (json.dumps(list(ids)),))}

    def all_document_ids(self) -> set[int]:
        return {r[0] for r in self.con.execute(
            "SELECT id FROM documents WHERE deleted_at IS NULL")}

    def live_document_ids(self, scope: str, paths: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for i in range(0, len(paths), 500):
            part = list(paths[i:i + 500])
            out.update({r[0]: r[1] for r in self.con.execute(
                f"SELECT path, id FROM documents WHERE scope = ? AND path IN ({_marks(part)})"
                " AND deleted_at IS NULL", [scope, *part])})
        return out

    # ------------------------------------------------------------ vectors

    def pending_chunks(self, limit: int) -> list[PendingChunk]:
        """Live chunks without a vector, one per text hash."""
        return [PendingChunk(r[0], f"{r[1]}\n{r[2]}") for r in self.con.execute(
            "SELECT text_hash, context, text FROM chunks WHERE live = 1 AND embedded = 0"
            " GROUP BY text_hash LIMIT ?", (limit,))]

    def vector_counts(self) -> tuple[int, int]:
        """(live chunks with a vector, live chunks)."""
        row = self.con.execute("SELECT COALESCE(SUM(embedded), 0), COUNT(*) FROM chunks"
                               " WHERE live = 1").fetchone()
        return int(row[0]), int(row[1])

    def has_vectors(self) -> bool:
        """Whether any vector is stored: one indexed read."""
        return bool(self.con.execute("SELECT EXISTS(SELECT 1 FROM embeddings)").fetchone()[0])

    def vector_status(self) -> tuple[bool, int]:
        """(any vector stored, live chunks still without one) — both from indexes, O(pending)."""
        pending = self.con.execute("SELECT COUNT(*) FROM chunks WHERE live = 1 AND embedded = 0"
                                   ).fetchone()[0]
        return self.has_vectors(), int(pending)

    def vector_changes(self, since: int, *, limit: int = 200_000
                       ) -> tuple[int, list[tuple[int, int]]]:
        """Log entries after ``since``: (last seq, [(chunk id, added 1 | removed 0)])."""
        rows = self.con.execute("SELECT seq, chunk_id, added FROM vector_log WHERE seq > ?"
                                " ORDER BY seq LIMIT ?", (since, limit)).fetchall()
        return (rows[-1][0] if rows else since), [(r[1], r[2]) for r in rows]

    def vectors(self, chunk_ids: Sequence[int]) -> list[tuple[int, bytes]]:
        out: list[tuple[int, bytes]] = []
        for i in range(0, len(chunk_ids), 500):
            part = list(chunk_ids[i:i + 500])
            out.extend(self.con.execute(
                "SELECT c.id, e.vector FROM chunks c JOIN embeddings e"
                f" ON e.text_hash = c.text_hash WHERE c.id IN ({_marks(part)}) AND c.live = 1",
                part))
        return out

    def unembedded(self, chunk_ids: Sequence[int]) -> set[int]:
        out: set[int] = set()
        for i in range(0, len(chunk_ids), 500):
            part = list(chunk_ids[i:i + 500])
            out.update(int(r[0]) for r in self.con.execute(
                f"SELECT id FROM chunks WHERE id IN ({_marks(part)}) AND live = 1"
                " AND embedded = 0", part))
        return out

    def live_chunk_ids(self, scopes: Sequence[str]) -> list[int]:
        if not scopes:
            return []
        return [int(r[0]) for r in self.con.execute(
            "SELECT c.id FROM documents d JOIN chunks c ON c.document_id = d.id AND c.live = 1"
            f" WHERE d.scope IN ({_marks(scopes)})", list(scopes))]

    def meta(self, key: str) -> str | None:
        row = self.con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def stats(self) -> dict[str, int]:
        q = self.con.execute
        return {
            "documents": q("SELECT COUNT(*) FROM documents WHERE deleted_at IS NULL").fetchone()[0],
            "tombstones": q("SELECT COUNT(*) FROM documents WHERE deleted_at IS NOT NULL"
                            " AND NOT EXISTS (SELECT 1 FROM documents l WHERE l.deleted_at IS NULL"
                            " AND l.scope = documents.scope AND l.path = documents.path)"
                            ).fetchone()[0],
            "versions": q("SELECT COUNT(*) FROM versions").fetchone()[0],
            "chunks": q("SELECT COUNT(*) FROM chunks WHERE live = 1").fetchone()[0],
            "entities": q(f"SELECT COUNT(*) FROM entities e WHERE resolved_id IS NULL"
                          f" AND {NO_PAGELESS_FOLDER}").fetchone()[0],
            "facts": q("SELECT COUNT(*) FROM facts WHERE retracted_at IS NULL").fetchone()[0],
            "retracted_facts": q("SELECT COUNT(*) FROM facts WHERE retracted_at IS NOT NULL"
                                 ).fetchone()[0],
            "events": q("SELECT COUNT(*) FROM events").fetchone()[0],
            "embedded_chunks": q("SELECT COUNT(*) FROM chunks WHERE live = 1 AND embedded = 1"
                                 ).fetchone()[0],
        }

    def documents_to_reread(self, extraction: str) -> int:
        """How many live file documents were extracted under other rules than
        ``extraction`` (the next sync reads them again)."""
        return int(self.con.execute(
            "SELECT COUNT(*) FROM documents WHERE deleted_at IS NULL AND source_kind = 'file'"
            " AND extraction IS NOT ?", (extraction,)).fetchone()[0])

    def warnings(self, limit: int = 100) -> Warnings:
        """The live documents' warnings as their last versions had them: how many
        documents have any, and the first ``limit`` by path."""
        where = "FROM documents WHERE deleted_at IS NULL AND warnings IS NOT NULL"
        total = int(self.con.execute(f"SELECT COUNT(*) {where}").fetchone()[0])
        out: list[WarningRecord] = []
        for path, text in self.con.execute(f"SELECT path, warnings {where} ORDER BY path"):
            out.extend(WarningRecord(path, line, reason) for line, reason in json.loads(text))
            if len(out) >= limit:
                break
        return Warnings(total, tuple(out[:limit]))

    def ambiguous_names(self, limit: int = 50) -> list[tuple[str, list[str]]]:
        """Names declared by more than one note, with the paths (the winner first)."""
        out = []
        for key, paths in self.con.execute(
                "SELECT key, group_concat(path, char(10)) FROM (SELECT key, path FROM names"
                # (a folder's pages compete by their kinds' rank, not by accident)
                " WHERE key NOT LIKE '%/'"
                " ORDER BY key, rank, length(path), path) GROUP BY key"
                f" HAVING COUNT(DISTINCT path) > 1 LIMIT {int(limit)}"):
            out.append((key, list(dict.fromkeys(str(paths).split("\n")))))
        return out


def _name_scopes(scopes: Sequence[str] | None) -> tuple[str, str, str]:
    """The SQL that keeps a name lookup to ``scopes``: a join of the declarations ``n`` to
    their documents, its condition, and the condition on a name entity ``e`` (each
    followed by the scopes as parameters); nothing without scopes."""
    if not scopes:
        return "", "", ""
    return (" JOIN documents d ON d.id = n.document_id", f" AND d.scope IN ({_marks(scopes)})",
            f" AND e.scope IN ({_marks(scopes)})")


def _merged(parts: Sequence[Sequence[tuple[int, float]]], limit: int) -> list[Hit]:
    """Rows (id, FTS5 rank: lower is better) of several indexes as the best ``limit``
    hits, each id once at its best score. Each index ranks by its own statistics: one
    scope's by that scope's (``scoped.py``); an as-of search scores with the live and the
    history index's, not with those of then. Ties keep the order the indexes gave."""
    best: dict[int, float] = {}
    for rows in parts:
        for eid, r in rows:
            best[eid] = max(best.get(eid, float("-inf")), -float(r))
    ranked = sorted(best.items(), key=lambda kv: -kv[1])[:limit]
    return [Hit(e, s) for e, s in ranked]
