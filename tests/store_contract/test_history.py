"""The store contract for reads as of a record time (``as_of``): what the store answered
then, for text search, names and facts, after edits, alias changes and deletes; and the
live reads unchanged by the history kept."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from knotwork.store import Store, TextQuery, record_time
from knotwork.types import name_key

from .drafts import doc, fact, link, lit


def apply(store: Store, *docs) -> None:  # type: ignore[no-untyped-def]
    with store.write(actor="test") as w:
        for d in docs:
            w.apply("default", d)


def delete(store: Store, path: str) -> None:
    with store.write(actor="test") as w:
        w.delete("default", path)


def now() -> str:
    """A checkpoint strictly between two writes."""
    time.sleep(0.002)
    t = record_time(datetime.now(UTC))
    time.sleep(0.002)
    return t


def chunk_paths(store: Store, word: str, as_of: str | None) -> list[str]:
    hits = store.reader.search_chunks(TextQuery((word,)), limit=5, as_of=as_of)
    rows = store.reader.chunks([h.id for h in hits])
    return sorted(rows[h.id].path for h in hits)


def test_search_as_of_finds_past_prose_and_no_later_prose(store: Store) -> None:
    before = now()
    apply(store, doc("a.md", [], body="kestrel words here"))
    t1 = now()
    apply(store, doc("a.md", [], body="osprey words now"))
    t2 = now()
    delete(store, "a.md")
    t3 = now()
    assert chunk_paths(store, "kestrel", before) == []
    assert chunk_paths(store, "kestrel", t1) == ["a.md"]
    assert chunk_paths(store, "kestrel", t2) == []
    assert chunk_paths(store, "osprey", t1) == []
    assert chunk_paths(store, "osprey", t2) == ["a.md"]
    assert chunk_paths(store, "osprey", t3) == []
    # live: only what stands now, as ever
    assert chunk_paths(store, "kestrel", None) == chunk_paths(store, "osprey", None) == []
    r = store.reader
    assert r.term_frequencies(["kestrel", "osprey"], as_of=t1) == [("kestrel", 1), ("osprey", 0)]
    assert r.term_frequencies(["kestrel", "osprey"]) == [("kestrel", 0), ("osprey", 0)]


def test_entity_search_as_of_reads_the_text_of_then(store: Store) -> None:
    apply(store, doc("a.md", [fact("role", lit("engineer"), 2)]))
    a = store.reader.lookup_names(["a"])["a"]
    t1 = now()
    apply(store, doc("a.md", [fact("role", lit("manager"), 2)]))
    t2 = now()
    delete(store, "a.md")
    t3 = now()

    def found(word: str, as_of: str | None) -> bool:
        hits = store.reader.search_entities(TextQuery((word,)), limit=5, as_of=as_of)
        return a in {h.id for h in hits}

    assert (found("engineer", t1), found("engineer", t2), found("engineer", None)) == (
        True, False, False)
    assert (found("manager", t1), found("manager", t2), found("manager", t3)) == (
        False, True, False)


def test_names_resolve_as_they_did_then(store: Store) -> None:
    apply(store, doc("b.md", [fact("depends_on", link("Dash"), 2)]), doc("a.md", []))
    r = store.reader
    a, b = r.lookup_names(["a"])["a"], r.lookup_names(["b"])["b"]
    t1 = now()
    apply(store, doc("a.md", [], aliases=("Dash",)))  # the alias takes over the link
    t2 = now()
    delete(store, "a.md")
    t3 = now()
    dash = r.lookup_names([name_key("Dash")], as_of=t1)[name_key("Dash")]
    assert dash != a
    assert r.lookup_names([name_key("Dash")], as_of=t2) == {name_key("Dash"): a}
    assert r.lookup_names([name_key("Dash")], as_of=t3) == {name_key("Dash"): dash}

    def target(as_of: str | None) -> int | None:
        [f] = [f for f in r.facts([b], as_of=as_of) if f.predicate == "depends_on"]
        return f.object_id

    assert (target(t1), target(t2), target(t3), target(None)) == (dash, a, dash, dash)
    # the facts pointing at the note, and its edges, by the names of then
    assert [f.subject_id for f in r.facts([a], direction="in", as_of=t2)] == [b]
    assert r.facts([a], direction="in", as_of=t1) == []
    assert dash in r.members([a], as_of=t2) and dash not in r.members([a], as_of=t1)
    assert {(e.source, e.target) for e in r.edges([b], as_of=t2)} == {(b, a)}
    assert {(e.source, e.target) for e in r.edges([b], as_of=t1)} == {(b, dash)}


def test_an_entity_found_by_a_name_it_had_then(store: Store) -> None:
    apply(store, doc("a.md", [], aliases=("Osprey",)))
    t1 = now()
    a = store.reader.lookup_names(["a"])["a"]
    apply(store, doc("a.md", []))

    def found(as_of: str | None) -> bool:
        hits = store.reader.search_entities(TextQuery(("osprey",)), limit=5, as_of=as_of)
        return a in {h.id for h in hits}

    assert (found(t1), found(None)) == (True, False)
    assert store.reader.lookup_names(["osprey"], as_of=t1) == {"osprey": a}
    assert store.reader.lookup_names(["osprey"]) == {}
