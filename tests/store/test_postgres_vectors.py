"""pgvector on the PostgreSQL store: vectors round-trip as float32 bytes, and an HNSW
index (cosine) per dimension answers nearest-neighbour queries in SQL."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from knotwork.store import open_store
from knotwork.store.postgres import PostgresStore

from ..store_contract import pg
from ..store_contract.drafts import doc


@pytest.fixture
def store() -> Iterator[PostgresStore]:
    url = pg.fresh_url()
    s = open_store(url)
    assert isinstance(s, PostgresStore)
    yield s
    s.close()
    pg.drop(url)


def test_nearest_finds_the_closest_chunks_on_the_hnsw_index(store: PostgresStore) -> None:
    with store.write(actor="t") as w:
        for i in range(6):
            w.apply("default", doc(f"n{i}.md", [], body=f"note number {i} words {i * 7}"))
    pending = store.reader.pending_chunks(100)
    rng = np.random.default_rng(3)
    vecs = {p.text_hash: rng.standard_normal(16).astype("<f4") for p in pending}
    with store.write(actor="t") as w:
        assert w.put_vectors([(h, v.tobytes()) for h, v in vecs.items()]) == 6
    by_chunk = dict(store.reader.vectors(sorted(
        cid for cid, _ in store.reader.nearest(next(iter(vecs.values())).tobytes(), limit=6))))
    assert len(by_chunk) == 6
    for cid, blob in by_chunk.items():  # the bytes given back are the bytes put in
        assert any(blob == v.tobytes() for v in vecs.values()), cid
    target = list(vecs.values())[2]
    [(best, sim), *_] = store.reader.nearest((target + 0.01).tobytes(), limit=3)
    assert by_chunk[best] == target.tobytes() and sim > 0.99
    row = store.reader.con.execute(
        "SELECT indexdef FROM pg_indexes WHERE indexname = 'embeddings_hnsw_16'"
        " AND schemaname = current_schema()").fetchone()
    assert row is not None and "hnsw" in row[0] and "vector_cosine_ops" in row[0]
