"""Apply document versions and fact assertions inside one PostgreSQL write transaction.

The same rules as the SQLite writer's (``store/sqlite/writer.py``): a document's fact
drafts are diffed against the live facts it owns (``domain.ownership.diff_facts``), kept
facts keep their ``recorded_at``, names resolve by ``domain.names``' rule (the set-based
``NAME_WINNER``), and derived state is brought up to date once per transaction in
``finish``. What differs is how writers share the database:

- each document is applied under a transaction-scoped advisory lock keyed by its scope and
  path (and its id, for its mentions): a second writer of the same document waits, then
  finds the version applied (``Unchanged``): an edit is applied once, and never lost;
- ``finish`` runs under one more advisory lock, so name resolution, the entity index and
  the counts in ``meta`` are computed from every commit before it, one writer at a time
  (the long part of a write, its documents, runs at once); it holds that lock for few
  round trips (``Con.pipeline``), and a write that changed none of that shared state
  only adds to ``meta``'s counts (rows locked in key order) without it;
- a mention pass takes its documents' locks before it reads them (``claim_mentions``),
  and may leave a document another writer holds to that writer;
- ids come from sequences, and a name entity two writers create at once is made once
  (``ON CONFLICT DO NOTHING``, then read back).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, cast

import numpy as np

from ...domain.ids import entity_key, fact_key, name_iri, note_iri, note_key
from ...domain.names import is_folder_key
from ...domain.ownership import diff_facts
from ...domain.words import label_initials
from ...errors import Conflict
from ...types import Applied, Deleted, FactDraft, ParsedDocument, Unchanged, mention_labels
from .. import Prepared
from ..records import FileCheck
from ..sqlite.prepare import (
    FACT_COLUMNS,
    NO_ID,
    FactParts,
    PreparedDocument,
    name_refs,
    prepare,
    prepare_facts,
)
from . import stats
from .connection import Result, Transaction, map_driver_errors, now_iso
from .trust import TrustWrites

# Whether a live fact still refers to the name entity row ``entities`` (subject or object)
NAME_REFERRED = ("EXISTS (SELECT 1 FROM facts f WHERE f.object_id = entities.id"
                 " AND f.scope = entities.scope AND f.retracted_at IS NULL) OR EXISTS"
                 " (SELECT 1 FROM facts f WHERE f.subject_id = entities.id"
                 " AND f.scope = entities.scope AND f.retracted_at IS NULL)")
# The note that wins a name entity's name in its scope (``domain.names.name_winner``)
NAME_WINNER = ("(SELECT n.entity_id FROM names n WHERE n.key = entities.name_key"
               " AND n.scope = entities.scope ORDER BY n.rank, length(n.path), n.path LIMIT 1)")
# The name entities of the keys ``?`` whose winner is not the note they resolve to
_RESOLVE_READ = (
    f"SELECT id, name_key, resolved_id, winner, scope FROM (SELECT id, name_key, resolved_id,"
    f" scope, {NAME_WINNER} AS winner FROM entities WHERE name_key = ANY(?)) x"
    " WHERE resolved_id IS DISTINCT FROM winner")

_NAME_COLUMNS = "key, document_id, entity_id, kind, text, rank, path, scope, recorded_at"
_FACT_INSERT = f"INSERT INTO facts({FACT_COLUMNS}) VALUES({','.join('?' * 24)})"
# a fact row without its id: the id the next of the sequence (no round trip for ids)
_FACT_INSERT_NEXT = (f"INSERT INTO facts({FACT_COLUMNS})"
                     f" VALUES(nextval('facts_id_seq'),{','.join('?' * 23)})")
_ADD_INITIALS = ("INSERT INTO entity_initials(initials, entity_id, scope) VALUES(?, ?, ?)"
                 " ON CONFLICT DO NOTHING")
# a chunk's postings (``schema.py``): its lexemes, each counted with its column's weight
# (and the tokens they hold, for the count BM25's average length is read from)
POSTINGS_INSERT = (
    "WITH c AS (SELECT id, scope, tsv, kw_doclen(tsv) AS dl FROM chunks WHERE id = ANY(?)),"
    " p AS (INSERT INTO chunk_postings(lexeme, chunk_id, scope, tf, dl) SELECT u.lexeme, c.id,"
    " c.scope, (SELECT SUM(CASE w WHEN 'A' THEN 2.0 ELSE 1.0 END) FROM unnest(u.weights) w),"
    " c.dl FROM c CROSS JOIN LATERAL unnest(c.tsv) u) SELECT COALESCE(SUM(dl), 0) FROM c")
# (both ends of the index's key given as lists: a probe a lexeme, never a scan of the
# table, whatever plan the server would make of a join)
POSTINGS_DELETE = (
    "DELETE FROM chunk_postings WHERE chunk_id = ANY(?::bigint[]) AND lexeme = ANY(ARRAY("
    "SELECT DISTINCT u.lexeme FROM chunks c CROSS JOIN LATERAL unnest(c.tsv) u"
    " WHERE c.id = ANY(?::bigint[])))")
# an indexed entity's postings, from its row of ``entity_fts`` (``t``)
_ENTITY_TF = ("(SELECT SUM(CASE w WHEN 'A' THEN 10.0 WHEN 'B' THEN 6.0 ELSE 1.0 END)"
              " FROM unnest(u.weights) w), (SELECT 10.0 * COUNT(*) FROM unnest(u.weights) w"
              " WHERE w = 'A')")
ENTITY_POSTINGS_INSERT = (
    "INSERT INTO entity_postings(lexeme, entity_id, scope, tf, tf_label, dl)"
    f" SELECT u.lexeme, t.entity_id, t.scope, {_ENTITY_TF}, t.dl FROM entity_fts t"
    " CROSS JOIN LATERAL unnest(t.tsv) u WHERE t.entity_id = ANY(?::bigint[])"
    " ON CONFLICT DO NOTHING")
# the kept facts of a document moved to its new version: one row each of unnest's arrays
_FACTS_MOVE = (
    "UPDATE facts f SET version_id = u.v, chunk_id = u.c, line_start = u.ls, line_end = u.le,"
    " supporting_text = u.st, value = u.val, confidence = u.conf, trust = u.tr,"
    " extractor = u.ex, extractor_version = u.exv FROM unnest(?::bigint[], ?::bigint[],"
    " ?::int[], ?::int[], ?::text[], ?::text[], ?::float8[], ?::text[], ?::text[], ?::text[],"
    " ?::bigint[]) AS u(v, c, ls, le, st, val, conf, tr, ex, exv, id) WHERE f.id = u.id")
# a document's row as its new version has it (``version``: the version id's expression)
_DOCUMENT_UPDATE = (
    "UPDATE documents SET path=?, title=?, doc_type=?, version_id={version},"
    " content_hash=?, size=?, mtime_ns=?, updated_at=?, source_kind=?,"
    " checked_ns=NULL, warnings=?, extraction=NULLIF(?, '') WHERE id=?")
_LIVE_CHUNKS = ("SELECT id, ord, heading, context, text, line_start, line_end, text_hash,"
                " embedded, scope FROM chunks WHERE document_id=? AND live ORDER BY ord")
_NAMES_OF = f"SELECT {_NAME_COLUMNS} FROM names WHERE document_id=?"
_KIND_NAMES = {"file": "a vault file", "api": "an agent's document"}
PACK_MIN = 256
COMPACT_MIN = 10_000
# The advisory locks are keyed within the store's schema (``current_schema()`` before the
# key): advisory locks are the database's, and two stores in two schemas of one database
# must neither wait for each other nor deadlock on a "default/a.md" of each.
LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || ?, 0))"
_COMPACT_KEYS = ("live_chunks", "retired_chunks")  # the counts compaction is decided by
COMMITS = "commits"  # the meta count every write moves (``PostgresStore.data_version``)
WRITE_PREPARE_THRESHOLD = 1  # a write's statements are prepared from their second run
FINISH_LOCK = "\x1ffinish"  # ``finish``'s lock (a document's key has a separator inside)


def _fact_row(row: Sequence[object]) -> tuple[object, ...]:
    """A fact row of ``prepare``'s, its stand-ins for NULL as NULL (see ``prepare.py``)."""
    out = list(row)
    for i in (3, 4):
        if out[i] == NO_ID:
            out[i] = None
    for i in (12, 13, 14, 15):
        if type(out[i]) is int:
            out[i] = None
    return tuple(out)


def _lock_key(*parts: object) -> str:
    return "\x1f".join(str(p) for p in parts)


def _chunk_parts(row: Sequence[object]) -> tuple[object, ...]:
    return tuple(row[1:8])


def _same_chunks(old: Sequence[Sequence[object]], p: PreparedDocument) -> list[int] | None:
    if len(old) != len(p.chunks) or any(
            _chunk_parts(r) != tuple(c) for r, c in zip(old, p.chunks, strict=True)):
        return None
    return [int(cast(int, r[0])) for r in old]


class Writer(TrustWrites):
    """Write operations over one open ``Transaction``."""

    def __init__(self, tx: Transaction, *, actor: str) -> None:
        self.tx = tx
        self.con = tx.con
        self.actor = actor
        self._entity_ids: dict[str, int] = {}
        self._unresolved: set[str] = set()
        self._new_names: set[int] = set()
        self._stale_fts: set[int] = set()
        self._has_vectors: bool | None = None
        self._name_fts: list[tuple[int, str, str]] = []  # new name entities: id, scope, label
        # counts kept in ``meta`` (BM25's statistics too), written in ``finish``
        self._live_delta = 0
        self._tokens_delta = 0
        self._retired = 0
        self._names_gen = 0
        # chunks indexed (+1) and taken out (-1), counted per scope in ``finish`` (``stats``)
        self._chunk_signs: list[tuple[int, int]] = []
        self._locked: set[str] = set()
        # statements of ``finish`` whose results it does not read, sent with its next ones
        self._pending: list[tuple[str, Sequence[object] | None]] = []
        self._name_fts_sent = 0  # where ``finish`` sent the new names' index rows
        # a document write's statements whose results it does not read, sent with its next
        # read or its event (``_read``, ``_flush``): never past the method that held them
        self._held: list[tuple[str, Sequence[object] | None]] = []
        # an import's rebuild: entity texts are indexed again as they stood, with the times
        # the imported rows give (no history is written, no time moved)
        self._keep_index_times = False

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        held = len(self._name_fts), len(self._chunk_signs)
        counts = self._live_delta, self._tokens_delta, self._retired, self._names_gen
        locked, pending = set(self._locked), len(self._pending)
        try:
            with self.tx.savepoint():
                yield
        except BaseException:
            self._held.clear()
            del self._pending[pending:]
            del self._name_fts[held[0]:], self._chunk_signs[held[1]:]
            self._live_delta, self._tokens_delta, self._retired, self._names_gen = counts
            self._locked = locked  # (a rolled-back savepoint lets its locks go)
            self._entity_ids.clear()
            raise

    def _lock(self, *parts: object, reads: Sequence[tuple[str, Sequence[object] | None]] = ()
              ) -> list[Result]:
        """Hold the document's advisory lock until the transaction ends; then run
        ``reads`` (in the same round trip) and return their results."""
        key = _lock_key(*parts)
        if key in self._locked:
            return self.con.pipeline(reads)
        got = self.con.pipeline([(LOCK, ("\x1f" + key,)), *reads])
        self._locked.add(key)
        return got[1:]

    def finish(self) -> None:
        """Bring derived state up to date before the transaction commits (one writer at a
        time, each seeing every commit before it).

        Only a write that changed what writers share (chunks and their counts, names and
        what they resolve to, the entity index) takes ``finish``'s lock: one that changed
        none of it (a note's mentions found again, most often) only adds to the counts in
        ``meta``, rows locked in key order, and waits on no other writer's ``finish``.
        The statements go in few round trips (``Con.pipeline``), since the lock is held
        from the first of them until the commit."""
        with map_driver_errors("cannot finish the write"):
            # (the method that held a write sends it; should one be left, it goes before
            # anything else: never lost with the commit)
            self._flush()
            deltas: dict[str, int] = dict.fromkeys(
                ("entity_rows", "entity_tokens", "names_gen", "live_chunk_tokens",
                 "live_chunks", "retired_chunks"), 0)
            # this store's commits (``PostgresStore.data_version``), in the upsert the
            # counts take anyway
            deltas[COMMITS] = 1
            if (self._chunk_signs or self._name_fts or self._unresolved or self._stale_fts
                    or self._live_delta or self._retired):
                self._finish_shared(deltas)
            deltas["names_gen"] += self._names_gen
            self._names_gen = 0
            deltas["live_chunk_tokens"] += self._tokens_delta
            self._tokens_delta = 0
            chunks = bool(self._live_delta or self._retired)
            deltas["live_chunks"] += self._live_delta
            deltas["retired_chunks"] += self._retired
            self._live_delta = self._retired = 0
            counts = self._count(deltas, read=_COMPACT_KEYS if chunks else ())
            if chunks:
                self._compact_if_due(counts)

    def _finish_shared(self, deltas: dict[str, int]) -> None:
        """``finish``'s part under its lock: chunk counts, new names' index rows, names
        resolved again, stale entities indexed again."""
        first: list[tuple[str, Sequence[object] | None]] = [(LOCK, (FINISH_LOCK,))]
        if self._chunk_signs:
            first.append((stats.CHUNK_DELTA, ([i for i, _ in self._chunk_signs],
                                              [s for _, s in self._chunk_signs])))
            self._chunk_signs.clear()
        self._name_fts_sent = 0
        if self._name_fts:
            self._name_fts_sent = len(first)
            first.append((
                "INSERT INTO entity_fts(entity_id, scope, label, aliases, literals)"
                " SELECT i, s, l, '', '' FROM unnest(?::bigint[], ?::text[], ?::text[])"
                " AS x(i, s, l) ON CONFLICT DO NOTHING RETURNING entity_id, dl",
                ([r[0] for r in self._name_fts], [r[1] for r in self._name_fts],
                 [r[2] for r in self._name_fts])))
            self._name_fts.clear()
        resolve = sorted(self._unresolved)
        self._unresolved.clear()
        if resolve:
            first.append((_RESOLVE_READ, (resolve,)))
        new_names, self._new_names = self._new_names, set()
        stale, self._stale_fts = sorted(self._stale_fts), set()
        at = len(first)
        if stale:
            first += self._index_reads(stale)
        got = self._send(first)
        if self._name_fts_sent:
            made = got[self._name_fts_sent].rows
            ids = [int(r[0]) for r in made]
            deltas["entity_rows"] += len(made)
            deltas["entity_tokens"] += sum(int(r[1]) for r in made)
            self._pending += [(ENTITY_POSTINGS_INSERT, (ids,)), (stats.entity_delta(1), (ids,))]
        if resolve:
            self._resolve(got[at - 1].rows, new_names)
        spelled, rows, tokens = self._index_entities(stale, got[at:], new_names)
        self._pending += [(_ADD_INITIALS, r) for r in spelled]
        deltas["entity_rows"] += rows
        deltas["entity_tokens"] += tokens

    def _hold(self, sql: str, args: Sequence[object] | None) -> None:
        """Send a write whose result is not read with the next ``_read`` or ``_flush``."""
        self._held.append((sql, args))

    def _read(self, sql: str, args: Sequence[object] | None) -> Result:
        """Run the held writes, then ``sql``, in one round trip; its result."""
        return self._reads([(sql, args)])[0]

    def _reads(self, statements: Sequence[tuple[str, Sequence[object] | None]]
               ) -> list[Result]:
        """Run the held writes, then ``statements``, in one round trip; their results."""
        held, self._held = self._held, []
        return self.con.pipeline([*held, *statements])[len(held):]

    def _flush(self, *statements: tuple[str, Sequence[object] | None]) -> None:
        """Run the held writes and ``statements`` in one round trip."""
        held, self._held = self._held, []
        if held or statements:
            self.con.pipeline([*held, *statements])

    def _send(self, statements: Sequence[tuple[str, Sequence[object] | None]]
              ) -> list[Result]:
        """Run the statements held back (``_pending``), then ``statements``, in one round
        trip; the results of ``statements``."""
        held, self._pending = self._pending, []
        return self.con.pipeline([*held, *statements])[len(held):]

    def _count_chunk_stats(self) -> None:
        """Count the chunks indexed and taken out since the last time into their scopes'
        statistics (``stats.CHUNK_DELTA``; under ``finish``'s lock, or with none held)."""
        if self._chunk_signs:
            self.con.execute(stats.CHUNK_DELTA, ([i for i, _ in self._chunk_signs],
                                                 [s for _, s in self._chunk_signs]))
            self._chunk_signs.clear()

    def _count(self, deltas: dict[str, int], *, read: Sequence[str] = ()) -> dict[str, str]:
        """Add each delta to the count ``meta`` keeps under its key, in one statement;
        the new values of the counts it moved, and the values of the keys ``read``."""
        # (in key order: two writers' upserts lock the rows they share in one order)
        moved = sorted((k, str(d)) for k, d in deltas.items() if d)
        return dict(self._send([(
            "WITH up AS (INSERT INTO meta(key, value) SELECT * FROM unnest(?::text[], ?::text[])"
            " ORDER BY 1 ON CONFLICT(key)"
            " DO UPDATE SET value = (meta.value::bigint + EXCLUDED.value::bigint)::text"
            " RETURNING key, value) SELECT key, value FROM up UNION ALL SELECT key, value"
            " FROM meta WHERE key = ANY(?::text[]) AND key NOT IN (SELECT key FROM up)",
            ([k for k, _ in moved], [d for _, d in moved], list(read)))])[0].rows)

    def _resolve(self, changed: Sequence[tuple[Any, ...]], new_names: set[int]) -> None:
        """Re-point the name entities ``changed`` (rows of ``_RESOLVE_READ``) to the notes
        that win them now, and record each name that came to reach another note (see the
        SQLite writer). ``new_names``: the name entities this transaction created."""
        if not changed:
            return
        self._pending += [("UPDATE entities SET resolved_id = ? WHERE id = ?", (winner, eid))
                          for eid, _, _, winner, _ in changed]
        moved = [r for r in changed if r[0] not in new_names]
        if not moved:
            return
        olds = sorted({old for _, _, old, _, _ in moved if old is not None})
        before = {r[0]: r[1] for r in self._send([(
            "SELECT id, document_id FROM entities WHERE id = ANY(?)", (olds,))])[0]}
        rows = sorted({(key, key, int(winner is not None), before.get(old), scope)
                       for _, key, old, winner, scope in moved},
                      key=lambda r: (r[1], r[2], r[3] or 0, r[4]))
        self._pending += [("INSERT INTO name_changes(text, key, added, document_id, label,"
                           " scope) VALUES(?, ?, ?, ?, 0, ?)", r) for r in rows]

    def _compact_if_due(self, known: dict[str, str]) -> None:
        """Drop the uncited chunks of past versions once as many were retired as the
        store has live ones (as SQLite's). ``known``: counts just written."""
        counts = {k: known[k] for k in _COMPACT_KEYS if k in known}
        if int(counts.get("retired_chunks", 0)) >= max(int(counts.get("live_chunks", 0)),
                                                       COMPACT_MIN):
            self.drop_uncited_chunks()

    # ------------------------------------------------------------ documents

    def apply(self, scope: str, doc: ParsedDocument | Prepared, *, force: bool = False,
              rename_from: str | None = None) -> Applied | Unchanged:
        """Write ``doc`` as the current version of ``(scope, doc.path)``; idempotent (the
        content hash is compared under the document's lock)."""
        p = (doc if isinstance(doc, PreparedDocument)
             else prepare(doc if isinstance(doc, ParsedDocument) else doc.doc))
        with map_driver_errors(f"cannot apply {p.doc.path}"):
            for path in sorted({p.doc.path, rename_from or p.doc.path}):
                self._lock(scope, path)
            return self._apply(scope, p, force=force, rename_from=rename_from)

    def _apply(self, scope: str, p: PreparedDocument, *, force: bool,
               rename_from: str | None) -> Applied | Unchanged:
        con, ts, doc = self.con, now_iso(), p.doc
        find = ("SELECT id, content_hash, source_kind, extraction, version_id FROM documents"
                " WHERE scope=? AND path=? AND deleted_at IS NULL")
        row = con.execute(find, (scope, rename_from or doc.path)).fetchone()
        if row is None and rename_from is not None:
            rename_from = None
            row = con.execute(find, (scope, doc.path)).fetchone()
        self._check_owner(scope, doc, row)
        reread = row is not None and rename_from is None and row[1] == doc.content_hash
        if reread and (row[3] or "") == doc.extraction and not force:
            return Unchanged(doc.path)
        created = row is None
        doc_id, fresh = (int(row[0]), False) if row else self._resurrect_or_create(scope, doc, ts)
        # (what the document's write reads first, in the lock's round trip)
        reads: list[tuple[str, Sequence[object] | None]] = [] if fresh else [
            (_LIVE_CHUNKS, (doc_id,)), (_NAMES_OF, (doc_id,))]
        if self._has_vectors is None:
            reads.append(("SELECT EXISTS(SELECT 1 FROM embeddings)", None))
        got = self._lock("doc", doc_id, reads=reads)
        if self._has_vectors is None:
            self._has_vectors = bool(got[-1].rows[0][0])
        old_chunks = [] if fresh else got[0].rows
        prior_names = None if fresh else got[1].rows
        kept_chunks = _same_chunks(old_chunks, p) if reread else None
        warned = [[i.line, i.reason] for i in doc.issues if not i.fatal]
        fields = (doc.path, doc.title, doc.doc_type, doc.content_hash, doc.size, doc.mtime_ns,
                  ts, doc.source_kind, json.dumps(warned) if warned else None,
                  doc.extraction, doc_id)
        # (the version, the document's row and its note's entity: one round trip)
        if kept_chunks is not None:
            write: tuple[str, Sequence[object]] = (
                _DOCUMENT_UPDATE.format(version="?"),
                (*fields[:3], int(row[4]), *fields[3:]))
        else:  # (the new version and the document pointing to it, in one statement)
            write = ("WITH v AS (INSERT INTO versions(scope, document_id, path, content_hash,"
                     " text, recorded_at, actor) VALUES(?,?,?,?,?,?,?) RETURNING id) "
                     + _DOCUMENT_UPDATE.format(version="(SELECT id FROM v)")
                     + " RETURNING version_id",
                     (scope, doc_id, doc.path, doc.content_hash, doc.text, ts, self.actor,
                      *fields))
        wrote, note = con.pipeline([write, self._note_entity(scope, doc_id, doc, ts,
                                                             fresh=fresh)])
        version_id = int(row[4]) if kept_chunks is not None else int(wrote.rows[0][0])
        note_row = note.fetchone()
        note_id = int(note_row[0]) if note_row else int(con.execute(
            *self._note_entity(scope, doc_id, doc, ts, fresh=True)).fetchone()[0])
        chunk_ids = (kept_chunks if kept_chunks is not None
                     else self._replace_chunks(scope, doc_id, version_id, p, old_chunks, ts,
                                               moved=rename_from is not None))
        names_added, names_removed = self._replace_names(scope, doc_id, note_id, p, ts,
                                                         prior=prior_names)
        self._queue_mentions(scope, doc_id, names_added, names_removed)
        # model-extracted facts (``apply_extracted``) whose chunk this version no longer
        # holds go with it: the next ``extract`` sends only those chunks again
        llm_gone, llm_touched = (0, set[int]()) if fresh else self._retract_unchunked(
            doc_id, chunk_ids, ts)
        added, retracted, kept, touched = self._diff_facts(
            scope, doc_id, version_id, note_id, p.facts, p.refs, chunk_ids, ts, fresh=fresh,
            reason="read again under other rules" if reread else "source edited")
        retracted += llm_gone
        self._refresh_entity_fts({note_id, *touched, *llm_touched})
        action = "rename" if rename_from else ("create" if created else "update")
        detail: dict[str, object] = {
            "path": doc.path, "from": rename_from, "version_id": version_id,
            "added": added, "retracted": retracted, "kept": kept}
        if reread:
            detail["reread"] = doc.extraction or True
        self._event(action, scope=scope, document_id=doc_id, detail=detail)
        return Applied(doc.path, created, added, retracted, kept, renamed_from=rename_from,
                       document_id=doc_id, names_added=names_added,
                       names_removed=names_removed, reread=reread)

    def _check_owner(self, scope: str, doc: ParsedDocument, row: tuple[object, ...] | None
                     ) -> None:
        """Refuse a document that would take over another kind's path or note."""
        if row is not None:
            if row[2] != doc.source_kind:
                raise Conflict(f"{doc.path} is held by {_KIND_NAMES.get(str(row[2]), row[2])}"
                               f"; {_KIND_NAMES.get(doc.source_kind, doc.source_kind)} cannot"
                               " replace it")
            return
        other = self.con.execute(
            "SELECT d.path, d.source_kind FROM entities e JOIN documents d"
            " ON d.id = e.document_id AND d.scope = e.scope"
            " WHERE e.iri = ? AND e.kind = 'note' AND d.scope = ? AND d.deleted_at IS NULL"
            " LIMIT 1", (note_iri(scope, doc.path), scope)).fetchone()
        if other is not None:
            raise Conflict(f"{doc.path} would name the same note as {other[0]}"
                           f" ({_KIND_NAMES.get(str(other[1]), other[1])})")

    def _resurrect_or_create(self, scope: str, doc: ParsedDocument, ts: str
                             ) -> tuple[int, bool]:
        tomb = self.con.execute(
            "SELECT id FROM documents WHERE scope=? AND path=? AND deleted_at IS NOT NULL"
            " ORDER BY id DESC LIMIT 1", (scope, doc.path)).fetchone()
        if tomb:
            self.con.execute("UPDATE documents SET deleted_at=NULL WHERE id=?", (tomb[0],))
            return int(tomb[0]), False
        doc_id = int(self.con.execute(
            "INSERT INTO documents(scope, path, source_kind, title, doc_type, created_at,"
            " updated_at) VALUES(?,?,?,?,?,?,?) RETURNING id",
            (scope, doc.path, doc.source_kind, doc.title, doc.doc_type, ts, ts)).fetchone()[0])
        return doc_id, True

    @staticmethod
    def _note_entity(scope: str, doc_id: int, doc: ParsedDocument, ts: str, *,
                     fresh: bool) -> tuple[str, Sequence[object]]:
        """The statement that gives the document's note entity id: made (``fresh``), or
        brought up to date, its row written only when its IRI or label changed (an edit
        seldom does); no row when it has none yet."""
        key = note_key(doc_id)
        iri = note_iri(scope, doc.path)
        if fresh:
            return ("INSERT INTO entities(key, kind, scope, iri, label, document_id, created_at)"
                    " VALUES(?,?,?,?,?,?,?) RETURNING id",
                    (key, "note", scope, iri, doc.title, doc_id, ts))
        return ("WITH u AS (UPDATE entities SET iri = ?, label = ? WHERE key = ?"
                " AND (iri, label) IS DISTINCT FROM (?, ?))"
                " SELECT id FROM entities WHERE key = ?",
                (iri, doc.title, key, iri, doc.title, key))

    def _replace_chunks(self, scope: str, doc_id: int, version_id: int, p: PreparedDocument,
                        old: Sequence[Sequence[object]], ts: str, *, moved: bool = False
                        ) -> list[int]:
        """The chunks of the new version, in order: a chunk cut exactly as before stays."""
        same = {} if moved else {_chunk_parts(r): int(cast(int, r[0])) for r in old}
        ids: list[int | None] = [same.get(tuple(c)) for c in p.chunks]
        kept = {cid for cid in ids if cid is not None}
        new = [i for i, cid in enumerate(ids) if cid is None]
        # (the old chunks retired and the new ones' ids in one round trip; the new chunks
        # and their postings in one more)
        retired, new_ids = self._retire_chunks([r for r in old if r[0] not in kept], ts,
                                               new_ids=len(new))
        for i, cid in zip(new, new_ids, strict=True):
            ids[i] = cid
        rows = [(ids[i], scope, version_id, doc_id, *p.chunks[i]) for i in new]
        if rows:
            got = self.con.pipeline([
                *(("INSERT INTO chunks(id, scope, version_id, document_id, ord, heading,"
                   " context, text, line_start, line_end, text_hash)"
                   " VALUES(?,?,?,?,?,?,?,?,?,?,?)", r) for r in rows),
                (POSTINGS_INSERT, (new_ids,))])[-1].fetchone()
            self._tokens_delta += int(got[0]) if got else 0
            self._chunk_signs.extend((i, 1) for i in new_ids)
        self._live_delta += len(rows)
        have = {r[0] for r in self.con.execute(
            "SELECT text_hash FROM embeddings WHERE text_hash = ANY(?)",
            ([r[10] for r in rows],))} if rows and self._vectors_exist() else set()
        reuse = [cast(int, r[0]) for r in rows if r[10] in have]
        if reuse:
            self.con.execute("UPDATE chunks SET embedded = TRUE WHERE id = ANY(?)", (reuse,))
            self.con.executemany("INSERT INTO vector_log(chunk_id, added, scope) VALUES(?, 1, ?)",
                                 [(i, scope) for i in reuse])
        self._drop_orphan_vectors(retired)
        return [int(cid) for cid in ids if cid is not None]

    def _vectors_exist(self) -> bool:
        if self._has_vectors is None:
            row = self.con.execute("SELECT EXISTS(SELECT 1 FROM embeddings)").fetchone()
            self._has_vectors = bool(row and row[0])
        return self._has_vectors

    def _retire_chunks(self, old: Sequence[Sequence[object]], ts: str, *, new_ids: int = 0
                       ) -> tuple[list[str], list[int]]:
        """Take chunks out of the live set (into history, retired at ``ts``); return their
        text hashes, and ``new_ids`` new chunk ids (in the same round trip). ``old``: rows
        of ``_live_chunk_rows``."""
        if not old:
            return [], self.tx.ids("chunks", new_ids)
        ids = [r[0] for r in old]
        statements: list[tuple[str, Sequence[object] | None]] = [
            (POSTINGS_DELETE, (ids, ids)),
            ("WITH r AS (UPDATE chunks SET live = FALSE, retired_at = ?"
             " WHERE id = ANY(?) RETURNING kw_doclen(tsv) AS dl)"
             " SELECT COALESCE(SUM(dl), 0) FROM r", (ts, ids)),
            *(("INSERT INTO vector_log(chunk_id, added, scope) VALUES(?, 0, ?)", (r[0], r[9]))
              for r in old if r[8])]
        if new_ids:
            statements.append(("SELECT nextval('chunks_id_seq') FROM generate_series(1, ?)",
                               (new_ids,)))
        got = self.con.pipeline(statements)
        self._chunk_signs.extend((int(cast(int, i)), -1) for i in ids)
        dl = got[1].fetchone()
        self._tokens_delta -= int(dl[0]) if dl else 0
        self._live_delta -= len(old)
        self._retired += len(old)
        return [str(r[7]) for r in old], [int(r[0]) for r in got[-1]] if new_ids else []

    def _live_chunk_rows(self, doc_id: int) -> list[tuple[object, ...]]:
        return self.con.execute(_LIVE_CHUNKS, (doc_id,)).fetchall()

    def _drop_orphan_vectors(self, hashes: Sequence[str]) -> None:
        """Delete vectors no live chunk uses any more: a delete leaves no vector behind."""
        if hashes and self._vectors_exist():
            self.con.execute(
                "DELETE FROM embeddings WHERE text_hash = ANY(?) AND NOT EXISTS"
                " (SELECT 1 FROM chunks c WHERE c.text_hash = embeddings.text_hash AND c.live)",
                (sorted(set(hashes)),))

    def put_vectors(self, items: Sequence[tuple[str, bytes]]) -> int:
        """Store vectors by chunk text hash and attach them to the live chunks using them."""
        if not items:
            return 0
        rows = [(h, np.frombuffer(v, dtype="<f4"), len(v) // 4) for h, v in items]
        self.con.executemany(
            "INSERT INTO embeddings(text_hash, vector, dim) VALUES(?, ?, ?) ON CONFLICT"
            " (text_hash) DO UPDATE SET vector = EXCLUDED.vector, dim = EXCLUDED.dim", rows)
        self.con.execute("INSERT INTO meta(key, value) VALUES('vector_epoch',"
                         " md5(random()::text || clock_timestamp()::text)) ON CONFLICT DO NOTHING")
        for dim in {r[2] for r in rows}:
            self._hnsw(dim)
        self._has_vectors = True
        got = self.con.execute(
            "UPDATE chunks SET embedded = TRUE WHERE text_hash = ANY(?) AND live"
            " AND NOT embedded RETURNING id, scope", (sorted({h for h, _ in items}),)).fetchall()
        got.sort()
        self.con.executemany("INSERT INTO vector_log(chunk_id, added, scope) VALUES(?, 1, ?)",
                             got)
        return len(got)

    def _hnsw(self, dim: int) -> None:
        """The HNSW index (cosine) of the vectors of ``dim`` dimensions, made once."""
        name = f"embeddings_hnsw_{int(dim)}"
        row = self.con.execute("SELECT to_regclass(?) IS NOT NULL", (name,)).fetchone()
        if not (row and row[0]):
            self.con.execute(
                f"CREATE INDEX IF NOT EXISTS {name} ON embeddings USING hnsw"
                f" ((vector::vector({int(dim)})) vector_cosine_ops) WHERE dim = {int(dim)}", None)

    def clear_vectors(self) -> None:
        self.con.execute("INSERT INTO vector_log(chunk_id, added, scope)"
                         " SELECT id, 0, scope FROM chunks WHERE live AND embedded ORDER BY id")
        self.con.execute("UPDATE chunks SET embedded = FALSE WHERE embedded")
        self.con.execute("DELETE FROM embeddings")
        self._event("clear_vectors")

    def pack_versions(self, *, after: int = 0, limit: int = 500) -> tuple[int, int | None]:
        """Compress the text of up to ``limit`` past versions (as the SQLite writer)."""
        rows = self.con.execute(
            "SELECT v.id, v.text FROM versions v JOIN documents d ON d.id = v.document_id"
            " AND d.scope = v.scope WHERE v.id > ? AND v.text_z IS NULL"
            f" AND v.id IS DISTINCT FROM d.version_id AND length(v.text) >= {PACK_MIN}"
            " ORDER BY v.id LIMIT ?", (after, limit)).fetchall()
        packed = []
        for version_id, text in rows:
            raw = text.encode()
            z = zlib.compress(raw)
            if len(z) < len(raw):
                packed.append((z, version_id))
        self.con.executemany("UPDATE versions SET text='', text_z=? WHERE id=?", packed)
        return len(packed), (int(rows[-1][0]) if rows else None)

    def drop_uncited_chunks(self) -> int:
        """Delete the chunks of past versions that no fact cites; return how many."""
        self._count_chunk_stats()  # (a chunk counted out must still be there to count)
        removed = self.con.execute(
            "DELETE FROM chunks c WHERE NOT c.live AND c.id < (SELECT MAX(id) FROM chunks)"
            " AND NOT EXISTS (SELECT 1 FROM facts f WHERE f.chunk_id = c.id"
            " AND f.scope = c.scope)").rowcount
        self.set_meta("retired_chunks", "0")
        if removed:
            self._event("compact", reason="chunks of past versions that no fact cites",
                        detail={"chunks_removed": removed})
        return removed

    def set_meta(self, key: str, value: str) -> None:
        self.con.execute("INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key)"
                         " DO UPDATE SET value = EXCLUDED.value", (key, value))

    def refresh_files(self, scope: str, files: Sequence[FileCheck]) -> int:
        """Record that files still hold their documents' versions (no event)."""
        if not files:
            return 0
        return self.con.execute(
            "UPDATE documents d SET size = f.size, mtime_ns = f.mtime, checked_ns = f.checked"
            " FROM unnest(?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[])"
            " AS f(path, digest, size, mtime, checked) WHERE d.scope = ? AND d.path = f.path"
            " AND d.deleted_at IS NULL AND d.content_hash = f.digest",
            ([f[0] for f in files], [f[1] for f in files], [f[2] for f in files],
             [f[3] for f in files], [f[4] for f in files], scope)).rowcount

    def _replace_names(self, scope: str, doc_id: int, note_id: int, p: PreparedDocument,
                       ts: str, *, prior: Sequence[Sequence[Any]] | None = None
                       ) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
        """As the SQLite writer's: a declaration made again keeps its ``recorded_at``, one
        dropped goes to ``names_past``, retracted at ``ts``. ``prior``: the document's name
        rows as they stand (``_NAMES_OF``), None for a new document."""
        rows: list[tuple[str, str, str]] = []
        since: dict[tuple[object, ...], str] = {}
        declared = [(key, doc_id, note_id, kind, text, rank, p.doc.path, scope)
                    for key, kind, text, rank in p.names]
        if prior is not None:
            rows = [(r[0], r[3], r[4]) for r in prior]
            since = {tuple(r[:8]): r[8] for r in prior}
            if len(prior) == len(declared) == len(since) and set(since) == set(declared):
                # the same declarations (an edit seldom changes a note's names): rows,
                # resolution and labels stay as they are
                return (), ()
            self.con.execute("DELETE FROM names WHERE document_id=?", (doc_id,))
        self.con.executemany(
            f"INSERT INTO names({_NAME_COLUMNS}) VALUES(?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT DO NOTHING", [(*r, since.get(r, ts)) for r in declared])
        if since:
            gone = set(since) - set(declared)
            self.con.executemany(
                f"INSERT INTO names_past({_NAME_COLUMNS}, retracted_at)"
                " VALUES(?,?,?,?,?,?,?,?,?,?)",
                [(*r, since[r], ts) for r in sorted(gone, key=repr)])
        old, new = mention_labels(rows), p.declared
        self._resolve_names({k for k, _, _ in rows} | {k for k, _, _, _ in p.names})
        added, removed = tuple(sorted(new - old)), tuple(sorted(old - new))
        if added or removed:
            self._names_gen += 1
        return added, removed

    def _queue_mentions(self, scope: str, doc_id: int | None, added: Sequence[tuple[str, str]],
                        removed: Sequence[tuple[str, str]], *, source: int | None = None
                        ) -> None:
        if doc_id is not None:
            self._hold("INSERT INTO mention_queue(document_id, scope) VALUES(?, ?)"
                       " ON CONFLICT DO NOTHING", (doc_id, scope))
        source = doc_id if source is None else source
        for row in ([(t, k, 1, source, scope) for t, k in added]
                    + [(t, k, 0, source, scope) for t, k in removed]):
            self._hold("INSERT INTO name_changes(text, key, added, document_id, scope)"
                       " VALUES(?, ?, ?, ?, ?)", row)

    def mentions_done(self, doc_ids: Sequence[int], *, through_change: int | None) -> None:
        # (sent with ``finish``'s first round trip: nothing reads them before the commit)
        if doc_ids:
            self._pending.append(("DELETE FROM mention_queue WHERE document_id = ANY(?)",
                                  (list(doc_ids),)))
        if through_change is not None:
            self._pending.append(("DELETE FROM name_changes WHERE id <= ?", (through_change,)))

    def requeue_mentions(self, rules: str) -> bool:
        self.con.execute(LOCK, (FINISH_LOCK,))
        row = self.con.execute("SELECT value FROM meta WHERE key = 'mention_rules'").fetchone()
        if row is not None and row[0] == rules:
            return False
        self.con.execute("INSERT INTO mention_queue(document_id, scope)"
                         " SELECT id, scope FROM documents WHERE deleted_at IS NULL"
                         " ON CONFLICT DO NOTHING")
        self._names_gen += 1
        self.set_meta("mention_rules", rules)
        self._event("requeue_mentions", reason=f"mention rules {rules}")
        return True

    def _resolve_names(self, keys: Iterable[str]) -> None:
        self._unresolved.update(keys)

    # ------------------------------------------------------------ facts

    def _entities(self, scope: str, refs: Mapping[str, str],
                  also: tuple[str, Sequence[object] | None] | None = None
                  ) -> tuple[dict[str, int], Result | None]:
        """Reference key -> entity id for the keys of ``refs`` as written in ``scope``,
        creating the name entities that are new (once, whoever else creates them); and
        the result of the read ``also``, sent in the same round trip as the first."""
        known = self._entity_ids
        keyed = {k: entity_key(scope, k) for k in refs}
        missing = sorted({e for e in keyed.values() if e not in known})
        more: Result | None = None
        if missing:
            found_sql = "SELECT key, id, orphan FROM entities WHERE key = ANY(?)"
            if also is None:
                found = self._read(found_sql, (missing,)).fetchall()
            else:
                first, more = self._reads([(found_sql, (missing,)), also])
                found = first.fetchall()
            known.update((k, i) for k, i, _ in found)
            adopted = [i for _, i, orphan in found if orphan]
            if adopted:
                self._refresh_entity_fts(adopted)
            new = sorted((e, k) for k, e in keyed.items() if e not in known)
            if new:
                ts = now_iso()
                ids = self.tx.ids("entities", len(new))
                rows = [(eid, e, name_iri(k[5:], scope), refs[k], k[5:])
                        for eid, (e, k) in zip(ids, new, strict=True)]
                made = dict(self.con.execute(
                    "INSERT INTO entities(id, key, kind, scope, iri, label, name_key, created_at)"
                    " SELECT r.id, r.key, 'name', ?, r.iri, r.label, r.name_key, ?"
                    " FROM unnest(?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[])"
                    " AS r(id, key, iri, label, name_key) ORDER BY r.key"
                    " ON CONFLICT (key) DO NOTHING RETURNING key, id",
                    (scope, ts, *([r[i] for r in rows] for i in range(5)))).rows)
                known.update(made)
                mine = [r for r in rows if r[1] in made]
                # (a folder's name is no words to search: ``_index_entities``)
                self._name_fts.extend((r[0], scope, r[3]) for r in mine
                                      if not is_folder_key(r[4]))
                self._new_names.update(r[0] for r in mine)
                if len(made) < len(rows):  # another writer made these meanwhile
                    theirs = [r[1] for r in rows if r[1] not in made]
                    got = self.con.execute("SELECT key, id FROM entities WHERE key = ANY(?)",
                                           (theirs,)).fetchall()
                    known.update((k, i) for k, i in got)
                    self._refresh_entity_fts(i for _, i in got)
                self._resolve_names(k[5:] for _, k in new)
        if also is not None and more is None:
            more = self._read(*also)
        return {k: known[e] for k, e in keyed.items()}, more

    def _diff_facts(self, scope: str, doc_id: int, version_id: int, note_id: int,
                    facts: Sequence[FactParts], refs: Mapping[str, str], chunk_ids: list[int],
                    ts: str, *, mentions: bool = False, extracted: bool = False,
                    fresh: bool = False,
                    reason: str = "source edited") -> tuple[int, int, int, set[int]]:
        # Three owners inside one document: its own structure, the mentions found in it
        # and the facts a model extracted from its chunks; each diff sees only its own.
        owned = ("extractor = 'mention'" if mentions else "extractor = 'llm'" if extracted
                 else "extractor NOT IN ('mention', 'llm')")
        # (the document's live facts read in the entities' round trip)
        ids, got = self._entities(scope, refs, None if fresh else (
            "SELECT fact_key, id, version_id, chunk_id, line_start, line_end,"
            " supporting_text, value, confidence, trust, extractor, extractor_version"
            f" FROM facts WHERE document_id=? AND retracted_at IS NULL AND {owned}", (doc_id,)))
        live: dict[str, tuple[Any, ...]] = {} if got is None else {r[0]: r[1:] for r in got}
        own = note_key(doc_id)
        given: dict[str, FactParts] = {}
        for f in facts:
            key = fact_key(own if f.subject is None else f.subject, f.predicate,
                           own if f.obj is None else f.obj, f.tail)
            if key not in given:
                given[key] = f
        diff = diff_facts(live, given)
        updates: list[tuple[object, ...]] = []
        for key in diff.keep:
            f, row = given[key], live[key]
            r = f.row
            cols = (version_id, chunk_ids[f.chunk] if f.chunk >= 0 else None, *f.cite, r[1],
                    r[6], r[7], r[12], r[13])
            if cols != row[1:]:
                updates.append((*cols, row[0]))
        ours = (scope, doc_id, version_id, self.actor, ts)
        inserts: list[tuple[object, ...]] = []
        touched: set[int] = set()
        for key in diff.add:
            f = given[key]
            subj, obj = f.subject, f.obj
            chunk_id = chunk_ids[f.chunk] if f.chunk >= 0 else NO_ID
            subj_id = note_id if subj is None else ids[subj]
            obj_id = NO_ID if not f.entity else note_id if obj is None else ids[obj]
            inserts.append(_fact_row((0, key, subj_id, obj_id, chunk_id) + ours + f.row)[1:])
            touched.add(subj_id)
        gone: list[int] = [live[key][0] for key in diff.retract]
        for row in inserts:  # (sent with the next read or the event: ``_flush``)
            self._hold(_FACT_INSERT_NEXT, row)
        if updates:
            # (one statement for all: an edit keeps most of a note's facts, each moved to
            # the new version; a statement each was a third of an edit's statements)
            self._hold(_FACTS_MOVE, [list(c) for c in zip(*updates, strict=True)])
        if gone:
            touched |= self._retract_ids(gone, ts, reason)
        return len(inserts), len(gone), len(diff.keep), touched

    def _retract_ids(self, fact_ids: Sequence[int], ts: str, reason: str) -> set[int]:
        subjects: set[int] = set()
        for subject, name in self._read(
                "SELECT f.subject_id, CASE e.kind WHEN 'name' THEN e.id END FROM facts f"
                " LEFT JOIN entities e ON e.id = f.object_id AND e.scope = f.scope"
                " WHERE f.id = ANY(?)", (list(fact_ids),)):
            subjects.add(subject)
            if name is not None:
                subjects.add(name)
        self._hold("UPDATE facts SET retracted_at=?, retract_reason=? WHERE id = ANY(?)"
                   " AND retracted_at IS NULL", (ts, reason, list(fact_ids)))
        return subjects

    def _refresh_entity_fts(self, entity_ids: Iterable[int]) -> None:
        self._stale_fts.update(entity_ids)

    def _index_reads(self, ids: list[int]) -> list[tuple[str, Sequence[object] | None]]:
        """What ``_index_entities`` reads of the entities ``ids``."""
        return [
            ("SELECT entity_id, label, aliases, literals, dl FROM entity_fts"
             " WHERE entity_id = ANY(?)", (ids,)),
            # id -> label, kind, scope, since when its text stood
            ("SELECT id, label, kind, scope, COALESCE(indexed_at, created_at) FROM entities"
             " WHERE id = ANY(?)", (ids,)),
            *self._entity_text_reads(ids)]

    def _index_entities(self, ids: list[int], got: Sequence[Result], new: Iterable[int] = ()
                        ) -> tuple[list[tuple[str, int, str]], int, int]:
        """Index the entities' labels, names and literals for search, or take them out
        when nothing is left to find them by (as the SQLite writer's ``_index_entity``, a
        statement for all of them, not one each); return what the notes' labels spell by
        their initials (initials, id, scope), and the rows and tokens the index gained.
        A text replaced by another, or by none, goes to ``entity_past`` with the time it
        stood (``new``: entities created in this transaction, whose text stood no time).
        ``got``: the results of ``_index_reads(ids)``.

        An entity whose text is what its row already holds is left as it is (its row,
        postings, initials and counts would come back the same): an edit's note is
        nearly always that."""
        if not ids:
            return [], 0, 0
        old = {int(r[0]): (str(r[1]), str(r[2]), str(r[3])) for r in got[0].rows}
        old_dl = {int(r[0]): int(r[4]) for r in got[0].rows}
        found = {r[0]: (r[1], r[2], r[3], r[4]) for r in got[1].rows}
        texts = self._entity_texts(ids, found, got[2:])
        changed = [i for i in ids if old.get(i) != texts.get(i)]
        if not changed:
            return [], 0, 0
        gone = [i for i in changed if i in old]
        rows, tokens = -len(gone), -sum(old_dl[i] for i in gone)
        self._pending += [
            ("DELETE FROM entity_initials WHERE entity_id = ANY(?)", (changed,)),
            (stats.entity_delta(-1), (gone,)),  # (counted out before they go)
            ("WITH t AS (DELETE FROM entity_fts WHERE entity_id = ANY(?) RETURNING tsv)"
             " DELETE FROM entity_postings WHERE entity_id = ANY(?) AND lexeme"
             " = ANY(ARRAY(SELECT DISTINCT unnest(tsvector_to_array(tsv)) FROM t))",
             (gone, gone))] if gone else [
            ("DELETE FROM entity_initials WHERE entity_id = ANY(?)", (changed,))]
        if not self._keep_index_times:  # (an import's rebuild: the rows' own times stand)
            ts, fresh = now_iso(), set(new)
            self._pending += [(
                "INSERT INTO entity_past(entity_id, scope, label, aliases, literals,"
                " recorded_at, retired_at) VALUES(?,?,?,?,?,?,?)",
                (i, found[i][2], *old[i], found[i][3], ts)) for i in gone
                if i not in fresh and i in found]
            moved = [i for i in changed if i in texts]
            if moved:
                self._pending.append(("UPDATE entities SET indexed_at = ? WHERE id = ANY(?)",
                                      (ts, moved)))
        keep = [i for i in changed if i in texts]
        if not keep:
            return [], rows, tokens
        made = self._send([
            ("WITH t AS (INSERT INTO entity_fts(entity_id, scope, label, aliases, literals)"
             " SELECT * FROM unnest(?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[])"
             " RETURNING dl) SELECT COUNT(*), COALESCE(SUM(dl), 0) FROM t",
             (keep, [found[i][2] for i in keep], [texts[i][0] for i in keep],
              [texts[i][1] for i in keep], [texts[i][2] for i in keep]))])[0].fetchone()
        self._pending += [(ENTITY_POSTINGS_INSERT, (keep,)), (stats.entity_delta(1), (keep,))]
        rows, tokens = rows + int(made[0]), tokens + int(made[1])
        spelled = [(short, i, found[i][2]) for i in keep if found[i][1] == "note"
                   for short in label_initials(found[i][0])]
        return spelled, rows, tokens

    @staticmethod
    def _entity_text_reads(ids: list[int]) -> list[tuple[str, Sequence[object] | None]]:
        """What ``_entity_texts`` reads of the entities ``ids``: folder names, the names
        they are found by, which name entities no live fact refers to any more (marked
        orphans as read), and their literal values."""
        return [
            # a folder's name is how its notes find their page: no words to search it by
            ("SELECT id FROM entities WHERE id = ANY(?) AND kind = 'name'"
             " AND name_key LIKE '%/'", (ids,)),
            ("SELECT DISTINCT entity_id, text FROM names WHERE entity_id = ANY(?)"
             " AND kind NOT LIKE 'folder%' ORDER BY 1, 2", (ids,)),
            # (a row written only where its mark changes)
            (f"WITH s AS (SELECT id, NOT ({NAME_REFERRED}) AS o FROM entities"
             " WHERE id = ANY(?) AND kind = 'name'), u AS (UPDATE entities e SET orphan = s.o"
             " FROM s WHERE e.id = s.id AND e.orphan IS DISTINCT FROM s.o) SELECT id, o FROM s",
             (ids,)),
            ("SELECT e.id, v.value FROM entities e CROSS JOIN LATERAL (SELECT id, value"
             " FROM facts WHERE subject_id = e.id AND scope = e.scope AND retracted_at IS NULL"
             " AND object_id IS NULL AND review <> 'rejected' ORDER BY id LIMIT 200) v"
             " WHERE e.id = ANY(?) ORDER BY e.id, v.id", (ids,))]

    @staticmethod
    def _entity_texts(ids: list[int], found: dict[int, tuple[Any, ...]], read: Sequence[Result]
                      ) -> dict[int, tuple[str, str, str]]:
        """What each entity is found by (label, names, literal values); an entity with
        nothing left to find it by is not there. ``found``: id -> label, kind, scope;
        ``read``: the results of ``_entity_text_reads``."""
        folders = {r[0] for r in read[0].rows}
        aliases: dict[int, list[str]] = {}
        for eid, t in read[1].rows:
            aliases.setdefault(eid, []).append(t)
        orphans = {r[0] for r in read[2].rows if r[1]}
        keep = [i for i in ids if i in found and i not in orphans and i not in folders
                and not (found[i][1] == "note" and not aliases.get(i))]
        if not keep:
            return {}
        literals: dict[int, list[str]] = {}
        for eid, value in read[3].rows:
            literals.setdefault(eid, []).append(value)
        return {i: (str(found[i][0]), " ".join(aliases.get(i, ())),
                    " ".join(literals.get(i, ()))) for i in keep}

    def claim_mentions(self, doc_ids: Sequence[int], *, wait: bool) -> list[int]:
        """Take the documents' locks (those ``_apply_owned`` takes) before their text is
        read for mentions, so what is read is what the lock holds until commit; without
        ``wait``, only those no other writer holds. Why: every writer's mention pass takes
        the queued documents, among them the ones other writers just wrote and are
        finding mentions in themselves; each waited for those and then did the work
        again (~3 passes an edit with 8 writers at once). The holder reads after the last
        commit of the document (a write of it waits for the lock too), so its work is
        the same."""
        ids = sorted(set(doc_ids))
        todo = [d for d in ids if _lock_key("doc", d) not in self._locked]
        if not todo:
            return ids
        with map_driver_errors("cannot claim mention work"):
            if wait:  # (in order, one after the other: as ``_apply_owned`` takes them)
                self.con.pipeline([(LOCK, ("\x1f" + _lock_key("doc", d),)) for d in todo])
                got = set(todo)
            else:
                got = {int(r[0]) for r in self.con.execute(
                    "SELECT d FROM unnest(?::bigint[], ?::text[]) AS x(d, k) WHERE"
                    " pg_try_advisory_xact_lock(hashtextextended(current_schema() || k, 0))",
                    (todo, ["\x1f" + _lock_key("doc", d) for d in todo])).rows}
        self._locked.update(_lock_key("doc", d) for d in got)
        return [d for d in ids if d in got or d not in todo]

    def apply_mentions(self, doc_id: int, drafts: Sequence[FactDraft]) -> tuple[int, int]:
        """Diff a live document's ``mentions`` facts against ``drafts``: (added, retracted)."""
        return self._apply_owned(doc_id, drafts, extracted=False)

    def apply_extracted(self, doc_id: int, drafts: Sequence[FactDraft]) -> tuple[int, int]:
        """Diff a live document's model-extracted facts (extractor ``llm``) against
        ``drafts``: (added, retracted). Each draft's span must lie in a live chunk."""
        return self._apply_owned(doc_id, drafts, extracted=True)

    def _retract_unchunked(self, doc_id: int, chunk_ids: Sequence[int], ts: str
                           ) -> tuple[int, set[int]]:
        """Retract the document's ``llm`` facts whose chunk is not among ``chunk_ids``:
        how many, and the entities touched."""
        gone = [int(r[0]) for r in self._read(
            "SELECT id FROM facts WHERE document_id = ? AND retracted_at IS NULL"
            " AND extractor = 'llm' AND (chunk_id IS NULL OR chunk_id <> ALL(?::bigint[]))",
            (doc_id, list(chunk_ids)))]
        return len(gone), (self._retract_ids(gone, ts, "source edited") if gone else set())

    def _apply_owned(self, doc_id: int, drafts: Sequence[FactDraft], *, extracted: bool
                     ) -> tuple[int, int]:
        # (the document's row and live chunks read in the lock's round trip)
        doc, live = self._lock("doc", doc_id, reads=[
            ("SELECT d.scope, d.version_id, e.id FROM documents d JOIN entities e"
             " ON e.key = 'doc:' || d.id AND e.scope = d.scope WHERE d.id = ?"
             " AND d.deleted_at IS NULL", (doc_id,)),
            ("SELECT id, line_start FROM chunks WHERE document_id = ? AND live ORDER BY ord",
             (doc_id,))])
        row = doc.fetchone()
        if row is None:
            return 0, 0
        scope, version_id, note_id = row
        chunks = live.fetchall()
        starts = [c[1] for c in chunks]
        pieces = [0] * len(starts)
        for i in range(1, len(starts)):
            if starts[i] == starts[i - 1]:
                pieces[i] = pieces[i - 1] + 1
        added, retracted, _, touched = self._diff_facts(
            scope, doc_id, version_id, note_id, prepare_facts(drafts, starts, pieces),
            name_refs(drafts), [c[0] for c in chunks], now_iso(), mentions=not extracted,
            extracted=extracted)
        if extracted:  # literal values an entity is found by
            self._refresh_entity_fts(touched)
        if added or retracted:
            self._event("extracted" if extracted else "mentions", scope=scope,
                        document_id=doc_id,
                        detail={"added": added, "retracted": retracted})
        self._flush()  # (the kept facts moved, when nothing was added or retracted)
        return added, retracted

    # ------------------------------------------------------------ deletes

    def delete(self, scope: str, path: str, *, reason: str = "source deleted") -> Deleted | None:
        """Tombstone a document and retract every fact it owned."""
        self._lock(scope, path)
        row = self.con.execute(
            "SELECT id FROM documents WHERE scope=? AND path=? AND deleted_at IS NULL",
            (scope, path)).fetchone()
        if row is None:
            return None
        doc_id, ts = int(row[0]), now_iso()
        self._lock("doc", doc_id)
        self.con.execute("UPDATE documents SET deleted_at=?, updated_at=? WHERE id=?",
                         (ts, ts, doc_id))
        self._drop_orphan_vectors(self._retire_chunks(self._live_chunk_rows(doc_id), ts)[0])
        self.con.execute(f"INSERT INTO names_past({_NAME_COLUMNS}, retracted_at)"
                         f" SELECT {_NAME_COLUMNS}, ? FROM names WHERE document_id=?",
                         (ts, doc_id))
        names = [(r[0], r[1], r[2]) for r in self.con.execute(
            "DELETE FROM names WHERE document_id=? RETURNING key, kind, text", (doc_id,))]
        self._resolve_names([k for k, _, _ in names])
        labels = tuple(sorted(mention_labels(names)))
        if labels:
            self._names_gen += 1
        self._queue_mentions(scope, None, (), labels, source=doc_id)
        live = [r[0] for r in self.con.execute(
            "SELECT id FROM facts WHERE document_id=? AND retracted_at IS NULL ORDER BY id",
            (doc_id,))]
        touched = self._retract_ids(live, ts, reason) if live else set()
        note = self.con.execute("SELECT id FROM entities WHERE key=?",
                                (note_key(doc_id),)).fetchone()
        self._refresh_entity_fts(touched | ({note[0]} if note else set()))
        self._event("delete", scope=scope, document_id=doc_id, reason=reason,
                    detail={"path": path, "retracted": len(live)})
        return Deleted(path, len(live), names_removed=labels)

    # ------------------------------------------------------------ single facts

    def assert_fact(self, scope: str, draft: FactDraft, *, reason: str | None = None) -> int:
        """Record one fact asserted through the API (owned by no document)."""
        ids, _ = self._entities(scope, name_refs([draft]))
        (f,) = prepare_facts([draft], [])
        if f.subject is None:
            raise ValueError("an asserted fact needs a named subject")
        subj_id = ids[f.subject]
        obj_id = NO_ID if not f.entity else 0 if f.obj is None else ids[f.obj]
        key = fact_key(f.subject, f.predicate, note_key(0) if f.obj is None else f.obj, f.tail)
        ts, fid = now_iso(), self.tx.next_id("facts")
        row = (*f.row[:9], None, None, *f.row[11:])
        self.con.execute(_FACT_INSERT, _fact_row((fid, key, subj_id, obj_id, NO_ID, scope, None,
                                                  None, self.actor, ts, *row)))
        self._refresh_entity_fts({subj_id})
        self._event("assert", scope=scope, fact_id=fid, reason=reason,
                    detail={"predicate": draft.predicate})
        return fid

    def retract_fact(self, fact_id: int, *, reason: str) -> bool:
        row = self.con.execute("SELECT scope FROM facts WHERE id=? AND retracted_at IS NULL"
                               " FOR UPDATE", (fact_id,)).fetchone()
        if row is None:
            return False
        touched = self._retract_ids([fact_id], now_iso(), reason)
        self._refresh_entity_fts(touched)
        self._event("retract", scope=row[0], fact_id=fact_id, reason=reason)
        return True

    def _event(self, action: str, *, scope: str | None = None, document_id: int | None = None,
               fact_id: int | None = None, reason: str | None = None,
               detail: dict[str, object] | None = None) -> None:
        self._flush((
            "INSERT INTO events(at, actor, action, scope, document_id, fact_id, reason, detail)"
            " VALUES(?,?,?,?,?,?,?,?)",
            (now_iso(), self.actor, action, scope, document_id, fact_id, reason,
             json.dumps(detail, ensure_ascii=False) if detail else None)))
