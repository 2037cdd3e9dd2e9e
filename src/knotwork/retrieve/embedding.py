"""Embedding orchestration: the pending-chunk loop, the model check, query vectors.

The facade chooses the embedder and the vector index; these functions take both
explicitly. numpy loads with the first vector read or written: a process that never
touches one (``knotwork facts``, a store without vectors) skips its import.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..embed import Embedder, manifest
from ..embed.registry import AUTO, spec_for
from ..errors import ConfigError
from ..store import Store, StoreReader

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..results import Embedded
    from .vectors import VectorIndex

    FloatArray = npt.NDArray[np.float32]

__all__ = ["Progress", "VectorHits", "as_float32", "check_manifest", "early_query_vector",
           "embed_pending", "embed_query", "embedder_spec", "embedding_status", "open_vector_index",
           "semantic_search", "status_notes", "vector_search"]

#: Told (done, total) as chunks are embedded.
Progress = Callable[[int, int], None]
#: (chunk id, similarity) best first, and the similarities' (mean, deviation) if asked.
VectorHits = tuple[list[tuple[int, float]], tuple[float, float] | None]


def as_float32(vectors: object) -> FloatArray:
    """An embedder's output as a float32 array."""
    import numpy as np

    out: FloatArray = np.asarray(vectors, dtype=np.float32)
    return out


def embed_query(emb: Embedder, query: str) -> FloatArray:
    """The query's vector."""
    vec: FloatArray = as_float32(emb.embed([query]))[0]
    return vec


def embedding_status(reader: StoreReader, *, off: bool) -> str:
    """``complete`` | ``partial n/m`` | ``none``: what semantic search can see.

    Told from the settings (``off``) and the store alone: loading the embedder (its
    backend and numpy) to learn that a store holds no vector cost every query ~0.1 s.
    """
    if off:
        return "none"
    has, pending = reader.vector_status()
    if not has:
        return "none"
    if not pending:
        return "complete"
    done, live = reader.vector_counts()
    return f"partial {done}/{live}"


def status_notes(status: str) -> tuple[str, ...]:
    """What a context answer says about the vectors it could use (``embedding_status``)."""
    if status == "none":
        return ("no chunk vectors: answered from full text and links only",)
    if status.startswith("partial"):
        return (f"semantic search saw only the chunks embedded so far ({status})",)
    return ()


def embedder_spec(reader: StoreReader, configured: str) -> str:
    """The spec to open for this store: ``configured``, or for ``auto`` the local model
    its vectors were made with (``embed.spec_for``), else the default for new stores."""
    if configured.strip().lower() != AUTO:
        return configured
    stored = reader.meta("embedder")
    name = json.loads(stored)["name"] if stored and reader.has_vectors() else None
    return spec_for(configured, name)


def check_manifest(reader: StoreReader, emb: Embedder) -> None:
    """Refuse to mix vectors of two models in one store."""
    stored = reader.meta("embedder")
    # any stored vector at all (one indexed read): this runs before every vector query
    if not stored or not reader.has_vectors():
        return
    have = json.loads(stored)
    want: dict[str, Any] = {"name": emb.name, "version": emb.version}
    if (have["name"], have["version"]) == (emb.name, emb.version):
        # the same model served differently (an OpenAI-compatible server's model at
        # another size, a resized test embedder): vectors of another dimension would
        # never match a query, silently. Read only now: an unknown dim costs a request.
        want = asdict(manifest(emb))
        if all(have.get(k, want[k]) == want[k] for k in ("dim", "normalized")):
            return
    raise ConfigError(
        f"this store's vectors were made by {_described(have)}, but the configured"
        f" embedder is {_described(want)}", key="embedder",
        hint=f"set KNOTWORK_EMBEDDER=auto (or {have['name']}) to keep using the store's model,"
             f" or run `KNOTWORK_EMBEDDER={emb.name} knotwork reindex --embeddings` to"
             " re-embed every chunk with the new one")


def embed_pending(store: Store, emb: Embedder, *, actor: str, progress: Progress | None = None,
                  batch: int = 64, window: int = 1024,
                  prepare: Callable[[int], None] | None = None) -> Embedded:
    """Embed every live chunk that has no vector yet (each distinct text once).

    Pending chunks are read ``window`` at a time and embedded ``batch`` at a time,
    shortest first: the model pads each of its batches to its longest text, and
    neighbours in length out of a thousand pad far less than out of 64 (SciFact's
    end-to-end throughput, bench/README.md). Each ``batch`` is written and reported as
    it is done. ``prepare`` is told the number of vectors the store holds at the end.
    """
    check_manifest(store.reader, emb)
    reader = store.reader
    done_before, live = reader.vector_counts()
    started, done = time.perf_counter(), 0
    # tokens embedded, for the statistics: counted by the embedder as it embeds (MiniLM)
    counted_before = getattr(emb, "tokens_embedded", 0)
    stamp = json.dumps(asdict(manifest(emb)))
    while pending := reader.pending_chunks(window):
        pending.sort(key=lambda item: len(item.text))  # characters: tokens' stand-in
        for i in range(0, len(pending), batch):
            items = pending[i:i + batch]
            vecs = as_float32(emb.embed([c.text for c in items]))
            with store.write(actor=actor) as w:
                w.set_meta("embedder", stamp)
                w.put_vectors([(c.text_hash, vecs[j].tobytes()) for j, c in enumerate(items)])
            done += len(items)
            if progress:
                progress(done_before + done, live)
    tokens = getattr(emb, "tokens_embedded", 0) - counted_before
    from ..results import Embedded

    if prepare is not None:
        prepare(done_before + done)
    return Embedded(embedded=done, tokens=tokens, embedder=emb.name,
                    seconds=round(time.perf_counter() - started, 3),
                    workers=int(getattr(emb, "workers", 1)))


def early_query_vector(emb: Embedder | None, query: str) -> Callable[[], FloatArray | None]:
    """Start embedding ``query`` now, in a thread; the returned call waits for it.

    Why: the model (onnxruntime) and SQLite both release the GIL, so the query's
    encoding runs while full-text search does, instead of after it. A short-lived
    thread, not a pool: an idle pool thread would keep ``sync`` from forking workers.
    """
    if emb is None:
        return lambda: None
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["vec"] = embed_query(emb, query)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=run, name="knotwork-query-embed", daemon=True)
    worker.start()

    def wait() -> FloatArray | None:
        worker.join()
        if "error" in box:
            raise box["error"]
        vec: FloatArray | None = box.get("vec")
        return vec

    return wait


@contextmanager
def semantic_search(emb: Embedder | None, query: str,
                    search: Callable[[str, int, FloatArray | None], VectorHits]
                    ) -> Iterator[Callable[[str, int], VectorHits]]:
    """A vector search for ``build_context`` whose query vector is embedded from now on
    (``early_query_vector``); leaving the block waits for that thread, even on an error."""
    query_vector = early_query_vector(emb, query)

    def semantic(text: str, k: int) -> VectorHits:
        return search(text, k, query_vector())

    try:
        yield semantic
    finally:
        try:
            query_vector()  # never leave the thread behind
        except Exception:  # noqa: BLE001, S110 - the answer's own error matters more
            pass


def open_vector_index(store_path: str, dim: int, *, ann_threshold: int) -> VectorIndex:
    """A vector index of ``dim`` columns (exact; HNSW past ``ann_threshold`` vectors).

    The graph is saved beside the store as ``<store>.usearch`` and the float32 copy of
    the vectors as ``<store>.vectors`` (never in the vault, unless the store itself is
    there), so a new process (every CLI call) skips reading every vector from SQLite;
    an in-memory store keeps both in memory only.
    """
    from .vectors import VectorIndex  # numpy: only once vectors are read

    disk = store_path != ":memory:"
    return VectorIndex(dim, ann_threshold=ann_threshold,
                       ann_path=Path(store_path + ".usearch") if disk else None,
                       mirror_path=Path(store_path + ".vectors") if disk else None)


def vector_search(reader: StoreReader, index: VectorIndex, emb: Embedder, query: str, k: int,
                  *, vec: FloatArray | None = None, scopes: Sequence[str] | None = None
                  ) -> VectorHits:
    """The ``k`` chunks nearest ``query`` (or its vector ``vec``), the index brought up
    to date with the store first. With ``scopes``, and other scopes' chunks in the store,
    only ``scopes``' chunks are ranked (``VectorIndex.search_with_stats``'s ``among``)."""
    index.refresh(reader)
    if not len(index):
        return [], None
    if vec is None:
        vec = embed_query(emb, query)
    among = None
    if scopes and reader.live_chunk_count(scopes) < reader.live_chunk_count():
        among = reader.live_chunk_ids(scopes)
    return index.search_with_stats(vec, k, among=among)


def _described(m: Mapping[str, Any]) -> str:
    """An embedder manifest for a message: ``hash (1, 64-d)``."""
    dim = f", {m['dim']}-d" if m.get("dim") else ""
    norm = ", not normalised" if m.get("normalized") is False else ""
    return f"{m['name']} ({m['version']}{dim}{norm})"
