"""The store contract: every backend must pass this suite (parametrised in conftest).

Only the Protocols of ``knotwork.store`` are used here: no connection, no SQL.
"""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from knotwork.store import Store, TextQuery, open_store
from knotwork.types import Applied, ChunkDraft, Deleted, Span, Unchanged, name_key

from .drafts import doc, fact, link, lit


def live(store: Store, label: str) -> set[tuple[str, str]]:
    eid = store.reader.find_entity(label, name_key(label))
    assert eid is not None, label
    return {(f.predicate, f.value_label or f.value) for f in store.reader.facts([eid])}


def apply(store: Store, *docs, force: bool = False):  # type: ignore[no-untyped-def]
    with store.write(actor="test") as w:
        return [w.apply("default", d, force=force) for d in docs]


def test_apply_then_unchanged(store: Store) -> None:
    d = doc("a.md", [fact("role", lit("engineer"), 2)])
    [out] = apply(store, d)
    assert isinstance(out, Applied) and out.created and out.added == 1
    [again] = apply(store, d)
    assert isinstance(again, Unchanged)
    assert store.reader.stats()["versions"] == 1


def test_edit_diffs_owned_facts_and_keeps_recorded_at(store: Store) -> None:
    apply(store, doc("a.md", [fact("role", lit("engineer"), 2), fact("links_to", link("B"), 3)]))
    eid = store.reader.find_entity("a", "a")
    before = {f.predicate: f for f in store.reader.facts([eid])}
    [out] = apply(store, doc("a.md", [fact("role", lit("engineer"), 5),
                                       fact("links_to", link("C"), 6)]))
    assert isinstance(out, Applied) and (out.added, out.retracted, out.kept) == (1, 1, 1)
    after = {f.predicate: f for f in store.reader.facts([eid])}
    assert after["role"].recorded_at == before["role"].recorded_at
    assert after["role"].source is not None and after["role"].source.line_start == 5
    assert after["links_to"].value_label == "C"
    hist = store.reader.facts([eid], history=True)
    gone = [f for f in hist if f.retracted_at]
    assert [f.value_label for f in gone] == ["B"]


def test_delete_tombstones_and_retracts_everything(store: Store) -> None:
    apply(store, doc("a.md", [fact("role", lit("engineer"), 2)], body="kestrel words here"))
    with store.write(actor="test") as w:
        out = w.delete("default", "a.md")
    assert isinstance(out, Deleted) and out.retracted == 1
    assert store.reader.search_chunks(TextQuery(("kestrel",)), limit=5) == []
    assert store.reader.lookup_names(["a"]) == {}
    assert store.reader.document("default", "a.md").deleted_at is not None  # type: ignore[index]
    assert store.reader.stats()["facts"] == 0
    with store.write(actor="test") as w:
        assert w.delete("default", "a.md") is None


def test_forward_link_binds_when_note_appears_and_unbinds_on_delete(store: Store) -> None:
    apply(store, doc("a.md", [fact("depends_on", link("Kestrel Queue"), 2)]))
    eid = store.reader.find_entity("a", "a")
    [f] = store.reader.facts([eid])
    assert f.value.startswith("kw:name/")
    apply(store, doc("services/Kestrel Queue.md", [fact("port", lit("5672", "integer"), 2)]))
    [f] = store.reader.facts([eid])
    assert f.value == "kw:note/services/Kestrel%20Queue"
    target = store.reader.find_entity("kestrel queue", "kestrel queue")
    incoming = store.reader.facts([target], direction="in")
    assert [x.subject_label for x in incoming] == ["a"]
    with store.write(actor="test") as w:
        w.delete("default", "services/Kestrel Queue.md")
    [f] = store.reader.facts([eid])
    assert f.value.startswith("kw:name/")


def test_entity_facts_reads_both_directions_oldest_first_up_to_limits(store: Store) -> None:
    # links written before the hub exists point at its name entity: they still count
    apply(store, *[doc(f"a{i}.md", [fact("uses", link("Hub"), 1, conf=0.5 if i == 2 else 1.0)])
                   for i in range(4)])
    apply(store, doc("hub.md", [fact(f"p{i}", lit(str(i)), i + 1) for i in range(4)]))
    apply(store, doc("a4.md", [fact("uses", link("hub"), 1)]))
    apply(store, doc("a0.md", []))  # its link is retracted
    hub = store.reader.find_entity("hub", "hub")
    assert hub is not None
    out, inc = store.reader.entity_facts(hub, out_limit=3, in_limit=10)
    assert [f.predicate for f in out] == ["p0", "p1", "p2"]
    assert [f.subject_label for f in inc] == ["a1", "a2", "a3", "a4"]
    assert [f.id for f in inc] == sorted(f.id for f in inc)
    out, inc = store.reader.entity_facts(hub, out_limit=10, in_limit=2, min_confidence=0.6)
    assert len(out) == 4 and [f.subject_label for f in inc] == ["a1", "a3"]
    assert store.reader.entity_facts(hub, out_limit=5, in_limit=5, scopes=["other"]) == ([], [])


def test_alias_repoints_links_without_rewriting_them(store: Store) -> None:
    apply(store, doc("a.md", [fact("uses", link("KQ"), 2)]),
          doc("queue.md", [], title="Kestrel Queue"))
    eid = store.reader.find_entity("a", "a")
    assert store.reader.facts([eid])[0].value_label == "KQ"
    apply(store, doc("queue.md", [], title="Kestrel Queue", aliases=("KQ",)))
    assert store.reader.facts([eid])[0].value_label == "Kestrel Queue"


def test_same_name_resolves_to_shortest_path_and_is_reported(store: Store) -> None:
    apply(store, doc("deep/nested/x.md", []), doc("x.md", []), doc("a.md", [fact(
        "links_to", link("x"), 1)]))
    eid = store.reader.find_entity("a", "a")
    assert store.reader.facts([eid])[0].value == "kw:note/x"
    assert ("x", ["x.md", "deep/nested/x.md"]) in store.reader.ambiguous_names()


def test_rename_keeps_document_and_facts(store: Store) -> None:
    d = doc("old.md", [fact("role", lit("engineer"), 2)])
    apply(store, d)
    before = store.reader.document("default", "old.md")
    eid = store.reader.find_entity("old", "old")
    f0 = store.reader.facts([eid])[0]
    moved = doc("new.md", [fact("role", lit("engineer"), 2)])
    with store.write(actor="test") as w:
        out = w.apply("default", moved, rename_from="old.md")
    assert isinstance(out, Applied) and out.renamed_from == "old.md" and out.retracted == 0
    after = store.reader.document("default", "new.md")
    assert after is not None and before is not None and after.id == before.id
    f1 = store.reader.facts([store.reader.find_entity("new", "new")])[0]
    assert f1.id == f0.id and f1.source is not None and f1.source.path == "new.md"


def test_document_texts_are_the_current_versions_of_live_files(store: Store) -> None:
    apply(store, doc("a.md", [], body="first"), doc("b.md", [], body="bee"))
    apply(store, doc("a.md", [], body="second"))
    with store.write(actor="test") as w:
        w.delete("default", "b.md")
    assert store.reader.document_texts("default", ["a.md", "b.md", "none.md"]) == {
        "a.md": "second"}
    assert store.reader.document_texts("other", ["a.md"]) == {}


def test_as_of_sees_the_past(store: Store) -> None:
    apply(store, doc("a.md", [fact("status", lit("draft"), 2)]))
    eid = store.reader.find_entity("a", "a")
    t0 = store.reader.facts([eid])[0].recorded_at
    apply(store, doc("a.md", [fact("status", lit("final"), 2)]))
    assert {f.value for f in store.reader.facts([eid])} == {"final"}
    assert {f.value for f in store.reader.facts([eid], as_of=t0)} == {"draft"}


def test_failed_document_rolls_back_alone(store: Store) -> None:
    good, bad = doc("good.md", [fact("role", lit("x"), 1)]), doc("bad.md", [fact("r", lit("y"), 1)])
    with store.write(actor="test") as w:
        w.apply("default", good)
        with pytest.raises(RuntimeError), w.savepoint():
            w.apply("default", bad)
            raise RuntimeError("crash mid-document")
    assert store.reader.document("default", "good.md") is not None
    assert store.reader.document("default", "bad.md") is None
    assert store.reader.stats()["facts"] == 1


def test_crash_in_transaction_leaves_previous_state(store: Store) -> None:
    apply(store, doc("a.md", [fact("status", lit("one"), 1)]))
    with pytest.raises(RuntimeError), store.write(actor="test") as w:
        w.apply("default", doc("a.md", [fact("status", lit("two"), 1)]))
        raise RuntimeError("power cut")
    assert live(store, "a") == {("status", "one")}


def test_assert_and_retract_single_fact_with_events(store: Store) -> None:
    from knotwork.types import FactDraft, Span

    draft = FactDraft(subject=link("Traefik"), predicate="port", object=lit("443", "integer"),
                      span=Span(0, 0), supporting_text="agent saw it", extractor="api",
                      trust="asserted")
    with store.write(actor="agent:x") as w:
        fid = w.assert_fact("default", draft, reason="observed")
    assert live(store, "traefik") == {("port", "443")}
    with store.write(actor="agent:x") as w:
        assert w.retract_fact(fid, reason="wrong port")
        assert not w.retract_fact(fid, reason="again")
    assert live(store, "traefik") == set()
    actions = [e.action for e in store.reader.events(fact_ids=[fid])]
    assert actions == ["retract", "assert"]


def test_every_mutation_writes_an_event(store: Store) -> None:
    apply(store, doc("a.md", [fact("r", lit("1"), 1)]))
    apply(store, doc("a.md", [fact("r", lit("2"), 1)]))
    with store.write(actor="test") as w:
        w.delete("default", "a.md")
    d = store.reader.document("default", "a.md")
    assert d is not None
    events = store.reader.events(document_id=d.id)  # type: ignore[union-attr]
    assert [e.action for e in events] == ["delete", "update", "create"]
    assert all(e.actor == "test" for e in events)


def test_fulltext_finds_entities_and_chunks(store: Store) -> None:
    apply(store, doc("services/Traefik.md", [fact("port", lit("443", "integer"), 2)],
                     body="Traefik is the reverse proxy", aliases=("edge proxy",)))
    hits = store.reader.search_entities(TextQuery(("proxy",)), limit=5)
    assert [h.id for h in hits] == [store.reader.find_entity("traefik", "traefik")]
    assert len(store.reader.search_chunks(TextQuery(("reverse",)), limit=5)) == 1


def test_chunk_terms_match_as_the_index_does(store: Store) -> None:
    apply(store, doc("a.md", [], body="The engines were developed in Lincoln."),
          doc("b.md", [], body="Nothing of the sort here."))
    [a] = store.reader.search_chunks(TextQuery(("engines",)), limit=5)
    [b] = store.reader.search_chunks(TextQuery(("sort",)), limit=5)
    got = store.reader.chunk_terms([a.id, b.id], ["engine", "developing", "lincoln", "absent"])
    assert got == {a.id: {"engine", "developing", "lincoln"}, b.id: set()}  # stemmed
    assert store.reader.chunk_terms([], ["engine"]) == {}
    assert store.reader.chunk_terms([a.id], []) == {a.id: set()}
    # a second call sees only its own chunks (the scratch table starts empty each time)
    assert store.reader.chunk_terms([b.id], ["engine"]) == {b.id: set()}


def test_change_token_moves_on_commits_not_on_reads(store: Store) -> None:
    apply(store, doc("a.md", [], body="kestrel words here"))
    before = store.change_token()
    store.reader.term_frequencies(["kestrel"])  # reads that write scratch tables
    [hit] = store.reader.search_chunks(TextQuery(("kestrel",)), limit=5)
    store.reader.chunk_terms([hit.id], ["words"])
    assert store.change_token() == before
    apply(store, doc("b.md", [], body="more words"))
    assert store.change_token() != before


def test_a_snapshot_sees_one_state_while_another_writer_commits(store: Store) -> None:
    from knotwork.store import open_store

    apply(store, doc("a.md", [fact("r", lit("1"), 1)], body="kestrel words here"))
    other = open_store(store.path)
    try:
        with store.snapshot():
            assert store.reader.stats()["facts"] == 1
            token = store.change_token()
            with other.write(actor="test") as w:  # a writer is not kept waiting
                w.apply("default", doc("b.md", [fact("r", lit("2"), 1)], body="kestrel too"))
                w.delete("default", "a.md")
            with store.snapshot():  # nested: the same state still
                assert store.reader.stats()["facts"] == 1
            assert len(store.reader.search_chunks(TextQuery(("kestrel",)), limit=5)) == 1
            assert store.reader.chunk_terms([1], ["words"]) == {1: {"words"}}  # scratch reads
            assert store.change_token() == token
        assert store.reader.stats()["facts"] == 1  # b's, now
        assert store.reader.live_chunk_count() == 1
        assert store.change_token() != token
        with store.write(actor="test") as w:  # and writes go on as before
            w.delete("default", "b.md")
        assert store.reader.stats()["facts"] == 0
    finally:
        other.close()


def test_live_chunk_count_follows_edits_and_deletes(store: Store) -> None:
    def counted() -> int:
        return store.reader.stats()["chunks"]

    assert store.reader.live_chunk_count() == 0
    apply(store, doc("a.md", [], body="one"), doc("b.md", [], body="two"))
    assert store.reader.live_chunk_count() == counted() > 0
    apply(store, doc("a.md", [], body="one, edited"))
    assert store.reader.live_chunk_count() == counted()
    with store.write(actor="test") as w:
        w.delete("default", "b.md")
    assert store.reader.live_chunk_count() == counted()


def test_reopen_sees_committed_data(store: Store, store_url: str) -> None:
    apply(store, doc("a.md", [fact("r", lit("1"), 1)]))
    other = open_store(store_url)
    try:
        assert other.reader.stats()["facts"] == 1
    finally:
        other.close()


def test_a_rename_applied_twice_is_applied_once(store: Store) -> None:
    apply(store, doc("old.md", [fact("role", lit("engineer"), 2)]))
    moved = doc("new.md", [fact("role", lit("engineer"), 2)])
    for _ in range(2):  # two watchers saw the same rename
        with store.write(actor="test") as w:
            w.apply("default", moved, rename_from="old.md")
    assert store.reader.stats()["documents"] == 1
    assert live(store, "new") == {("role", "engineer")}


def test_degrees_count_live_facts_in_and_out_up_to_the_cap(store: Store) -> None:
    apply(store, doc("hub.md", [fact("role", lit("core"), 2)]),
          *[doc(f"n{i}.md", [fact("links_to", link("hub"), 2)]) for i in range(5)])
    hub = store.reader.find_entity("hub", "hub")
    leaf = store.reader.find_entity("n0", "n0")
    assert hub is not None and leaf is not None
    # hub: its own literal fact out, five links in (through the resolved name entity)
    assert store.reader.degrees([hub, leaf]) == {hub: 6, leaf: 1}
    assert store.reader.degrees([hub], cap=3) == {hub: 3}
    with store.write(actor="test") as w:
        w.delete("default", "n1.md")
    assert store.reader.degrees([hub])[hub] == 5


def test_term_frequencies_stem_and_stop_at_the_cap(store: Store) -> None:
    apply(store, *[doc(f"d{i}.md", [], body=f"# D{i}\n\nrunning queues {'kestrel' * (i == 0)}")
                   for i in range(4)])
    freqs = dict(store.reader.term_frequencies(["queue", "run", "kestrel", "absent"]))
    assert freqs == {"queue": 4, "run": 4, "kestrel": 1, "absent": 0}
    assert dict(store.reader.term_frequencies(["queue", "kestrel"], cap=2)) == {
        "queue": 2, "kestrel": 1}


def test_a_rolled_back_document_leaves_no_text_to_find(store: Store) -> None:
    # the next document after the rollback gets the same row ids the rolled-back one had
    with store.write(actor="test") as w:
        w.apply("default", doc("a.md", [], body="alpha words"))
        with pytest.raises(RuntimeError), w.savepoint():
            w.apply("default", doc("b.md", [fact("r", link("Zebra Crossing"), 1)],
                                   body="zebra words"))
            raise RuntimeError("crash mid-document")
        w.apply("default", doc("c.md", [fact("r", link("Walrus Bay"), 1)], body="walrus words"))
    assert store.reader.search_chunks(TextQuery(("zebra",)), limit=5) == []
    assert store.reader.search_entities(TextQuery(("zebra",)), limit=5) == []
    [hit] = store.reader.search_chunks(TextQuery(("walrus",)), limit=5)
    assert "walrus" in store.reader.chunks([hit.id])[hit.id].text
    assert len(store.reader.search_entities(TextQuery(("walrus",)), limit=5)) == 1
    assert len(store.reader.search_chunks(TextQuery(("words",)), limit=5)) == 2


def test_a_document_written_twice_in_one_transaction_is_found_by_its_last_text(
        store: Store) -> None:
    with store.write(actor="test") as w:
        for word in ("first", "second", "third"):
            w.apply("default", doc("a.md", [], body=f"{word} version"))
    assert store.reader.search_chunks(TextQuery(("first", "second")), limit=5) == []
    [hit] = store.reader.search_chunks(TextQuery(("version",)), limit=5)
    assert store.reader.chunks([hit.id])[hit.id].text == "third version"
    with store.write(actor="test") as w:
        w.delete("default", "a.md")
    assert store.reader.search_chunks(TextQuery(("version",)), limit=5) == []


def test_a_prepared_document_applies_as_the_parsed_one(store: Store) -> None:
    d = doc("a.md", [fact("uses", link("Kafka"), 2), fact("port", lit("9092", "integer"), 3)],
            body="# A\nuses kafka\nport 9092")
    with store.write(actor="test") as w:
        out = w.apply("default", store.prepare(d))
    assert isinstance(out, Applied) and out.added == 2
    assert apply(store, d) == [Unchanged("a.md")]
    assert live(store, "a") == {("uses", "Kafka"), ("port", "9092")}


def test_document_index_holds_each_file_as_its_version_was_written(store: Store) -> None:
    """What a sync trusts to skip reading a file: the size and time it had when found to
    hold its version, and when that was (``checked_ns``), for live file documents only."""
    before = time.time_ns()
    apply(store, replace(doc("a.md", [fact("role", lit("engineer"), 2)]), size=120,
                         mtime_ns=before - 10**10), doc("b.md", []))
    after = time.time_ns()
    index = store.reader.document_index("default")
    a = index["a.md"]
    assert (a.size, a.mtime_ns) == (120, before - 10**10)
    assert a.content_hash == doc("a.md", [fact("role", lit("engineer"), 2)]).content_hash
    assert before - 10**6 <= a.checked_ns <= after + 10**6  # the clock's microseconds
    assert set(store.reader.document_index("default", paths=["b.md", "c.md"])) == {"b.md"}
    time.sleep(0.01)
    apply(store, replace(doc("a.md", [fact("role", lit("manager"), 2)]), size=130))
    assert store.reader.document_index("default")["a.md"].checked_ns > a.checked_ns
    with store.write(actor="test") as w:
        w.delete("default", "b.md")
    assert set(store.reader.document_index("default")) == {"a.md"}


def test_refreshed_files_keep_their_version_and_a_new_version_resets_the_check(
        store: Store) -> None:
    d = doc("a.md", [fact("role", lit("engineer"), 2)])
    apply(store, d)
    later = time.time_ns() + 10**9
    with store.write(actor="test") as w:
        assert w.refresh_files("default", [("a.md", d.content_hash, 77, 5, later),
                                           ("a.md", "other version", 1, 2, 3),
                                           ("gone.md", d.content_hash, 1, 2, 3)]) == 1
    a = store.reader.document_index("default")["a.md"]
    assert (a.content_hash, a.size, a.mtime_ns, a.checked_ns) == (d.content_hash, 77, 5, later)
    assert store.reader.stats()["versions"] == 1  # no new version, and no fact touched
    apply(store, replace(doc("a.md", [fact("role", lit("manager"), 2)]), size=9, mtime_ns=8))
    a = store.reader.document_index("default")["a.md"]
    assert (a.size, a.mtime_ns) == (9, 8) and a.checked_ns <= time.time_ns()


def test_a_document_read_under_other_rules_is_applied_again(store: Store) -> None:
    """The same text parsed under other extraction rules is no "unchanged": its facts are
    diffed again, the rules recorded, and the same rules again change nothing."""
    d = replace(doc("a.md", [fact("role", lit("engineer"), 2)]), extraction="1/220")
    apply(store, d)
    assert store.reader.document_index("default")["a.md"].extraction == "1/220"
    [same] = apply(store, d)
    assert isinstance(same, Unchanged)
    # the same text, read otherwise
    newer = replace(doc("a.md", [fact("role", lit("engineer"), 2), fact("team", lit("core"), 3)]),
                    extraction="2/220", content_hash=d.content_hash)
    doc_id = store.reader.document("default", "a.md").id  # type: ignore[union-attr]
    stamp = store.reader.document_versions([doc_id])[doc_id]
    [out] = apply(store, newer)
    assert isinstance(out, Applied) and out.reread and (out.added, out.kept) == (1, 1)
    # into the same chunks: the version stays, but whoever read the document before sees
    # that it was applied again (its facts may point elsewhere now)
    after = store.reader.document_versions([doc_id])[doc_id]
    assert after[0] == stamp[0] and after != stamp
    assert store.reader.document_index("default")["a.md"].extraction == "2/220"
    assert isinstance(apply(store, newer)[0], Unchanged)
    assert live(store, "a") == {("role", "engineer"), ("team", "core")}


def test_a_lone_writer_claims_all_the_mention_work_it_asks_for(store: Store) -> None:
    apply(store, doc("a.md", []), doc("b.md", []))
    queued = store.reader.mention_work().queued
    assert len(queued) == 2
    for wait in (True, False):
        with store.write(actor="test") as w:
            # sorted, each once; asked twice in one transaction, still held
            assert w.claim_mentions([*reversed(queued), queued[0]], wait=wait) == queued
            assert w.claim_mentions(queued, wait=not wait) == queued


def test_requeued_mentions_wait_for_every_live_document_once(store: Store) -> None:
    apply(store, doc("a.md", []), doc("b.md", []))
    with store.write(actor="test") as w:
        w.delete("default", "b.md")
        queued, _, _ = store.reader.mention_work()
        w.mentions_done(queued, through_change=None)
    gen = store.reader.meta("names_gen")
    with store.write(actor="test") as w:
        assert w.requeue_mentions("7")
    a = store.reader.document("default", "a.md")
    assert a is not None and store.reader.mention_work().queued == [a.id]
    assert store.reader.meta("mention_rules") == "7" and store.reader.meta("names_gen") != gen
    with store.write(actor="test") as w:
        assert not w.requeue_mentions("7")  # done already, by this process or another


def test_name_changes_say_whose_labels_and_which_names_reach_another_note(
        store: Store) -> None:
    apply(store, doc("a.md", [fact("links_to", link("b"), 3)], title="Alpha Note"))
    apply(store, doc("b.md", []))
    a = store.reader.document("default", "a.md").id  # type: ignore[union-attr]
    b = store.reader.document("default", "b.md").id  # type: ignore[union-attr]

    def moved() -> list[tuple[str, int | None, bool]]:
        """(name, the document of the note it reached before, whether it reaches one now)"""
        return [(key, doc_id, reaches) for doc_id, _, key, reaches, label, _
                in store.reader.mention_work()[1] if not label]

    def drain() -> None:
        with store.write(actor="test") as w:
            queued, _, last = store.reader.mention_work()
            w.mentions_done(queued, through_change=last)

    # the labels prose mentions a note by, whose they are
    assert ((a, "Alpha Note", "alpha note", True, True, "default")
            in store.reader.mention_work()[1])
    # "b", linked before b.md was written, came to reach it
    assert moved() == [("b", None, True)]
    assert store.reader.keys_reaching([b]) == {"b"} and store.reader.keys_reaching([a]) == set()
    assert store.reader.documents_linking(["b"]) == {a}
    assert store.reader.documents_linking(["a"]) == set()
    drain()
    # another note named "b" that does not win the name (the shorter path does) moves
    # nothing; a link written with its arrival reaches b.md as every link by "b" does
    apply(store, doc("c/b.md", []), doc("d.md", [fact("links_to", link("b"), 3)]))
    assert moved() == []
    drain()
    with store.write(actor="test") as w:
        w.delete("default", "b.md")
    assert moved() == [("b", b, True)]  # now c/b.md wins it
    assert store.reader.keys_reaching([b]) == set()
    cb = store.reader.document("default", "c/b.md").id  # type: ignore[union-attr]
    assert store.reader.keys_reaching([cb]) == {"b"}
    drain()
    with store.write(actor="test") as w:
        w.delete("default", "c/b.md")
    assert moved() == [("b", cb, False)]  # reaching no note now


def test_compact_drops_only_the_chunks_nothing_reads(store: Store) -> None:
    """A past version's chunk that no fact cites goes; every cited or live chunk stays with
    its text, answers do not change, and a chunk id is never handed out again."""
    def chunk_of(label: str, predicate: str, *, history: bool = False) -> int:
        eid = store.reader.find_entity(label, name_key(label))
        [f] = [f for f in store.reader.facts([eid], history=history)
               if f.predicate == predicate and (history or not f.retracted_at)]
        assert f.source is not None and f.source.chunk_id is not None
        return f.source.chunk_id

    apply(store, doc("a.md", [fact("role", lit("engineer"), 1), fact("team", lit("edge"), 2)],
                     body="kestrel one\nteam edge"))
    apply(store, doc("a.md", [fact("role", lit("engineer"), 1)], body="kestrel two"))
    retracted_cites = chunk_of("a", "team", history=True)  # a past version's chunk
    superseded = chunk_of("a", "role")  # the second version's: cited by nothing once moved
    apply(store, doc("a.md", [fact("role", lit("engineer"), 1)], body="kestrel three"))
    live_chunk = chunk_of("a", "role")
    apply(store, doc("b.md", [], body="plain words"))
    apply(store, doc("c.md", [], body="zebra stripes"))
    [zebra] = store.reader.search_chunks(TextQuery(("zebra",)), limit=5)
    with store.write(actor="test") as w:
        w.delete("default", "b.md")
        w.delete("default", "c.md")  # now the newest chunk is a past version's, uncited
    seen = {retracted_cites, superseded, live_chunk, zebra.id}
    cited = store.reader.chunks([retracted_cites, live_chunk])
    found = store.reader.search_chunks(TextQuery(("kestrel",)), limit=5)
    eid = store.reader.find_entity("a", "a")
    history = store.reader.facts([eid], history=True)

    result = store.compact(actor="test")

    assert result["chunks_removed"] >= 2  # the second version's chunk and b.md's
    assert result["store_bytes"] > 0 and result["bytes_freed"] >= 0
    assert superseded not in store.reader.chunks([superseded])
    assert store.reader.chunks([retracted_cites, live_chunk]) == cited
    assert store.reader.search_chunks(TextQuery(("kestrel",)), limit=5) == found
    assert store.reader.facts([eid], history=True) == history
    assert any(e.action == "compact" for e in store.reader.events(limit=None))
    assert store.compact(actor="test")["chunks_removed"] == 0
    apply(store, doc("d.md", [], body="okapi"))
    [okapi] = store.reader.search_chunks(TextQuery(("okapi",)), limit=5)
    assert okapi.id not in seen and okapi.id > max(seen)


def test_compact_with_vacuum_shrinks_the_file(store: Store) -> None:
    for i in range(30):
        apply(store, doc("a.md", [fact("role", lit("engineer"), 1)],
                         body=f"version {i}\n" + "padding words " * 400))
    size = store.compact(actor="test")["store_bytes"]
    after = store.compact(actor="test", vacuum=True)
    assert after["chunks_removed"] == 0
    assert after["store_bytes"] < size
    assert store.reader.search_chunks(TextQuery(("padding",)), limit=5)


def test_a_save_keeps_the_chunks_it_cuts_as_before(store: Store) -> None:
    """Only changed chunks are written again; a kept chunk keeps its id, its facts'
    citations and its place in search. A rename writes them all (their path changes)."""
    def note(path: str, third: str) -> object:
        texts = ["# Notes\nalpha words", "## Two\nbravo words", f"## Three\n{third} words"]
        # one title for both paths: a renamed chunk would be the same chunk but for its path
        d = doc(path, [fact("role", lit("engineer"), 4)], body="\n".join(texts),
                title="Kept Title")
        chunks = tuple(ChunkDraft(i, ("Notes",) if i == 0 else ("Notes", t.split()[1]), t,
                                  Span(2 * i + 1, 2 * i + 2)) for i, t in enumerate(texts))
        return replace(d, chunks=chunks)

    def hit(word: str) -> int | None:
        hits = store.reader.search_chunks(TextQuery((word,)), limit=5)
        return hits[0].id if hits else None

    apply(store, note("a.md", "charlie"))
    alpha, bravo, charlie = hit("alpha"), hit("bravo"), hit("charlie")
    [role] = store.reader.facts([store.reader.find_entity("a", "a")])
    assert role.source is not None and role.source.chunk_id == bravo  # line 4

    apply(store, note("a.md", "delta"))
    assert (hit("alpha"), hit("bravo")) == (alpha, bravo)
    assert hit("charlie") is None and hit("delta") not in (None, charlie)
    [role] = store.reader.facts([store.reader.find_entity("a", "a")])
    assert role.source is not None and role.source.chunk_id == bravo

    with store.write(actor="test") as w:
        w.apply("default", note("b.md", "delta"), rename_from="a.md")
    moved = [hit("alpha"), hit("bravo"), hit("delta")]
    assert not {alpha, bravo} & set(moved)
    assert {c.path for c in store.reader.chunks(moved).values()} == {"b.md"}


def test_every_version_says_what_it_said(store: Store) -> None:
    """Every version's text is kept and read back whole, before and after ``compact``."""
    texts = [f"version {i}\n" + "the same long paragraph of words " * 40 + f"\nend {i}"
             for i in range(4)] + ["short"]
    for text in texts:
        apply(store, doc("a.md", [fact("role", lit("engineer"), 1)], body=text))
    doc_id = store.reader.document("default", "a.md").id  # type: ignore[union-attr]
    versions = [e.detail["version_id"] for e in  # type: ignore[index]
                reversed(store.reader.events(document_id=doc_id, limit=None))]
    assert len(versions) == len(texts)
    assert [store.reader.version_text(int(v)) for v in versions] == texts
    store.compact(actor="test")  # which may store past versions' text otherwise
    assert [store.reader.version_text(int(v)) for v in versions] == texts
    assert store.reader.version_text(10_000) is None
    assert store.reader.document_texts("default", ["a.md"]) == {"a.md": "short"}


def test_a_label_is_found_by_its_initials_as_it_changes(store: Store) -> None:
    apply(store, doc("hpa.md", [fact("uses", link("Custom Resource Definition"), 2)],
                     title="Horizontal Pod Autoscaler", body="scales pods"))
    note = store.reader.find_entity("hpa", "hpa")
    # a note's label only: no note is named Custom Resource Definition
    assert store.reader.spelled_by(["hpa", "crd", "xyz"]) == [(note, "hpa")]
    assert store.reader.spelled_by(["hpa"], scopes=["other"]) == []
    apply(store, doc("crd.md", [], title="Custom Resource Definition", body="a kind"))
    crd = store.reader.find_entity("crd", "crd")
    assert store.reader.spelled_by(["crd"]) == [(crd, "crd")]
    # a new title spells something else
    apply(store, doc("hpa.md", [], title="Vertical Pod Autoscaler", body="scales pods"))
    assert store.reader.spelled_by(["hpa"]) == []
    assert store.reader.spelled_by(["vpa"]) == [(note, "vpa")]
    with store.write(actor="test") as w:
        w.delete("default", "hpa.md")
    assert store.reader.spelled_by(["vpa"]) == []


def _extracted(pred: str, obj: str, line: int):  # type: ignore[no-untyped-def]
    from knotwork.types import FactDraft, NameRef

    return FactDraft(subject=NameRef.of("Kestrel"), predicate=pred, object=NameRef.of(obj),
                     span=Span(line, line), supporting_text=f"line {line}", extractor="llm",
                     trust="extracted", confidence=0.7)


def test_extracted_facts_are_a_third_owner_that_edits_retract_by_chunk(store: Store) -> None:
    body = "line 1\nKestrel uses Postgres\n\n## B\nKestrel runs on kota"
    two = (ChunkDraft(0, ("a",), "line 1\nKestrel uses Postgres", Span(1, 2)),
           ChunkDraft(1, ("a", "B"), "## B\nKestrel runs on kota", Span(4, 5)))
    d = replace(doc("a.md", [fact("role", lit("engineer"), 1)], body=body), chunks=two)
    [out] = apply(store, d)
    assert isinstance(out, Applied)
    with store.write(actor="test") as w:
        assert w.apply_extracted(out.document_id, [_extracted("uses", "Postgres", 2),
                                                   _extracted("runs_on", "kota", 5)]) == (2, 0)
    assert live(store, "Kestrel") == {("uses", "Postgres"), ("runs_on", "kota")}
    row = next(f for f in store.reader.facts([store.reader.find_entity("Kestrel", "kestrel")])
               if f.predicate == "uses")
    assert (row.trust, row.review) == ("extracted", "unreviewed")
    with store.write(actor="test") as w:  # the same drafts again: nothing changes
        assert w.apply_extracted(out.document_id, [_extracted("uses", "Postgres", 2),
                                                   _extracted("runs_on", "kota", 5)]) == (0, 0)
    # an edit of the second chunk only: its extracted fact goes, the first chunk's stays,
    # and the structural facts are diffed without touching either
    body2 = body.replace("kota", "lynx")
    two2 = (two[0], ChunkDraft(1, ("a", "B"), "## B\nKestrel runs on lynx", Span(4, 5)))
    [edit] = apply(store, replace(doc("a.md", [fact("role", lit("engineer"), 1)], body=body2),
                                  chunks=two2))
    assert isinstance(edit, Applied) and edit.retracted == 1
    assert live(store, "Kestrel") == {("uses", "Postgres")}
    kept = next(f for f in store.reader.facts([store.reader.find_entity("Kestrel", "kestrel")]))
    assert kept.id == row.id and kept.recorded_at == row.recorded_at
    with store.write(actor="test") as w:  # dropping a draft retracts it
        assert w.apply_extracted(out.document_id, []) == (0, 1)
    with store.write(actor="test") as w:
        w.apply_extracted(out.document_id, [_extracted("uses", "Postgres", 2)])
        w.delete("default", "a.md")
    eid = store.reader.find_entity("Kestrel", "kestrel")
    assert eid is None or not store.reader.facts([eid])
