"""Ordered schema migrations for the SQLite store.

Each migration is a list of statements applied in one transaction; ``meta.schema_version``
records how many have run. A store written by a newer knotwork is refused.

Design notes (why the shape):
- ``versions`` is the raw-source layer: immutable text per content change.
- ``facts`` rows are never deleted: retracting sets ``retracted_at``; partial indexes cover
  live rows only, so an edit or a query touches indexed live rows, never the history.
- Link targets are stored as *name* entities (``entities.kind = 'name'``); ``names`` maps
  the names a note declares to the note's entity, and ``entities.resolved_id`` caches the
  winner per name. A note appearing, vanishing or gaining an alias updates only the name
  rows it declares: no other document's facts are rewritten.
"""

from __future__ import annotations

from .find import CHANGE_ACTIONS
from .scoped import REGISTRY, split

MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
        """CREATE TABLE documents(
            id INTEGER PRIMARY KEY,
            scope TEXT NOT NULL,
            path TEXT NOT NULL,
            source_kind TEXT NOT NULL DEFAULT 'file',
            title TEXT NOT NULL,
            doc_type TEXT NOT NULL,
            version_id INTEGER,
            content_hash TEXT,
            size INTEGER NOT NULL DEFAULT 0,
            mtime_ns INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            deleted_at TEXT
        )""",
        """CREATE UNIQUE INDEX documents_live_path ON documents(scope, path)
            WHERE deleted_at IS NULL""",
        """CREATE INDEX documents_path ON documents(scope, path)""",
        """CREATE TABLE versions(
            id INTEGER PRIMARY KEY,
            document_id INTEGER NOT NULL REFERENCES documents(id),
            path TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            text TEXT NOT NULL,
            recorded_at TEXT NOT NULL,
            actor TEXT NOT NULL
        )""",
        """CREATE INDEX versions_document ON versions(document_id)""",
        """CREATE TABLE chunks(
            id INTEGER PRIMARY KEY,
            version_id INTEGER NOT NULL REFERENCES versions(id),
            document_id INTEGER NOT NULL REFERENCES documents(id),
            ord INTEGER NOT NULL,
            heading TEXT NOT NULL,
            context TEXT NOT NULL,
            text TEXT NOT NULL,
            line_start INTEGER NOT NULL,
            line_end INTEGER NOT NULL,
            text_hash TEXT NOT NULL,
            live INTEGER NOT NULL DEFAULT 1
        )""",
        """CREATE INDEX chunks_version ON chunks(version_id)""",
        """CREATE INDEX chunks_document_live ON chunks(document_id) WHERE live = 1""",
        """CREATE VIRTUAL TABLE chunk_fts USING fts5(
            context, text, content='chunks', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2')""",
        """CREATE TABLE entities(
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            scope TEXT NOT NULL,
            iri TEXT NOT NULL,
            label TEXT NOT NULL,
            name_key TEXT,
            document_id INTEGER,
            resolved_id INTEGER,
            created_at TEXT NOT NULL
        )""",
        """CREATE INDEX entities_iri ON entities(iri)""",
        """CREATE INDEX entities_name_key ON entities(name_key) WHERE name_key IS NOT NULL""",
        """CREATE INDEX entities_resolved ON entities(resolved_id) WHERE resolved_id IS NOT NULL""",
        """CREATE INDEX entities_document ON entities(document_id) WHERE document_id IS NOT NULL""",
        """CREATE VIRTUAL TABLE entity_fts USING fts5(
            label, aliases, literals, tokenize='porter unicode61 remove_diacritics 2')""",
        """CREATE TABLE names(
            key TEXT NOT NULL,
            document_id INTEGER NOT NULL,
            entity_id INTEGER NOT NULL,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            rank INTEGER NOT NULL,
            path TEXT NOT NULL,
            PRIMARY KEY(key, document_id, kind)
        )""",
        """CREATE INDEX names_document ON names(document_id)""",
        """CREATE INDEX names_entity ON names(entity_id)""",
        """CREATE TABLE facts(
            id INTEGER PRIMARY KEY,
            scope TEXT NOT NULL,
            fact_key TEXT NOT NULL,
            subject_id INTEGER NOT NULL REFERENCES entities(id),
            predicate TEXT NOT NULL,
            object_id INTEGER REFERENCES entities(id),
            value TEXT NOT NULL,
            datatype TEXT,
            qualifiers TEXT,
            valid_from TEXT,
            valid_to TEXT,
            confidence REAL NOT NULL,
            trust TEXT NOT NULL,
            review TEXT NOT NULL,
            document_id INTEGER REFERENCES documents(id),
            version_id INTEGER,
            chunk_id INTEGER,
            line_start INTEGER,
            line_end INTEGER,
            supporting_text TEXT,
            extractor TEXT NOT NULL,
            extractor_version TEXT NOT NULL,
            actor TEXT,
            recorded_at TEXT NOT NULL,
            retracted_at TEXT,
            retract_reason TEXT
        )""",
        # (x, retracted_at) serves both the live view (retracted_at IS NULL) and history
        # (all rows of x) with one index each, instead of a live and a full index apiece.
        """CREATE INDEX facts_subject ON facts(subject_id, retracted_at)""",
        """CREATE INDEX facts_object ON facts(object_id, retracted_at)
            WHERE object_id IS NOT NULL""",
        """CREATE INDEX facts_document_live ON facts(document_id) WHERE retracted_at IS NULL""",
        """CREATE INDEX facts_chunk_live ON facts(chunk_id)
            WHERE retracted_at IS NULL AND chunk_id IS NOT NULL""",
        """CREATE TABLE events(
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            actor TEXT NOT NULL,
            action TEXT NOT NULL,
            scope TEXT,
            document_id INTEGER,
            fact_id INTEGER,
            reason TEXT,
            detail TEXT
        )""",
        """CREATE INDEX events_document ON events(document_id)""",
        """CREATE INDEX events_fact ON events(fact_id) WHERE fact_id IS NOT NULL""",
    ],
]

# 2: vectors. Keyed by the chunk's text hash, so an unchanged chunk is never embedded
# twice; ``vector_log`` lets every process's in-memory index catch up incrementally.
MIGRATIONS.append([
    """CREATE TABLE embeddings(text_hash TEXT PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID""",
    """CREATE TABLE vector_log(seq INTEGER PRIMARY KEY, chunk_id INTEGER NOT NULL,
        added INTEGER NOT NULL)""",
    """ALTER TABLE chunks ADD COLUMN embedded INTEGER NOT NULL DEFAULT 0""",
    """CREATE INDEX chunks_pending ON chunks(id) WHERE live = 1 AND embedded = 0""",
    """CREATE INDEX chunks_hash_live ON chunks(text_hash) WHERE live = 1""",
])

# 3: document frequencies, read to drop query terms that match nearly everything
MIGRATIONS.append([
    """CREATE VIRTUAL TABLE chunk_vocab USING fts5vocab(chunk_fts, 'row')""",
    """CREATE VIRTUAL TABLE entity_vocab USING fts5vocab(entity_fts, 'row')""",
])

# 4: mention work written in the same transaction as the change that causes it, so a
# crash between a sync's structural commit and its mention pass loses no work
MIGRATIONS.append([
    """CREATE TABLE mention_queue(document_id INTEGER PRIMARY KEY)""",
    """CREATE TABLE name_changes(id INTEGER PRIMARY KEY, text TEXT NOT NULL, key TEXT NOT NULL,
        added INTEGER NOT NULL)""",
])

# 5: link expansion reads only the edge index. The subject and object indexes also carry the
# far end, predicate and confidence, so reading a frontier's edges touches no fact row (a
# fact row holds its supporting text; most facts of a note are literals the scan skips).
# The vocabulary views of 3 gave way to capped counts over the full-text index.
MIGRATIONS.append([
    """DROP TABLE chunk_vocab""",
    """DROP TABLE entity_vocab""",
    """DROP INDEX facts_subject""",
    """DROP INDEX facts_object""",
    """CREATE INDEX facts_subject
        ON facts(subject_id, retracted_at, object_id, predicate, confidence)""",
    """CREATE INDEX facts_object
        ON facts(object_id, retracted_at, subject_id, predicate, confidence)
        WHERE object_id IS NOT NULL""",
])

# 6: when a sync last found a file to hold its document's version without writing one (a
# file saved again unchanged, its time moved): with it, that file's size and time are
# trusted again by the next sync instead of it being read on every sync from then on.
# NULL: the version's write (``updated_at``) is the last check.
MIGRATIONS.append([
    """ALTER TABLE documents ADD COLUMN checked_ns INTEGER""",
])

# 7: a name entity no live fact refers to any more is "orphaned": out of the entity search
# index and the pipeline's exact-name matches, as a fresh ingest of the same files would
# not have it (its row stays: history reaches its retracted facts). Existing ones now.
# Whether a live fact still refers to the entity row ``entities`` (as subject or object);
# the writer asks it of one name at a time (``Writer._index_entity``).
NAME_REFERRED = ("EXISTS (SELECT 1 FROM facts f WHERE f.object_id = entities.id"
                 " AND f.retracted_at IS NULL) OR EXISTS (SELECT 1 FROM facts f"
                 " WHERE f.subject_id = entities.id AND f.retracted_at IS NULL)")
MIGRATIONS.append([
    """ALTER TABLE entities ADD COLUMN orphan INTEGER NOT NULL DEFAULT 0""",
    f"""UPDATE entities SET orphan = 1 WHERE kind = 'name' AND NOT ({NAME_REFERRED})""",
    """DELETE FROM entity_fts WHERE rowid IN (SELECT id FROM entities WHERE orphan = 1)""",
])

# 8: each scope has its own name entities (``domain.ids.entity_key``): a link resolves only to
# a note of its own scope. Until now one entity per name served every scope, so a link in
# one scope resolved to another's note. The plain keys become the default scope's; every
# other scope's facts are moved to entities of their own, and all names resolved again.
# ``kw_entity_key``, ``kw_name_iri`` and ``kw_nfc`` are the Python code's own spellings
# (``domain.ids.entity_key``, ``domain.ids.name_iri``, Unicode NFC), registered on the connection
# that migrates (``connection.connect``).
# A name entity points at the note that wins its name among the notes of its own scope
# (Obsidian's rule: an exact path first, then the shortest path; aliases last). The writer
# runs it for the names a transaction touched. The set-based form of
# ``domain.names.name_winner``, tested equal to it (tests/domain/test_names.py).
NAME_WINNER = ("(SELECT n.entity_id FROM names n JOIN documents d ON d.id = n.document_id"
               " WHERE n.key = entities.name_key AND d.scope = entities.scope"
               " ORDER BY n.rank, length(n.path), n.path LIMIT 1)")
RESOLVE_NAMES = f"UPDATE entities SET resolved_id = {NAME_WINNER}"
# The entity ``e`` is not a folder no note is the page of. A note is ``part_of`` its folder's
# name (``ingest.hierarchy``), a key ending in a slash that no link spells; while no note
# declares it, it is no entity to reach, find, count or write a page for. Portable SQL:
# PostgreSQL's store reads it too.
NO_PAGELESS_FOLDER = ("(e.resolved_id IS NOT NULL OR e.name_key IS NULL"
                      " OR e.name_key NOT LIKE '%/')")
# The name row ``n`` is no folder's name, or that of a folder whose notes it is the page of:
# every note declares the folder beside it (``a/x.md``: ``a/x/``), which is worth showing
# only where that folder holds notes and this note won it.
PAGE_OF_NOTES = ("(n.kind NOT LIKE 'folder%' OR EXISTS (SELECT 1 FROM entities f"
                 " WHERE f.name_key = n.key AND f.resolved_id = n.entity_id"
                 " AND NOT f.orphan))")
# after name entities changed in bulk: resolve them all, find the orphans, index the rest
_REINDEX_NAMES = [
    f"""{RESOLVE_NAMES} WHERE kind = 'name'""",
    f"""UPDATE entities SET orphan = NOT ({NAME_REFERRED}) WHERE kind = 'name'""",
    """DELETE FROM entity_fts WHERE rowid IN (SELECT id FROM entities WHERE kind = 'name')""",
    """INSERT INTO entity_fts(rowid, label, aliases, literals)
        SELECT e.id, e.label, '', COALESCE((SELECT group_concat(v, ' ') FROM
            (SELECT f.value AS v FROM facts f WHERE f.subject_id = e.id
             AND f.retracted_at IS NULL AND f.object_id IS NULL LIMIT 200)), '')
        FROM entities e WHERE e.kind = 'name' AND e.orphan = 0""",
]
MIGRATIONS.append([
    """UPDATE entities SET scope = 'default' WHERE kind = 'name'""",
    """INSERT OR IGNORE INTO entities(key, kind, scope, iri, label, name_key, created_at)
        SELECT kw_entity_key(f.scope, e.name_key), 'name', f.scope,
               kw_name_iri(e.name_key, f.scope), e.label, e.name_key, min(f.recorded_at)
        FROM facts f JOIN entities e ON e.id = f.object_id OR e.id = f.subject_id
        WHERE f.scope != 'default' AND e.kind = 'name'
        GROUP BY f.scope, e.id""",
    *(f"""UPDATE facts SET {col} = (SELECT s.id FROM entities e JOIN entities s
            ON s.key = kw_entity_key(facts.scope, e.name_key)
            WHERE e.id = facts.{col})
        WHERE scope != 'default' AND {col} IN (SELECT id FROM entities
            WHERE kind = 'name' AND key = kw_entity_key('default', name_key))"""
      for col in ("object_id", "subject_id")),
    *_REINDEX_NAMES,
])

# 9: name keys are Unicode NFC (``types.name_key``): a link typed as "Café" now resolves to
# a file whose name macOS wrote decomposed. Keys written before are re-keyed; a name whose
# two spellings had two entities keeps the composed one, with the facts of both.
_NFC_KEY = "kw_entity_key({t}.scope, kw_nfc({t}.name_key))"
_DECOMPOSED_TWIN = (f"kind = 'name' AND name_key != kw_nfc(name_key) AND EXISTS (SELECT 1"
                    f" FROM entities t WHERE t.key = {_NFC_KEY.format(t='entities')})")
MIGRATIONS.append([
    """UPDATE OR REPLACE names SET key = kw_nfc(key) WHERE key != kw_nfc(key)""",
    *(f"""UPDATE facts SET {col} = (SELECT t.id FROM entities e JOIN entities t
            ON t.key = {_NFC_KEY.format(t='e')} WHERE e.id = facts.{col})
        WHERE {col} IN (SELECT id FROM entities WHERE {_DECOMPOSED_TWIN})"""
      for col in ("object_id", "subject_id")),
    f"""DELETE FROM entities WHERE {_DECOMPOSED_TWIN}""",
    f"""UPDATE OR IGNORE entities SET key = {_NFC_KEY.format(t='entities')},
            iri = kw_name_iri(kw_nfc(name_key), scope), name_key = kw_nfc(name_key)
        WHERE kind = 'name' AND name_key != kw_nfc(name_key)""",
    *_REINDEX_NAMES,
])

# 10: a document's warnings (malformed frontmatter and the like) as its last version had
# them, JSON [[line, reason], ...]: a sync reports them when it reads the file, ``stats``
# lists them for as long as the note still has them.
MIGRATIONS.append([
    """ALTER TABLE documents ADD COLUMN warnings TEXT""",
])

# 11: mentions are found by new rules: a file name of one lower-case word is no name prose
# mentions a note by when the note is titled otherwise (``types.mention_labels``), a name
# inside a link to a note is the link's, and a mention cites its sentence. Mentions made
# by the old rules go where a sync would take them: every live document waits for its
# mentions to be found again (the next sync does it), and every process reloads its table
# of labels.
MIGRATIONS.append([
    """INSERT OR IGNORE INTO mention_queue(document_id)
        SELECT id FROM documents WHERE deleted_at IS NULL""",
    """INSERT INTO meta(key, value) VALUES('names_gen', '1') ON CONFLICT(key)
        DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)""",
])

# 12: the rules each file document was extracted under (``knotwork.ingest.extraction_key``).
# A sync reads again every file whose document was extracted under other rules, so an
# upgrade's new extraction reaches every note without a rebuild; NULL (every document
# written before) is such a key.
MIGRATIONS.append([
    """ALTER TABLE documents ADD COLUMN extraction TEXT""",
])

# 13: name changes say whose they are, and carry every declaration that changed, not only
# the names prose mentions (``label`` 0): a document mentions no note it links to by any
# of the note's names, so the mention pass looks again at the documents linking a note
# whose names changed, when that can change what they mention (``sync.refresh_mentions``).
MIGRATIONS.append([
    """ALTER TABLE name_changes ADD COLUMN document_id INTEGER""",
    """ALTER TABLE name_changes ADD COLUMN label INTEGER NOT NULL DEFAULT 1""",
])

# 14: a past version's text may be kept compressed (zlib) in ``text_z``, with ``text`` left
# empty (``Writer.pack_versions``, run by ``compact``): only current versions' text is read
# as a matter of course, and history kept a full copy of the note per save.
MIGRATIONS.append([
    """ALTER TABLE versions ADD COLUMN text_z BLOB""",
])

# 15: what each indexed note's label spells by its initials (``domain.words.label_initials``):
# a question that says "HPA" names the note "Horizontal Pod Autoscaler". Kept beside the
# entity search index, by the same writes (``Writer._index_entity``); ``kw_initials`` is
# the Python code's own spelling (``connection.connect``).
MIGRATIONS.append([
    """CREATE TABLE IF NOT EXISTS entity_initials(initials TEXT NOT NULL,
        entity_id INTEGER NOT NULL,
        PRIMARY KEY (initials, entity_id)) WITHOUT ROWID""",
    """CREATE INDEX IF NOT EXISTS entity_initials_entity ON entity_initials(entity_id)""",
    *(f"""INSERT OR IGNORE INTO entity_initials(initials, entity_id)
        SELECT kw_initials(label, {i}), id FROM entities
        WHERE kind = 'note' AND kw_initials(label, {i}) IS NOT NULL
        AND id IN (SELECT rowid FROM entity_fts)"""
      for i in (0, 1)),
])

# 16: trust you can inspect. ``tokens`` holds the API tokens a server accepts besides its
# own ``--token``: only a SHA-256 of each secret, its scopes (JSON list), whether it may
# write, and when it was revoked (rows are kept: the audit log names them). The review
# queue reads live facts awaiting a decision on their own partial index.
MIGRATIONS.append([
    """CREATE TABLE IF NOT EXISTS tokens(
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        secret_hash TEXT NOT NULL UNIQUE,
        scopes TEXT NOT NULL,
        read_only INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT
    )""",
    """CREATE INDEX IF NOT EXISTS facts_review ON facts(review, id)
        WHERE retracted_at IS NULL AND review != 'approved'""",
    """CREATE INDEX IF NOT EXISTS events_at ON events(at)""",
])

# 17: structured reads. ``find`` asks for the entities whose live facts have a predicate
# and value (``status = accepted``): live facts by predicate, then value with ASCII case
# folded, as ``FindQueries`` compares them. ``recent_changes`` reads the events of
# documents' content by time (not the other events, which outnumber them); the action list
# is spelled as the query spells it, or SQLite will not use the partial index.
MIGRATIONS.append([
    """CREATE INDEX IF NOT EXISTS facts_predicate_live
        ON facts(predicate, value COLLATE NOCASE) WHERE retracted_at IS NULL""",
    f"""CREATE INDEX IF NOT EXISTS events_document_change ON events(at)
        WHERE action IN {CHANGE_ACTIONS}""",
])

# 18: history you can search (``context(as_of=t)``). Every row an as-of question reads has a
# record-time interval, kept rather than deleted when it is replaced, as facts have:
# - a chunk its version's ``recorded_at`` and ``retired_at`` (when a later version or a
#   delete took it out of the live set); retired chunks are searched in ``chunk_past_fts``
#   (external content: their text is the chunk row's), so the live index ``chunk_fts``
#   keeps only live rows and a live query reads what it read before;
# - a name declaration its ``recorded_at``; a declaration a later version or a delete
#   dropped moves to ``names_past`` with its ``retracted_at``;
# - an entity's search text (``entity_fts``: label, names, literals) the time it was
#   indexed as it stands (``entities.indexed_at``; NULL: since the entity was created);
#   the text it replaced goes to ``entity_past`` with the interval it stood, searched in
#   ``entity_past_fts``.
# Existing rows get the best times the store knows: a retired chunk stood until the next
# version of its document (else its delete), a declaration since its note was created.
# (Each statement may run again on a store whose recorded version is behind its tables.)
MIGRATIONS.append([
    """ALTER TABLE chunks ADD COLUMN retired_at TEXT""",
    """UPDATE chunks SET retired_at = COALESCE(
        (SELECT MIN(v.recorded_at) FROM versions v WHERE v.document_id = chunks.document_id
         AND v.id > chunks.version_id),
        (SELECT COALESCE(d.deleted_at, d.updated_at) FROM documents d
         WHERE d.id = chunks.document_id)) WHERE live = 0 AND retired_at IS NULL""",
    """CREATE VIRTUAL TABLE IF NOT EXISTS chunk_past_fts USING fts5(
        context, text, content='chunks', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2')""",
    """INSERT INTO chunk_past_fts(chunk_past_fts) VALUES('delete-all')""",
    """INSERT INTO chunk_past_fts(rowid, context, text)
        SELECT id, context, text FROM chunks WHERE live = 0""",
    """ALTER TABLE names ADD COLUMN recorded_at TEXT NOT NULL DEFAULT ''""",
    """UPDATE names SET recorded_at = COALESCE((SELECT d.created_at FROM documents d
        WHERE d.id = names.document_id), '') WHERE recorded_at = ''""",
    """CREATE TABLE IF NOT EXISTS names_past(
        key TEXT NOT NULL, document_id INTEGER NOT NULL, entity_id INTEGER NOT NULL,
        kind TEXT NOT NULL, text TEXT NOT NULL, rank INTEGER NOT NULL, path TEXT NOT NULL,
        recorded_at TEXT NOT NULL, retracted_at TEXT NOT NULL)""",
    """CREATE INDEX IF NOT EXISTS names_past_key ON names_past(key)""",
    """CREATE INDEX IF NOT EXISTS names_past_entity ON names_past(entity_id)""",
    """ALTER TABLE entities ADD COLUMN indexed_at TEXT""",
    """CREATE TABLE IF NOT EXISTS entity_past(
        id INTEGER PRIMARY KEY, entity_id INTEGER NOT NULL, label TEXT NOT NULL,
        aliases TEXT NOT NULL, literals TEXT NOT NULL, recorded_at TEXT NOT NULL,
        retired_at TEXT NOT NULL)""",
    """CREATE INDEX IF NOT EXISTS entity_past_entity ON entity_past(entity_id)""",
    """CREATE VIRTUAL TABLE IF NOT EXISTS entity_past_fts USING fts5(
        label, aliases, literals, content='entity_past', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2')""",
])

# 19: full-text statistics per scope (``scoped.py``): each scope has its own four full-text
# indexes, registered in ``fts_scopes``, so a hit's BM25 reads only its own scope's row
# count, lengths and term counts. Made by ``scoped.split`` after this statement
# (``AFTER_MIGRATION``): the rows of every scope but the largest move to indexes of their
# own; a store of one scope keeps its tables as they are.
MIGRATIONS.append([REGISTRY])
AFTER_MIGRATION = {19: split}
"""Python steps run after a migration's statements (by its number), in its transaction."""

SCHEMA_VERSION = len(MIGRATIONS)

# The names a document declared at a time ``?1`` (an as-of read's first parameter): the
# declarations standing then, live or since dropped.
NAMES_AT = ("(SELECT key, document_id, entity_id, kind, text, rank, path FROM names"
            " WHERE recorded_at <= ?1 UNION ALL SELECT key, document_id, entity_id, kind,"
            " text, rank, path FROM names_past WHERE recorded_at <= ?1 AND retracted_at > ?1)")


def winner_at(entity: str) -> str:
    """The note that won the name entity ``entity`` (an alias in the query) at the time
    ``?1``: ``NAME_WINNER`` over the declarations of then (NULL for a note entity). The
    name is matched inside each source, so each reads its key index."""
    arms = " UNION ALL ".join(
        f"SELECT n.entity_id, n.rank, n.path FROM {table} n JOIN documents d"
        f" ON d.id = n.document_id WHERE n.key = {entity}.name_key AND d.scope = {entity}.scope"
        f" AND n.recorded_at <= ?1{extra}"
        for table, extra in (("names", ""), ("names_past", " AND n.retracted_at > ?1")))
    return f"(SELECT w.entity_id FROM ({arms}) w ORDER BY w.rank, length(w.path), w.path LIMIT 1)"
