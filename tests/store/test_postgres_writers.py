"""Many writers on one PostgreSQL store at once: an edit is applied once and never lost,
and what every writer shares (names, counts, the text index) comes out as one writer
would have left it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest

from knotwork.store import Store, TextQuery, open_store
from knotwork.types import Applied, Unchanged

from ..store_contract import pg
from ..store_contract.drafts import doc, fact, link, lit


@pytest.fixture
def url() -> Iterator[str]:
    u = pg.fresh_url()
    yield u
    pg.drop(u)


def _at_once(n: int, work: Callable[[int], object]) -> list[object]:
    """Run ``work(i)`` on ``n`` threads released together; their results, in order."""
    gate = threading.Barrier(n)
    out: list[object] = [None] * n

    def run(i: int) -> None:
        gate.wait()
        try:
            out[i] = work(i)
        except Exception as exc:  # noqa: BLE001  (reported by the assertion below)
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return out


def test_two_watchers_applying_one_edit_apply_it_once(url: str) -> None:
    stores = [open_store(url) for _ in range(2)]
    try:
        with stores[0].write(actor="a") as w:
            w.apply("default", doc("a.md", [fact("role", lit("engineer"), 2)]))
        edit = doc("a.md", [fact("role", lit("manager"), 2)], body="kestrel edited")

        def apply(i: int) -> object:
            with stores[i].write(actor=f"w{i}") as w:
                return w.apply("default", edit)

        got = _at_once(2, apply)
        assert sorted(type(g).__name__ for g in got) == ["Applied", "Unchanged"], got
        r = stores[0].reader
        assert r.stats()["versions"] == 2 and r.stats()["facts"] == 1
        assert r.stats()["retracted_facts"] == 1
        assert [h.id for h in r.search_chunks(TextQuery(("kestrel",)), limit=5)]
    finally:
        for s in stores:
            s.close()


def test_eight_writers_leave_what_one_writer_would(url: str) -> None:
    stores: list[Store] = [open_store(url) for _ in range(8)]
    try:
        def write(i: int) -> object:
            # each note links the next one's name before or after that note exists
            out = []
            for j in range(5):
                n = i * 5 + j
                with stores[i].write(actor=f"w{i}") as w:
                    out.append(w.apply("default", doc(
                        f"n{n}.md", [fact("links_to", link(f"n{(n + 1) % 40}"), 2)],
                        body=f"kestrel note {n}")))
            return out

        got = _at_once(8, write)
        assert all(isinstance(g, list) for g in got), got
        assert all(isinstance(a, Applied) for g in got for a in g)  # type: ignore[union-attr]
        r = stores[0].reader
        stats = r.stats()
        assert stats["documents"] == 40 and stats["facts"] == 40
        assert r.live_chunk_count() == 40 == stats["chunks"]
        # every link reaches its note, whichever writer committed first
        for n in range(40):
            eid = r.find_entity(f"n{n}", f"n{n}")
            assert eid is not None
            [f] = r.facts([eid])
            assert f.value == f"kw:note/n{(n + 1) % 40}", (n, f.value)
        assert len(r.search_chunks(TextQuery(("kestrel",)), limit=100)) == 40
        # no name entity made twice: one per name
        assert stats["entities"] == 40
        again = _at_once(2, lambda i: _reapply(stores[i]))
        assert sorted(type(g).__name__ for g in again) == ["Unchanged", "Unchanged"]
    finally:
        for s in stores:
            s.close()


def _reapply(store: Store) -> Applied | Unchanged:
    with store.write(actor="again") as w:
        return w.apply("default", doc("n0.md", [fact("links_to", link("n1"), 2)],
                                      body="kestrel note 0"))


def test_stores_in_two_schemas_of_one_database_never_wait_on_each_other() -> None:
    """Advisory locks belong to the database: keyed by the store's schema too, a write
    holding ``a.md`` (and the finishing lock) in one store does not hold up the same
    path's write in a store of another schema."""
    urls = [pg.fresh_url(), pg.fresh_url()]
    stores = [open_store(u) for u in urls]
    done = threading.Event()
    try:
        with stores[0].write(actor="a") as w:
            w.apply("default", doc("a.md", [fact("role", lit("engineer"), 2)]))

            def other() -> None:
                with stores[1].write(actor="b") as w2:
                    w2.apply("default", doc("a.md", [fact("role", lit("manager"), 2)]))
                done.set()

            t = threading.Thread(target=other, daemon=True)
            t.start()
            # the first store's transaction is still open, holding its locks
            assert done.wait(20), "a store in another schema waited on this one's locks"
        t.join(20)
        assert [f.value for f in stores[1].reader.facts(
            [stores[1].reader.find_entity("a", "a")])] == ["manager"]
    finally:
        for s in stores:
            s.close()
        for u in urls:
            pg.drop(u)


def test_the_change_token_moves_with_this_store_s_commits_only(url: str) -> None:
    """Another process's commit to this store moves it (the read memo must drop what it
    remembered); a commit to a store in another schema, or any other transaction on the
    server, does not (it did, with the server's transaction horizon as the token)."""
    mine, same, other_url = open_store(url), open_store(url), pg.fresh_url()
    other = open_store(other_url)
    try:
        with mine.write(actor="a") as w:
            w.apply("default", doc("a.md", [fact("role", lit("engineer"), 2)]))
        before = mine.change_token()
        with other.write(actor="b") as w:
            w.apply("default", doc("b.md", [fact("role", lit("manager"), 2)]))
        assert mine.change_token() == before
        with same.write(actor="c") as w:  # another handle, as another process would be
            w.apply("default", doc("c.md", [fact("role", lit("chef"), 2)]))
        assert mine.change_token() != before
    finally:
        for s in (mine, same, other):
            s.close()
        pg.drop(other_url)
