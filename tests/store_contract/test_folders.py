"""The contract for a folder's name (``domain.names.folder_key``): a note's ``part_of`` its
folder reaches whichever note declares the folder's name, best kind first; while none
does, the name is no entity to search, reach, lint or count, on every backend."""

from __future__ import annotations

import dataclasses

from knotwork.store import Store, TextQuery
from knotwork.types import NameDecl, NameRef, ParsedDocument, name_key

from .drafts import doc, fact

FOLDER = NameRef("svc/", "svc/")


def _page(path: str, kind: str) -> ParsedDocument:
    base = doc(path, [], title=f"page {kind}")
    return dataclasses.replace(base, names=(*base.names, NameDecl("svc/", "svc/", kind)))  # type: ignore[arg-type]


def _apply(store: Store, *docs: ParsedDocument) -> None:
    with store.write(actor="test") as w:
        for d in docs:
            w.apply("default", d)


def _delete(store: Store, path: str) -> None:
    with store.write(actor="test") as w:
        w.delete("default", path)


def _note(store: Store, path: str) -> int:
    eid = store.reader.find_entity(path, name_key(path))
    assert eid is not None
    return eid


def test_a_folder_s_notes_reach_its_best_page_and_nothing_while_it_has_none(
        store: Store) -> None:
    _apply(store, doc("svc/api.md", [fact("part_of", FOLDER, 1)], body="gateway svc words"),
           doc("svc/billing.md", [fact("part_of", FOLDER, 1)]))
    r = store.reader
    api = _note(store, "svc/api")
    entities = r.stats()["entities"]
    assert r.edges([api]) == []  # the folder with no page is no entity to reach
    assert r.unresolved_links("default") == []  # nor a missing page
    notes = {api, _note(store, "svc/billing")}
    # nor a name to search (the notes may be found by their paths' words)
    assert {h.id for h in r.search_entities(TextQuery(("svc",)), limit=5)} <= notes
    assert "svc/" not in {key for _, key, _ in r.labels()}

    _apply(store, _page("svc/README.md", "folder_readme"), _page("svc.md", "folder_file"))
    page = _note(store, "svc")  # svc.md beside the folder wins over the README
    assert {(e.source, e.target, e.predicate) for e in r.edges([api])} == {
        (api, page, "part_of")}
    assert len({e.source for e in r.edges([page])}) == 2  # both notes, reversed
    assert r.stats()["entities"] == entities + 2  # the pages; the folder's name still none
    assert "svc/" not in {key for _, key, _ in r.labels()}  # a page's folder is no mention
    # the winning page shows the folder's name, the other does not; neither is ambiguous
    assert ("folder_file", "svc/") in {(n.kind, n.text) for n in r.names_of(page)}
    readme = _note(store, "svc/README")
    assert all(n.kind != "folder_readme" for n in r.names_of(readme))
    assert all(not key.endswith("/") for key, _ in r.ambiguous_names())

    _apply(store, _page("svc/index.md", "folder_index"))
    assert [e.target for e in r.edges([api])] == [_note(store, "svc/index")]
    _delete(store, "svc/index.md")
    _delete(store, "svc.md")
    assert [e.target for e in r.edges([api])] == [_note(store, "svc/README")]
    _delete(store, "svc/README.md")
    assert r.edges([api]) == []
    assert r.unresolved_links("default") == []
