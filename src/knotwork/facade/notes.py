"""The facade's room for whole notes and structured reads: a note's text, notes by folder
or type, entities by their facts (``find``), and what changed lately."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import checks, limits
from ..errors import NotFound
from .base import Base, one_state

if TYPE_CHECKING:
    from ..retrieve.changes import Changes
    from ..retrieve.find import Found
    from ..retrieve.notes import NoteItem, NoteText


class NotesRoom(Base):
    """Whole notes, notes listed, entities found by their facts, recent changes."""

    @one_state
    def read_note(self, ref: str) -> NoteText:
        """A note's whole current text (by path, title or any name it is known by)."""
        from ..retrieve import notes as _notes

        reader, scope = self.store.reader, self.settings.scope
        try:
            eid: int | None = self.resolve(ref)
        except NotFound:
            eid = None
        return _notes.read_note(reader, scope, _notes.note_path(reader, scope, ref, eid))

    @one_state
    def list_notes(self, *, folder: str | None = None, doc_type: str | None = None,
                   since: str | None = None, limit: int = 100) -> tuple[list[NoteItem], int]:
        """Notes by folder, type, or changed since a time (newest first); and the count."""
        from ..retrieve import notes as _notes

        return _notes.list_notes(self.store.reader, self.settings.scope, folder=folder,
                                 doc_type=doc_type, since=checks.instant("since", since),
                                 limit=checks.positive("limit", limit))

    @one_state
    def find(self, where: str | Sequence[str] = (), *, type: str | None = None,
             scopes: Sequence[str] | None = None, limit: int = 50) -> Found:
        """Entities whose live facts hold every ``KEY=VALUE`` (or bare ``KEY``: any value)
        of ``where``, and of ``type``; by label, each with its cited facts
        (``retrieve.find``). ``kw.find(["status=accepted"], type="adr")``"""
        from ..ingest.lexicon import normalize_key
        from ..retrieve import find as _find

        given = [where] if isinstance(where, str) else list(where)
        checks.sized("where", given, limits.WHERE_MAX)
        texts = [checks.text("where", t, limits.VALUE_CHARS, required=True)
                 for t in [*given, *([f"type={type}"] if type else [])]]
        return _find.find(self.store.reader, _find.conditions(texts, normalize_key),
                          scopes=scopes, limit=checks.bounded("limit", limit, 1, limits.FIND_MAX))

    @one_state
    def recent_changes(self, *, since: str = "1d", limit: int = 100,
                       scopes: Sequence[str] | None = None) -> Changes:
        """Documents created, edited, renamed or deleted at or after ``since`` (``7d``,
        ``12h``, an ISO time), newest first, with who changed them and when."""
        from ..retrieve.changes import recent_changes
        from ..trust.audit import since_time

        at = since_time(checks.text("since", since, limits.SPAN_CHARS, required=True))
        return recent_changes(self.store.reader, since=at, scopes=scopes,
                              limit=checks.bounded("limit", limit, 1, limits.CHANGES_MAX))
