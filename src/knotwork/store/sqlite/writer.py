"""Apply document versions and fact assertions inside one write transaction.

The ownership rule lives here: a document's new fact drafts are diffed against the live
facts it owns by ``fact_key`` (what the fact says: subject, predicate, object, valid time,
qualifiers). Removed ones are retracted, new ones inserted, unchanged ones kept with their
``recorded_at`` while their citation moves to the new version's line span and chunk, and
how the new version states them (value as written, confidence, trust, extractor) with it.

A document arrives prepared (``prepare.py``: its row values computed before the
transaction), so the work here is the part that needs the rows as they stand: ids, the
diff, and the SQL. The full-text indexes are written in ``finish``, once per transaction:
FTS5 writes out what it holds at every savepoint, so indexing each document's chunks
inside its own savepoint made a segment per document, and merging those cost more than
indexing the text.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import groupby
from operator import itemgetter
from typing import Any, cast

from ...domain.ids import entity_key, fact_key, name_iri, note_iri, note_key
from ...domain.names import is_folder_key
from ...domain.ownership import diff_facts
from ...domain.words import label_initials
from ...errors import Conflict
from ...types import (
    Applied,
    Deleted,
    FactDraft,
    ParsedDocument,
    Unchanged,
    mention_labels,
)
from .. import Prepared
from ..records import FileCheck
from . import scoped
from .connection import Transaction, map_driver_errors, now_iso
from .prepare import (
    FACT_COLUMNS,
    NO_ID,
    FactParts,
    PreparedDocument,
    name_refs,
    prepare,
    prepare_facts,
)
from .schema import NAME_REFERRED, NAME_WINNER
from .trust import TrustWrites

# the NULLIFs are explained in prepare.py
_FACT_INSERT = (f"INSERT INTO facts({FACT_COLUMNS}) VALUES(?,?,?,NULLIF(?, ''),NULLIF(?, ''),"
                "?,?,?,?,?,?,?,NULLIF(?, 0),NULLIF(?, 0),NULLIF(?, 0),NULLIF(?, 0),"
                "?,?,?,?,?,?,?,?)")
# by op: (index kind, statement); ``{t}`` is the chunk's scope's index (``scoped.py``)
_CHUNK_FTS = (("chunk_fts", "INSERT INTO {t}({t}, rowid, context, text) VALUES('delete',?,?,?)"),
              ("chunk_fts", "INSERT INTO {t}(rowid, context, text) VALUES(?,?,?)"),
              # a retired chunk joins the history index (as-of searches of past prose)
              ("chunk_past_fts", "INSERT INTO {t}(rowid, context, text) VALUES(?,?,?)"))
_NAME_COLUMNS = "key, document_id, entity_id, kind, text, rank, path, recorded_at"


_KIND_NAMES = {"file": "a vault file", "api": "an agent's document"}

# A past version's text shorter than this stays as it is: compressing it saves little.
PACK_MIN = 256

# Chunks taken out of the live set (edits, deletes) before the uncited ones are dropped
# by themselves: as many as the store has live chunks, and never fewer than this.
COMPACT_MIN = 10_000


_ADD_INITIALS = "INSERT OR IGNORE INTO entity_initials(initials, entity_id) VALUES(?, ?)"


def _chunk_parts(row: Sequence[object]) -> tuple[object, ...]:
    """What a chunk row of ``Writer._live_chunk_rows`` says, as ``prepare`` gives a new
    chunk: (ord, heading, context, text, line_start, line_end, text_hash)."""
    return tuple(row[1:8])


def _same_chunks(old: Sequence[Sequence[object]], p: PreparedDocument) -> list[int] | None:
    """The ids of a document's live chunks ``old`` (in order), when they are exactly the
    chunks ``p`` would write (text, heading, context, lines); else None."""
    if len(old) != len(p.chunks) or any(
            _chunk_parts(r) != tuple(c) for r, c in zip(old, p.chunks, strict=True)):
        return None
    return [int(cast(int, r[0])) for r in old]


class Writer(TrustWrites):
    """Write operations over one open ``Transaction``."""

    def __init__(self, tx: Transaction, *, actor: str) -> None:
        self.tx = tx
        self.con: sqlite3.Connection = tx.con
        self.actor = actor
        self._entity_ids: dict[str, int] = {}
        # Derived state recomputed once per transaction, in ``finish``: a batch of 500 new
        # notes links to the same names again and again, and both are idempotent.
        self._unresolved: set[str] = set()
        self._new_names: set[int] = set()  # name entities this transaction created
        self._stale_fts: set[int] = set()
        self._has_vectors: bool | None = None
        # Full-text writes held for ``finish`` (see the module docstring), in order:
        # (1, chunk id, context, text) indexes a chunk, (0, ...) takes it out.
        self._chunk_fts: list[tuple[int, int, str, str]] = []
        self._name_fts: list[tuple[str, int, str]] = []  # new name entities: scope, id, label
        self._fts_numbers: dict[str, int] = {}  # scope -> its full-text indexes' number
        # Chunk counts kept in ``meta``, changed by this transaction, written in ``finish``
        # with one read and one write: live chunks (IDF needs their number on every query)
        # and chunks taken out of the live set since the uncited ones were last dropped.
        self._live_delta = 0
        self._retired = 0
        # an import's rebuild: entity texts are indexed again as they stood, with the times
        # the imported rows give (no history is written, no time moved)
        self._keep_index_times = False

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """Make the next block atomic on its own: a failure undoes only that block."""
        held = len(self._chunk_fts), len(self._name_fts)
        counts = self._live_delta, self._retired
        try:
            with self.tx.savepoint():
                yield
        except BaseException:
            # the block's rows are gone, and their ids will be handed out again
            del self._chunk_fts[held[0]:], self._name_fts[held[1]:]
            self._live_delta, self._retired = counts
            self._entity_ids.clear()
            raise

    def finish(self) -> None:
        """Bring derived state up to date before the transaction commits.

        Name resolution and the entity search index are recomputed from the rows as they
        stand, so work queued by a savepoint that was rolled back later is harmless.
        """
        with map_driver_errors("cannot finish the write"):
            self._write_chunk_fts()
            self._chunk_fts.clear()
            for scope, rows in groupby(sorted(self._name_fts), key=itemgetter(0)):
                t = scoped.table("entity_fts", self._fts_number(scope))
                self.con.executemany(f"INSERT INTO {t}(rowid, label, aliases, literals)"
                                     " VALUES(?,?,'','')", [r[1:] for r in rows])
            self._name_fts.clear()
            if self._unresolved:
                self._resolve(sorted(self._unresolved))
                self._unresolved.clear()
            new_names, self._new_names = self._new_names, set()
            stale, self._stale_fts = sorted(self._stale_fts), set()
            ts = now_iso() if stale else ""
            for i in range(0, len(stale), 500):  # their labels' initials, said again below
                part = stale[i:i + 500]
                self.con.execute(
                    f"DELETE FROM entity_initials WHERE entity_id IN ({','.join('?' * len(part))})",
                    part)
            spelled: list[tuple[str, int]] = []
            for eid in stale:
                spelled.extend((short, eid) for short in self._index_entity(
                    eid, ts, new=eid in new_names))
            if spelled:
                self.con.executemany(_ADD_INITIALS, spelled)
            if self._live_delta or self._retired:
                self._count_chunks(self._live_delta, self._retired)
                self._live_delta = self._retired = 0

    def _fts_number(self, scope: str) -> int:
        """The number of ``scope``'s full-text indexes (``scoped.ensure``), remembered for
        the transaction (only ``finish`` asks, outside any savepoint)."""
        if scope not in self._fts_numbers:
            self._fts_numbers[scope] = scoped.ensure(self.con, scope)
        return self._fts_numbers[scope]

    def _write_chunk_fts(self) -> None:
        """The held full-text writes of chunks, in order, each in its scope's index."""
        if not self._chunk_fts:
            return
        scope_of = scoped.scopes_of_chunks(self.con, {op[1] for op in self._chunk_fts})
        number = {s: self._fts_number(s) for s in sorted(set(scope_of.values()))}

        def target(op: tuple[int, int, str, str]) -> tuple[int, str]:
            kind, sql = _CHUNK_FTS[op[0]]
            return op[0], sql.format(t=scoped.table(kind, number[scope_of[op[1]]]))

        for (_, sql), ops in groupby(self._chunk_fts, key=target):
            self.con.executemany(sql, [op[1:] for op in ops])

    def _resolve(self, keys: list[str]) -> None:
        """Re-point the name entities of ``keys`` to the notes that win them now, and
        record each name that came to reach another note, or none: a name change of no
        mention label (``label`` 0), whose ``document_id`` is the document of the note it
        reached before (None if none) and ``added`` whether it reaches a note now.

        Why record them: a document mentions no note it links to, by any of the note's
        names, so what it mentions changes where one of its links comes to reach another
        note, and only there. The mention pass redoes the documents linking these names
        (``sync._linkers_to_redo``); a name that other notes declare too, and that still
        reaches the same note, costs nothing ("README" in a folder of READMEs).
        """
        changed = self.con.execute(
            f"SELECT id, name_key, resolved_id, winner FROM (SELECT id, name_key, resolved_id,"
            f" {NAME_WINNER} AS winner FROM entities WHERE name_key IN"
            " (SELECT value FROM json_each(?))) WHERE resolved_id IS NOT winner",
            (json.dumps(keys),)).fetchall()
        if not changed:
            return
        self.con.executemany("UPDATE entities SET resolved_id = ? WHERE id = ?",
                             [(winner, eid) for eid, _, _, winner in changed])
        # (a name entity this transaction created is linked only by documents it wrote,
        # whose mentions are found again anyway)
        moved = [r for r in changed if r[0] not in self._new_names]
        if not moved:
            return
        before = {r[0]: r[1] for r in self.con.execute(
            "SELECT id, document_id FROM entities WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted({old for _, _, old, _ in moved if old is not None})),))}
        rows: list[tuple[str, str, int, int | None]] = sorted(
            {(key, key, int(winner is not None), before.get(old))
             for _, key, old, winner in moved}, key=lambda r: (r[1], r[2], r[3] or 0))
        self.con.executemany(
            "INSERT INTO name_changes(text, key, added, document_id, label) VALUES(?, ?, ?, ?, 0)",
            rows)

    def _count_chunks(self, live_delta: int, retired: int) -> None:
        """Bring the chunk counts in ``meta`` up to date; drop the uncited chunks of past
        versions once as many chunks have been retired since the last time as the store
        has live ones (``COMPACT_MIN`` at least).

        Why a count in ``meta``: IDF needs the live chunk count on every query, and
        counting them is O(chunks); a store written before the count existed gets it from
        one ``COUNT``. Why that pace: ``drop_uncited_chunks`` is O(facts + chunks), run
        once per Θ(live chunks) retired, so O(1) amortised per edit, and the chunks of
        past versions stay within about the room of the live ones without anyone running
        ``compact``.
        """
        counts = dict(self.con.execute(
            "SELECT key, value FROM meta WHERE key IN ('live_chunks', 'retired_chunks')"))
        live = (int(counts["live_chunks"]) + live_delta if "live_chunks" in counts else
                self.con.execute("SELECT COUNT(*) FROM chunks WHERE live = 1").fetchone()[0])
        retired += int(counts.get("retired_chunks", 0))
        self.set_meta("live_chunks", str(live))
        self.set_meta("retired_chunks", str(retired))
        if retired >= max(live, COMPACT_MIN):
            self.drop_uncited_chunks()

    # ------------------------------------------------------------ documents

    def apply(self, scope: str, doc: ParsedDocument | Prepared, *, force: bool = False,
              rename_from: str | None = None) -> Applied | Unchanged:
        """Write ``doc`` as the current version of ``(scope, doc.path)``.

        Idempotent: the content hash is compared inside the transaction, so two writers
        that saw the same edit cannot apply it twice. ``doc`` may come prepared
        (``SQLiteStore.prepare``), so that the work needing no database is done before
        the transaction.
        """
        p = (doc if isinstance(doc, PreparedDocument)
             else prepare(doc if isinstance(doc, ParsedDocument) else doc.doc))
        # (a savepoint rolled back forgets the entity ids it handed out: see ``savepoint``)
        with map_driver_errors(f"cannot apply {p.doc.path}"):
            return self._apply(scope, p, force=force, rename_from=rename_from)

    def _apply(self, scope: str, p: PreparedDocument, *, force: bool,
               rename_from: str | None) -> Applied | Unchanged:
        con, ts, doc = self.con, now_iso(), p.doc
        find = ("SELECT id, content_hash, source_kind, extraction, version_id FROM documents"
                " WHERE scope=? AND path=? AND deleted_at IS NULL")
        row = con.execute(find, (scope, rename_from or doc.path)).fetchone()
        if row is None and rename_from is not None:
            # another writer applied this rename first: it is an ordinary apply now
            rename_from = None
            row = con.execute(find, (scope, doc.path)).fetchone()
        self._check_owner(scope, doc, row)
        # the same text read under the same rules changes nothing; under other rules (an
        # upgrade, another chunk size) it is extracted again, and so with ``force``
        reread = row is not None and rename_from is None and row[1] == doc.content_hash
        if reread and (row[3] or "") == doc.extraction and not force:
            return Unchanged(doc.path)
        created = row is None
        # fresh: a new document id, so no chunks, names or facts to compare against
        doc_id, fresh = (int(row[0]), False) if row else self._resurrect_or_create(scope, doc, ts)
        # Read again into the very chunks it has (new rules, the same chunk size): the
        # version and its chunks stay, so an upgrade adds no copy of the vault's text.
        # Chunks cut otherwise make a new version, as an edit does: whoever found a
        # document's mentions in its old chunks sees the version move.
        old_chunks = [] if fresh else self._live_chunk_rows(doc_id)
        kept_chunks = _same_chunks(old_chunks, p) if reread else None
        if kept_chunks is not None:
            version_id = int(row[4])
        else:
            version_id = self.tx.next_id("versions")
            con.execute("INSERT INTO versions(id, document_id, path, content_hash, text,"
                        " recorded_at, actor) VALUES(?,?,?,?,?,?,?)",
                        (version_id, doc_id, doc.path, doc.content_hash, doc.text, ts,
                         self.actor))
        warned = [[i.line, i.reason] for i in doc.issues if not i.fatal]
        con.execute("UPDATE documents SET path=?, title=?, doc_type=?, version_id=?,"
                    " content_hash=?, size=?, mtime_ns=?, updated_at=?, source_kind=?,"
                    " checked_ns=NULL, warnings=?, extraction=NULLIF(?, '') WHERE id=?",
                    (doc.path, doc.title, doc.doc_type, version_id, doc.content_hash, doc.size,
                     doc.mtime_ns, ts, doc.source_kind, json.dumps(warned) if warned else None,
                     doc.extraction, doc_id))
        note_id = self._note_entity(scope, doc_id, doc, ts, fresh=fresh)
        chunk_ids = (kept_chunks if kept_chunks is not None
                     else self._replace_chunks(doc_id, version_id, p, old_chunks, ts,
                                               moved=rename_from is not None))
        names_added, names_removed = self._replace_names(doc_id, note_id, p, ts, fresh=fresh)
        self._queue_mentions(doc_id, names_added, names_removed)
        # model-extracted facts (``apply_extracted``) whose chunk this version no longer
        # holds go with it: the next ``extract`` sends only those chunks again
        llm_gone, llm_touched = (0, set()) if fresh else self._retract_unchunked(
            doc_id, chunk_ids, ts)
        # a fact the same text no longer gives was dropped by the rules, not by an edit
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
        """Refuse a document that would take over another kind's path or note.

        A vault file and an agent's document (``ingest_document``) share the path space:
        an agent sending a vault note's path replaced that note in the store (the file
        untouched, so nothing put it back), and ``services/Traefik`` beside the file
        ``services/Traefik.md`` made a second note with the same IRI.
        """
        if row is not None:
            if row[2] != doc.source_kind:
                raise Conflict(f"{doc.path} is held by {_KIND_NAMES.get(str(row[2]), row[2])}"
                               f"; {_KIND_NAMES.get(doc.source_kind, doc.source_kind)} cannot"
                               " replace it")
            return
        other = self.con.execute(
            "SELECT d.path, d.source_kind FROM entities e JOIN documents d ON d.id = e.document_id"
            " WHERE e.iri = ? AND e.kind = 'note' AND d.scope = ? AND d.deleted_at IS NULL"
            " LIMIT 1", (note_iri(scope, doc.path), scope)).fetchone()
        if other is not None:
            raise Conflict(f"{doc.path} would name the same note as {other[0]}"
                           f" ({_KIND_NAMES.get(str(other[1]), other[1])})")

    def _resurrect_or_create(self, scope: str, doc: ParsedDocument, ts: str
                             ) -> tuple[int, bool]:
        """The id of the path's tombstone brought back, else of a new row; and which."""
        tomb = self.con.execute(
            "SELECT id FROM documents WHERE scope=? AND path=? AND deleted_at IS NOT NULL"
            " ORDER BY id DESC LIMIT 1", (scope, doc.path)).fetchone()
        if tomb:
            self.con.execute("UPDATE documents SET deleted_at=NULL WHERE id=?", (tomb[0],))
            return int(tomb[0]), False
        doc_id = self.tx.next_id("documents")
        self.con.execute(
            "INSERT INTO documents(id, scope, path, source_kind, title, doc_type, created_at,"
            " updated_at) VALUES(?,?,?,?,?,?,?,?)",
            (doc_id, scope, doc.path, doc.source_kind, doc.title, doc.doc_type, ts, ts))
        return doc_id, True

    def _note_entity(self, scope: str, doc_id: int, doc: ParsedDocument, ts: str, *,
                     fresh: bool) -> int:
        key = note_key(doc_id)
        iri = note_iri(scope, doc.path)
        row = None if fresh else self.con.execute(
            "SELECT id FROM entities WHERE key=?", (key,)).fetchone()
        if row:
            self.con.execute("UPDATE entities SET iri=?, label=? WHERE id=?",
                             (iri, doc.title, row[0]))
            return int(row[0])
        ent_id = self.tx.next_id("entities")
        self.con.execute(
            "INSERT INTO entities(id, key, kind, scope, iri, label, document_id, created_at)"
            " VALUES(?,?,?,?,?,?,?,?)", (ent_id, key, "note", scope, iri, doc.title, doc_id, ts))
        return ent_id

    def _replace_chunks(self, doc_id: int, version_id: int, p: PreparedDocument,
                        old: Sequence[Sequence[object]], ts: str, *, moved: bool = False
                        ) -> list[int]:
        """The chunks of the new version, in order: a chunk cut exactly as before (the same
        place, heading, text and lines) stays as it is, with its id, index entries and
        vector; the others are retired and new ones written.

        Why: appending a line to a note changed one chunk but rewrote them all (a full-text
        delete and insert each, and a copy of every chunk's text per save). A kept chunk
        keeps the version it was first written with: its text was there since. ``moved``
        (a rename) writes every chunk anew, so each one's version gives the new path.
        ``old``: the document's live chunks (``_live_chunk_rows``).
        """
        same = {} if moved else {_chunk_parts(r): int(cast(int, r[0])) for r in old}
        ids: list[int | None] = [same.get(tuple(c)) for c in p.chunks]
        kept = {cid for cid in ids if cid is not None}
        retired = self._retire_chunks([r for r in old if r[0] not in kept], ts)
        new = [i for i, cid in enumerate(ids) if cid is None]
        first = self.tx.take_ids("chunks", len(new))
        for n, i in enumerate(new):
            ids[i] = first + n
        rows = [(ids[i], version_id, doc_id, *p.chunks[i]) for i in new]
        self.con.executemany(
            "INSERT INTO chunks(id, version_id, document_id, ord, heading, context, text,"
            " line_start, line_end, text_hash) VALUES(?,?,?,?,?,?,?,?,?,?)", rows)
        self._chunk_fts.extend((1, cast(int, r[0]), r[5], r[6]) for r in rows)
        self._live_delta += len(rows)
        # a chunk of the same text elsewhere keeps its vector: same hash, no new embedding
        have = {r[0] for r in self.con.execute(
            f"SELECT text_hash FROM embeddings WHERE text_hash IN ({','.join('?' * len(rows))})",
            [r[9] for r in rows])} if rows and self._vectors_exist() else set()
        reuse = [(r[0],) for r in rows if r[9] in have]
        if reuse:
            self.con.executemany("UPDATE chunks SET embedded = 1 WHERE id = ?", reuse)
            self.con.executemany("INSERT INTO vector_log(chunk_id, added) VALUES(?, 1)", reuse)
        self._drop_orphan_vectors(retired)
        return [int(cid) for cid in ids if cid is not None]

    def _vectors_exist(self) -> bool:
        """Whether any vector is stored (once per transaction: a first ingest has none)."""
        if self._has_vectors is None:
            self._has_vectors = self.con.execute(
                "SELECT EXISTS(SELECT 1 FROM embeddings)").fetchone()[0] == 1
        return self._has_vectors

    def _retire_chunks(self, old: Sequence[Sequence[object]], ts: str) -> list[str]:
        """Take chunks out of the live set and the live indexes, into the history index
        (retired at ``ts``); return their text hashes.

        ``old``: rows of ``chunks`` (id, ord, heading, context, text, line_start, line_end,
        text_hash, embedded), as ``_live_chunk_rows`` reads them.
        """
        if not old:
            return []
        self._chunk_fts.extend((0, int(cast(int, r[0])), str(r[3]), str(r[4])) for r in old)
        self._chunk_fts.extend((2, int(cast(int, r[0])), str(r[3]), str(r[4])) for r in old)
        ids = [r[0] for r in old]
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            self.con.execute("UPDATE chunks SET live=0, retired_at=? WHERE id IN"
                             f" ({','.join('?' * len(part))})", [ts, *part])
        self._live_delta -= len(old)
        self._retired += len(old)
        self.con.executemany("INSERT INTO vector_log(chunk_id, added) VALUES(?, 0)",
                             [(r[0],) for r in old if r[8]])
        return [str(r[7]) for r in old]

    def _live_chunk_rows(self, doc_id: int) -> list[tuple[object, ...]]:
        """A document's live chunks in order, as ``_retire_chunks`` takes them."""
        return self.con.execute(
            "SELECT id, ord, heading, context, text, line_start, line_end, text_hash, embedded"
            " FROM chunks WHERE document_id=? AND live=1 ORDER BY ord", (doc_id,)).fetchall()

    def _drop_orphan_vectors(self, hashes: Sequence[str]) -> None:
        """Delete vectors no live chunk uses any more: a delete leaves no vector behind."""
        self.con.executemany(
            "DELETE FROM embeddings WHERE text_hash = ? AND NOT EXISTS"
            " (SELECT 1 FROM chunks c WHERE c.text_hash = embeddings.text_hash AND c.live = 1)",
            [(h,) for h in set(hashes)])

    def put_vectors(self, items: Sequence[tuple[str, bytes]]) -> int:
        """Store vectors by chunk text hash and attach them to the live chunks using them."""
        self.con.executemany("INSERT OR REPLACE INTO embeddings(text_hash, vector) VALUES(?, ?)",
                             items)
        if items:
            # a random name for this store's vectors, set once: a vector sidecar written
            # for another store (even one whose log happens to look the same) is refused
            self.con.execute("INSERT OR IGNORE INTO meta(key, value)"
                             " VALUES('vector_epoch', lower(hex(randomblob(16))))")
        self._has_vectors = self._has_vectors or bool(items)
        attached = 0
        for text_hash, _ in items:
            ids = [r[0] for r in self.con.execute(
                "SELECT id FROM chunks WHERE text_hash = ? AND live = 1 AND embedded = 0",
                (text_hash,))]
            if ids:
                marks = ",".join("?" * len(ids))
                self.con.execute(f"UPDATE chunks SET embedded = 1 WHERE id IN ({marks})", ids)
                self.con.executemany("INSERT INTO vector_log(chunk_id, added) VALUES(?, 1)",
                                     [(i,) for i in ids])
                attached += len(ids)
        return attached

    def clear_vectors(self) -> None:
        """Forget every vector (a change of embedding model)."""
        self.con.execute("INSERT INTO vector_log(chunk_id, added)"
                         " SELECT id, 0 FROM chunks WHERE live = 1 AND embedded = 1")
        self.con.execute("UPDATE chunks SET embedded = 0 WHERE embedded = 1")
        self.con.execute("DELETE FROM embeddings")
        self._event("clear_vectors")

    def pack_versions(self, *, after: int = 0, limit: int = 500) -> tuple[int, int | None]:
        """Compress the text of up to ``limit`` past versions not compressed yet, those
        with an id past ``after``; return how many were, and the last id looked at (None
        when there were no more). In parts: a write holds the store's lock.

        The text moves to ``text_z`` (zlib). Only current versions' text is read as a
        matter of course (``document_texts``); a past one is unpacked on request
        (``Reader.version_text``), whole: the record of what the note said loses nothing.
        A short text, or one that does not shrink, stays as it is. Why not as each version
        is superseded: a row shrunk in place frees no page (the next versions are appended
        elsewhere), so the room comes back only when the file is rewritten (``compact
        --vacuum``), and compressing costs ~0.1 ms a note.
        """
        rows = self.con.execute(
            "SELECT v.id, v.text FROM versions v JOIN documents d ON d.id = v.document_id"
            " WHERE v.id > ? AND v.text_z IS NULL AND v.id != d.version_id"
            f" AND length(v.text) >= {PACK_MIN} ORDER BY v.id LIMIT ?", (after, limit)
        ).fetchall()
        packed = []
        for version_id, text in rows:
            raw = text.encode()
            z = zlib.compress(raw)
            if len(z) < len(raw):
                packed.append((z, version_id))
        self.con.executemany("UPDATE versions SET text='', text_z=? WHERE id=?", packed)
        return len(packed), (int(rows[-1][0]) if rows else None)

    def drop_uncited_chunks(self) -> int:
        """Delete the chunks of past versions that no fact cites; return how many.

        Nothing reads such a chunk: search indexes live chunks only, and a fact names the
        chunk it cites, so the chunks kept are every one a fact (live or retracted) points
        at. The versions keep their whole text. The newest chunk row stays in any case:
        ids are handed out past the largest, and an id must never be handed out twice.
        O(facts + chunks): it runs on request (``knotwork compact``), and by itself once
        enough chunks were retired since the last time (``_count_chunks``).
        """
        con = self.con
        con.execute("CREATE TEMP TABLE IF NOT EXISTS cited_chunks(id INTEGER PRIMARY KEY)")
        con.execute("DELETE FROM temp.cited_chunks")
        con.execute("INSERT OR IGNORE INTO temp.cited_chunks"
                    " SELECT chunk_id FROM facts WHERE chunk_id IS NOT NULL")
        dropped = ("live = 0 AND id < (SELECT MAX(id) FROM chunks)"
                   " AND id NOT IN (SELECT id FROM temp.cited_chunks)")
        for scope, n in scoped.numbers(con):
            t = scoped.table("chunk_past_fts", n)
            con.execute(f"INSERT INTO {t}({t}, rowid, context, text) SELECT 'delete', c.id,"
                        f" c.context, c.text FROM chunks c WHERE c.id IN (SELECT id FROM chunks"
                        f" WHERE {dropped}) AND {scoped.CHUNK_SCOPE} = ?", (scope,))
        removed = con.execute(f"DELETE FROM chunks WHERE {dropped}").rowcount
        con.execute("DELETE FROM temp.cited_chunks")
        self.set_meta("retired_chunks", "0")
        if removed:
            self._event("compact", reason="chunks of past versions that no fact cites",
                        detail={"chunks_removed": removed})
        return removed

    def set_meta(self, key: str, value: str) -> None:
        self.con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", (key, value))

    def refresh_files(self, scope: str, files: Sequence[FileCheck]) -> int:
        """Record that files still hold their documents' versions. A document whose
        version changed meanwhile (its hash differs) is left alone. Bookkeeping of the
        folder, not of knowledge: no event.
        """
        cur = self.con.executemany(
            "UPDATE documents SET size=?, mtime_ns=?, checked_ns=? WHERE scope=? AND path=?"
            " AND deleted_at IS NULL AND content_hash=?",
            [(size, mtime, checked, scope, path, digest)
             for path, digest, size, mtime, checked in files])
        return int(cur.rowcount)

    def _replace_names(self, doc_id: int, note_id: int, p: PreparedDocument, ts: str, *,
                       fresh: bool = False
                       ) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
        """Replace the names a document declares; return the mention labels (``declared``)
        added and removed. Links resolve by every name, so every changed key is resolved.

        A declaration the new version makes as the old one did keeps its ``recorded_at``;
        one it no longer makes goes to ``names_past``, retracted at ``ts``."""
        rows: list[tuple[str, str, str]] = []
        since: dict[tuple[object, ...], str] = {}
        if not fresh:
            prior = self.con.execute(f"SELECT {_NAME_COLUMNS} FROM names WHERE document_id=?",
                                     (doc_id,)).fetchall()
            rows = [(r[0], r[3], r[4]) for r in prior]
            self.con.execute("DELETE FROM names WHERE document_id=?", (doc_id,))
            since = {tuple(r[:7]): r[7] for r in prior}
        declared = [(key, doc_id, note_id, kind, text, rank, p.doc.path)
                    for key, kind, text, rank in p.names]
        self.con.executemany(
            f"INSERT OR IGNORE INTO names({_NAME_COLUMNS}) VALUES(?,?,?,?,?,?,?,?)",
            [(*r, since.get(r, ts)) for r in declared])
        if since:
            gone = set(since) - set(declared)
            self.con.executemany(
                f"INSERT INTO names_past({_NAME_COLUMNS}, retracted_at) VALUES(?,?,?,?,?,?,?,?,?)",
                [(*r, since[r], ts) for r in sorted(gone, key=repr)])
        old, new = mention_labels(rows), p.declared
        self._resolve_names({k for k, _, _ in rows} | {k for k, _, _, _ in p.names})
        added, removed = tuple(sorted(new - old)), tuple(sorted(old - new))
        if added or removed:
            self._bump_names_generation()
        return added, removed

    def _queue_mentions(self, doc_id: int | None, added: Sequence[tuple[str, str]],
                        removed: Sequence[tuple[str, str]], *, source: int | None = None
                        ) -> None:
        """Record the mention work a change causes, in the change's own transaction:
        ``doc_id``'s own mentions, and the labels ``source`` (the document whose names
        changed) added and removed."""
        if doc_id is not None:
            self.con.execute("INSERT OR IGNORE INTO mention_queue(document_id) VALUES(?)",
                             (doc_id,))
        source = doc_id if source is None else source
        self.con.executemany(
            "INSERT INTO name_changes(text, key, added, document_id) VALUES(?, ?, ?, ?)",
            [(t, k, 1, source) for t, k in added] + [(t, k, 0, source) for t, k in removed])

    def claim_mentions(self, doc_ids: Sequence[int], *, wait: bool) -> list[int]:
        """All of them: this transaction holds the store's one write lock already."""
        return sorted(set(doc_ids))

    def mentions_done(self, doc_ids: Sequence[int], *, through_change: int | None) -> None:
        """Clear finished mention work: these documents, and name changes up to an id."""
        self.con.executemany("DELETE FROM mention_queue WHERE document_id = ?",
                             [(d,) for d in doc_ids])
        if through_change is not None:
            self.con.execute("DELETE FROM name_changes WHERE id <= ?", (through_change,))

    def requeue_mentions(self, rules: str) -> bool:
        # looked at under the write lock: another process may have done it since
        row = self.con.execute("SELECT value FROM meta WHERE key = 'mention_rules'").fetchone()
        if row is not None and row[0] == rules:
            return False
        self.con.execute("INSERT OR IGNORE INTO mention_queue(document_id)"
                         " SELECT id FROM documents WHERE deleted_at IS NULL")
        self._bump_names_generation()  # every process reloads its labels (their rules too)
        self.set_meta("mention_rules", rules)
        self._event("requeue_mentions", reason=f"mention rules {rules}")
        return True

    def _bump_names_generation(self) -> None:
        """Count name changes, so each process knows when its label table is stale."""
        self.con.execute(
            "INSERT INTO meta(key, value) VALUES('names_gen', '1') ON CONFLICT(key)"
            " DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)")

    def _resolve_names(self, keys: Iterable[str]) -> None:
        """Re-point the name entities for ``keys`` to the note that now wins each name
        (in ``finish``). Obsidian's rule: an exact path first, then the shortest path;
        aliases last."""
        self._unresolved.update(keys)

    # ------------------------------------------------------------ facts

    def _entities(self, scope: str, refs: Mapping[str, str]) -> dict[str, int]:
        """Reference key -> entity id for the keys of ``refs`` (key -> label) as written in
        ``scope`` (``entity_key``), creating the name entities that are new."""
        known = self._entity_ids  # entity key -> id, for the whole transaction
        keyed = {k: entity_key(scope, k) for k in refs}
        missing = list(dict.fromkeys(e for e in keyed.values() if e not in known))
        if missing:
            # one cached statement for any number of keys (json_each), not one per key
            found = self.con.execute(
                "SELECT key, id, orphan FROM entities WHERE key IN"
                " (SELECT value FROM json_each(?))", (json.dumps(missing),)).fetchall()
            # json_each cuts a text at a NUL, so a key holding one was never found and its
            # second assertion failed the UNIQUE key (a 500): those are looked up one by one
            for e in (e for e in missing if "\x00" in e):
                found += self.con.execute("SELECT key, id, orphan FROM entities WHERE key = ?",
                                          (e,)).fetchall()
            known.update((k, i) for k, i, _ in found)
            adopted = [i for _, i, orphan in found if orphan]
            if adopted:  # referred to again: back in the index (``_index_entity`` clears it)
                self._refresh_entity_fts(adopted)
            new = [(k, e) for k, e in keyed.items() if e not in known]
            if new:
                ts, first = now_iso(), self.tx.take_ids("entities", len(new))
                rows = [(eid, e, "name", scope, name_iri(k[5:], scope), refs[k], k[5:], ts)
                        for eid, (k, e) in enumerate(new, first)]
                known.update((r[1], r[0]) for r in rows)
                self.con.executemany(
                    "INSERT INTO entities(id, key, kind, scope, iri, label, name_key, created_at)"
                    " VALUES(?,?,?,?,?,?,?,?)", rows)
                # (a folder's name is no words to search: ``_index_entity``)
                self._name_fts.extend((scope, r[0], r[5]) for r in rows
                                      if not is_folder_key(r[6]))
                self._new_names.update(r[0] for r in rows)
                self._resolve_names(k[5:] for k, _ in new)
        return {k: known[e] for k, e in keyed.items()}

    def _diff_facts(self, scope: str, doc_id: int, version_id: int, note_id: int,
                    facts: Sequence[FactParts], refs: Mapping[str, str], chunk_ids: list[int],
                    ts: str, *, mentions: bool = False, extracted: bool = False,
                    fresh: bool = False,
                    reason: str = "source edited") -> tuple[int, int, int, set[int]]:
        ids = self._entities(scope, refs)
        # Three owners inside one document: its own structure, the mentions found in it
        # (recomputed when other notes' names change) and the facts a model extracted from
        # its chunks (``apply_extracted``); each diff sees only its own facts.
        owned = ("extractor = 'mention'" if mentions else "extractor = 'llm'" if extracted
                 else "extractor NOT IN ('mention', 'llm')")
        # each live fact's id, and the columns an unchanged statement's row may change
        live: dict[str, tuple[Any, ...]] = {}  # (id, *columns)
        if not fresh:
            live = {r[0]: r[1:] for r in self.con.execute(
                "SELECT fact_key, id, version_id, chunk_id, line_start, line_end,"
                " supporting_text, value, confidence, trust, extractor, extractor_version"
                f" FROM facts WHERE document_id=? AND retracted_at IS NULL"
                f" AND {owned}", (doc_id,))}
        own = note_key(doc_id)
        given: dict[str, FactParts] = {}  # each statement at its first place
        for f in facts:
            key = fact_key(own if f.subject is None else f.subject, f.predicate,
                           own if f.obj is None else f.obj, f.tail)
            if key not in given:
                given[key] = f
        diff = diff_facts(live, given)
        updates: list[tuple[object, ...]] = []
        for key in diff.keep:
            # the same statement: its citation and how it was read move on (a row
            # already so is not written again: a note read again into the same chunks,
            # a mention pass finding what it found before)
            f, row = given[key], live[key]
            r = f.row
            cols = (version_id, chunk_ids[f.chunk] if f.chunk >= 0 else None, *f.cite, r[1],
                    r[6], r[7], r[12], r[13])
            if cols != row[1:]:
                updates.append((*cols, row[0]))
        fid = self.tx.take_ids("facts", 0)  # the first id, taken below for as many as inserted
        ours = (scope, doc_id, version_id, self.actor, ts)
        inserts: list[tuple[object, ...]] = []
        touched: set[int] = set()
        for key in diff.add:
            f = given[key]
            subj, obj = f.subject, f.obj
            chunk_id = chunk_ids[f.chunk] if f.chunk >= 0 else NO_ID
            subj_id = note_id if subj is None else ids[subj]
            obj_id = NO_ID if not f.entity else note_id if obj is None else ids[obj]
            inserts.append((fid, key, subj_id, obj_id, chunk_id) + ours + f.row)
            touched.add(subj_id)
            fid += 1
        self.tx.take_ids("facts", len(inserts))
        gone: list[int] = [live[key][0] for key in diff.retract]
        self.con.executemany(_FACT_INSERT, inserts)
        self.con.executemany(
            "UPDATE facts SET version_id=?, chunk_id=?, line_start=?, line_end=?,"
            " supporting_text=?, value=?, confidence=?, trust=?, extractor=?,"
            " extractor_version=? WHERE id=?", updates)
        if gone:
            touched |= self._retract_ids(gone, ts, reason)
        return len(inserts), len(gone), len(diff.keep), touched

    def _retract_ids(self, fact_ids: Sequence[int], ts: str, reason: str) -> set[int]:
        """Retract facts by id; return the subjects whose indexed literals may change and
        the names they pointed at (which may now be orphaned)."""
        subjects: set[int] = set()
        for i in range(0, len(fact_ids), 500):
            part = list(fact_ids[i:i + 500])
            marks = ",".join("?" * len(part))
            for subject, name in self.con.execute(
                    "SELECT f.subject_id, CASE e.kind WHEN 'name' THEN e.id END FROM facts f"
                    f" LEFT JOIN entities e ON e.id = f.object_id WHERE f.id IN ({marks})", part):
                subjects.add(subject)
                if name is not None:
                    subjects.add(name)
            self.con.execute(f"UPDATE facts SET retracted_at=?, retract_reason=? WHERE id IN"
                             f" ({marks}) AND retracted_at IS NULL", [ts, reason, *part])
        return subjects

    def _refresh_entity_fts(self, entity_ids: Iterable[int]) -> None:
        """Re-index label, names and live literal values of the entities (in ``finish``)."""
        self._stale_fts.update(entity_ids)

    def _index_entity(self, eid: int, ts: str, *, new: bool = False) -> tuple[str, ...]:
        """Index an entity's label, names and literals for search, or take it out of the
        index when nothing is left to find it by; return what a note's label spells by its
        initials if it stays (``entity_initials``, written by the caller).

        The text it replaces, if other, goes to the history index (``entity_past``) with
        the time it stood; ``new``: created in this transaction (its text stood no time).
        """
        found = self.con.execute("SELECT scope FROM entities WHERE id=?", (eid,)).fetchone()
        number = self._fts_number(found[0]) if found else 0
        fts, past_fts = (scoped.table(k, number) for k in ("entity_fts", "entity_past_fts"))
        old = self.con.execute("SELECT e.label, e.aliases, e.literals,"
                               f" COALESCE(n.indexed_at, n.created_at) FROM {fts} e"
                               " JOIN entities n ON n.id = e.rowid WHERE e.rowid=?",
                               (eid,)).fetchone()
        self.con.execute(f"DELETE FROM {fts} WHERE rowid=?", (eid,))
        text = self._entity_text(eid)
        if self._keep_index_times:
            pass
        elif old is not None and tuple(old[:3]) == text:
            pass  # the same text stands on
        elif text is not None:
            self.con.execute("UPDATE entities SET indexed_at=? WHERE id=?", (ts, eid))
        if old is not None and tuple(old[:3]) != text and not new \
                and not self._keep_index_times:
            past = self.tx.next_id("entity_past")
            self.con.execute("INSERT INTO entity_past(id, entity_id, label, aliases, literals,"
                             " recorded_at, retired_at) VALUES(?,?,?,?,?,?,?)",
                             (past, eid, *old, ts))
            self.con.execute(f"INSERT INTO {past_fts}(rowid, label, aliases, literals)"
                             " VALUES(?,?,?,?)", (past, *old[:3]))
        if text is None:
            return ()
        self.con.execute(f"INSERT INTO {fts}(rowid, label, aliases, literals)"
                         " VALUES(?,?,?,?)", (eid, *text))
        # a note's label only: a name resolves to its note, and one that names no note is
        # rarely asked about by its acronym (a cold ingest makes a name per link target)
        kind = self.con.execute("SELECT kind FROM entities WHERE id=?", (eid,)).fetchone()[0]
        return label_initials(text[0]) if kind == "note" else ()

    def _entity_text(self, eid: int) -> tuple[str, str, str] | None:
        """What an entity is found by (label, names, literal values), or None when nothing
        is left to find it by."""
        row = self.con.execute("SELECT label, kind, name_key FROM entities WHERE id=?",
                               (eid,)).fetchone()
        if row is None:
            return None  # created in a savepoint that was rolled back
        # (a folder's name is how its notes find their page, no words to search it by)
        aliases = " ".join(r[0] for r in self.con.execute(
            "SELECT DISTINCT text FROM names WHERE entity_id=? AND kind NOT LIKE 'folder%'",
            (eid,)))
        if row[1] == "note" and not aliases:
            return None  # a deleted note: nothing left to find it by
        if row[1] == "name":
            orphan = self.con.execute(
                f"SELECT NOT ({NAME_REFERRED}) FROM entities WHERE id=?", (eid,)).fetchone()[0]
            self.con.execute("UPDATE entities SET orphan=? WHERE id=?", (orphan, eid))
            if orphan or is_folder_key(row[2]):
                # nothing refers to it any more (a fresh ingest would not have it), or it
                # is a folder's name: found through its page, if it has one
                return None
        literals = " ".join(r[0] for r in self.con.execute(
            "SELECT value FROM facts WHERE subject_id=? AND retracted_at IS NULL"
            " AND object_id IS NULL AND review != 'rejected' LIMIT 200", (eid,)))
        return str(row[0]), aliases, literals

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
        live = set(chunk_ids)
        gone = [fid for fid, cid in self.con.execute(
            "SELECT id, chunk_id FROM facts WHERE document_id=? AND retracted_at IS NULL"
            " AND extractor = 'llm'", (doc_id,)) if cid not in live]
        return len(gone), (self._retract_ids(gone, ts, "source edited") if gone else set())

    def _apply_owned(self, doc_id: int, drafts: Sequence[FactDraft], *, extracted: bool
                     ) -> tuple[int, int]:
        row = self.con.execute(
            "SELECT d.scope, d.version_id, e.id FROM documents d JOIN entities e"
            " ON e.key = 'doc:' || d.id WHERE d.id = ? AND d.deleted_at IS NULL",
            (doc_id,)).fetchone()
        if row is None:
            return 0, 0
        scope, version_id, note_id = row
        chunks = self.con.execute("SELECT id, line_start FROM chunks WHERE document_id = ?"
                                  " AND live = 1 ORDER BY ord", (doc_id,)).fetchall()
        starts = [c[1] for c in chunks]
        # The store keeps no chunk's column: the pieces of a cut line are numbered in their
        # order instead, as the mention pass numbers the piece a mention was found in.
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
        return added, retracted

    # ------------------------------------------------------------ deletes

    def delete(self, scope: str, path: str, *, reason: str = "source deleted") -> Deleted | None:
        """Tombstone a document and retract every fact it owned."""
        row = self.con.execute(
            "SELECT id FROM documents WHERE scope=? AND path=? AND deleted_at IS NULL",
            (scope, path)).fetchone()
        if row is None:
            return None
        doc_id, ts = int(row[0]), now_iso()
        self.con.execute("UPDATE documents SET deleted_at=?, updated_at=? WHERE id=?",
                         (ts, ts, doc_id))
        self._drop_orphan_vectors(self._retire_chunks(self._live_chunk_rows(doc_id), ts))
        names = self.con.execute("SELECT key, kind, text FROM names WHERE document_id=?",
                                 (doc_id,)).fetchall()
        self.con.execute(f"INSERT INTO names_past({_NAME_COLUMNS}, retracted_at)"
                         f" SELECT {_NAME_COLUMNS}, ? FROM names WHERE document_id=?",
                         (ts, doc_id))
        self.con.execute("DELETE FROM names WHERE document_id=?", (doc_id,))
        self._resolve_names([k for k, _, _ in names])
        labels = tuple(sorted(mention_labels(names)))
        if labels:
            self._bump_names_generation()
        self._queue_mentions(None, (), labels, source=doc_id)
        live = [r[0] for r in self.con.execute(
            "SELECT id FROM facts WHERE document_id=? AND retracted_at IS NULL", (doc_id,))]
        touched = self._retract_ids(live, ts, reason)
        note = self.con.execute("SELECT id FROM entities WHERE key=?",
                                (note_key(doc_id),)).fetchone()
        self._refresh_entity_fts(touched | ({note[0]} if note else set()))
        self._event("delete", scope=scope, document_id=doc_id, reason=reason,
                    detail={"path": path, "retracted": len(live)})
        return Deleted(path, len(live), names_removed=labels)

    # ------------------------------------------------------------ single facts

    def assert_fact(self, scope: str, draft: FactDraft, *, reason: str | None = None) -> int:
        """Record one fact asserted through the API (owned by no document)."""
        ids = self._entities(scope, name_refs([draft]))
        (f,) = prepare_facts([draft], [])
        if f.subject is None:
            raise ValueError("an asserted fact needs a named subject")
        # owned by no document: an object that is "the note" is note 0
        subj_id = ids[f.subject]
        obj_id = NO_ID if not f.entity else 0 if f.obj is None else ids[f.obj]
        key = fact_key(f.subject, f.predicate, note_key(0) if f.obj is None else f.obj, f.tail)
        ts, fid = now_iso(), self.tx.next_id("facts")
        # no document, version, chunk or line span: only the supporting text is kept
        row = (*f.row[:9], None, None, *f.row[11:])
        self.con.execute(_FACT_INSERT, (fid, key, subj_id, obj_id, NO_ID, scope, None, None,
                                        self.actor, ts, *row))
        self._refresh_entity_fts({subj_id})
        self._event("assert", scope=scope, fact_id=fid, reason=reason,
                    detail={"predicate": draft.predicate})
        return fid

    def retract_fact(self, fact_id: int, *, reason: str) -> bool:
        """Retract one live fact; False when it is unknown or already retracted."""
        row = self.con.execute("SELECT scope FROM facts WHERE id=? AND retracted_at IS NULL",
                               (fact_id,)).fetchone()
        if row is None:
            return False
        touched = self._retract_ids([fact_id], now_iso(), reason)
        self._refresh_entity_fts(touched)
        self._event("retract", scope=row[0], fact_id=fact_id, reason=reason)
        return True

    def set_review(self, fact_id: int, status: str, *, reason: str | None) -> bool:
        """Record a review decision on a fact (the writer's actor is the reviewer).

        A rejected literal leaves its subject's search index; an approved one returns."""
        row = self.con.execute("SELECT scope, subject_id, review FROM facts WHERE id=?",
                               (fact_id,)).fetchone()
        if row is None:
            return False
        self.con.execute("UPDATE facts SET review=? WHERE id=?", (status, fact_id))
        self._refresh_entity_fts({int(row[1])})
        self._event("review", scope=row[0], fact_id=fact_id, reason=reason,
                    detail={"status": status, "was": row[2]})
        return True

    def _event(self, action: str, *, scope: str | None = None, document_id: int | None = None,
               fact_id: int | None = None, reason: str | None = None,
               detail: dict[str, object] | None = None) -> None:
        self.con.execute(
            "INSERT INTO events(at, actor, action, scope, document_id, fact_id, reason, detail)"
            " VALUES(?,?,?,?,?,?,?,?)",
            (now_iso(), self.actor, action, scope, document_id, fact_id, reason,
             json.dumps(detail, ensure_ascii=False) if detail else None))

