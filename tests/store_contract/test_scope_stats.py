"""The store contract for full-text statistics per scope: a hit's BM25 score reads only
its own scope's row count, lengths and term counts. So what a reader of scope A is told
(hits, their order, their scores, term counts) is what a store holding only A's notes
tells, whatever scope B holds, adds, edits or deletes."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from knotwork.store import Store, TextQuery, open_store, record_time

from . import pg
from .conftest import URLS
from .drafts import doc, fact, lit

A_NOTES = {
    "kestrel.md": ("Kestrel", "The kestrel hovers over the meadow hunting voles.\nIt nests"
               " in old barns.", ("windhover",)),
    "vole.md": ("Vole", "A vole is a small rodent of the meadow.\nKestrels eat voles.", ()),
    "barn.md": ("Barn", "An old barn by the meadow, where a kestrel nests each spring.", ()),
}
B_NOTES = {
    f"b{i}.md": (f"Report {i}", "kestrel kestrel meadow audit of the meadow ledger " * (i + 1),
                 ("kestrel ledger",) if i % 2 else ())
    for i in range(6)
}
QUERIES = [("kestrel",), ("meadow",), ("kestrel", "meadow"), ("voles", "barn")]


def _docs(notes: dict[str, tuple[str, str, tuple[str, ...]]]):  # type: ignore[no-untyped-def]
    return [doc(path, [fact("status", lit(f"{title} kestrel"), 1)], body=body, title=title,
                aliases=aliases) for path, (title, body, aliases) in notes.items()]


def _write(store: Store, scope: str, docs) -> None:  # type: ignore[no-untyped-def]
    with store.write(actor="test") as w:
        for d in docs:
            w.apply(scope, d)


def _chunks(store: Store, terms: tuple[str, ...], match: str = "any",
            as_of: str | None = None) -> list[tuple[str, float]]:
    """Scope a's chunk hits as (path, score), best first."""
    hits = store.reader.search_chunks(TextQuery(terms, match), limit=20, scopes=["a"],
                                      as_of=as_of)
    rows = store.reader.chunks([h.id for h in hits])
    return [(rows[h.id].path, round(h.score, 9)) for h in hits]


def _entities(store: Store, terms: tuple[str, ...], field: str | None = None
              ) -> list[tuple[str, float]]:
    hits = store.reader.search_entities(TextQuery(terms, field=field), limit=20, scopes=["a"])
    rows = store.reader.entities([h.id for h in hits])
    return [(rows[h.id].iri, round(h.score, 9)) for h in hits]


def _answers(store: Store) -> dict[str, object]:
    """Everything a reader of scope a learns from the full-text statistics."""
    r = store.reader
    words = ["kestrel", "meadow", "ledger", "voles"]
    return {
        "chunks": [_chunks(store, q, m) for q in QUERIES for m in ("any", "all")],
        "entities": [_entities(store, q) for q in QUERIES],
        "labels": _entities(store, ("kestrel", "vole"), "label"),
        "chunk_df": r.term_frequencies(words, scopes=["a"]),
        "chunk_df_capped": r.term_frequencies(words, cap=2, scopes=["a"]),
        "entity_df": r.term_frequencies(words, table="entity", scopes=["a"]),
        "n": r.live_chunk_count(["a"]),
    }


@pytest.fixture
def second_store(request: pytest.FixtureRequest, store_url: str, tmp_path: Path
                 ) -> Iterator[Callable[[], Store]]:
    """A second fresh store of the backend under test (the one holding only scope a)."""
    opened: list[tuple[Store, str]] = []

    def make() -> Store:
        url = (URLS["sqlite"](tmp_path / "only") if store_url.startswith("sqlite")
               else pg.fresh_url())
        opened.append((open_store(url), url))
        return opened[-1][0]

    yield make
    for s, url in opened:
        s.close()
        if url.startswith("postgresql://"):
            pg.drop(url)


def test_a_scope_reads_what_a_store_of_that_scope_alone_reads(
        store: Store, second_store: Callable[[], Store]) -> None:
    only_a = second_store()
    _write(only_a, "a", _docs(A_NOTES))
    _write(store, "b", _docs(B_NOTES))  # b first: its rows are the store's first
    _write(store, "a", _docs(A_NOTES))
    expected = _answers(only_a)
    assert expected["chunks"][0], "the queries must find something"
    assert _answers(store) == expected
    # b's notes edited, deleted, added: nothing a reader of a learns moves
    _write(store, "b", [doc("b1.md", [], body="kestrel " * 40, title="Kestrel kestrel")])
    assert _answers(store) == expected
    with store.write(actor="test") as w:
        w.delete("b", "b2.md")
        w.delete("b", "b3.md")
    assert _answers(store) == expected
    _write(store, "b", _docs({"c.md": ("Kestrel barn voles", "kestrel barn voles meadow", ())}))
    assert _answers(store) == expected


def test_a_hit_scores_the_same_whoever_asks(store: Store) -> None:
    """Federated: a query over every scope (or several) merges hits each scored by its
    own scope's statistics, so scope a's hits carry the scores a reader of a alone sees."""
    _write(store, "a", _docs(A_NOTES))
    _write(store, "b", _docs(B_NOTES))
    r = store.reader
    for terms in QUERIES:
        mine = dict(_chunks(store, terms))
        for scopes in (None, ["a", "b"]):
            hits = r.search_chunks(TextQuery(terms), limit=50, scopes=scopes)
            rows = r.chunks([h.id for h in hits])
            got = {rows[h.id].path: round(h.score, 9) for h in hits if rows[h.id].scope == "a"}
            assert got == mine
            assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # counts over several scopes are their sums
    words = ["kestrel", "ledger"]
    both = r.term_frequencies(words, scopes=["a", "b"])
    apart = [r.term_frequencies(words, scopes=[s]) for s in ("a", "b")]
    assert both == [(w, apart[0][i][1] + apart[1][i][1]) for i, w in enumerate(words)]
    assert r.term_frequencies(words) == both
    assert r.live_chunk_count(["a", "b"]) == r.live_chunk_count() == 9
    assert r.live_chunk_count(["nowhere"]) == 0
    assert r.term_frequencies(words, scopes=["nowhere"]) == [("kestrel", 0), ("ledger", 0)]


def _now() -> str:
    time.sleep(0.002)
    t = record_time(datetime.now(UTC))
    time.sleep(0.002)
    return t


def test_history_search_of_a_scope_ignores_other_scopes(store: Store) -> None:
    """As-of reads (the history indexes) keep to a scope's own statistics too."""
    _write(store, "a", _docs(A_NOTES))
    _write(store, "b", _docs(B_NOTES))
    _write(store, "a", [doc("vole.md", [], body="Voles moved out of the meadow.",
                            title="Vole")])
    t = _now()

    def past() -> object:
        r = store.reader
        return ([_chunks(store, q, as_of=t) for q in QUERIES],
                [r.term_frequencies(["kestrel", "meadow"], table=table, as_of=t, scopes=["a"])
                 for table in ("chunk", "entity")],
                [[(h.id, round(h.score, 9)) for h in r.search_entities(
                    TextQuery(q), limit=20, scopes=["a"], as_of=t)] for q in QUERIES])

    before = past()
    assert before[0][0], "the history search must find something"
    _write(store, "b", [doc("b1.md", [], body="kestrel meadow " * 30, title="Kestrel")])
    with store.write(actor="test") as w:
        w.delete("b", "b4.md")
    _write(store, "b", _docs({"d.md": ("Meadow", "meadow kestrel voles barn", ())}))
    assert past() == before


def test_live_chunk_ids_are_a_scopes_live_chunks(store: Store) -> None:
    """The rows a scoped vector search ranks: every live chunk of the scopes' documents
    and no other (none of another scope, none a later version replaced)."""
    _write(store, "a", _docs(A_NOTES))
    _write(store, "b", _docs(B_NOTES))
    r = store.reader
    mine = r.live_chunk_ids(["a"])
    assert mine and len(mine) == len(set(mine)) == r.live_chunk_count(["a"])
    assert {c.scope for c in r.chunks(mine).values()} == {"a"}
    both = r.live_chunk_ids(["a", "b"])
    assert sorted(both) == sorted(mine + r.live_chunk_ids(["b"]))
    assert len(both) == r.live_chunk_count()
    old = set(mine)
    _write(store, "a", [doc("vole.md", [], body="Voles dig tunnels.", title="Vole")])
    now = set(r.live_chunk_ids(["a"]))
    assert now != old and all(c.scope == "a" for c in r.chunks(list(now)).values())
    assert len(now) == r.live_chunk_count(["a"])
    assert r.live_chunk_ids(["nowhere"]) == [] and r.live_chunk_ids([]) == []
