"""The store contract for review, tokens, the audit window and export/import."""

from __future__ import annotations

from dataclasses import replace

from knotwork.store import ReviewFilter, Store, open_store
from knotwork.types import name_key

from .drafts import doc, fact, link, lit


def _assert(store: Store, pred: str, value: str) -> int:
    draft = replace(fact(pred, lit(value), 0, subject=link("a")), trust="asserted")
    with store.write(actor="agent") as w:
        return w.assert_fact("default", draft)


def _eid(store: Store, label: str) -> int:
    eid = store.reader.find_entity(label, name_key(label))
    assert eid is not None
    return eid


def test_asserted_facts_wait_for_review_and_rejected_ones_leave_reads(store: Store) -> None:
    with store.write(actor="t") as w:
        w.apply("default", doc("a.md", [fact("role", lit("engineer"), 2)]))
    fid = _assert(store, "port", "1")
    total, queued = store.reader.review_queue(ReviewFilter())
    assert total == 1 and [f.id for f in queued] == [fid] and queued[0].review == "unreviewed"
    with store.write(actor="dana") as w:
        assert w.set_review(fid, "rejected", reason="wrong")
        assert not w.set_review(10_000, "rejected", reason=None)
    eid = _eid(store, "a")
    assert {f.predicate for f in store.reader.facts([eid])} == {"role"}
    assert {f.predicate for f in store.reader.facts([eid], trusts=["rejected"])} == {"port"}
    assert {f.predicate for f in store.reader.facts([eid], history=True)} == {"role", "port"}
    assert store.reader.review_queue(ReviewFilter())[0] == 0
    assert store.reader.review_queue(ReviewFilter(statuses=("rejected",)))[0] == 1
    # stated facts are approved from the start; "stated,approved" is a union
    assert {f.predicate for f in store.reader.facts([eid], trusts=["approved"])} == {"role"}
    [event] = [e for e in store.reader.events(fact_ids=[fid]) if e.action == "review"]
    assert event.actor == "dana" and event.reason == "wrong"


def test_a_review_decision_survives_reingest(store: Store) -> None:
    d = doc("a.md", [replace(fact("uses", lit("x"), 2), trust="asserted")])
    with store.write(actor="t") as w:
        w.apply("default", d)
    [f] = store.reader.facts([_eid(store, "a")])
    with store.write(actor="t") as w:
        w.set_review(f.id, "approved", reason=None)
        w.apply("default", d, force=True)
    [again] = store.reader.facts([_eid(store, "a")])
    assert again.id == f.id and again.review == "approved"


def test_tokens_are_kept_hashed_and_revocable(store: Store) -> None:
    with store.write(actor="t") as w:
        tid = w.create_token("ci", "h" * 64, scopes=["a", "b"], read_only=True,
                             created_at="2026-01-01T00:00:00.000000Z")
    t = store.reader.token_by_hash("h" * 64)
    assert t is not None and t.id == tid and t.scopes == ("a", "b") and t.read_only
    with store.write(actor="t") as w:
        assert w.revoke_token(tid, at="2026-01-02T00:00:00.000000Z")
        assert not w.revoke_token(tid, at="2026-01-03T00:00:00.000000Z")
    [listed] = store.reader.tokens()
    assert listed.revoked_at == "2026-01-02T00:00:00.000000Z"


def test_events_since(store: Store) -> None:
    _assert(store, "p", "1")
    [first] = store.reader.events()
    _assert(store, "p", "2")
    assert len(store.reader.events(since=first.at)) == 2
    later = store.reader.events(limit=1)[0].at
    assert [e.at for e in store.reader.events(since=later)] == [later]


def test_export_rows_import_into_an_empty_store(store: Store, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with store.write(actor="t") as w:
        w.apply("default", doc("a.md", [fact("role", lit("engineer"), 2)]))
    _assert(store, "p", "1")
    rows = list(store.reader.export_rows())
    tables = {t for t, _ in rows}
    assert {"documents", "versions", "chunks", "entities", "facts", "events"} <= tables
    other = open_store(str(tmp_path / "copy.db"))
    try:
        with other.write(actor="t") as w:
            for table in dict.fromkeys(t for t, _ in rows):
                w.import_rows(table, [r for t, r in rows if t == table])
            w.rebuild_indexes()
        assert list(other.reader.export_rows()) == rows
        eid = other.reader.find_entity("a", name_key("a"))
        assert eid is not None
        assert {f.predicate for f in other.reader.facts([eid])} == {"role", "p"}
    finally:
        other.close()


def test_a_fact_read_as_of_shows_no_later_retraction(store: Store) -> None:
    fid = _assert(store, "p", "1")
    [before] = store.reader.facts_by_id([fid])
    with store.write(actor="t") as w:
        w.retract_fact(fid, reason="later")
    eid = _eid(store, "a")
    [then] = store.reader.facts([eid], as_of=before.recorded_at)
    assert then.retracted_at is None and then.retract_reason is None
    [now] = store.reader.facts([eid], history=True)
    assert now.retracted_at is not None and now.retract_reason == "later"


def test_find_entity_in_scopes(store: Store) -> None:
    with store.write(actor="t") as w:
        w.apply("one", doc("a.md", [fact("role", lit("x"), 2)]))
        w.apply("two", doc("a.md", [fact("role", lit("y"), 2)]))
    found = {scope: store.reader.find_entity("a", name_key("a"), scopes=[scope])
             for scope in ("one", "two", "three")}
    assert found["one"] and found["two"] and found["one"] != found["two"]
    assert found["three"] is None
    [f] = store.reader.facts([found["two"]])  # type: ignore[list-item]
    assert f.value == "y"


def test_updated_dates_read_what_each_document_states_about_its_note(store: Store) -> None:
    from datetime import UTC, datetime

    from knotwork.store import record_time

    with store.write(actor="t") as w:
        w.apply("default", doc("a.md", [fact("updated", lit(" 2024-05-01 "), 2),
                                        fact("status", lit("open"), 3)]))
        w.apply("default", doc("b.md", [fact("status", lit("done"), 2)]))
        # c.md says when a.md was updated: not what a.md's note states of itself
        w.apply("default", doc("c.md", [fact("updated", lit("2020-01-01"), 2,
                                             subject=link("a"))]))
    then = record_time(datetime.now(UTC))
    ids = {p: rec.id for p in ("a.md", "b.md", "c.md")
           if (rec := store.reader.document("default", p)) is not None}
    docs = [(ids[p], "default", p) for p in ("a.md", "b.md", "c.md")]
    assert store.reader.updated_dates(docs) == {ids["a.md"]: "2024-05-01"}
    assert store.reader.updated_dates([(ids["a.md"], "other", "a.md")]) == {}
    assert store.reader.updated_dates([]) == {}
    with store.write(actor="t") as w:
        w.apply("default", doc("a.md", [fact("updated", lit("2024-06-02"), 2)]))
    assert store.reader.updated_dates(docs) == {ids["a.md"]: "2024-06-02"}
    assert store.reader.updated_dates(docs, as_of=then) == {ids["a.md"]: "2024-05-01"}


def test_a_notes_updated_date_is_the_same_read_with_its_facts_in_a_snapshot(
        store: Store) -> None:
    with store.write(actor="t") as w:
        w.apply("default", doc("a.md", [fact("updated", lit("2024-05-01"), 2),
                                        fact("updated", lit(" 2024-06-02 "), 3),
                                        fact("status", lit("open"), 4)]))
        w.apply("default", doc("b.md", [fact("status", lit("done"), 2)]))
    notes = {p: store.reader.find_entity(p, name_key(p)) for p in "ab"}
    ids = {p: rec.id for p in "ab" if (rec := store.reader.document("default", f"{p}.md"))}
    docs = [(ids[p], "default", f"{p}.md") for p in "ab"]
    alone = store.reader.updated_dates(docs)
    assert alone == {ids["a"]: "2024-06-02"}  # the last stated wins
    with store.snapshot():
        # as a context reads them: the rows, each note's facts, then the dates
        rows = store.reader.entities(e for e in notes.values() if e is not None)
        for p, e in notes.items():
            assert e is not None
            out, _ = store.reader.entity_facts(e, out_limit=10, in_limit=5,
                                               own_document=rows[e].document_id)
            assert {f.predicate for f in out} >= {"status"}
            assert store.reader.updated_dates([(ids[p], "default", f"{p}.md")]) == (
                {ids[p]: "2024-06-02"} if p == "a" else {})
        assert store.reader.updated_dates(docs) == alone
