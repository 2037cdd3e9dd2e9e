"""The contract of ``WikiReader``: the set-based queries lint and wiki search ask."""

from __future__ import annotations

from knotwork.store import Store, TextQuery
from knotwork.types import FactDraft, NameRef, Span

from .drafts import doc, fact, link, lit


def _apply(store: Store, *docs) -> None:  # type: ignore[no-untyped-def]
    with store.write(actor="test") as w:
        for d in docs:
            w.apply("default", d)


def _assert(store: Store, subject: str, pred: str, obj, *, actor: str = "agent",  # type: ignore[no-untyped-def]
            valid_from: str | None = None, valid_to: str | None = None) -> int:
    draft = FactDraft(subject=NameRef.of(subject), predicate=pred, object=obj, span=Span(0, 0),
                      supporting_text="", extractor="api", trust="asserted",
                      valid_from=valid_from, valid_to=valid_to)
    with store.write(actor=actor) as w:
        return w.assert_fact("default", draft)


def test_unresolved_links_and_unlinked_notes(store: Store) -> None:
    _apply(store,
           doc("a.md", [fact("links_to", link("b"), 2), fact("links_to", link("nowhere"), 3)]),
           doc("b.md", [fact("links_to", link("a"), 2)]),
           doc("lonely.md", [fact("links_to", link("a"), 2)]),
           doc("island.md", [fact("status", lit("x"), 2)]),
           doc("wiki/index.md", [fact("links_to", link("island"), 2),
                                 fact("links_to", link("gone"), 3)]))
    r = store.reader
    [row] = r.unresolved_links("default", exclude_paths=["wiki/index.md"])
    assert (row.path, row.line, row.name, row.key) == ("a.md", 3, "nowhere", "nowhere")
    assert {x.name for x in r.unresolved_links("default")} == {"nowhere", "gone"}
    assert [(n.path, n.outgoing) for n in r.unlinked_notes(
        "default", exclude_paths=["wiki/index.md"])] == [("island.md", False),
                                                          ("lonely.md", True)]
    # counted, the index's link to island.md makes it linked
    assert "island.md" not in {n.path for n in r.unlinked_notes("default")}
    assert r.unresolved_links("other") == []


def test_conflicting_values_need_two_sources_or_two_windows(store: Store) -> None:
    _apply(store, doc("svc.md", [fact("owner", lit("Dana"), 2), fact("owner", lit("Marco"), 3),
                                 fact("status", lit("Active"), 4)]))
    r = store.reader
    assert r.conflicting_values("default", ["owner", "status"]) == []  # one note's own list
    same = _assert(store, "svc", "status", lit("active"))  # same value, case aside
    assert r.conflicting_values("default", ["status"]) == []
    other = _assert(store, "svc", "status", lit("retired"))
    ids = r.conflicting_values("default", ["status"])
    assert other in ids and same in ids and len(ids) == 3
    assert r.conflicting_values("default", []) == []
    a = _assert(store, "x", "role", lit("lead"), valid_to="2025-01-01")
    b = _assert(store, "x", "role", lit("dev"), valid_from="2025-01-01")
    assert set(r.conflicting_values("default", ["role"])) == {a, b}  # windows: lint decides


def test_rival_claims_read_both_directions(store: Store) -> None:
    _apply(store, doc("ADR-2.md", []), doc("ADR-3.md", [fact("supersedes", link("ADR-2"), 2)]))
    r = store.reader
    assert r.rival_claims("default", ["supersedes"], ["superseded_by"]) == []
    fid = _assert(store, "ADR-2", "superseded_by", link("ADR-4"))
    claims = r.rival_claims("default", ["supersedes"], ["superseded_by"])
    assert len(claims) == 2 and fid in {c.fact_id for c in claims}
    assert len({c.target for c in claims}) == 1 and len({c.claimant for c in claims}) == 2
    assert r.rival_claims("default", [], []) == []


def test_search_chunks_under_a_prefix(store: Store) -> None:
    _apply(store, doc("wiki/topic/q.md", [], body="the kestrel queue page"),
           doc("notes/q.md", [], body="the kestrel queue note"),
           doc("wiki/index.md", [], body="kestrel index"), doc("wikis/x.md", [], body="kestrel"))
    r = store.reader
    hits = r.search_chunks_under(TextQuery(("kestrel",)), "wiki/", limit=10,
                                 exclude_paths=["wiki/index.md"])
    assert [r.chunks([h.id])[h.id].path for h in hits] == ["wiki/topic/q.md"]
    assert r.search_chunks_under(TextQuery(("kestrel",)), "wiki/", limit=10,
                                 scopes=["other"]) == []
