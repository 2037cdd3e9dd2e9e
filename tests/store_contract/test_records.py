"""The named records the readers return, asked field by field through the Protocols."""

from __future__ import annotations

from knotwork.store import EntityName, EntityReader, Store
from knotwork.types import name_key

from .drafts import doc


def _apply(store: Store, *docs) -> None:  # type: ignore[no-untyped-def]
    with store.write(actor="test") as w:
        for d in docs:
            w.apply("default", d)


def test_names_of_gives_each_name_its_kind_and_text_best_first(store: Store) -> None:
    _apply(store, doc("notes/kestrel.md", [], title="Kestrel Queue", aliases=("kq",)))
    reader: EntityReader = store.reader
    note = reader.find_entity("kestrel", name_key("kestrel"))
    assert note is not None
    names = reader.names_of(note)
    assert all(isinstance(n, EntityName) for n in names)
    assert [(n.kind, n.text) for n in names] == [
        ("path", "notes/kestrel"), ("title", "Kestrel Queue"), ("stem", "kestrel"),
        ("alias", "kq")]
    assert reader.names_of(note + 1000) == []
