"""The contract of the structured reads: ``find_subjects`` (entities by their live facts)
and ``document_changes`` (what changed since a time), each read on an index."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from knotwork.store import FactMatch, Store, SubjectMatch
from knotwork.types import FactDraft, NameRef, Span

from .drafts import doc, fact, link, lit


def _apply(store: Store, *docs, scope: str = "default") -> None:  # type: ignore[no-untyped-def]
    with store.write(actor="test") as w:
        for d in docs:
            w.apply(scope, d)


def _labels(found: Sequence[SubjectMatch]) -> list[str]:
    return [m.label for m in found]


def _adrs(store: Store) -> None:
    _apply(store,
           doc("adr/1.md", [fact("type", lit("adr"), 1), fact("status", lit("Accepted"), 2)],
               title="ADR 1"),
           doc("adr/2.md", [fact("type", lit("ADR"), 1), fact("status", lit("accepted"), 3),
                            fact("owner", link("Alice"), 4)], title="ADR 2"),
           doc("adr/3.md", [fact("type", lit("adr"), 1), fact("status", lit("proposed"), 2),
                            fact("owner", link("Bob"), 3)], title="ADR 3"),
           doc("people/alice-smith.md", [fact("type", lit("person"), 1)],
               title="Alice Smith", aliases=("Alice",)),
           doc("notes/n.md", [fact("status", lit("accepted"), 2)], title="A note"))


def test_conditions_are_anded_and_values_compared_without_ascii_case(store: Store) -> None:
    _adrs(store)
    r = store.reader
    status = FactMatch("status", ("ACCEPTED",))
    assert _labels(r.find_subjects([status])) == ["A note", "ADR 1", "ADR 2"]
    found = r.find_subjects([status, FactMatch("type", ("adr",))])
    assert _labels(found) == ["ADR 1", "ADR 2"]
    [one, two] = found
    facts = {f.id: f for f in r.facts_by_id([i for ids in two.fact_ids for i in ids])}
    assert [facts[i].value for i in two.fact_ids[0]] == ["accepted"]
    assert [facts[i].value for i in two.fact_ids[1]] == ["ADR"]
    assert one.subject_id != two.subject_id
    # any value of a predicate; a predicate no fact has
    assert _labels(r.find_subjects([FactMatch("owner")])) == ["ADR 2", "ADR 3"]
    assert r.find_subjects([FactMatch("colour")]) == []
    assert r.find_subjects([]) == []
    # beyond ASCII a letter's case is a spelling of its own (the caller sends each one)
    _apply(store, doc("x.md", [fact("level", lit("ÉLEVÉ Plus"), 1)], title="X"))
    assert r.find_subjects([FactMatch("level", ("élevé plus",))]) == []
    assert _labels(r.find_subjects([FactMatch("level", ("ÉLEVÉ PLUS",))])) == ["X"]
    assert _labels(r.find_subjects([FactMatch("level", ("élevé plus", "ÉLEVÉ plus"))])) == ["X"]


def test_an_entity_value_is_found_by_its_name_or_any_name_of_its_note(store: Store) -> None:
    _adrs(store)
    r = store.reader
    for key in ("alice", "alice smith", "people/alice-smith"):  # link, title, path
        assert _labels(r.find_subjects([FactMatch("owner", names=(key,))])) == ["ADR 2"], key
    # a name no note declares: the name as written
    assert _labels(r.find_subjects([FactMatch("owner", names=("bob",))])) == ["ADR 3"]
    # a literal spelling never matches an entity value, nor a name a literal
    assert r.find_subjects([FactMatch("owner", values=("alice",))]) == []
    assert r.find_subjects([FactMatch("status", names=("accepted",))]) == []


def test_only_live_unrejected_facts_of_the_scopes_asked_count(store: Store) -> None:
    _adrs(store)
    _apply(store, doc("adr/9.md", [fact("type", lit("adr"), 1),
                                   fact("status", lit("accepted"), 2)], title="ADR 9"),
           scope="other")
    r = store.reader
    accepted = [FactMatch("status", ("accepted",)), FactMatch("type", ("adr",))]
    assert _labels(r.find_subjects(accepted)) == ["ADR 1", "ADR 2", "ADR 9"]
    assert _labels(r.find_subjects(accepted, scopes=["other"])) == ["ADR 9"]
    assert _labels(r.find_subjects(accepted, scopes=["default"])) == ["ADR 1", "ADR 2"]
    # an edit retracts the old status: no stale answer
    _apply(store, doc("adr/1.md", [fact("type", lit("adr"), 1),
                                   fact("status", lit("deprecated"), 2)], title="ADR 1"))
    assert _labels(r.find_subjects(accepted, scopes=["default"])) == ["ADR 2"]
    [two] = r.find_subjects(accepted, scopes=["default"])
    with store.write(actor="reviewer") as w:
        w.set_review(two.fact_ids[0][0], "rejected", reason="wrong")
    assert r.find_subjects(accepted, scopes=["default"]) == []
    # an asserted fact counts as a stated one
    draft = FactDraft(subject=NameRef.of("ADR 3"), predicate="status", object=lit("accepted"),
                      span=Span(0, 0), supporting_text="", extractor="api", trust="asserted")
    with store.write(actor="agent") as w:
        w.assert_fact("default", draft)
    assert _labels(r.find_subjects(accepted, scopes=["default"])) == ["ADR 3"]


def test_pages_follow_label_then_id(store: Store) -> None:
    _apply(store, *[doc(f"n{i}.md", [fact("kind", lit("x"), 1)], title=f"N{i}")
                    for i in (3, 1, 2, 5, 4)])
    r = store.reader
    first = r.find_subjects([FactMatch("kind", ("x",))], limit=2)
    assert _labels(first) == ["N1", "N2"]
    rest = r.find_subjects([FactMatch("kind", ("x",))], limit=10,
                           after=(first[-1].label, first[-1].subject_id))
    assert _labels(rest) == ["N3", "N4", "N5"]


def test_document_changes_say_what_who_and_when_newest_first(store: Store) -> None:
    _apply(store, doc("a.md", [fact("status", lit("x"), 1)]), doc("b.md", []))
    _apply(store, doc("a.md", [fact("status", lit("y"), 1)]))
    with store.write(actor="mover") as w:
        w.apply("default", doc("c.md", [], body=doc("b.md", []).text), rename_from="b.md")
    with store.write(actor="remover") as w:
        w.delete("default", "a.md", reason="file deleted")
    with store.write(actor="rereader") as w:  # the same text read again: no change
        w.apply("default", doc("c.md", [], body=doc("b.md", []).text), force=True)
    _apply(store, doc("z.md", []), scope="other")
    r = store.reader
    every = r.document_changes(since="0001")
    assert [(c.change, c.path, c.scope) for c in every] == [
        ("created", "z.md", "other"), ("deleted", "a.md", "default"),
        ("renamed", "c.md", "default"), ("edited", "a.md", "default"),
        ("created", "b.md", "default"), ("created", "a.md", "default")]
    created, deleted, renamed, edited = every[0], every[1], every[2], every[3]
    assert renamed.previous_path == "b.md" and renamed.actor == "mover"
    assert deleted.actor == "remover" and deleted.facts_retracted == 1
    assert (edited.facts_added, edited.facts_retracted) == (1, 1)
    assert edited.version_id is not None and edited.title == "a"
    assert created.actor == "test" and [c.at for c in every] == sorted(
        (c.at for c in every), reverse=True)
    assert [c.path for c in r.document_changes(since="0001", limit=2)] == ["z.md", "a.md"]
    assert "z.md" not in {c.path for c in r.document_changes(since="0001",
                                                              scopes=["default"])}
    later = r.document_changes(since=every[2].at)
    assert [c.change for c in later] == ["created", "deleted", "renamed"]
    assert r.document_changes(since="9999") == []


class _Plans:
    """A reader's connection that records the plan of every statement it runs."""

    def __init__(self, store: Store) -> None:
        self.con: Any = store.reader.con  # type: ignore[attr-defined]
        self.pg = store.backend == "postgresql"
        self.plans: list[str] = []

    def execute(self, sql: str, args: Sequence[object] = ()) -> Any:
        explain = "EXPLAIN " if self.pg else "EXPLAIN QUERY PLAN "
        self.plans.append("\n".join(str(row) for row in self.con.execute(explain + sql, args)
                                    .fetchall()))
        return self.con.execute(sql, args)


def test_both_reads_use_their_indexes_not_a_scan(store: Store) -> None:
    _adrs(store)
    spy = _Plans(store)
    reader = type(store.reader)(spy)  # type: ignore[call-arg]
    with store.snapshot():
        if spy.pg:  # a table of a few rows is read whole unless told otherwise
            spy.con.execute("SET LOCAL enable_seqscan = off")
        reader.find_subjects([FactMatch("status", ("accepted",)),
                              FactMatch("owner", ("x",), ("alice",)), FactMatch("type")])
        reader.document_changes(since="0001", limit=5)
        reader.types([1, 2])  # (the subjects' index, not every type fact)
    find, changes, *_, types = spy.plans  # (types asks for the members first)
    assert find.count("facts_predicate_live") >= 3, find
    assert "events_document_change" in changes, changes
    if not spy.pg:  # (PostgreSQL picks the object's or the predicate's index by statistics)
        assert "facts_object" in find, find
        assert "facts_subject" in types and "facts_predicate_live" not in types, types
        assert "SCAN f" not in find and "SCAN e " not in changes, (find, changes)
    else:
        assert "Seq Scan on facts" not in find and "Seq Scan on events" not in changes
