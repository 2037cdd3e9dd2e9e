"""Whole notes, as an agent reads and browses them: ``read_note`` and ``list_notes``.

``context`` and ``search`` answer with pieces; an agent that found the right note wants
all of it, with line numbers to cite, and a way to see what notes there are — by
folder, by type, or changed since a time (what happened while it was away).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import NotFound
from ..store import StoreReader

__all__ = ["NoteItem", "NoteText", "list_notes", "note_path", "read_note"]


@dataclass(frozen=True, slots=True)
class NoteText:
    """A note's whole current text; ``numbered`` prefixes each line with its number."""

    path: str
    title: str | None
    doc_type: str | None
    updated_at: str
    lines: int
    text: str

    def numbered(self, start: int = 1, end: int | None = None) -> str:
        rows = self.text.splitlines()
        stop = len(rows) if end is None else min(end, len(rows))
        width = len(str(stop))
        return "\n".join(f"{n:>{width}}  {rows[n - 1]}" for n in range(max(1, start), stop + 1))

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "title": self.title, "type": self.doc_type,
                "updated_at": self.updated_at, "lines": self.lines, "text": self.text}


@dataclass(frozen=True, slots=True)
class NoteItem:
    """One note of a listing."""

    path: str
    title: str | None
    doc_type: str | None
    updated_at: str

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "title": self.title, "type": self.doc_type,
                "updated_at": self.updated_at}


def note_path(reader: StoreReader, scope: str, ref: str, entity_id: int | None) -> str:
    """The vault path of the note ``ref`` names: a path as stored ("services/Traefik.md"),
    else the note of the entity ``entity_id`` (its "path" name, extension aside)."""
    index = reader.document_index(scope)
    if ref in index:
        return ref
    if entity_id is not None:
        for name in reader.names_of(entity_id):
            if name.kind == "path":
                found = [p for p in index if p.rsplit(".", 1)[0] == name.text]
                if found:
                    return min(found)
    raise NotFound("note", ref, message=f"no note named {ref!r} (give its path, title or"
                   " a name it is known by)")


def read_note(reader: StoreReader, scope: str, path: str) -> NoteText:
    doc = reader.document(scope, path)
    text = reader.document_texts(scope, [path]).get(path)
    if doc is None or doc.deleted_at is not None or text is None:
        raise NotFound("note", path)
    return NoteText(path, doc.title, doc.doc_type, doc.updated_at, len(text.splitlines()),
                    text)


def list_notes(reader: StoreReader, scope: str, *, folder: str | None = None,
               doc_type: str | None = None, since: str | None = None, limit: int = 100
               ) -> tuple[list[NoteItem], int]:
    """The notes under ``folder`` (a vault path prefix), of ``doc_type``, changed at or
    after ``since`` (ISO time; newest first then), at most ``limit``; and how many
    matched in all."""
    prefix = folder.strip("/") + "/" if folder and folder.strip("/") else ""
    want = doc_type.casefold() if doc_type else None
    docs = [d for p in sorted(reader.document_index(scope)) if p.startswith(prefix)
            and (d := reader.document(scope, p)) is not None]
    docs = [d for d in docs if (since is None or d.updated_at >= since)
            and (want is None or (d.doc_type or "").casefold() == want)]
    if since is not None:
        docs.sort(key=lambda d: d.updated_at, reverse=True)
    return [NoteItem(d.path, d.title, d.doc_type, d.updated_at) for d in docs[:limit]], len(docs)
