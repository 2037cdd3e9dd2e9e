"""The contract asked concern by concern: text search through ``TextQuery``, vectors,
events, versions, and what a delete or a retraction leaves live."""

from __future__ import annotations

import inspect
from datetime import UTC, datetime

import pytest

from knotwork.store import (
    AuditReader,
    DocumentReader,
    DocumentRecord,
    DocumentWriter,
    EntityReader,
    EventRecord,
    FactReader,
    FactWriter,
    MentionReader,
    MentionWriter,
    Store,
    StoreReader,
    StoreWriter,
    TextIndex,
    TextQuery,
    VectorReader,
    VectorWriter,
    WikiReader,
    record_time,
)
from knotwork.types import FactDraft, Hit, Span, name_key

from .drafts import doc, fact, link, lit

READERS = [DocumentReader, EntityReader, FactReader, MentionReader, TextIndex, VectorReader,
           AuditReader, WikiReader]
WRITERS = [DocumentWriter, FactWriter, MentionWriter, VectorWriter]


def _methods(protocol: type) -> set[str]:
    return {n for n, v in vars(protocol).items() if inspect.isfunction(v) and n[0] != "_"}


def _apply(store: Store, *docs) -> None:  # type: ignore[no-untyped-def]
    with store.write(actor="test") as w:
        for d in docs:
            w.apply("default", d)


def _chunk_of(store: Store, word: str) -> int:
    [hit] = store.reader.search_chunks(TextQuery((word,)), limit=5)
    return hit.id


def test_the_reader_and_writer_are_their_small_protocols_and_the_store_has_them_all(
        store: Store) -> None:
    for part in READERS + WRITERS:
        assert 2 <= len(_methods(part)) <= 12, part.__name__
    assert _methods(StoreReader) == set()  # every read belongs to one concern
    assert _methods(StoreWriter) == {"savepoint", "set_meta"}
    for name in set().union(*map(_methods, READERS)):
        assert callable(getattr(store.reader, name)), name
    with store.write(actor="test") as w:
        for name in set().union(*map(_methods, WRITERS)) | _methods(StoreWriter):
            assert callable(getattr(w, name)), name


def test_a_text_query_finds_any_or_all_of_its_terms(store: Store) -> None:
    _apply(store, doc("a.md", [], body="kestrel queue admin"),
           doc("b.md", [], body="kestrel only here"),
           doc("c.md", [], body="a queue elsewhere"))
    any_ = store.reader.search_chunks(TextQuery(("kestrel", "queue")), limit=10)
    all_ = store.reader.search_chunks(TextQuery(("kestrel", "queue"), match="all"), limit=10)
    assert len(any_) == 3
    assert [h.id for h in all_] == [_chunk_of(store, "admin")]
    assert store.reader.search_chunks(TextQuery(("kestrel",)), limit=1) != []
    assert len(store.reader.search_chunks(TextQuery(("kestrel",)), limit=1)) == 1


@pytest.mark.parametrize("past", [False, True])
@pytest.mark.parametrize("kind", ["chunk", "entity", "label"])
def test_all_else_any_is_the_all_query_when_that_fills_the_limit_else_the_any_query(
        store: Store, kind: str, past: bool) -> None:
    _apply(store, doc("a.md", [], body="kestrel queue admin", title="Kestrel queue"),
           doc("b.md", [], body="kestrel and queue", title="Queue of kestrel"),
           doc("c.md", [], body="kestrel only here", title="Kestrel only"),
           doc("d.md", [], body="a queue elsewhere", title="Queue elsewhere"),
           doc("e.md", [], body="kestrel kestrel", title="Kestrel kestrel"))
    as_of = record_time(datetime.now(UTC)) if past else None
    search = store.reader.search_chunks if kind == "chunk" else store.reader.search_entities
    field = "label" if kind == "label" else None

    def ask(terms: tuple[str, ...], match: str, limit: int) -> list[Hit]:
        return search(TextQuery(terms, match, field), limit=limit,  # type: ignore[arg-type]
                      as_of=as_of)

    for terms in (("kestrel", "queue"), ("queue", "kestrel", "zebra"), ("zebra", "quail")):
        for limit in (1, 2, 3, 10):
            every, either = ask(terms, "all", limit), ask(terms, "any", limit)
            assert ask(terms, "all_else_any", limit) == (
                every if len(every) >= limit else either), (terms, limit)
    # the two sides of the rule both taken: two rows hold both words, four hold either
    assert len(ask(("kestrel", "queue"), "all_else_any", 2)) == 2
    assert len(ask(("kestrel", "queue"), "all_else_any", 3)) == 3


@pytest.mark.parametrize("term", ["AND", "NEAR", "OR", "*", '"', "kestr*", "text:kestrel", "(",
                                  "-x"])
def test_a_term_is_a_word_never_query_syntax(store: Store, term: str) -> None:
    _apply(store, doc("a.md", [], body="kestrel queue"))
    assert store.reader.search_chunks(TextQuery((term,)), limit=5) == []
    assert store.reader.search_entities(TextQuery((term, "zebra"), match="all"), limit=5) == []
    assert len(store.reader.search_chunks(TextQuery((term, "kestrel")), limit=5)) == 1


def test_a_label_field_query_looks_at_labels_only(store: Store) -> None:
    _apply(store, doc("notes/nll.md", [fact("note", lit("walrus"), 1)], title="NLL",
                      aliases=("okapi",)))
    note = store.reader.find_entity("nll", name_key("nll"))
    assert note is not None
    by_label = store.reader.search_entities(TextQuery(("nll",), field="label"), limit=5)
    assert [h.id for h in by_label] == [note]
    for word in ("okapi", "walrus"):  # an alias and a value: found, but not as a label
        assert [h.id for h in store.reader.search_entities(TextQuery((word,)), limit=5)] \
            == [note]
        assert store.reader.search_entities(TextQuery((word,), field="label"), limit=5) == []


def test_vectors_go_in_by_text_and_come_out_by_chunk_until_the_chunk_goes(
        store: Store) -> None:
    _apply(store, doc("a.md", [], body="kestrel queue"))
    assert not store.reader.has_vectors()
    assert store.reader.vector_counts() == (0, 1)
    [(text_hash, text)] = store.reader.pending_chunks(10)
    assert "kestrel queue" in text
    with store.write(actor="test") as w:
        assert w.put_vectors([(text_hash, b"\x01\x02\x03\x04")]) == 1
    chunk = _chunk_of(store, "kestrel")
    assert store.reader.vectors([chunk]) == [(chunk, b"\x01\x02\x03\x04")]
    assert store.reader.has_vectors() and store.reader.vector_status() == (True, 0)
    assert store.reader.pending_chunks(10) == []
    seq, changes = store.reader.vector_changes(0)
    assert changes == [(chunk, 1)] and store.reader.vector_changes(seq) == (seq, [])
    _apply(store, doc("a.md", [], body="other words now"))
    assert store.reader.vectors([chunk]) == []
    assert (chunk, 0) in store.reader.vector_changes(seq)[1]
    with store.write(actor="test") as w:
        w.clear_vectors()
    assert not store.reader.has_vectors()


def test_events_are_records_of_who_did_what_to_which_fact(store: Store) -> None:
    _apply(store, doc("a.md", [fact("role", lit("engineer"), 1)]))
    draft = FactDraft(subject=link("a"), predicate="owner", object=lit("ops"),
                      span=Span(0, 0), supporting_text="", extractor="api", trust="asserted")
    with store.write(actor="agent-7") as w:
        fid = w.assert_fact("default", draft, reason="told so")
    [event] = store.reader.events(fact_ids=[fid])
    assert isinstance(event, EventRecord)
    assert (event.actor, event.action, event.fact_id, event.reason) == (
        "agent-7", "assert", fid, "told so")
    d = store.reader.document("default", "a.md")
    assert isinstance(d, DocumentRecord)
    [create] = store.reader.events(document_id=d.id)
    assert create.action == "create" and create.actor == "test"


def test_a_delete_or_a_retraction_leaves_no_live_fact_and_keeps_the_history(
        store: Store) -> None:
    _apply(store, doc("a.md", [fact("role", lit("engineer"), 1), fact("team", lit("ops"), 2)]))
    a = store.reader.find_entity("a", name_key("a"))
    assert a is not None
    [role, team] = store.reader.facts([a])
    with store.write(actor="test") as w:
        assert w.retract_fact(role.id, reason="wrong")
        assert not w.retract_fact(role.id, reason="twice")
    assert [f.id for f in store.reader.live_facts()] == [team.id]
    [gone] = store.reader.facts_by_id([role.id])
    assert gone.retracted_at is not None and gone.retract_reason == "wrong"
    with store.write(actor="test") as w:
        assert w.delete("default", "a.md") is not None
    assert store.reader.live_facts() == []
    assert store.reader.facts([a]) == []
    history = store.reader.facts([a], history=True)
    assert {f.id for f in history} == {role.id, team.id}
    assert all(f.retracted_at is not None for f in history)
    d = store.reader.document("default", "a.md")
    assert d is not None and d.deleted_at is not None


def test_each_version_keeps_its_text_and_the_document_points_at_the_last(
        store: Store) -> None:
    _apply(store, doc("a.md", [], body="first text"))
    first = store.reader.document("default", "a.md")
    _apply(store, doc("a.md", [], body="second text"))
    second = store.reader.document("default", "a.md")
    assert first is not None and second is not None and first.id == second.id
    assert first.version_id is not None and second.version_id is not None
    assert first.version_id != second.version_id
    assert store.reader.version_text(first.version_id) == "first text"
    assert store.reader.version_text(second.version_id) == "second text"
    assert store.reader.document_versions([second.id]) == {
        second.id: (second.version_id, second.updated_at)}
    assert store.reader.document_texts("default", ["a.md"]) == {"a.md": "second text"}


@pytest.mark.parametrize("match", ["any", "all"])
def test_entity_hits_under_a_limit_are_the_first_hits_under_a_larger_one(
        store: Store, match: str) -> None:
    # many rows tie or nearly tie on both words, so a limit cuts among equals (ranked by
    # score, then by the entity row): the rows kept must be those a larger limit ranks first
    _apply(store, *(doc(f"n{i}.md", [], body="kestrel queue",
                        title=f"Kestrel {'queue ' * (i % 3)}note {'x ' * (i % 4)}")
                    for i in range(12)))
    ask = store.reader.search_entities
    full = ask(TextQuery(("kestrel", "queue"), match), limit=100)  # type: ignore[arg-type]
    assert len(full) >= 4
    for limit in range(1, len(full) + 1):
        got = ask(TextQuery(("kestrel", "queue"), match), limit=limit)  # type: ignore[arg-type]
        assert got == full[:limit], limit


@pytest.mark.parametrize("rare", [1, 2, 3, 12])
def test_an_all_query_ranks_as_the_any_query_among_the_rows_holding_every_term(
        store: Store, rare: int) -> None:
    # "kestrel" in `rare` notes, "queue" in 24: a word far rarer than the other (its rows
    # each probe the other's, on PostgreSQL) or two of alike counts (both read whole)
    _apply(store, *(doc(f"n{i}.md", [], body=" ".join(
        (["kestrel"] * (1 + i % 2) if i < rare else []) + ["queue"] * (1 + i % 3)
        + ["filler"] * (i % 5))) for i in range(24)))
    both = {h.id for h in store.reader.search_chunks(TextQuery(("kestrel",)), limit=100)}
    assert len(both) == rare
    any_ = store.reader.search_chunks(TextQuery(("queue", "kestrel")), limit=100)
    for limit in (1, 2, 5, 40):
        got = store.reader.search_chunks(TextQuery(("queue", "kestrel"), "all"), limit=limit)
        assert got == [h for h in any_ if h.id in both][:limit], limit
