"""Turn a parsed document into row values before the write transaction begins.

Why: parallel ingest workers take turns holding the write lock, so every microsecond of
Python spent inside it is paid once per document by the whole ingest, while work done
before it runs on every core. Everything that does not depend on the database lives
here: chunk rows without their ids, text hashes, name rows, the entities a document
names, and each fact's columns. Only what needs the current rows is left to the writer:
ids, the fact keys of facts about the note itself (they include its document id), and the
diff against the facts the document already owns.

A document's note appears in keys as ``doc:<id>``; here it is ``None`` until the writer
knows the id.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ...domain.ids import key_tail, literal_key
from ...domain.names import NAME_RANK
from ...types import (
    FactDraft,
    LiteralValue,
    NameRef,
    ObjectRef,
    ParsedDocument,
    SelfRef,
    mention_labels,
)

# Why NULL travels as a value of the other storage class: the sqlite3 module binds an int,
# float or str at once, but looks a None up in its adapter registry first (a tuple, a dict
# probe and two failed attribute lookups), a fifth of the cost of inserting a fact. So a
# nullable TEXT column is given NO_TEXT and an INTEGER column NO_ID, and the SQL turns them
# back with NULLIF(?, 0) and NULLIF(?, ''): a real value is never of the other storage
# class, so it never compares equal to the stand-in.
NO_TEXT = 0
NO_ID = ""
_REVIEW_BY_TRUST = {"stated": "approved", "asserted": "unreviewed", "extracted": "unreviewed"}


class FactParts(NamedTuple):
    """One fact draft's columns; entity references are keys (``None``: the note)."""

    subject: str | None  # entity key of the subject
    predicate: str
    obj: str | None  # entity or literal key of the object
    entity: bool  # whether the object is an entity (else a literal)
    tail: str  # the rest of what the fact says: valid time and qualifiers, joined
    chunk: int  # index into the document's chunks (-1: before the first one)
    row: tuple[object, ...]  # the columns of FACT_COLUMNS from predicate on (NULL as NO_TEXT)
    cite: tuple[object, ...]  # line_start, line_end, supporting_text


# A fact row's columns in this order: first those known once the lock is held, then the
# document's, then the draft's (``FactParts.row``), so the writer joins three tuples.
FACT_COLUMNS = ("id, fact_key, subject_id, object_id, chunk_id, scope, document_id, version_id,"
                " actor, recorded_at, predicate, value, datatype, qualifiers, valid_from, valid_to,"
                " confidence, trust, review, line_start, line_end, supporting_text, extractor,"
                " extractor_version")

ChunkParts = tuple[int, str, str, str, int, int, str]
"""ord, heading, context, text, line_start, line_end, text_hash: a chunk row without ids."""

NameParts = tuple[str, str, str, int]
"""key, kind, text, rank: a name row without the document and its note."""


@dataclass(frozen=True, slots=True)
class PreparedDocument:
    """A parsed document with the row values the writer needs (see the module docstring)."""

    doc: ParsedDocument
    chunks: tuple[ChunkParts, ...]
    names: tuple[NameParts, ...]
    # (text, key) of every name the document declares that prose may mention it by
    declared: frozenset[tuple[str, str]]
    refs: dict[str, str]  # entity key -> label, for every name its facts refer to
    facts: tuple[FactParts, ...]


def prepare(doc: ParsedDocument) -> PreparedDocument:
    """Compute every row value of ``doc`` that does not depend on the database."""
    chunks = tuple(_chunk_parts(doc.title, ch.ord, ch.heading_path, ch.text,
                                ch.span.line_start, ch.span.line_end) for ch in doc.chunks)
    named = [n for n in doc.names if n.key]
    return PreparedDocument(
        doc=doc, chunks=chunks,
        names=tuple((n.key, n.kind, n.text, NAME_RANK[n.kind]) for n in named),
        declared=mention_labels((n.key, n.kind, n.text) for n in named),
        refs=name_refs(doc.facts),
        facts=prepare_facts(doc.facts, [c[4] for c in chunks],
                            [ch.column for ch in doc.chunks]))


def _chunk_parts(title: str, ord_: int, heading_path: tuple[str, ...], text: str,
                 line_start: int, line_end: int) -> ChunkParts:
    heading = " > ".join(heading_path)
    context = title if not heading else f"{title} > {heading}"
    text_hash = hashlib.blake2b(f"{context}\n{text}".encode(), digest_size=16).hexdigest()
    return ord_, heading, context, text, line_start, line_end, text_hash


def name_refs(drafts: Sequence[FactDraft]) -> dict[str, str]:
    """Entity key -> label of the names ``drafts`` refer to, in order of first mention.

    A name written twice with different text keeps the text seen last, as its label.
    """
    out: dict[str, str] = {}
    for d in drafts:
        for ref in (d.subject, d.object):
            if isinstance(ref, NameRef):
                out["name:" + ref.key] = ref.text
    return out


def prepare_facts(drafts: Sequence[FactDraft], chunk_starts: Sequence[int],
                  chunk_columns: Sequence[int] = ()) -> tuple[FactParts, ...]:
    """The columns of each draft; ``chunk_starts`` are the first lines of the chunks cited,
    ``chunk_columns`` the character each starts at in that line (none given, as for chunks
    read back from the store: the last piece of a cut line is cited, as before columns)."""
    out = []
    for d in drafts:
        okey, entity, value, datatype = _object(d.object)
        quals, vf, vt, span = d.qualifiers, d.valid_from, d.valid_to, d.span
        chunk = bisect.bisect_right(chunk_starts, span.line_start) - 1
        if chunk > 0 and chunk_starts[chunk - 1] == span.line_start and chunk_columns:
            chunk = _piece(chunk_starts, chunk_columns, chunk, d.column)
        out.append(FactParts(
            None if isinstance(d.subject, SelfRef) else "name:" + d.subject.key,
            d.predicate, okey, entity, key_tail(vf, vt, quals), chunk,
            (d.predicate, value, NO_TEXT if datatype is None else datatype,
             json.dumps(dict(quals)) if quals else NO_TEXT, NO_TEXT if vf is None else vf,
             NO_TEXT if vt is None else vt, d.confidence, d.trust, _REVIEW_BY_TRUST[d.trust],
             span.line_start, span.line_end, d.supporting_text, d.extractor,
             d.extractor_version),
            (span.line_start, span.line_end, d.supporting_text)))
    return tuple(out)


def _piece(starts: Sequence[int], columns: Sequence[int], last: int, column: int) -> int:
    """Of the pieces of one cut line (chunks sharing their first line, ``last`` the last
    of them), the last starting at or before ``column``.

    Why: a fact is cited by the chunk starting at or before its line, and by line alone
    every fact on a cut line cited its last piece, wherever the fact's text lay.
    """
    first = bisect.bisect_left(starts, starts[last], 0, last)
    return max(first, bisect.bisect_right(columns, column, first, last + 1) - 1)


def _object(obj: ObjectRef) -> tuple[str | None, bool, str, str | None]:
    """Key, is-an-entity, value and datatype of a fact's object."""
    if isinstance(obj, LiteralValue):
        return literal_key(obj.datatype, obj.value), False, obj.value, obj.datatype
    if isinstance(obj, NameRef):
        return "name:" + obj.key, True, obj.text, None
    return None, True, "", None
