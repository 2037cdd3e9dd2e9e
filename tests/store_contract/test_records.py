"""The named records the readers return, asked field by field through the Protocols."""

from __future__ import annotations

import dataclasses

from knotwork.store import (
    AuditReader,
    Edge,
    EntityName,
    EntityReader,
    FactReader,
    MentionInputs,
    MentionReader,
    PendingChunk,
    Store,
    VectorReader,
    WarningRecord,
    Warnings,
)
from knotwork.types import Issue, name_key

from .drafts import doc, fact, link, lit


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


def test_warnings_count_the_documents_and_give_the_first_by_path_and_line(
        store: Store) -> None:
    def warned(path: str, *issues: Issue):  # type: ignore[no-untyped-def]
        return dataclasses.replace(doc(path, []), issues=issues)

    _apply(store, warned("b.md", Issue("b.md", "bad date", 3, fatal=False)),
           warned("a.md", Issue("a.md", "no title", None, fatal=False),
                  Issue("a.md", "bad tag", 7, fatal=False)),
           doc("c.md", []))
    reader: AuditReader = store.reader
    got = reader.warnings()
    assert isinstance(got, Warnings) and got.documents == 2
    assert all(isinstance(w, WarningRecord) for w in got.first)
    assert [(w.path, w.line, w.reason) for w in got.first] == [
        ("a.md", None, "no title"), ("a.md", 7, "bad tag"), ("b.md", 3, "bad date")]
    cut = reader.warnings(limit=1)
    assert cut.documents == 2 and [w.reason for w in cut.first] == ["no title"]


def test_mention_inputs_name_the_chunks_the_declared_keys_and_the_linked_ones(
        store: Store) -> None:
    _apply(store, doc("b.md", [], aliases=("bee",)),
           doc("notes/a.md", [fact("depends_on", link("b"), 1)], body="kestrel\nqueue"))
    ids = store.reader.live_document_ids("default", ["notes/a.md", "b.md"])
    reader: MentionReader = store.reader
    got = reader.mention_inputs_of([ids["notes/a.md"], ids["b.md"]])
    a, b = got[ids["notes/a.md"]], got[ids["b.md"]]
    assert isinstance(a, MentionInputs)
    assert a.chunks == ((1, "kestrel\nqueue"),)
    assert a.declared == {name_key("notes/a"), name_key("a")}
    # the link's own key and every name of the note it resolves to
    assert a.linked == {name_key("b"), name_key("bee")}
    assert b.declared == {name_key("b"), name_key("bee")} and b.linked == frozenset()
    assert reader.mention_inputs_of([]) == {}


def test_edges_run_from_subject_to_object_with_predicate_and_confidence(
        store: Store) -> None:
    _apply(store, doc("b.md", []),
           doc("a.md", [fact("depends_on", link("b"), 1, conf=0.9),
                        fact("status", lit("green"), 2)]),
           doc("c.md", [fact("uses", link("a"), 1, conf=0.5)]))
    note = {n: store.reader.find_entity(n, name_key(n)) for n in "abc"}
    a = note["a"]
    assert a is not None
    reader: FactReader = store.reader
    edges = reader.edges([a])
    assert all(isinstance(e, Edge) for e in edges)
    assert sorted((e.source, e.target, e.predicate, e.confidence) for e in edges) == sorted(
        [(a, note["b"], "depends_on", 0.9), (note["c"], a, "uses", 0.5)])
    assert [(e.source, e.target) for e in reader.edges([a], min_confidence=0.6)] == [
        (a, note["b"])]


def test_pending_chunks_give_each_text_once_by_the_hash_its_vector_goes_in_under(
        store: Store) -> None:
    _apply(store, *(doc(p, [], title="Kestrel", body="kestrel queue")
                    for p in ("x/a.md", "y/a.md")), doc("z.md", [], body="other words"))
    reader: VectorReader = store.reader
    pending = sorted(reader.pending_chunks(10), key=lambda c: c.text)
    assert all(isinstance(c, PendingChunk) for c in pending)
    assert len(pending) == 2 and len({c.text_hash for c in pending}) == 2
    kestrel, other = pending
    assert kestrel.text.startswith("Kestrel") and kestrel.text.endswith("\nkestrel queue")
    assert other.text.endswith("\nother words")
    assert len(reader.pending_chunks(1)) == 1
    ids = store.reader.live_chunk_ids(["default"])
    assert len(ids) == 3 and reader.unembedded(ids) == set(ids)
    with store.write(actor="test") as w:
        assert w.put_vectors([(kestrel.text_hash, b"\x01\x02\x03\x04")]) == 2
    assert reader.vector_counts() == (2, 3)
    assert reader.pending_chunks(10) == [other]
    rows = store.reader.chunks(ids)
    assert reader.unembedded(ids) == {c for c in ids if rows[c].text == "other words"}
    assert reader.unembedded([]) == set() and reader.unembedded([max(ids) + 99]) == set()


def test_labels_mention_inputs_and_name_changes_say_their_scope(store: Store) -> None:
    """What the mention pass reads per scope: each label, each document and each queued
    name change with its note's scope, so a note's prose is read against its own scope's
    names only."""
    with store.write(actor="test") as w:
        w.apply("alpha", doc("oncall.md", [], title="Oncall Duty"))
        w.apply("beta", doc("pager.md", [], title="Pager Duty"))
    reader = store.reader
    assert {(text, scope) for text, _, scope in reader.labels()
            if "Duty" in text} == {("Oncall Duty", "alpha"), ("Pager Duty", "beta")}
    a = reader.live_document_ids("alpha", ["oncall.md"])["oncall.md"]
    b = reader.live_document_ids("beta", ["pager.md"])["pager.md"]
    got = reader.mention_inputs_of([a, b])
    assert (got[a].scope, got[b].scope) == ("alpha", "beta")
    assert {(c.text, c.scope) for c in reader.mention_work().changes
            if c.label and "Duty" in c.text} == {("Oncall Duty", "alpha"),
                                                 ("Pager Duty", "beta")}
    with store.write(actor="test") as w:
        work = reader.mention_work()
        w.mentions_done(work.queued, through_change=work.last_change)
        w.delete("beta", "pager.md")
    # a deleted note's names went with it, in its scope still
    assert ("Pager Duty", name_key("Pager Duty"), False, True, "beta") in [
        c[1:] for c in reader.mention_work().changes]
