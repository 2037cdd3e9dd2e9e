"""A note's ``updated`` date read through a reader's own methods (what a backend does when
one statement cannot: ``FactReader.updated_dates``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..domain.ids import note_iri
from ..types import FactRow


class _Reads(Protocol):
    def find_entity(self, text: str, key: str, *, scopes: Sequence[str] | None = None
                    ) -> int | None: ...

    def facts(self, entity_ids: list[int], *, scopes: Sequence[str] | None = None,
              as_of: str | None = None) -> list[FactRow]: ...


def updated_dates(reader: _Reads, documents: Sequence[tuple[int, str, str]], *,
                  as_of: str | None = None) -> dict[int, str]:
    """Document id -> the ``updated`` date its note states, for (document id, scope,
    path)s: the note found by its IRI in the document's scope (``find_entity``), then the
    literal ``updated`` facts the document states about it, live as of ``as_of`` (now
    when None), the last by id winning."""
    out: dict[int, str] = {}
    for doc, scope, path in documents:
        note = reader.find_entity(note_iri(scope, path), "", scopes=[scope])
        if note is None:
            continue
        for g in reader.facts([note], scopes=[scope], as_of=as_of):
            if g.predicate == "updated" and g.value_type == "Literal" and \
                    g.source and g.source.document_id == doc:
                out[doc] = g.value.strip()
    return out
