"""The store contract for ``check_integrity``, ``vector_sample`` and ``rebuild_indexes``:
a store written only through the Protocols holds every invariant, before and after a
rebuild, and its stored vectors come back with the text they were made from."""

from __future__ import annotations

import numpy as np

from knotwork.store import Store

from .drafts import doc, fact, link, lit


def test_a_store_with_history_holds_every_invariant_and_rebuilds(store: Store) -> None:
    with store.write(actor="test") as w:
        w.apply("default", doc("a.md", [fact("role", lit("engineer"), 2, text="line 2"),
                                        fact("links_to", link("B"), 3, text="line 3")]))
        w.apply("default", doc("b.md", [fact("role", lit("host"), 2, text="line 2")]))
    with store.write(actor="test") as w:
        w.apply("default", doc("a.md", [fact("role", lit("manager"), 2, text="line 2")],
                               body="\n".join(f"line {i}" for i in range(1, 6))))
        w.delete("default", "b.md")
    work = store.reader.mention_work()
    assert [p.check for p in store.check_integrity()] == ["mentions"]
    with store.write(actor="test") as w:
        w.mentions_done(work.queued, through_change=work.last_change)
    assert store.check_integrity() == []
    pending = store.reader.pending_chunks(100)
    vec = np.ones(4, dtype=np.float32)
    with store.write(actor="test") as w:
        w.put_vectors([(p.text_hash, vec.tobytes()) for p in pending])
    sample = store.vector_sample(10)
    assert sample and {s.text for s in sample} <= {p.text for p in pending}
    assert all(s.vector == vec.tobytes() for s in sample)
    counts = store.rebuild_indexes(actor="test")
    assert counts["chunks_to_embed"] == 0 and counts["vectors_dropped"] == 0
    assert counts["chunks_indexed"] == store.reader.live_chunk_count()
    assert store.check_integrity() == []
