"""Many writers on one PostgreSQL store at once: an edit is applied once and never lost,
and what every writer shares (names, counts, the text index) comes out as one writer
would have left it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from knotwork.store import Store, TextQuery, open_store
from knotwork.types import Applied, Unchanged

from ..store_contract import pg
from ..store_contract.drafts import doc, fact, link, lit


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


def _finish_held(url: str) -> Any:
    """A connection holding the lock every write that changes shared state finishes
    under (as a writer in the middle of its ``finish`` holds it)."""
    import psycopg

    from knotwork.store.postgres.writer import FINISH_LOCK, LOCK

    con = psycopg.connect(url, autocommit=True)
    con.execute(LOCK.replace("pg_advisory_xact_lock", "pg_advisory_lock").replace("?", "%s"),
                (FINISH_LOCK,))
    return con


def test_a_write_that_changes_no_shared_state_does_not_wait_for_another_s_finish(
        url: str) -> None:
    """A document's mentions found again (nothing new to name or index) commit while
    another writer holds the finishing lock; a write that changes the text index waits
    for it, and both leave the counts exact."""
    store = open_store(url)
    try:
        with store.write(actor="a") as w:
            got = w.apply("default", doc("a.md", [fact("links_to", link("c"), 2)]))
        assert isinstance(got, Applied) and got.document_id is not None
        a_id = got.document_id
        held = _finish_held(url)
        mentions, edit = threading.Event(), threading.Event()

        def mention() -> None:
            with store.write(actor="m") as w:
                w.apply_mentions(a_id, [fact("mentions", link("c"), 3)])
            mentions.set()

        def apply() -> None:
            with store.write(actor="e") as w:
                w.apply("default", doc("b.md", [fact("role", lit("chef"), 2)]))
            edit.set()

        threads = [threading.Thread(target=f, daemon=True) for f in (mention, apply)]
        for t in threads:
            t.start()
        try:
            assert mentions.wait(20), "a mentions-only write waited for another's finish"
            assert not edit.wait(0.5), "a write that indexes chunks did not wait"
        finally:
            held.close()
        assert edit.wait(20)
        for t in threads:
            t.join(20)
        assert _counting_problems(store) == []
        assert store.reader.stats()["documents"] == 2
    finally:
        store.close()


def _counting_problems(store: Store) -> list[object]:
    """What the integrity check finds wrong with the text index and its counts (the
    kept counts in ``meta``, each scope's statistics, every term's row counts)."""
    return [p for p in store.check_integrity() if p.check == "text_index"]


def _index(store: Store) -> list[tuple[object, ...]]:
    con = store._con  # type: ignore[attr-defined]
    return [*con.execute("SELECT entity_id, scope, label, aliases, literals, dl"
                         " FROM entity_fts ORDER BY 1", None).rows,
            *con.execute("SELECT initials, entity_id, scope FROM entity_initials"
                         " ORDER BY 1, 2", None).rows]


def test_counts_and_entity_index_stay_exact_with_writers_finishing_at_once(url: str) -> None:
    """Eight writers editing notes (their literals changed or not), their mentions found
    again and shared names linked, at once: every count equals a recount of the rows, and
    the entity index (entities left alone when their text is unchanged) is what a rebuild
    makes of it."""
    stores: list[Store] = [open_store(url) for _ in range(8)]
    try:
        def write(i: int) -> int:
            commits = 0
            for j in range(4):
                with stores[i].write(actor=f"w{i}") as w:
                    got = w.apply("default", doc(
                        f"n{i}.md", [fact("links_to", link("hub"), 2),
                                     fact("links_to", link(f"n{(i + 1) % 8}"), 3),
                                     fact("role", lit(f"role {j // 2}"), 4)],
                        body=f"kestrel note {i} edit {j}\nline two", aliases=(f"alias{j}",)
                        if j == 3 else ()))
                assert isinstance(got, Applied) and got.document_id is not None
                with stores[i].write(actor=f"m{i}") as w:
                    w.apply_mentions(got.document_id, [fact("mentions", link("hub"), 1)])
                commits += 2
            return commits

        got = _at_once(8, write)
        assert all(isinstance(g, int) for g in got), got
        store = stores[0]
        assert _counting_problems(store) == []
        assert store.data_version() == 8 * 8
        before = _index(store)
        store.rebuild_indexes(actor="check")
        assert _index(store) == before
        assert _counting_problems(store) == []
    finally:
        for s in stores:
            s.close()


def test_mention_work_another_writer_holds_is_left_to_it_and_stays_queued(url: str) -> None:
    """A mention pass that read no name changes skips a document another writer holds
    (its own write, or its mention pass) instead of waiting to do the work again; the
    document stays queued until a pass that holds it clears it."""
    stores = [open_store(url) for _ in range(2)]
    try:
        with stores[0].write(actor="a") as w:
            got = [w.apply("default", doc(f"{n}.md", [])) for n in ("a", "b")]
        a_id, b_id = (g.document_id for g in got if isinstance(g, Applied))
        assert a_id is not None and b_id is not None
        claimed = threading.Event()
        release = threading.Event()

        def hold() -> None:
            with stores[1].write(actor="holder") as w:
                assert w.claim_mentions([a_id], wait=False) == [a_id]
                claimed.set()
                release.wait(20)

        t = threading.Thread(target=hold, daemon=True)
        t.start()
        assert claimed.wait(20)
        try:
            with stores[0].write(actor="other") as w:
                mine = w.claim_mentions([b_id, a_id], wait=False)
                w.mentions_done(mine, through_change=None)
            assert mine == [b_id]
            assert stores[0].reader.mention_work().queued == [a_id]
        finally:
            release.set()
            t.join(20)
        with stores[0].write(actor="other") as w:  # (the holder is gone: free again)
            assert w.claim_mentions([a_id], wait=False) == [a_id]
    finally:
        for s in stores:
            s.close()
