"""Embedding on every core: worker processes, each with a model session of one thread.

Why: ``minilm-q8`` embeds one text a run (so that a vector is a function of its text
alone), and a run of one text leaves a session's second intra-op thread with little to
do. On two cores, 160 SciFact chunks took 5.8 s in one process of two threads, 5.8 s in
one of one thread, and 3.6 s in two processes of one thread each; with other work on the
machine the second thread cost more than it gave (10–13 s against 6–7 s for the two
processes; bench/README.md, "Every core embeds"). A session's thread count does not
change its vectors (the same bytes, for ``minilm`` and ``minilm-q8``), so a store's
vectors are the same whichever way they were made, and the manifest is the model's.

``PooledEmbedder`` has the identity (name, version, dim) of the embedder it stands for
and sends each ``embed`` call's texts to the workers in interleaved parts (the texts come
sorted by length, so the parts weigh alike); the caller owns the executor, and each
worker opens its own embedder from the spec (``pooled_part``), once. A pool that breaks
(a worker killed, out of memory) is not the end of the index: that call and the rest are
embedded by the embedder it stands for, in this process.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import BrokenExecutor, Executor
from typing import TYPE_CHECKING

from knotwork.embed.base import Embedder
from knotwork.embed.registry import open_embedder

if TYPE_CHECKING:
    from knotwork.embed.base import FloatMatrix

__all__ = ["POOLED_KINDS", "PooledEmbedder", "pooled_part"]

#: The specs whose model runs here on the CPU: worth a process a core. (A remote model
#: has its own server; ``minilm-static`` is a table lookup; ``hash`` is for tests.)
POOLED_KINDS = frozenset({"minilm", "minilm-q8"})

_mine: dict[str, Embedder] = {}  # per worker process: its embedder, by spec


def pooled_part(spec: str, texts: Sequence[str]) -> tuple[FloatMatrix, int]:
    """In a worker: ``texts``' vectors by this process's one-thread embedder, and the
    tokens it embedded for them."""
    emb = _mine.get(spec)
    if emb is None:
        emb = _mine[spec] = (open_embedder(spec, threads=1) if spec in POOLED_KINDS
                             else open_embedder(spec))
    before = int(getattr(emb, "tokens_embedded", 0))
    vectors = emb.embed(list(texts))
    return vectors, int(getattr(emb, "tokens_embedded", 0)) - before


class PooledEmbedder:
    """``base``'s vectors, made by ``workers`` processes of ``executor`` at once."""

    def __init__(self, base: Embedder, spec: str, executor: Executor, workers: int) -> None:
        self.name = base.name
        self.version = base.version
        self.dim = base.dim
        self.normalized = base.normalized
        self.tokens_embedded = 0
        self._base = base
        self._spec = spec
        self._executor: Executor | None = executor
        self.workers = max(1, workers)

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Return float32 ``[len(texts), dim]``, in input order."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one str")
        texts = list(texts)
        if self._executor is not None:
            try:
                return self._pooled(texts)
            except BrokenExecutor:
                self._executor = None  # from now on, here
        before = int(getattr(self._base, "tokens_embedded", 0))
        vectors = self._base.embed(texts)
        self.tokens_embedded += int(getattr(self._base, "tokens_embedded", 0)) - before
        return vectors

    def _pooled(self, texts: list[str]) -> FloatMatrix:
        import numpy as np

        assert self._executor is not None
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        parts = [(i, texts[i::self.workers]) for i in range(min(self.workers, len(texts)))]
        futures = [(i, self._executor.submit(pooled_part, self._spec, part))
                   for i, part in parts]
        tokens = 0
        for i, future in futures:
            vectors, counted = future.result()
            out[i::self.workers] = vectors
            tokens += counted
        self.tokens_embedded += tokens
        return out
